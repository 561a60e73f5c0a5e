"""dots3 read as what it is (a warned Llama-style MLA reading before, its cache 18 % short in transformers' full
layers and about half of vLLM's): MLA in every layer, the sliding layers with their own heads, latent and nope
width, a DSA indexer in the full layers, a per-head output gate and a norm on the rotary key; each engine's cache as
it allocates it."""

import warnings

import numpy as np
import pytest

from memviz.core.arch import FULL, SLIDING, from_hf_config
from memviz.core.engines import get_engine
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate, inputs
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.inventory import parameter_count

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from tests.core.engines.transformers_runs import after_a_decode_step, assert_run_matches  # noqa: E402

TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=6,
            num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2, kv_lora_rank=16,
            q_lora_rank=32, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, head_dim=16, index_head_dim=16,
            index_n_heads=2, index_topk=8, shared_experts_intermediate_size=32, pad_token_id=0, bos_token_id=1,
            eos_token_id=2, swa_num_attention_heads=2, swa_num_key_value_heads=2, swa_kv_lora_rank=32,
            swa_q_lora_rank=32, swa_head_dim=16, swa_qk_nope_head_dim=8, swa_v_head_dim=16)


def _config(**fields):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoConfig.for_model("dots3_note_text", **fields)


def test_the_default_model_counts_what_transformers_builds():
    config = _config()
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(config)
    stored = sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    a = from_hf_config(config.to_dict())
    assert parameter_count(a) == stored and not a.warnings
    sliding = [i for i, kind in enumerate(a.layer_types) if kind == SLIDING]
    assert len(sliding) == 33 and a.sliding_window == 512
    assert {(a.layer_num_heads(i), a.layer_kv_lora(i), a.layer_nope_dim(i)) for i in sliding} == {(64, 1024, 192)}
    assert {(a.layer_num_heads(i), a.layer_kv_lora(i), a.layer_nope_dim(i)) for i in range(46)
            if i not in sliding} == {(128, 512, 128)}
    assert a.indexer_layers == tuple(kind == FULL for kind in a.layer_types)


def test_a_tiny_run_holds_the_estimated_cache_and_parameters():
    """Three indexed layers cache latent + rope + an indexer key (16 + 8 + 16), three sliding ones the wider latent
    + rope (32 + 8): 24 tokens in fp32."""
    assert_run_matches(_config(**TINY, sliding_window_size=64))


def test_the_sliding_layers_hold_their_window_after_a_decode_step():
    """Window 8 under a 24-token prompt and one decoded token: the sliding layers' DynamicSlidingWindowLayer keeps a
    view of the step's 8-token concatenation of latents (and of rotary keys), the full layers 25 tokens."""
    _, held, kv = after_a_decode_step(_config(**TINY, sliding_window_size=8))
    assert kv == held == (3 * 25 * (16 + 8 + 16) + 3 * 8 * (32 + 8)) * 4


def test_a_release_layout_reads_as_transformers_reads_it():
    """The releases keep the text model's fields at the top level (Dots3NoteConfig.__post_init__: "Published
    checkpoints store the text configuration at the top level") with swa_ fields and the DSA layers named
    "full_attention"; transformers renames them indexed_attention (use_dsa)."""
    kinds = ["full_attention" if i < 2 or i % 4 == 1 else "sliding_attention" for i in range(6)]
    release = {"model_type": "dots3_note", "architectures": ["Dots3NoteForCausalLM"], **TINY, "layer_types": kinds,
               "sliding_window_size": 64}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Dots3NoteConfig.__post_init__ reads them so: Dots3NoteTextConfig(**the top-level fields)
        text = transformers.Dots3NoteTextConfig(**{k: v for k, v in release.items() if k != "model_type"})
    a, b = from_hf_config(release), from_hf_config(text.to_dict())
    assert a.model_type == b.model_type == "dots3_note_text"
    assert parameter_count(a) == parameter_count(b)
    assert (a.layer_types, a.indexer_layers, a.layer_kv_lora_ranks, a.layer_heads) == (
        b.layer_types, b.indexer_layers, b.layer_kv_lora_ranks, b.layer_heads)
    assert any(b.indexer_layers) and not any(from_hf_config({**release, "use_dsa": False}).indexer_layers)


@pytest.mark.parametrize("changes", [{"kv_lora_rank": None}, {"swa_head_dim": {"a": 1}}, {"swa_qk_nope_head_dim": "x"},
                                     {"per_layer_config": ["2"]}])
def test_a_malformed_release_is_one_clear_error(changes):
    """The release layout with a field missing or of the wrong kind: one InputError, no traceback (found by a fuzz
    of dots3 configs: a dict as swa_head_dim raised TypeError)."""
    release = {"model_type": "dots3_note", **TINY, **changes}
    with pytest.raises(InputError):
        from_hf_config(release)


