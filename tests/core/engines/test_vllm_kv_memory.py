"""vLLM's --kv-cache-memory-bytes (vLLM 0.33 gpu_worker.py `determine_available_memory`): the pool as set, in
whole blocks, whatever gpu_memory_utilization says; the sequences judged against it; a pool the GPU cannot hold
beside the rest refused."""

import pytest

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import capacity_bytes, estimate_fits, fits, max_batch, max_context, needed_bytes
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset
from memviz.core.units import GiB

LLAMA8 = get_preset("llama-3.1-8b").architecture()
RTX4090 = get_gpu("rtx4090")
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # Llama 3.1 8B in bf16: 128 KiB a token


def scenario(pool="4GiB", **kw):
    kw = {"engine": "vllm", "weight_format": "bf16", "kv_format": "bf16", "gpu": "rtx4090", "context_tokens": 8192,
          "batch": 4, **kw}
    options = kw.pop("options", {}) | ({"kv_cache_memory_bytes": pool} if pool else {})
    return Scenario(options=options, **kw)


def test_the_pool_is_the_size_set_whatever_the_utilization():
    for util in (0.5, 0.9):
        est = estimate(LLAMA8, scenario(gpu_memory_utilization=util))
        f = est.engine_facts
        assert f["kv_pool_bytes"] == f["kv_cache_memory_bytes"] == 4 * GiB
        assert f["kv_blocks"] == 4 * GiB // (64 * KV_PER_TOKEN) == 512
        assert f["kv_pool_tokens"] == 32_768 and f["max_concurrency"] == 4.0
        assert est.bytes["kv_cache"] == 4 * GiB


def test_a_size_between_blocks_keeps_whole_blocks():
    est = estimate(LLAMA8, scenario(pool=str(4 * GiB + 16 * KV_PER_TOKEN - 1)))
    assert est.engine_facts["kv_pool_bytes"] == 4 * GiB and est.engine_facts["kv_cache_memory_bytes"] == 4 * GiB + 2097151


def test_sizes_read_in_binary_and_decimal_units_and_bytes():
    assert estimate(LLAMA8, scenario(pool="4GB")).engine_facts["kv_cache_memory_bytes"] == 4 * 10**9
    assert estimate(LLAMA8, scenario(pool=str(4 * GiB))).engine_facts["kv_cache_memory_bytes"] == 4 * GiB
    for bad, says in (("4G", "cannot read a memory size"), ("100", "has no unit"), ("-1GiB", "positive")):
        with pytest.raises(InputError, match=says):
            estimate(LLAMA8, scenario(pool=bad))


def test_the_sequences_fit_when_they_fit_the_pool():
    sc = scenario()  # 4 x 8,192 tokens x 128 KiB = 4 GiB: exactly the pool
    est = estimate(LLAMA8, sc)
    assert needed_bytes(est) == capacity_bytes(RTX4090, sc, LLAMA8) and estimate_fits(est, RTX4090)
    assert max_context(LLAMA8, sc, RTX4090) == 8192 and max_batch(LLAMA8, sc, RTX4090) == 4
    assert not fits(LLAMA8, sc.with_changes(batch=5), RTX4090)
    smaller = scenario(pool="2GiB")  # half the pool: half the sequences, though the GPU has room for more
    assert max_batch(LLAMA8, smaller, RTX4090) == 2 and not estimate_fits(estimate(LLAMA8, smaller), RTX4090)
    # the default budget (0.9 x the CUDA total) leaves 5.09 GiB for the pool: one sequence more
    assert max_batch(LLAMA8, scenario(pool=None), RTX4090) == 5


