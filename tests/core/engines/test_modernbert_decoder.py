"""ModernBERT-decoder (the Ettin decoders): read as what transformers 5.24 builds (ModernBertDecoderForCausalLM), not
Llama-style: LayerNorms with one over the embedding and none before layer 0's attention, the prediction head's
dense and norm, the biased decoder (-0.43 % of the parameters before), and two sliding-window layers in three whose
cache keeps a window (every layer cached the whole context before: 2.7x the KV at 4,096 tokens)."""

import warnings

import pytest

from memviz.core.arch import FULL, SLIDING, Architecture, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import TOKENS, after_a_decode_step, assert_run_matches

#: a released checkpoint's layout before transformers wrote layer_types: ModernBERT's own fields (the 150M decoder)
LEGACY = {"architectures": ["ModernBertDecoderForCausalLM"], "model_type": "modernbert-decoder", "hidden_size": 768,
          "intermediate_size": 1152, "num_hidden_layers": 22, "num_attention_heads": 12, "vocab_size": 50368,
          "global_attn_every_n_layers": 3, "local_attention": 128, "max_position_embeddings": 8000,
          "hidden_activation": "gelu", "norm_bias": False, "decoder_bias": True, "classifier_bias": False,
          "tie_word_embeddings": True}


def _config(**fields):
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoConfig.for_model("modernbert-decoder", **fields)


def test_the_default_model_counts_what_transformers_builds():
    torch = pytest.importorskip("torch")
    import transformers

    config = _config()
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    a = from_hf_config(config.to_dict())
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) == 149_655_232
    assert not a.warnings


TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=5, num_attention_heads=4,
            pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)


@pytest.mark.parametrize("biases", [False, True])
def test_a_tiny_run_holds_the_estimated_cache_and_parameters(biases):
    """Biases on every linear and norm where the config turns them on; a window (32) over the whole prompt."""
    assert TOKENS <= 32
    assert_run_matches(_config(**TINY, local_attention=64, norm_bias=biases, attention_bias=biases, mlp_bias=biases,
                               classifier_bias=biases, decoder_bias=biases))


def test_the_sliding_layers_hold_their_window_after_a_decode_step():
    """Window 8 (local_attention 16) under a 24-token prompt and one decoded token: DynamicSlidingWindowLayer keeps
    a view of the last 7 tokens of the step's 8-token concatenation, whose storage stays; the full layers hold 25."""
    pytest.importorskip("torch")
    a, held, kv = after_a_decode_step(_config(**TINY, local_attention=16))
    assert a.layer_types == (FULL, SLIDING, SLIDING, FULL, SLIDING) and a.sliding_window == 8
    assert kv == held == (2 * 25 + 3 * 8) * 2 * 64 * 4


def test_a_legacy_layout_reads_as_transformers_reads_it():
    """global_attn_every_n_layers and local_attention (ModernBERT's names): ModernBertDecoderConfig makes layer i
    full when i % 3 == 0, and the window half of local_attention."""
    config = _config(**{k: v for k, v in LEGACY.items() if k not in ("architectures", "model_type")})
    a = from_hf_config(LEGACY)
    assert a.layer_types == tuple(FULL if t == "full_attention" else SLIDING for t in config.layer_types)
    assert a.sliding_window == config.sliding_window == 64
    assert a == from_hf_config(config.to_dict())
    assert Architecture.from_dict(a.to_dict()) == a  # a session keeps its embedding norm and head


def test_engines():
    """vLLM 0.33 runs it on its Transformers backend (no class in its registry; transformers' class takes the
    attention interface), a window per sliding layer (transformers/base.py per_layer_sliding_window); llama.cpp
    0c1e570 has no such architecture (its converter names no ModernBertDecoderForCausalLM)."""
    a = from_hf_config(LEGACY)
    full, sliding = a.layer_types.count(FULL), a.layer_types.count(SLIDING)
    assert (full, sliding) == (8, 14)
    e = estimate(a, Scenario(engine="transformers", context_tokens=4096, device="cpu"))
    assert e.kv_cache_required < 4096 * full * 2 * 768 * 2 * 1.05  # the full layers' and a window each
    vllm = estimate(a, Scenario(engine="vllm", context_tokens=4096, gpu="rtx4090"))
    assert vllm.kv_bytes_per_token == e.kv_bytes_per_token
    with pytest.raises(InputError, match="no such architecture"):
        estimate(a, Scenario(engine="llamacpp", context_tokens=4096))
