"""DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer's weights and the key it caches a token
beside MLA's latent, in each engine's format, checked on a real transformers run."""

import warnings

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import run_and_compare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=3,
            num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2,
            n_shared_experts=1, first_k_dense_replace=1, q_lora_rank=32, kv_lora_rank=16, qk_rope_head_dim=8,
            qk_nope_head_dim=8, v_head_dim=16, index_n_heads=2, index_head_dim=16, index_topk=8, n_group=1,
            topk_group=1, pad_token_id=0, bos_token_id=1, eos_token_id=2)


@pytest.mark.parametrize("model_type", ["deepseek_v32", "glm_moe_dsa"])
def test_the_cache_transformers_fills_is_memviz_kv_with_the_indexer_keys(model_type):
    extra = {"index_topk_freq": 2, "mlp_layer_types": ["dense", "sparse", "sparse"]} if model_type == "glm_moe_dsa" \
        else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type, **TINY, **extra)
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config)
    assert kv == held > 0
    buffers = sum(b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)  # the routing bias
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) + buffers


def test_deepseek_v32_kv_per_token_in_each_engine():
    """61 layers of a 576-value latent (1,152 bytes in bf16) and a 128-value indexer key: 256 bytes in the cache's
    format (transformers, llama.cpp), 132 bytes of FP8 with its fp32 scale in vLLM."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.AutoConfig.for_model("deepseek_v32").to_dict())
    per_token = {engine: estimate(a, Scenario(engine=engine, kv_format=kv, context_tokens=4096)).kv_bytes_per_token
                 for engine, kv in (("transformers", "bf16"), ("llamacpp", "fp16"), ("vllm", "bf16"))}
    assert per_token == {"transformers": 61 * (1152 + 256), "llamacpp": 61 * (1152 + 256), "vllm": 61 * (1152 + 132)}
