"""Chameleon: Llama's layout with q / k LayerNorms holding a weight and a bias per head channel (read Llama-style
before, those missing), and its VQ image tokenizer counted as the encoder transformers loads beside it (named, not
counted before: 29.4M parameters at the default)."""

import warnings

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.inventory import Role, parameter_count
from tests.core.engines.transformers_runs import run_and_compare

VOCABULARY = {"<image>": 8711}  # ChameleonModel needs the tokenizer's map to build


def _build(**fields):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("chameleon", vocabulary_map=VOCABULARY, **fields)
        with torch.device("meta"):
            model = transformers.ChameleonForConditionalGeneration(config)
    return config, model


@pytest.mark.parametrize("vq", [{}, {"attn_resolutions": [32], "double_latent": True, "channel_multiplier": [1, 2, 4],
                                     "base_channels": 64}, {"attn_type": "none", "num_embeddings": 4096}])
def test_the_language_model_and_the_image_tokenizer_count_what_transformers_builds(vq):
    config, model = _build(vq_config=vq)
    a = from_hf_config(config.to_dict())
    (tokenizer,) = a.encoders
    assert tokenizer.family == "chameleon_vqgan" and not a.warnings
    assert tokenizer.parameters == sum(p.numel() for p in model.model.vqmodel.parameters())
    assert parameter_count(a) + tokenizer.parameters == sum(p.numel() for p in model.parameters())


def test_a_tiny_run_holds_the_estimated_cache():
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(
            "chameleon", vocabulary_map=VOCABULARY, vocab_size=512, hidden_size=64, intermediate_size=96,
            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            vq_config={"base_channels": 32, "channel_multiplier": [1, 2], "latent_channels": 32, "embed_dim": 32,
                       "num_embeddings": 64, "resolution": 64})
    a, model, held, kv = run_and_compare(transformers.ChameleonForConditionalGeneration, config)
    assert kv == held == 2 * 2 * 2 * 16 * 4 * 24  # 2 layers, K and V of 2 heads x 16 in fp32, 24 tokens
    assert parameter_count(a) + a.encoders[0].parameters == sum(p.numel() for p in model.parameters())


def test_engines():
    """vLLM 0.33 dropped its Chameleon class in 0.28 (registry.py _PREVIOUSLY_SUPPORTED_MODELS) but its
    Transformers backend takes ChameleonForConditionalGeneration (the attention interface), tokenizer included;
    llama.cpp 0c1e570 runs chameleon without the tokenizer (conversion/chameleon.py skips model.vqmodel), its q / k
    norms' biases {head_dim, heads} beside their weights (src/models/chameleon.cpp)."""
    config, _ = _build()
    a = from_hf_config(config.to_dict())
    file = gguf_tensors(a)
    names = {gguf_name(t, a) for t in file}
    assert {"blk.0.attn_q_norm.weight", "blk.0.attn_q_norm.bias", "blk.0.attn_k_norm.bias"} <= names
    assert sum(t.numel for t in file) == parameter_count(a)
    tokenizer = a.encoders[0].parameters * 2
    hf = estimate(a, Scenario(engine="transformers", context_tokens=4096, gpu="h100-80g"))
    vllm = estimate(a, Scenario(engine="vllm", context_tokens=4096, gpu="h100-80g"))
    llama = estimate(a, Scenario(engine="llamacpp", weight_format="f16", context_tokens=4096, gpu="h100-80g"))
    assert hf.bytes["weights"] == vllm.bytes["weights"] == parameter_count(a) * 2 + tokenizer
    f32 = sum(t.numel for t in file if t.role is Role.NORM)  # norms stay F32 in a GGUF file; the token table is
    table = a.vocab_size * a.hidden_size  # read on the host (llama.cpp keeps token_embd in host memory)
    assert llama.bytes["weights"] == (parameter_count(a) - table) * 2 + f32 * 2
