"""Gemma 4 in transformers, run for real (tiny random models of each variant's shape, CPU): the cache transformers
fills holds memviz's KV to the byte, and the model holds memviz's parameters (transformers 5.24 modeling_gemma4.py)."""

import warnings

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import run_and_compare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ROPE = {"full_attention": {"rope_theta": 1e6, "rope_type": "proportional", "partial_rotary_factor": 0.25},
        "sliding_attention": {"rope_theta": 1e4, "rope_type": "default"}}
TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_attention_heads=4, head_dim=16, sliding_window=32,
            rope_parameters=ROPE, pad_token_id=0, bos_token_id=1, eos_token_id=2, global_head_dim=32)
S, F = "sliding_attention", "full_attention"
SHAPES = {
    # E2B / E4B: per-layer embeddings, the last layers reuse K/V (no cache, no K/V weights), a double-wide MLP there
    "on-device": dict(num_hidden_layers=5, layer_types=[S, S, F, S, F], num_key_value_heads=1,
                      hidden_size_per_layer_input=8, vocab_size_per_layer_input=512, num_kv_shared_layers=2,
                      use_double_wide_mlp=True, attention_k_eq_v=False),
    # 31B: full layers with wider heads, fewer KV heads and V taken from K
    "dense": dict(num_hidden_layers=6, layer_types=[S] * 5 + [F], num_key_value_heads=2, num_global_key_value_heads=1,
                  attention_k_eq_v=True, hidden_size_per_layer_input=0),
    # 26B-A4B: the same attention, a dense MLP beside routed experts in every layer
    "moe": dict(num_hidden_layers=6, layer_types=[S] * 5 + [F], num_key_value_heads=2, num_global_key_value_heads=1,
                attention_k_eq_v=True, hidden_size_per_layer_input=0, enable_moe_block=True, num_experts=4,
                moe_intermediate_size=16, top_k_experts=2),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_cache_transformers_fills_is_memviz_kv(shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.Gemma4TextConfig(**TINY, **SHAPES[shape])
    a, model, held, kv = run_and_compare(transformers.Gemma4ForCausalLM, config)
    assert kv == held > 0
    stored = sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for n, b in model.named_buffers() if "layer_scalar" in n)
    assert parameter_count(a) == stored


def test_kv_per_token_of_the_31b_layout():
    """Gemma-4-31B in bf16: 50 sliding layers of 16 KV heads x 256 (16 KiB a token each), 10 full layers of 4 KV
    heads x 512 (8 KiB): 880 KiB a token, where one geometry for every layer gave 960 KiB."""
    from memviz.core.presets import get_preset

    e = estimate(get_preset("gemma-4-31b").architecture(), Scenario(engine="transformers", kv_format="bf16"))
    assert e.kv_bytes_per_token == 50 * 16 * 1024 + 10 * 8 * 1024


def test_inconsistent_per_layer_settings_are_refused():
    cfg = transformers.Gemma4TextConfig(**TINY, **SHAPES["dense"]).to_dict()
    cfg["per_layer_config"]["0"] = {"head_dim": 64}
    with pytest.raises(InputError, match="per_layer_config"):
        from_hf_config(cfg)
