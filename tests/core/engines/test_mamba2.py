"""Granite-4.0-H: Mamba2 layers beside a few attention layers. Parameters and the cache transformers fills, run for
real (tiny random models, CPU), to the element and the byte; vLLM's state pages and tensor-parallel rules from
vllm 0.33's source; the importer's spellings and refusals."""

import warnings

import pytest

from memviz.core.arch import FULL, LINEAR, MAMBA2, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import active_parameter_count, parameter_count
from tests.core.engines.transformers_runs import run_and_compare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = dict(vocab_size=512, hidden_size=128, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=48, shared_intermediate_size=96, num_local_experts=4, num_experts_per_tok=2,
            mamba_d_state=16, mamba_n_groups=1, mamba_n_heads=8, mamba_d_head=32, mamba_expand=2, mamba_d_conv=4,
            mamba_chunk_size=16, position_embedding_type="nope", pad_token_id=0, bos_token_id=1, eos_token_id=2,
            layer_types=["mamba", "mamba", "attention", "mamba"])
LAYERS = ["mamba"] * 5 + ["attention"] + (["mamba"] * 9 + ["attention"]) * 3 + ["mamba"] * 4
#: ibm-granite/granite-4.0-h-small's config.json (the fields memviz reads; mamba_n_heads 128 x mamba_d_head 64 =
#: mamba_expand x hidden_size): 32B parameters in all, 9B active, as IBM's model card gives them
GRANITE_H_SMALL = dict(model_type="granitemoehybrid", hidden_size=4096, num_hidden_layers=40, num_attention_heads=32,
                       num_key_value_heads=8, num_local_experts=72, num_experts_per_tok=10, intermediate_size=768,
                       shared_intermediate_size=1536, mamba_d_state=128, mamba_d_conv=4, mamba_expand=2,
                       mamba_n_heads=128, mamba_d_head=64, mamba_n_groups=1, tie_word_embeddings=True,
                       vocab_size=100352, max_position_embeddings=131072, layer_types=LAYERS)


def _config(**changes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoConfig.for_model("granitemoehybrid", **{**TINY, **changes})


@pytest.mark.parametrize(("changes", "dtype"), [
    ({}, "fp32"), ({}, "bf16"), ({"num_local_experts": 0, "num_experts_per_tok": 0}, "bf16"),
    ({"mamba_n_groups": 2, "mamba_proj_bias": True, "mamba_conv_bias": False, "tie_word_embeddings": False}, "fp32")])
def test_the_cache_transformers_fills_is_memviz_kv_and_state(changes, dtype):
    """The convolution state (conv_dim x kernel) in the model's dtype, the SSM state (heads x head width x d_state)
    in float32, the attention layer's K and V: memviz's transformers cache to the byte, its parameters exact."""
    config = _config(**changes)
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config, dtype)
    assert a.linear_mixer == MAMBA2 and a.layer_types == (LINEAR, LINEAR, FULL, LINEAR)
    assert kv == held > 0
    assert parameter_count(a) == sum(p.numel() for p in model.parameters())


def test_granite_h_small_counts_as_published():
    a = from_hf_config(GRANITE_H_SMALL)
    assert parameter_count(a) == pytest.approx(32e9, rel=0.01)
    assert active_parameter_count(a) == pytest.approx(9e9, rel=0.03)
    e = estimate(a, Scenario(engine="transformers", context_tokens=32768, batch=2))
    # 4 attention layers x 8 KV heads x 128 x K, V x 2 bytes a token; 36 Mamba2 layers of a 4-tap convolution over
    # 8,192 + 2 x 128 channels (bf16) and a 128 x 64 x 128 float32 state, per sequence
    assert e.bytes["kv_cache"] == 2 * (32768 * 4 * 8 * 128 * 2 * 2 + 36 * (8448 * 4 * 2 + 128 * 64 * 128 * 4))


def test_the_layer_list_under_either_name_and_spelling():
    alias = {k: v for k, v in GRANITE_H_SMALL.items() if k != "layer_types"} | {"layers_block_type": LAYERS}
    renamed = GRANITE_H_SMALL | {"layer_types": ["linear_attention" if k == "mamba" else "full_attention"
                                                 for k in LAYERS]}
    assert from_hf_config(alias) == from_hf_config(renamed) == from_hf_config(GRANITE_H_SMALL)
    dense = from_hf_config(GRANITE_H_SMALL | {"num_local_experts": 0, "shared_intermediate_size": 8192})
    assert not dense.is_moe and dense.intermediate_size == 8192  # its MLP is shared_mlp


@pytest.mark.parametrize(("changes", "message"), [
    ({"layer_types": None}, "lists no layer_types"),
    ({"layer_types": ["mamba"] * 39 + ["conv"]}, "unknown layer kinds conv"),
    ({"mamba_n_heads": 100}, "must equal mamba_expand x hidden_size"),
    ({"layer_types": ["mamba"] * 39}, "layer_types has 39 entries for 40 layers")])
