"""Qwen3.5 / Qwen3-Next / OLMo-Hybrid: gated delta-net layers beside full attention, run for real in transformers (tiny random
models, CPU): memviz's cache is the attention layers' KV and every delta-net layer's fixed state, to the byte."""

import warnings

import pytest

from memviz.core.arch import LINEAR, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import run_and_compare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
            num_key_value_heads=2, head_dim=16, linear_conv_kernel_dim=4, linear_key_head_dim=8,
            linear_value_head_dim=12, linear_num_key_heads=2, linear_num_value_heads=4, pad_token_id=0, bos_token_id=1,
            eos_token_id=2)
MOE = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=48)


@pytest.mark.parametrize(("model_type", "extra", "dtype"), [
    ("qwen3_5_text", {}, "fp32"), ("qwen3_5_text", {}, "bf16"), ("qwen3_5_moe_text", MOE, "fp32"),
    ("qwen3_next", MOE, "bf16"), ("olmo_hybrid", {}, "fp32"), ("olmo_hybrid", {}, "bf16")])
def test_the_cache_transformers_fills_is_memviz_kv_and_state(model_type, extra, dtype):
    """In bf16 the convolution state is bf16 and the recurrent state stays float32 (the delta rule runs in fp32)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type, **TINY, **extra)
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config, dtype)
    assert a.layer_types == (LINEAR, LINEAR, LINEAR, "full")
    assert kv == held > 0
    assert parameter_count(a) == sum(p.numel() for p in model.parameters())


def test_the_transformers_state_per_sequence_and_vllms_tensor_parallel_check():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.AutoConfig.for_model("qwen3_5_text").to_dict())
    with pytest.raises(InputError, match="delta-net's 16 key and 32 value heads divisible by tp"):
        estimate(a.with_changes(num_heads=12, num_kv_heads=3), Scenario(engine="vllm", context_tokens=4096, tp=3))
    e = estimate(a, Scenario(engine="transformers", context_tokens=4096, batch=2))
    # 8 full layers x 4 KV heads x 256 x K, V x 2 bytes a token; 24 delta-net layers of a 4-tap convolution over
    # 8,192 channels (bf16) and a 32 x 128 x 128 float32 state, per sequence
    assert e.bytes["kv_cache"] == 2 * (4096 * 8 * 4 * 256 * 2 * 2 + 24 * (8192 * 4 * 2 + 32 * 128 * 128 * 4))


def test_the_state_is_reported_once_per_layer_and_sequence():
    from memviz.core.presets import get_preset

    e = estimate(get_preset("qwen3.5-35b-a3b").architecture(), Scenario(engine="transformers", context_tokens=8192))
    facts = e.engine_facts
    # a 4-tap convolution over 2 x 16 x 128 + 32 x 128 channels in bf16, and 32 x 128 x 128 float32 values
    assert facts["linear_state_bytes_per_layer_sequence"] == 8192 * 4 * 2 + 32 * 128 * 128 * 4
    assert facts["linear_state_layers"] == 30
    assert e.bytes["kv_cache"] == 8192 * e.kv_bytes_per_token + 30 * facts["linear_state_bytes_per_layer_sequence"]