def test_a_layer_with_its_own_value_width_is_refused():
    with pytest.raises(InputError, match="dots3: layers with a v_head_dim of their own are not modelled"):
        from_hf_config({**_config(**TINY).to_dict(), "per_layer_config": {"2": {"v_head_dim": 32}}})


def test_each_engine_lays_the_cache_out_as_it_allocates_it():
    """bf16, the default model. vLLM 0.33 pads the full layers' rows to the sliding layers' 1,024 + 64
    (Dots3NotePaddedMLAAttention) and keeps their indexer keys in FP8 with a scale (132 bytes); llama.cpp 0c1e570
    and transformers keep each layer's own latent and the indexer key in the cache's type."""
    a = from_hf_config(_config().to_dict())
    full, sliding = 13, 33
    own = full * (512 + 64 + 128) * 2 + sliding * (1024 + 64) * 2
    vllm = estimate(a, Scenario(engine="vllm", tp=8, gpu="h200", weight_format="fp8-block", context_tokens=32768))
    assert vllm.kv_bytes_per_token == full * ((1024 + 64) * 2 + 132) + sliding * (1024 + 64) * 2
    for engine in ("transformers", "llamacpp"):
        e = estimate(a, Scenario(engine=engine, weight_format="Q4_K_M" if engine == "llamacpp" else "bf16",
                                 context_tokens=32768))
        assert e.kv_bytes_per_token == own
    # llama.cpp's attn_k_b / attn_v_b per layer (src/models/dots3note.cpp: {nope, kv_lora_rank, heads} of the layer)
    shapes = {gguf_name(t, a): t.shape for t in gguf_tensors(a) if t.kind in ("k_b", "v_b")}
    assert shapes["blk.2.attn_k_b.weight"] == (64, 1024, 192) and shapes["blk.1.attn_k_b.weight"] == (128, 512, 128)
    assert shapes["blk.2.attn_v_b.weight"] == (64, 128, 1024)


def test_vllm_pads_the_dense_mlp_and_the_shared_expert_to_whole_fp8_blocks_on_every_rank():
    """`_padded_mlp_size`: ceil(I / 128 / tp) x 128 x tp, so at TP 8 the shared experts' 1,536 become 2,048 and the
    dense layer's 13,824 14,336 (their 128 x 128 blocks' fp32 scales with them); bf16 and TP 1 pad nothing."""
    a = from_hf_config(_config().to_dict())
    vllm, every = get_engine("vllm"), range(a.num_layers)

    def padding(fmt, tp):  # beside the dequantized kv_b_proj and the bf16 indexer every quantized DSA layer adds
        sc = Scenario(engine="vllm", tp=tp, gpu="h200", weight_format=fmt, context_tokens=4096)  # (test_vllm.py)
        x = inputs(a, sc, np.asarray(4096), np.asarray(1))
        return vllm.weight_extra(x, every) - vllm.dequantized_kv_b_bytes(x, every) - vllm.indexer_upcast_bytes(x, every)

    assert padding("bf16", 8) == padding("fp8-block", 1) == 0
    hidden = a.hidden_size
    values = 45 * 3 * hidden * (2048 - 1536) + 3 * hidden * (14336 - 13824)
    scales = 4 * (45 * 3 * 40 * (16 - 12) + 3 * 40 * (112 - 108))  # (rows / 128) x (columns / 128) fp32 a matrix
    assert padding("fp8-block", 8) == pytest.approx((values + scales) / 8, rel=0.01)


def test_a_width_typed_in_applies_to_every_layer():
    """The scenario editor changes kv_lora_rank or qk_nope_head_dim through `with_changes`: the typed width replaces
    the per-layer ones, as a typed head count replaces per-layer heads."""
    a = from_hf_config(_config().to_dict())
    b = a.with_changes(kv_lora_rank=256, qk_nope_head_dim=64, num_heads=32, num_kv_heads=32)
    assert {b.layer_kv_lora(i) for i in range(46)} == {256} and {b.layer_nope_dim(i) for i in range(46)} == {64}
    assert {b.layer_num_heads(i) for i in range(46)} == {32}
    assert b.with_changes(num_layers=50).layer_kv_lora_ranks == ()
    deeper = a.with_changes(num_layers=50)  # more layers follow the kinds' pattern, each kind its own width
    assert {(kind, deeper.layer_kv_lora(i)) for i, kind in enumerate(deeper.layer_types)} == {(FULL, 512),
                                                                                            (SLIDING, 1024)}
