"""vLLM 0.34's extensible KV cache: the pool sized from measured memory (v1/worker/extensible_kv_cache.py)."""

from math import ceil

import numpy as np
import pytest

from memviz.core.engines import vllm_extensible as vx
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import capacity_bytes, estimate_fits
from memviz.core.gpus import get_gpu
from memviz.core.importers.vllm_log import vllm_scenario
from memviz.core.log_check import check_vllm
from memviz.core.presets import get_preset
from memviz.core.units import GiB, MiB

LLAMA8 = get_preset("llama-3.1-8b").architecture()
H100 = get_gpu("h100-80g")
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # Llama-3.1-8B in bf16


def vllm_blocks_within(nbytes: int, strides: tuple[int, ...], granule: int = 2 * MiB) -> int:
    """`ExtensibleKVCache.blocks_within` as vLLM 0.34 writes it: count down from the bytes' blocks."""
    n = nbytes // sum(strides)
    while n > 0 and sum(-(-n * s // granule) * granule for s in strides) > nbytes:
        n -= 1
    return n


def vllm_measure_kv_cache_bytes(requested: int, startup_free: int, used: int, transient: int) -> int:
    """`measure_kv_cache_bytes` as vLLM 0.34 writes it (no torch reservation growth), its free memory after warm-up
    being what start-up left less what is now resident."""
    headroom = startup_free - used
    margin = max(1 << 30, int(transient * 0.75))
    return max(min(requested - used, headroom - margin) - transient, 0)


@pytest.mark.parametrize(("requested", "transient"), [
    (80 * GiB, GiB // 2),  # the share at 1.0: the headroom binds, the 1 GiB floor of the margin
    (80 * GiB, 4 * GiB),  # 0.75 x the transient
    (40 * GiB, 4 * GiB),  # a share of one half: the request binds
])
def test_the_budget_less_the_rest_is_vllms_measure(requested, transient):
    startup_free = 79 * GiB
    for used in (20 * GiB, 78 * GiB):
        budget = vx.budget_bytes(requested, startup_free, np.asarray(transient))
        assert max(budget - used - transient, 0) == vllm_measure_kv_cache_bytes(requested, startup_free, used, transient)


@pytest.mark.parametrize(("nbytes", "strides"), [
    (int(40.3 * GiB), (32 * 64 * 4096,) * 32),  # Llama-3.1-8B's 32 layer regions of 8 MiB a 64-token block
    (5 * GiB + 12345, (3 * MiB + 7,) * 10),  # pages that straddle granules
    (int(1.5 * GiB), (100_000, 300_000, 700_001)),  # a uniform-type group: a page per layer
    (3 * MiB, (1 * MiB,) * 4),  # four segments cannot hold one block each in 3 MiB of granules
])
def test_blocks_within_matches_vllms_count_down(nbytes, strides):
    assert vx.blocks_within(np.asarray(nbytes), strides) == vllm_blocks_within(nbytes, strides)


def test_the_default_pool_is_what_the_measured_memory_leaves():
    """Llama-3.1-8B on an H100: what is resident after capture, the transient peak and its margin, the CUDA context
    and the pool in whole 64-token blocks of 32 layer regions make up the CUDA total (to the granules and a block)."""
    e = estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192))
    f = e.engine_facts
    assert f["kv_sizing"] == "measured" and f["gpu_memory_utilization"] == 1.0 and f["block_size"] == 64
    peak, pool = e.bytes["activations"], e.bytes["kv_cache"]
    used = e.total - pool - peak
    startup_free = H100.cuda_total_bytes - f["outside_budget_bytes"]
    available = startup_free - used - max(GiB, 0.75 * peak) - peak
    page = 64 * KV_PER_TOKEN // 32
    assert pool == vllm_blocks_within(int(available), (page,) * 32) * 32 * page
    assert available - 32 * 2 * MiB - 32 * page < pool <= available
    assert f["kv_left_free_bytes"] == pytest.approx(startup_free - e.total, abs=1)
    assert f["kv_pool_tokens"] == f["kv_blocks"] * 64 and "refusal" not in f
    profiled = estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                                         options={"extensible_kv_cache": False}))
    # no 8 % withheld, no CUDA-graph estimate's floor: 4.4 GiB more pool on an H100
    assert 4 * GiB < pool - profiled.bytes["kv_cache"] < 5 * GiB
    assert profiled.engine_facts["gpu_memory_utilization"] == 0.92


def test_a_set_share_caps_the_measured_pool_and_is_no_refusal():
    base = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    full = estimate(LLAMA8, base).engine_facts
    capped = estimate(LLAMA8, base.with_changes(gpu_memory_utilization=0.5)).engine_facts
    requested = ceil(0.5 * H100.cuda_total_bytes)
    assert capped["budget_bytes"] == requested and capped["kv_pool_bytes"] < full["kv_pool_bytes"]
    assert capped["kv_left_free_bytes"] > 35 * GiB and "refusal" not in capped
    assert "--gpu-memory-utilization 0.5" in estimate(LLAMA8, base.with_changes(gpu_memory_utilization=0.5)
                                                      ).launch_command()


def test_few_sequences_leave_the_prompt_logprob_chunk_the_peak():
    """With 8 request slots and 1,024-token steps the profile's sampler step and forward are small; a sizing step's
    prompt logprobs hold 1,024 rows of logits in bf16 beside the step's hidden states (prompt_logprob.py CHUNK_SIZE),
    more than a warm start's profile run."""
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                  options={"max_num_seqs": 8, "max_num_batched_tokens": 1024})
    measured, profiled = (estimate(LLAMA8, sc.with_changes(options=dict(sc.options) | o))
                          for o in ({}, {"extensible_kv_cache": False, "cold_compile": False}))
    assert measured.bytes["activations"] == 1024 * 4096 * 2 + 1024 * 128256 * 2
    assert profiled.bytes["activations"] < measured.bytes["activations"]


