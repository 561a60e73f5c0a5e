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


def test_an_embedding_kept_in_host_memory_is_not_read_per_token():
    """llama.cpp keeps the token embedding on the host; decoding looks rows up, so the bound is the GPU's alone,
    while offloaded layers are read from host memory each step."""
    from memviz.core.speed import HOST_READ_BYTES_PER_S

    a, gpu = get_preset("llama-3.1-8b").architecture(), get_gpu("rtx4090")
    full = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=8192))
    assert full.host.weights > 0 and full.host_read_bytes == 0
    step = (active_weight_bytes(a, "Q4_K_M") + full.kv_cache_required) / gpu.bandwidth_bytes_per_s
    assert speed_bounds(full, gpu).decode_step_s_min == pytest.approx(step)
    half = estimate(a, full.scenario.with_changes(gpu_layers=16))
    assert half.host_read_bytes > 0.4 * active_weight_bytes(a, "Q4_K_M")
    host_step = half.host_read_bytes / HOST_READ_BYTES_PER_S["llamacpp"]
    assert speed_bounds(half, gpu).decode_step_s_min > host_step


def test_weights_the_engine_dequantized_are_read_as_16_bit():
    """transformers runs an FP8 release on an A100 as bf16 (and gpt-oss's MXFP4 experts without `kernels`): the
    decode bound reads what memory holds, not the file's bytes."""
    a, gpu = get_preset("llama-3.1-8b").architecture(), get_gpu("a100-80g")

    def step(fmt: str, on: str) -> float:
        sc = Scenario(engine="transformers", weight_format=fmt, gpu=on, context_tokens=1024)
        return speed_bounds(estimate(a, sc), gpu).decode_step_s_min

    assert step("fp8-block", "a100-80g") == pytest.approx(step("bf16", "a100-80g"))
    assert step("fp8-block", "h100-80g") < 0.6 * step("bf16", "h100-80g")
    gpt_oss = get_preset("gpt-oss-20b").architecture()
    assert active_weight_bytes(gpt_oss, "mxfp4-moe", frozenset({"mxfp4"})) == pytest.approx(
        active_weight_bytes(gpt_oss, "bf16"))
