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


def test_engines_that_cannot_run_it_and_shared_latents_are_refused():
    a = from_hf_config(transformers.AutoConfig.for_model("mistral_large4").to_dict())
    with pytest.raises(InputError, match="does not run mistral_large4_text: memviz does not model its cache yet"):
        estimate(a, Scenario(engine="vllm", weight_format="bf16", gpu="b200", tp=8))
    with pytest.raises(InputError, match="cannot run mistral_large4_text"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M"))
    cfg = transformers.AutoConfig.for_model("mistral_large4").to_dict()
    text = cfg["text_config"]
    cfg["text_config"] = {**text, "kv_source_layers": [0, 0] + list(range(2, text["num_hidden_layers"]))}
    with pytest.raises(InputError, match="kv_source_layers"):
        from_hf_config(cfg)