def test_fits_when_the_sequences_fit_the_pool():
    """The measured pool is committed whole: the budget is what vLLM commits, so sequences fit when their KV fits it."""
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    e = estimate(LLAMA8, sc)
    budget = capacity_bytes(H100, sc, LLAMA8)
    assert budget == pytest.approx(e.total, abs=1)
    tokens = e.engine_facts["kv_pool_tokens"]
    assert estimate_fits(estimate(LLAMA8, sc.with_changes(batch=tokens // 8192)), H100)
    assert not estimate_fits(estimate(LLAMA8, sc.with_changes(batch=tokens // 8192 + 1)), H100)


def test_the_v1_runner_needs_the_profiled_pool():
    with pytest.raises(InputError, match="vLLM 0.34 has only the V2 model runner"):
        estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", options={"model_runner": "v1"}))
    estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g",
                              options={"model_runner": "v1", "extensible_kv_cache": False}))


def test_the_launch_command_states_what_differs_from_034s_defaults():
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    default = estimate(LLAMA8, sc).launch_command()
    assert "--gpu-memory-utilization" not in default and "--block-size" not in default
    assert "--no-enable-extensible-kv-cache" not in default
    old = estimate(LLAMA8, sc.with_changes(options={"extensible_kv_cache": False, "block_size": 16})).launch_command()
    assert "--no-enable-extensible-kv-cache" in old and "--block-size 16" in old
    pinned = estimate(LLAMA8, sc.with_changes(options={"kv_cache_memory_bytes": "20GiB"})).launch_command()
    assert "--no-enable-extensible-kv-cache" not in pinned  # kv_cache_memory_bytes turns it off itself


#: the lines vLLM 0.34 prints as it sizes its extensible cache, built from its format strings
#: (`measure_kv_cache_blocks`, `extend_kv_cache`, v1/worker/extensible_kv_cache.py) with figures of memviz's own
#: estimate: no published 0.34 start-up was found, so this checks the reading, not the rule
def _log_034(e) -> str:
    f = e.engine_facts
    peak = e.bytes["activations"] / GiB
    return (f"INFO 12-03 10:00:00 [gpu_model_runner.py:3659] Model loading took {e.bytes['weights'] / GiB:.4f} GiB "
            "memory and 4.07 seconds\n"
            f"INFO 12-03 10:00:09 [extensible_kv_cache.py:700] Memory after warmup: 60.12 GiB free, 0.01 GiB committed "
            f"to the KV cache, {peak:.2f} GiB kept for transient activations ({peak:.2f} GiB allocated at peak, 0.10 GiB "
            f"of torch reservation growth); {f['kv_blocks']} KV cache blocks ({f['kv_pool_bytes'] / GiB:.2f} GiB) fit "
            "within the requested 79.19 GiB. Torch may reserve up to 4.00 GiB.\n"
            f"INFO 12-03 10:00:09 [extensible_kv_cache.py:560] Extended KV cache to {f['kv_blocks']} blocks "
            f"({f['kv_pool_bytes'] / GiB:.2f} GiB).\n"
            "INFO 12-03 10:00:00 [core.py:100] vLLM API server version 0.34.0\n")


def test_a_034_log_is_read_as_a_measured_pool():
    e = estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=LLAMA8.max_position_embeddings))
    text = _log_034(e)
    sc = vllm_scenario(text, LLAMA8, "h100-80g")
    assert sc.gpu_memory_utilization is None and "extensible_kv_cache" not in dict(sc.options)
    rows = {r.name: r for r in check_vllm(text, LLAMA8, sc)[1]}
    assert abs(rows["KV pool"].error) < 0.001 and abs(rows["activation peak"].error) < 0.01
    assert "profile + non-torch (implied)" not in rows  # the budget less the rest is not how this pool is sized
    older = vllm_scenario(text.replace("0.34.0", "0.33.0").replace("Extended KV cache", "Resized")
                          .replace("Memory after warmup", "Memory"), LLAMA8, "h100-80g")
    assert dict(older.options)["extensible_kv_cache"] is False and dict(older.options)["block_size"] == 16
    assert older.gpu_memory_utilization == 0.9


def test_an_mla_models_context_prefill_step_is_its_peak_where_the_profile_is_small():
    """DeepSeek-V2-Lite with 8 request slots and 512-token steps: the MLA sizing step up-projects a context of the
    chunked-prefill workspace, min(max(8 x max_model_len, 4 x 8 x 64), 65,536) tokens, K-nope and V of its 16 heads
    (128 + 128) beside K (128 + 64), in bf16 (`run_context_prefill_warmup`, `_compute_prefill_context`). The
    profile-sized pool's peak is the profile run's stand-in for that context: K-nope and V only
    (`MLAAttention.forward_impl` without attention metadata), beside the step's own tensors."""
    a = get_preset("deepseek-v2-lite").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", options={"max_num_seqs": 8, "max_num_batched_tokens": 512})
    per_token = 16 * (2 * 128 + 128 + 64) * 2
    for context, tokens in ((32768, 65536), (2048, 16384)):
        e = estimate(a, sc.with_changes(context_tokens=context))
        assert vx.mla_context_tokens(context, 8, 64) == tokens
        assert e.bytes["activations"] == tokens * per_token
    profiled = estimate(a, sc.with_changes(context_tokens=32768, options=dict(sc.options) | {"extensible_kv_cache": False}))
    assert 65536 * 16 * 256 * 2 < profiled.bytes["activations"] < 65536 * per_token
