import pytest

from memviz.core.estimate import Scenario, active_weight_bytes, estimate
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset
from memviz.core.speed import speed_bounds


def test_decode_bound_is_bytes_over_bandwidth():
    a = get_preset("llama-3.1-8b").architecture()
    e = estimate(a, Scenario(context_tokens=1024))
    g = get_gpu("h100-80g")
    s = speed_bounds(e, g)
    expected = (active_weight_bytes(a, "bf16") + e.kv_cache_required) / g.bandwidth_bytes_per_s
    assert s.decode_step_s_min == pytest.approx(expected)
    assert s.decode_tokens_per_s_max == pytest.approx(1 / expected)
    assert s.prefill_s_min > 2 * e.active_parameters * 1024 / g.bf16_flops


def test_moe_decode_reads_only_active_experts():
    a = get_preset("mixtral-8x7b").architecture()
    assert active_weight_bytes(a, "bf16") < 0.3 * estimate(a, Scenario()).bytes["weights"]
