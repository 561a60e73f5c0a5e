"""Mistral Large 4's language model (transformers 5.24 modeling_mistral_large4.py): GLM-5's DSA attention without a
query LoRA, every fourth layer without RoPE (a narrower latent, a wider nope part), a learned softmax scale and
bias per head in the attention and the indexer (whose input has a LayerNorm of its own), DeepSeek-V3's experts with
a shared one, a learned alpha per rotary frequency. Read before as a warned Llama-style decoder: -0.83 % (the shared
experts and the indexer missed), its latent 12.5 % wide in the NoPE layers and the indexer keys not cached."""

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.core.engines.transformers_runs import transformers_weights, wrapped_language_model  # noqa: E402


def test_the_default_config_counts_what_transformers_builds_to_the_byte():
    """MistralLarge4Config's default: its language model's 1,050,118,202,912 elements and bf16 bytes (router and
    rotary alphas float32), its Pixtral tower counted apart."""
    config, elements, nbytes = wrapped_language_model("mistral_large4", r"vision|multi_modal|projector|patch_merger")
    a = from_hf_config(config.to_dict())
    assert a.model_type == "mistral_large4_text" and not a.warnings
    assert parameter_count(a) == elements == 1_050_118_202_912
    assert transformers_weights(a) == nbytes
    assert [e.family for e in a.encoders] == ["pixtral"]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_a_tiny_real_run_fills_the_cache_memviz_predicts(dtype):
    """The latent (kv_lora_rank + rope, the rope part absent in the NoPE layer) and the indexer's key per token and
    layer, as the real DynamicCache holds them; the parameters too."""
    from transformers.models.mistral_large4.configuration_mistral_large4 import MistralLarge4TextConfig

    from tests.core.engines.transformers_runs import run_and_compare

    config = MistralLarge4TextConfig(
        hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, kv_lora_rank=32,
        qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, index_n_heads=2, index_head_dim=16, index_topk=8,
        vocab_size=512, first_k_dense_replace=1, n_group=1, topk_group=1)
    a, model, held, kv = run_and_compare(transformers.AutoModel.from_config, config, dtype)
    assert a.nope_layers == (False, False, False, True)
    assert kv == held == 24 * (3 * (32 + 8 + 16) + (32 + 16)) * (4 if dtype == "fp32" else 2)
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) + 512 * 64  # its LM head apart


TINY = dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=8, num_attention_heads=4,
            num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, kv_lora_rank=32,
            qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, index_n_heads=2, index_head_dim=16, index_topk=8,
            vocab_size=512, first_k_dense_replace=1, n_group=1, topk_group=1)
#: layers 1, 2 and 6 read an earlier latent of their kind (layers 3 and 7 are NoPE); 2 and 6 still run an indexer
SHARING = dict(kv_source_layers=[0, 0, 0, 3, 4, 4, 4, 3], indexer_types=["full", "shared", "full", "full", "full",
                                                                       "shared", "full", "full"])


def test_a_tiny_real_run_with_kv_sharing_caches_what_memviz_predicts():
    """A layer reading another's latent caches none (MistralLarge4TextAttention.is_kv_shared_layer), and holds no
    kv_a_proj_with_mqa or kv_a_layernorm, but keeps its own indexer's keys where it runs one ("reuse_but_indexer")."""
    from transformers.models.mistral_large4.configuration_mistral_large4 import MistralLarge4TextConfig

    from tests.core.engines.transformers_runs import run_and_compare

    config = MistralLarge4TextConfig(**TINY, **SHARING)
    a, model, held, kv = run_and_compare(transformers.AutoModel.from_config, config, "fp32")
    assert a.kv_sources == (0, 0, 0, 3, 4, 4, 4, 3)
    rope, nope, indexer = (32 + 8) * 4, 32 * 4, 16 * 4
    assert kv == held == 24 * (2 * rope + nope + 6 * indexer)  # latents of 0 and 4 (RoPE), 3 (NoPE); 6 indexers
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) + 512 * 64


def test_a_shared_latent_of_the_other_rope_kind_is_refused():
    cfg = {**transformers.AutoConfig.for_model("mistral_large4_text", **TINY).to_dict(),
           "kv_source_layers": [0, 1, 2, 2, 4, 5, 6, 7]}  # layer 3 is NoPE, layer 2 not
    with pytest.raises(InputError, match="layer 3 reads the latent of layer 2"):
        from_hf_config(cfg)


