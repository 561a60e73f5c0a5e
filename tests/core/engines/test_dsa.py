"""DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer's weights and the key it caches a token
beside MLA's latent, in each engine's format, checked on a real transformers run."""

import warnings

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate, inputs
from memviz.core.inventory import parameter_count
from memviz.core.tensor_table import tensor_table
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


@pytest.mark.parametrize("gpu, kv, latent", [("h200", "fp8", 656), ("h200", "bf16", 1152), ("b200", "fp8", 576),
                                             ("b200", "bf16", 1152), ("rtx-pro-6000", "bf16", 656), (None, "fp8", 576)])
def test_vllm_keeps_the_latent_as_its_sparse_backend_for_the_gpu_does(gpu, kv, latent):
    """vLLM 0.33 picks the sparse-MLA backend by compute capability: on Hopper an FP8 cache goes to FLASHMLA_SPARSE
    in fp8_ds_mla rows of 656 bytes (512 FP8 values, 4 fp32 scales, 64 bf16 rope values), on Blackwell B200 to
    FlashInfer's backend in plain 576-byte rows, on SM120 always to fp8_ds_mla; the indexer's 132 bytes beside it;
    the blocks hold 64 tokens (the indexer backend's kernel block); an unnamed GPU keeps the plain row."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.AutoConfig.for_model("deepseek_v32").to_dict())
    e = estimate(a, Scenario(engine="vllm", gpu=gpu, kv_format=kv, tp=8, weight_format="fp8-block",
                             context_tokens=8192))
    assert e.kv_bytes_per_token == 61 * (latent + 132)
    assert e.engine_facts["block_size"] == 64


def test_vllm_refuses_sparse_mla_where_it_has_no_backend():
    """No sparse-MLA backend runs on Ampere or Ada, and none keeps an int8 cache: one line each."""
    from memviz.core.errors import InputError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.AutoConfig.for_model("deepseek_v32").to_dict())
    with pytest.raises(InputError, match="compute capability 8.0"):
        estimate(a, Scenario(engine="vllm", gpu="a100-80g", tp=8, context_tokens=8192))
    with pytest.raises(InputError, match="MLA backends take no int8_per_token_head cache"):
        estimate(a, Scenario(engine="vllm", gpu="h200", kv_format="int8", tp=8, context_tokens=8192))


def test_vllm_holds_the_indexer_whole_and_in_bf16_on_every_rank():
    """vLLM's indexer (models/deepseek_v32/attention.py): wq_b replicated, wk and weights_proj one disable_tp linear
    without quantization: DeepSeek-V3.2's FP8 wk and weights_proj are held in bf16 on every rank (1,375,808 bytes
    more a layer, 61 layers); a bf16 checkpoint gains nothing."""
    from memviz.core.engines import get_engine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.AutoConfig.for_model("deepseek_v32").to_dict())
    vllm = get_engine("vllm")
    sc = Scenario(engine="vllm", gpu="h200", context_tokens=8192, tp=8)
    per_layer = (128 + 64) * 7168 * 2 - (917_728 + 458_976)  # bf16 less the FP8 blocks and their scales
    fp8 = inputs(a, sc.with_changes(weight_format="fp8-block"), 8192, 1)
    assert vllm.indexer_upcast_bytes(fp8, range(61)) == 61 * per_layer == 83_924_288
    assert vllm.indexer_upcast_bytes(inputs(a, sc.with_changes(weight_format="bf16"), 8192, 1), range(61)) == 0
    whole = vllm.tp_shares(fp8, tensor_table(a, fp8.wf)) == 1
    kinds = {k for k, w in zip(tensor_table(a, fp8.wf).kinds, whole, strict=True) if w and k.startswith("indexer")}
    assert kinds >= {"indexer_q_b", "indexer_k", "indexer_proj"}
