"""vLLM 0.33's AWQ / GPTQ linear layers (memviz.core.engines.vllm_int4): GPTQ's g_idx never loaded, Marlin dropping a
symmetric checkpoint's zero points, Machete (compute capability 9.0) making AWQ's 16-bit, and act-order GPTQ refused.
Figures worked by hand from vLLM's create_weights / process_weights_after_loading for Llama-3.1-8B's layers."""

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.formats import get_weight_format, weight_bytes
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()
SHAPES = [(4096, 4096), (4096, 1024), (4096, 1024), (4096, 4096), (4096, 14336), (4096, 14336), (14336, 4096)]
G_IDX = 32 * sum(k * 4 for k, _ in SHAPES)
QZEROS = 32 * sum(k // 128 * n // 2 for k, n in SHAPES)


def weights(fmt, gpu, a=LLAMA8, tp=1):
    return estimate(a, Scenario(engine="vllm", weight_format=fmt, gpu=gpu, tp=tp, context_tokens=4096)).bytes["weights"]


def test_gptq_on_marlin_holds_neither_g_idx_nor_zero_points():
    file_bytes = weight_bytes(LLAMA8, get_weight_format("gptq-int4"))
    base = weights("bf16", "a100-80g") - weight_bytes(LLAMA8, get_weight_format("bf16"))  # the rotary table
    assert weights("gptq-int4", "a100-80g") - base == file_bytes - G_IDX - QZEROS
    assert weights("gptq-int4", "h100-80g") - base == file_bytes - G_IDX  # Machete keeps them as loaded


def test_awq_zero_points_stay_on_marlin_and_become_16_bit_on_machete():
    file_bytes = weight_bytes(LLAMA8, get_weight_format("awq-int4"))
    base = weights("bf16", "a100-80g") - weight_bytes(LLAMA8, get_weight_format("bf16"))
    assert weights("awq-int4", "a100-80g") - base == file_bytes
    assert weights("awq-int4", "h100-80g") - base == file_bytes + 32 * sum(k // 128 * n * 2 - k // 128 * n // 2
                                                                           for k, n in SHAPES)


def test_tensor_parallel_ranks_share_the_difference():
    one, two = weights("gptq-int4", "a100-80g"), weights("gptq-int4", "a100-80g", tp=2)
    assert two == pytest.approx(one / 2, rel=0.01)


def test_act_order_gptq_is_refused_as_vllm_refuses_it():
    cfg = {**get_preset("llama-3.1-8b").config, "quantization_config": {"quant_method": "gptq", "bits": 4,
                                                                         "group_size": 128, "desc_act": True}}
    a = from_hf_config(cfg)
    with pytest.raises(InputError, match="desc_act=True"):
        estimate(a, Scenario(engine="vllm", weight_format="gptq-int4", gpu="a100-80g"))
    estimate(a, Scenario(engine="transformers", weight_format="gptq-int4", gpu="a100-80g"))  # transformers runs it


def test_experts_drop_only_their_g_idx():
    """Qwen3-30B-A3B in GPTQ on an A100: every expert's gate, up (K 2,048) and down (K 768) loses its g_idx; the
    attention's q, k, v (K 2,048 -> 4,096, 512, 512) and o (K 4,096 -> 2,048) their g_idx and zero points."""
    from memviz.core.engines import vllm_int4
    a = get_preset("qwen3-30b-a3b").architecture()
    experts = 48 * 128 * (2048 + 2048 + 768) * 4
    attention = 48 * sum(k * 4 + k // 128 * n // 2 for k, n in [(2048, 4096), (2048, 512), (2048, 512), (4096, 2048)])
    assert vllm_int4.held_bytes(a, "gptq-int4", (8, 0), range(48)) == (-experts, -attention)
    assert vllm_int4.held_bytes(a, "awq-int4", (8, 0), range(48)) == (0, 0)


def test_8_bit_gptq_follows_the_4_bit_rules():
    """vLLM 0.34 runs 8-bit GPTQ (uint8b128) on the same kernels: no g_idx, Marlin without the (byte-wide) zero
    points, Machete with them."""
    file_bytes = weight_bytes(LLAMA8, get_weight_format("gptq-int8"))
    qzeros8 = 32 * sum(k // 128 * n for k, n in SHAPES)
    base = weights("bf16", "a100-80g") - weight_bytes(LLAMA8, get_weight_format("bf16"))
    assert weights("gptq-int8", "a100-80g") - base == file_bytes - G_IDX - qzeros8
    assert weights("gptq-int8", "h100-80g") - base == file_bytes - G_IDX
