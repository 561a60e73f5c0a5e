"""Falcon-H1: attention and a Mamba2 mixer side by side in every layer, so every layer caches K/V and holds the
mixer's state. Parameters and the cache transformers fills, run for real (tiny random models, CPU), to the element
and the byte; vLLM's groups and pages from its source (the live llama.cpp runs are in
tests/probe/test_llamacpp_live.py)."""

import warnings

import pytest

from memviz.core.arch import FULL, MAMBA2, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import run_and_compare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = dict(vocab_size=512, hidden_size=128, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
            num_key_value_heads=2, mamba_d_ssm=128, mamba_n_heads=8, mamba_d_head=16, mamba_n_groups=1,
            mamba_d_state=16, mamba_d_conv=4, mamba_chunk_size=16)


@pytest.mark.parametrize(("changes", "dtype"), [
    ({}, "fp32"), ({}, "bf16"), ({"mamba_rms_norm": True, "projectors_bias": True, "mamba_n_groups": 2}, "fp32"),
    ({"mamba_conv_bias": False, "mamba_proj_bias": True, "attention_bias": True, "mlp_bias": True}, "bf16")])
def test_the_cache_transformers_fills_is_memviz_kv_and_state(changes, dtype):
    """Each layer's K and V beside its mixer's convolution state (conv_dim x kernel, model dtype) and SSM state (heads
    x head width x d_state, float32); the optional gated norm and the in_proj / out_proj biases counted apart."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.FalconH1Config(**{**TINY, **changes})
    a, model, held, kv = run_and_compare(transformers.FalconH1ForCausalLM, config, dtype)
    assert a.parallel_mamba and a.linear_mixer == MAMBA2 and a.layer_types == (FULL,) * 3 and a.state_layers == 3
    assert kv == held > 0
    assert parameter_count(a) == sum(p.numel() for p in model.parameters())


def test_vllm_registers_each_layers_attention_and_mixer_apart():
    """vLLM 0.34's FalconH1ForCausalLM: an attention layer and a MambaMixer2 per decoder layer, so 44 attention specs
    and 44 Mamba specs form two groups of 44; the attention block is the smallest multiple of the 64-token default
    block whose page holds the state (`_align_hybrid_block_size`), the state page is padded to it and a request keeps
    2 of them per mixer with prefix caching."""
    a = from_hf_config(dict(model_type="falcon_h1", hidden_size=3072, num_hidden_layers=44, num_attention_heads=12,
                            num_key_value_heads=2, head_dim=128, intermediate_size=12288, vocab_size=130049,
                            mamba_d_ssm=3072, mamba_n_heads=24, mamba_d_head=128, mamba_n_groups=1,
                            mamba_d_state=256, mamba_d_conv=4))
    f = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=32768)).engine_facts
    state = (3072 + 2 * 256) * 3 * 2 + 24 * 128 * 256 * 2  # conv state and SSM state, bf16 ("auto")
    attn = 2 * 128 * 2 * 2  # one token of one layer's K and V
    block = 64 * -(-state // (64 * attn))
    assert (f["block_size"], f["kv_groups"]) == (block, 2)
    assert f["kv_request_blocks"] == -(-32768 // block) + 2
    assert f["linear_state_layers"] == 44 and f["linear_state_bytes_per_layer_sequence"] == 2 * block * attn
    kv = estimate(a, Scenario(engine="transformers", kv_format="bf16", context_tokens=1)).kv_bytes_per_token
    assert kv == 44 * 2 * 2 * 128 * 2  # every layer caches K and V


def test_a_mixer_whose_heads_do_not_fill_its_width_is_refused():
    with pytest.raises(InputError, match=r"mamba_n_heads x mamba_d_head \(8 x 32\) must equal the mixer's width"):
        from_hf_config({"model_type": "falcon_h1", **TINY, "mamba_d_head": 32})