def test_a_config_that_cannot_describe_the_model_is_refused(changes, message):
    cfg = {k: v for k, v in (GRANITE_H_SMALL | changes).items() if v is not None}
    with pytest.raises(InputError, match=message):
        from_hf_config(cfg)


def test_vllm_state_pages_and_tensor_parallel_rules():
    """vLLM 0.34 `mamba2_state_shape`: a single group of B and C is repeated on every rank, the heads split, the state
    in the model's dtype (mamba_cache_dtype / mamba_ssm_cache_dtype "auto"); `_align_hybrid_block_size` grows the
    attention block to the smallest multiple of 64 tokens (0.34's default block) whose page holds that state; Mamba2
    exports no prefill checkpoints, so with prefix caching (on for hybrid models) a request keeps 2 pages per Mamba2 group, even on
    an H100. 4 attention and 36 Mamba2 layers make 10 groups of 4."""
    a = from_hf_config(GRANITE_H_SMALL)
    for tp in (1, 2, 4):
        state = (8192 + 2 * 128 * tp) // tp * 3 * 2 + 128 // tp * 64 * 128 * 2
        attn = 8 // tp * 128 * 2 * 2  # one token of one attention layer on this rank, bf16 K and V
        block = 64 * -(-state // (64 * attn))
        f = estimate(a, Scenario(engine="vllm", gpu="h100-80g", tp=tp, context_tokens=32768, batch=1)).engine_facts
        assert (f["block_size"], f["kv_groups"], f["kv_request_blocks"]) == (block, 10, -(-32768 // block) + 9 * 2)
        assert f["linear_state_bytes_per_layer_sequence"] == 2 * block * attn
    with pytest.raises(InputError, match=r"Mamba2 layers' 120 heads divisible by tp \(16\)"):
        estimate(a.with_changes(linear_v_heads=120), Scenario(engine="vllm", tp=16, context_tokens=4096))
    # no attention layer: vLLM's attention-free rule, a max_model_len block of one unpadded state page a layer
    free = estimate(a.with_changes(layer_types=(LINEAR,) * 40),
                    Scenario(engine="vllm", gpu="H100 80GB", context_tokens=4096))
    assert (free.engine_facts["block_size"], free.engine_facts["kv_request_blocks"]) == (4096, 1)
    with pytest.raises(InputError, match="and their 3 groups too, or one group"):
        estimate(a.with_changes(linear_k_heads=3), Scenario(engine="vllm", tp=2, context_tokens=4096))


def test_transformers_reference_scan_and_the_mamba_ssm_kernels():
    """Without mamba_ssm transformers' PyTorch scan holds three chunk x chunk fp32 matrices per head and token
    (tests/probe/test_workspace_live.py measures it); the `mamba_kernels` option takes the fused kernels' workspace."""
    a = from_hf_config(GRANITE_H_SMALL)
    sc = dict(engine="transformers", context_tokens=32768, batch=1, gpu="h100-80g")
    reference = estimate(a, Scenario(**sc)).bytes["activations"]
    fused = estimate(a, Scenario(**sc, options=(("mamba_kernels", True),))).bytes["activations"]
    assert reference - fused >= 3 * 128 * 256 * 32768 * 4 * 0.9  # most of the 12 GiB of chunk matrices go


@pytest.mark.parametrize(("changes", "dtype"), [
    ({}, "fp32"), ({}, "bf16"),
    ({"attention_bias": True, "mlp_bias": True, "mamba_proj_bias": True, "mamba_n_groups": 2}, "bf16")])
def test_bamba_is_granites_mamba2_beside_a_gated_mlp(changes, dtype):
    """BambaConfig: attention at attn_layer_indices, Granite's Mamba2 mixer elsewhere, a gated MLP in every layer:
    parameters and transformers' cache exact. vLLM removed Bamba in 0.23, so the vLLM engine refuses it; llama.cpp
    converts it as granitehybrid (conversion/granite.py `GraniteHybridModel`), written so by gguf_build."""
    from memviz.probe.gguf_build import check_supported

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("bamba", **{
            **{k: TINY[k] for k in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                                    "num_key_value_heads", "mamba_d_state", "mamba_n_heads", "mamba_d_head",
                                    "mamba_d_conv", "mamba_chunk_size", "pad_token_id", "bos_token_id", "eos_token_id")},
            "intermediate_size": 96, "attn_layer_indices": [2], **changes})
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config, dtype)
    assert a.linear_mixer == MAMBA2 and a.layer_types == (LINEAR, LINEAR, FULL, LINEAR) and not a.is_moe
    assert kv == held > 0
    assert parameter_count(a) == sum(p.numel() for p in model.parameters())
    assert check_supported(a) == "granitehybrid"
    with pytest.raises(InputError, match="vLLM 0.34 does not run bamba: 0.23 removed it"):
        estimate(a, Scenario(engine="vllm", context_tokens=64))