def test_a_pool_the_gpu_cannot_hold_beside_the_rest_is_refused():
    sc = scenario(pool="12GiB")
    est = estimate(LLAMA8, sc)
    refusal = est.engine_facts["refusal"]
    assert "would run out of memory" in refusal and "12.00 GiB" in refusal
    rest = needed_bytes(est) - est.kv_cache_required
    largest = RTX4090.cuda_total_bytes - 686 * 2**20 - rest  # what CUDA leaves after its context, less the rest
    assert f"at most {largest / GiB:.2f} GiB fits" in refusal
    assert est.engine_facts["kv_pool_bytes"] == 0  # vLLM does not start: no pool
    assert not estimate_fits(est, RTX4090) and max_context(LLAMA8, sc, RTX4090) == 0
    assert estimate(LLAMA8, scenario(pool=f"{largest / GiB - 0.01:.2f}GiB")).engine_facts.get("refusal") is None


def test_one_request_beyond_the_pool_is_refused_as_vllm_does():
    est = estimate(LLAMA8, scenario(pool="512MiB", context_tokens=8192, batch=1))  # 1 GiB for one request
    assert "one request of max_model_len 8,192 tokens needs 1.00 GiB" in est.engine_facts["refusal"]
    assert "the largest max_model_len that fits is 4,096" in est.engine_facts["refusal"]


def test_the_launch_command_sets_it_in_bytes():
    cmd = estimate(LLAMA8, scenario(pool="4GiB")).launch_command()
    assert cmd.endswith("--kv-cache-memory-bytes 4294967296")
    assert "--kv-cache-memory-bytes" not in estimate(LLAMA8, scenario(pool=None)).launch_command()


def test_a_published_pinned_pool_in_tokens():
    """A published start-up (a DGX Spark serving report, 2026-10-01: Qwen3-Embedding-8B, whose attention is
    Qwen3-8B's: 36 layers of 8 KV heads of 128 in bf16, 144 KiB a token) with --kv-cache-memory-bytes 4831838208
    at max_model_len 4,096: "reserved 4.5 GiB memory for KV Cache", "GPU KV cache 32,768 tokens", "maximum
    concurrency 8.00x"."""
    a = get_preset("qwen3-8b").architecture()
    sc = Scenario(engine="vllm", weight_format="bf16", kv_format="bf16", gpu="NVIDIA GB10", context_tokens=4096,
                  batch=8, options=(("kv_cache_memory_bytes", "4831838208"),))
    f = estimate(a, sc).engine_facts
    assert f["kv_pool_bytes"] == 4831838208 and f["kv_pool_tokens"] == 32_768 and f["max_concurrency"] == 8.0


@pytest.mark.parametrize(("pool_gib", "graphs_gib", "printed_gib"), [
    (27.85, 0.32, 27.39),  # a published TP 2 start-up on 95 GiB GPUs (vLLM 0.3x: "Current kv cache memory in use")
    (3.01, 0.04, 2.82),  # a 15.51 GiB GPU at 0.92
    (17.79, 0.25, 17.39),  # TP 2 / EP on 94.97 GiB GPUs at 0.91
    (8.64, 0.28, 8.21),  # tests/core/importers/test_logs.py BOOT_097
])
def test_the_suggestion_is_vllms_arithmetic(pool_gib, graphs_gib, printed_gib):
    from memviz.core.engines.vllm import SUGGESTION_MARGIN_BYTES
    assert abs((pool_gib * GiB - graphs_gib * GiB - SUGGESTION_MARGIN_BYTES) / GiB - printed_gib) < 0.011


def test_the_suggested_size_pins_a_pool_that_fits():
    """A profile-sized pool (vLLM before 0.34, or --no-enable-extensible-kv-cache)."""
    est = estimate(LLAMA8, scenario(pool=None, options={"extensible_kv_cache": False}))
    f = est.engine_facts
    unfloored = f["budget_bytes"] - (est.total - est.bytes["kv_cache"])
    assert f["suggested_kv_cache_memory_bytes"] == unfloored - f["cudagraph_bytes"] - 150 * 2**20
    pinned = estimate(LLAMA8, scenario(pool=str(f["suggested_kv_cache_memory_bytes"]), batch=1))
    assert "refusal" not in pinned.engine_facts
    assert pinned.engine_facts["kv_pool_bytes"] < f["kv_pool_bytes"]
    assert "suggested_kv_cache_memory_bytes" not in pinned.engine_facts