def test_vllm_caches_every_latent_576_wide_and_the_indexer_keys_in_fp8():
    """vLLM 0.34 (vllm/models/mistral/nvidia/attention.py): the NoPE layers run the RoPE layers' 576-wide latent
    layout, the indexer keys 128 FP8 values and an fp32 scale (`MistralIndexerCache`), 64-token blocks; with an
    FP8 cache on Hopper the latent in 656-byte fp8_ds_mla rows."""
    a = from_hf_config(transformers.AutoConfig.for_model("mistral_large4").to_dict())
    bf16 = estimate(a, Scenario(engine="vllm", weight_format="fp8", gpu="h200", tp=8, context_tokens=8192))
    assert bf16.kv_bytes_per_token == 72 * ((512 + 64) * 2 + 128 + 4)
    assert bf16.engine_facts["kv_block_bytes"] == 64 * bf16.kv_bytes_per_token
    fp8 = estimate(a, Scenario(engine="vllm", weight_format="fp8", gpu="h200", tp=8, kv_format="fp8",
                               context_tokens=8192))
    assert fp8.kv_bytes_per_token == 72 * (656 + 132)
    # its class runs from the release's Mistral-format files, which the command asks for
    assert "--tokenizer-mode mistral --config-format mistral --load-format mistral" in bf16.launch_command()


def test_vllm_holds_no_latent_for_the_sharing_layers():
    a = from_hf_config(transformers.AutoConfig.for_model("mistral_large4_text", **TINY, **SHARING).to_dict())
    e = estimate(a, Scenario(engine="vllm", weight_format="bf16", gpu="h100-80g", context_tokens=1024))
    assert e.kv_bytes_per_token == 3 * (32 + 8) * 2 + 6 * (16 + 4)


def test_engines_that_cannot_run_it_are_refused():
    a = from_hf_config(transformers.AutoConfig.for_model("mistral_large4").to_dict())
    with pytest.raises(InputError, match="cannot run mistral_large4_text"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M"))


def test_vllm_pipeline_stages_must_hold_the_latents_they_read_and_start_with_an_indexer():
    """vLLM splits 8 layers over 3 stages as 3, 3, 2 (`get_pp_indices`): layer 6 would read layer 4's latent from
    the stage before, and over 4 stages layer 2 layer 0's (`_check_pp_stage` asserts); a stage starting at a layer
    that reuses an earlier selection is refused too."""
    from memviz.core.engines.vllm_pipeline import pipeline_split

    assert pipeline_split(8, 3) == [range(0, 3), range(3, 6), range(6, 8)]
    assert pipeline_split(10, 4) == [range(0, 2), range(2, 5), range(5, 8), range(8, 10)]
    a = from_hf_config(transformers.AutoConfig.for_model("mistral_large4_text", **TINY, **SHARING).to_dict())
    with pytest.raises(InputError, match="layers 6-7 would not hold the latent layer 6 reads"):
        estimate(a, Scenario(engine="vllm", weight_format="bf16", gpu="h100-80g", pp=3, context_tokens=1024))
    with pytest.raises(InputError, match="layers 2-3 would not hold the latent layer 2 reads"):
        estimate(a, Scenario(engine="vllm", weight_format="bf16", gpu="h100-80g", pp=4, context_tokens=1024))
    kinds = ["full", "shared", "full", "shared", "full", "full", "full", "full"]
    b = from_hf_config(transformers.AutoConfig.for_model("mistral_large4_text", **TINY, indexer_types=kinds).to_dict())
    with pytest.raises(InputError, match="layers 3-5 starts at a layer reusing"):
        estimate(b, Scenario(engine="vllm", weight_format="bf16", gpu="h100-80g", pp=3, context_tokens=1024))
    assert estimate(b, Scenario(engine="vllm", weight_format="bf16", gpu="h100-80g", pp=2, context_tokens=1024))


def test_vllm_holds_the_latent_projections_unquantized_whatever_the_format():
    """`MistralMLAAttention` builds kv_a_proj_with_mqa (whole on every rank) and kv_b_proj (split) without
    quant_config: an FP8 estimate holds them in bf16, and no dequantized copy of kv_b_proj beside them, where the
    same layers under GLM-5's class keep them FP8 and a dequantized kv_b_proj."""
    from dataclasses import replace

    from memviz.core.formats import get_weight_format, tensor_bytes

    a = from_hf_config(transformers.AutoConfig.for_model("mistral_large4_text", **TINY).to_dict())
    sc = Scenario(engine="vllm", weight_format="fp8", gpu="h100-80g", tp=2, context_tokens=1024)
    mistral, glm = estimate(a, sc), estimate(replace(a, model_type="glm_moe_dsa"), sc)
    rows = [(t, n) for t, _, n in tensor_bytes(a, get_weight_format("fp8")) if t.kind in ("kv_a", "kv_b")]
    kv_a = sum(t.numel * 2 - n for t, n in rows if t.kind == "kv_a")
    kv_b = sum(t.numel * 2 - n for t, n in rows if t.kind == "kv_b") / 2
    copy = sum(t.numel * 2 for t, _ in rows if t.kind == "kv_b") / 2
    assert kv_a > 0 and kv_b > 0
    assert mistral.bytes["weights"] - glm.bytes["weights"] == pytest.approx(kv_a + kv_b - copy, abs=1)
