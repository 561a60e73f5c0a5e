"""Real log excerpts (sources in each file's first line) parse into the right numbers."""

from pathlib import Path

import pytest

from memviz.core.errors import InputError
from memviz.core.importers.logs import parse_log
from memviz.core.units import GiB, MiB

LOGS = Path(__file__).parents[2] / "data" / "logs"


def read(name):
    return parse_log((LOGS / name).read_text())


def test_llamacpp_buffers_single_gpu():
    r = read("llamacpp_rtx4080_pr552.log")
    assert r.engine == "llamacpp"
    assert r.bytes["weights"] == round(7317.71 * MiB)
    assert r.bytes["kv_cache"] == 180 * MiB
    assert r.bytes["activations"] == 105 * MiB
    assert r.bytes["overhead"] is None  # the log does not state it
    assert r.host_bytes["weights"] == 297 * MiB and r.host_bytes["activations"] == round(0.19 * MiB)


def test_llamacpp_two_gpus_are_summed_and_listed():
    r = read("llamacpp_two_gpus_pr6122.log")
    assert r.devices["CUDA1"]["weights"] == round(13989.53 * MiB)
    assert r.bytes["kv_cache"] == (1536 + 3584) * MiB
    assert r.bytes["weights"] == round(5434.38 * MiB) + round(13989.53 * MiB)


def test_llamacpp_memory_breakdown():
    r = read("llamacpp_breakdown_pr15860.log")
    assert set(r.devices) == {"CUDA0", "CUDA1", "CUDA2", "CPU"}
    assert r.devices["CUDA0"] == {"weights": 13169 * MiB, "kv_cache": 38 * MiB, "activations": 985 * MiB, "overhead": 451 * MiB}
    assert r.bytes["weights"] == 3 * 13169 * MiB
    assert r.host_bytes["kv_cache"] == 57 * MiB


def test_ollama_breakdown_drops_negative_unaccounted():
    r = read("ollama_breakdown_issue17482.log")
    assert r.devices["CUDA0"]["weights"] == 15364 * MiB and "overhead" not in r.devices["CUDA0"]
    assert r.host_bytes["weights"] == 682 * MiB


def test_vllm_profile_table():
    r = read("vllm_llama3_8b_pr10511.log")
    assert r.engine == "vllm"
    assert r.bytes == {"weights": round(14.96 * GiB), "kv_cache": round(53.29 * GiB), "activations": round(1.26 * GiB),
                       "overhead": round(1.79 * GiB), "total": r.bytes["total"]}
    assert abs(r.bytes["total"] / GiB - 71.29) < 0.02  # = the instance's budget printed in the same log
    assert r.details["gpu_memory_utilization"] == 0.9


def test_vllm_one_line_per_worker():
    r = read("vllm_tp_pr14447.log")
    assert r.bytes["weights"] == round(21.21 * GiB) and r.bytes["kv_cache"] == round(1.57 * GiB)
    assert r.details["ranks_seen"] == 2


def test_vllm_v1_weights_and_kv_tokens():
    r = read("vllm_v1_l40s_pr17122.log")
    assert r.bytes["weights"] == round(14.9889 * GiB) and r.bytes["kv_cache"] is None
    assert r.details["kv_cache_tokens"] == 158656 and r.details["max_concurrency"] == 4.84


#: V1's --kv-cache-memory suggestion as gpu_worker.py formats it: vLLM 0.11 named weights and non-torch memory apart
#: (the figures of llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md, Llama-3.1-8B on an H100);
#: vLLM 0.33.0 (v1/worker/gpu_worker.py `compile_or_warm_up_model`) prints their sum as consumed memory
V1_USAGE = {
    "0.11": "Free memory on device (78.57/79.18 GiB) on startup. Desired GPU memory utilization is (0.9, 71.26 GiB). "
            "Actual usage is 14.99 GiB for weight, 4.76 GiB for peak activation, 0.13 GiB for non-torch memory, and "
            "-0.45 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with `--kv-cache-memory="
            "55491753575` to fit into requested memory, or `--kv-cache-memory=63344644096` to fully utilize gpu memory.",
    "0.33": "Free memory on device (78.57/79.18 GiB) on startup. Desired GPU memory utilization is (0.9, 71.26 GiB). "
            "Actual usage is 15.12 GiB for consumed memory (weights + non-torch), 4.76 GiB for peak activation, and "
            "0.45 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with `--kv-cache-memory="
            "55009408614` (51.23 GiB) to fit into requested memory, or `--kv-cache-memory=62862299136` (58.55 GiB) "
            "to fully utilize gpu memory. Current kv cache memory in use is 50.93 GiB.",
}


@pytest.mark.parametrize("release", sorted(V1_USAGE))
def test_vllm_v1_usage_line_gives_the_activation_peak_and_non_torch_memory(release):
    r = parse_log("INFO [gpu_model_runner.py:2653] Model loading took 14.99 GiB memory and 31.46 seconds\n"
                  "INFO [gpu_worker.py:298] Available KV cache memory: 51.38 GiB\n"
                  f"INFO [gpu_worker.py:1066] {V1_USAGE[release]}\n")
    assert r.bytes["activations"] == round(4.76 * GiB)
    assert r.bytes["overhead"] == round(0.13 * GiB)
    assert r.details["total_gpu_memory_gib"] == 79.18


#: vLLM 0.21+'s CUDA-graph lines (v1/worker/gpu_model_runner.py `profile_cudagraph_memory`, gpu_worker.py), as
#: published: LMCache/LMCache#3430 (Qwen3-8B, vLLM 0.21.0) and aivrar/vllm-windows-build#4 (its capture line)
GRAPH_LINES = (
    "INFO 05-28 08:00:24 [gpu_model_runner.py:6063] Profiling CUDA graph memory: PIECEWISE=51 (largest=512), "
    "FULL=35 (largest=256)\n"
    "INFO 05-28 08:00:25 [gpu_model_runner.py:6142] Estimated CUDA graph memory: 0.52 GiB total\n"
    "INFO 05-28 08:00:26 [gpu_worker.py:462] Available KV cache memory: 6.37 GiB\n"
    "INFO 05-28 08:00:26 [gpu_worker.py:477] CUDA graph memory profiling is enabled (default since v0.21.0). The "
    "current --gpu-memory-utilization=0.9764 is equivalent to --gpu-memory-utilization=0.9543 without CUDA graph "
    "memory profiling.\n"
    "INFO 05-28 08:00:26 [kv_cache_utils.py:1711] Maximum concurrency for 16,384 tokens per request: 2.83x\n"
)


def test_vllm_cuda_graph_estimate_lines():
    r = parse_log(GRAPH_LINES)
    d = r.details
    assert (d["cudagraph_estimated_gib"], d["piecewise_graphs"], d["full_graphs"], d["largest_capture"],
            d["largest_full_capture"]) == (0.52, 51, 35, 512, 256)
    assert "cudagraph_took_gib" not in d
    pool = parse_log("INFO [gpu_worker.py:462] Available KV cache memory: 10.55 GiB\n"
                     "INFO [gpu_worker.py:621] CUDA graph pool memory: 0.11 GiB (actual), 0.14 GiB (estimated), "
                     "difference: 0.03 GiB (25.0%).\n")
    assert (pool.details["cudagraph_took_gib"], pool.details["cudagraph_estimated_gib"]) == (0.11, 0.14)


def test_vllm_settings_from_the_cuda_graph_and_concurrency_lines():
    from memviz.core.importers.vllm_log import read_vllm_settings

    args = read_vllm_settings(GRAPH_LINES).args
    assert args["gpu_memory_utilization"] == 0.9764 and args["max_model_len"] == 16384


def test_the_implied_profile_takes_the_printed_graph_estimate():
    """`memviz log --check`: vLLM's estimate beside memviz's rule for the graphs it profiled, and the pool's implied
    profile with the printed estimate subtracted, not memviz's."""
    from memviz.core.estimate import Scenario
    from memviz.core.log_check import check_vllm
    from memviz.core.presets import get_preset

    a = get_preset("qwen3-8b").architecture()
    sc = Scenario(engine="vllm", gpu="rtx-a5000", context_tokens=16384, gpu_memory_utilization=0.9764,
                  options={"max_num_seqs": 256, "max_num_batched_tokens": 8192, "extensible_kv_cache": False,
                           "block_size": 16})
    text = "INFO [gpu_model_runner.py:4879] Model loading took 15.27 GiB memory and 31.6 seconds\n" + GRAPH_LINES
    e, rows = check_vllm(text, a, sc)
    rows = {r.name: r for r in rows}
    graphs = rows["CUDA graphs (estimated)"]
    assert graphs.measured == round(0.52 * GiB) and graphs.estimated == e.engine_facts["cudagraph_bytes"]
    implied = rows["profile + non-torch (implied)"].measured
    f = e.engine_facts
    assert implied == f["budget_bytes"] - round(15.27 * GiB) - round(6.37 * GiB) - round(0.52 * GiB)


def test_vllm_peak_activation_without_the_cuda_graph_estimate_it_includes():
    """0.33's "X GiB for peak activation" adds the CUDA-graph estimate taken from the budget; the reader takes it
    off where the log prints that estimate as applied (0.11's line, before the estimate, is read as printed)."""
    usage = f"INFO [gpu_worker.py:1066] {V1_USAGE['0.33']}\n"
    r = parse_log(GRAPH_LINES + usage)
    assert r.bytes["activations"] == round(4.76 * GiB) - round(0.52 * GiB)
    assert parse_log(f"INFO [gpu_worker.py:1066] {V1_USAGE['0.11']}\n" + GRAPH_LINES).bytes["activations"] == \
        round(4.76 * GiB)


@pytest.mark.parametrize("text", ["", "   ", "hello world\nnothing here"])
def test_unrecognised_logs(text):
    with pytest.raises(InputError):
        parse_log(text)


def test_a_model_loaded_three_times_in_one_log_counts_once():
    one = ("load_tensors:        CUDA0 model buffer size =  4096.00 MiB\n"
           "llama_kv_cache:      CUDA0 KV buffer size =   512.00 MiB\n"
           "sched_reserve:      CUDA0 compute buffer size =   300.00 MiB\n")
    m = parse_log(one * 3)
    assert m.bytes["weights"] == 4096 * MiB and m.bytes["kv_cache"] == 512 * MiB


def test_vllm_kv_pool_set_by_kv_cache_memory_bytes():
    r = read("vllm_kv_cache_memory_bytes_gb10.log")
    assert r.engine == "vllm"
    assert r.bytes["kv_cache"] == round(37.11 * GiB)  # the pool as set, the profile not printed
    assert r.bytes["weights"] is None and r.bytes["activations"] is None
    assert r.details["kv_cache_tokens"] == 1_209_295 and r.details["max_concurrency"] == 1.15


# a vLLM 0.3x boot at gpu_memory_utilization 0.97 as a public serving tool's tests quote it (servedeck, bootfacts)
BOOT_097 = ("(EngineCore pid=42623) INFO 09-18 22:23:41 [gpu_worker.py:298] Free memory on device (94.41/94.97 GiB) on "
            "startup. Desired GPU memory utilization is (0.97, 92.12 GiB). Actual usage is 81.7 GiB for consumed memory "
            "(weights + non-torch), 1.78 GiB for peak activation, and 0.28 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=8820325233` (8.21 GiB) to fit into requested memory, "
            "or `--kv-cache-memory=11273977344` (10.5 GiB) to fully utilize gpu memory. Current kv cache memory in use "
            "is 8.64 GiB.\n")


def test_vllms_kv_cache_memory_suggestion_is_read_and_checked():
    from memviz.core.estimate import Scenario, estimate
    from memviz.core.log_check import vllm_checks
    from memviz.core.presets import get_preset

    r = parse_log(BOOT_097)
    assert r.details["suggested_kv_cache_memory_bytes"] == 8_820_325_233
    assert r.bytes["activations"] == round(1.78 * GiB)
    e = estimate(get_preset("llama-3.1-8b").architecture(),
                 Scenario(engine="vllm", gpu="h100-80g", gpu_memory_utilization=0.97, context_tokens=8192,
                          options={"extensible_kv_cache": False, "block_size": 16}))
    row = next(c for c in vllm_checks(r, e) if c.name == "--kv-cache-memory suggestion")
    assert (row.measured, row.estimated) == (8_820_325_233, e.engine_facts["suggested_kv_cache_memory_bytes"])


#: a pipeline's ranks each print their profile; the first stage alone prints its pool (vLLM 0.19, Llama-3.1-8B at
#: PP 4, llm-d-planner's sweep: tests/data/published/vllm_logs.json, case llama3.1-8b-4xh100-pp4-v1-0.19-llmd)
PIPELINE_LOG = """\
(Worker_PP2 pid=443) DEBUG 04-22 01:44:15 [v1/worker/gpu_worker.py:435] Memory profiling takes 9.14 seconds. \
Total non KV cache memory: 4.4GiB; torch peak memory increase: 1.05GiB; non-torch forward increase memory: 0.07GiB; \
weights memory: 3.28GiB.
(Worker_PP0 pid=441) DEBUG 04-22 01:44:15 [v1/worker/gpu_worker.py:435] Memory profiling takes 9.27 seconds. \
Total non KV cache memory: 5.43GiB; torch peak memory increase: 1.1GiB; non-torch forward increase memory: 0.07GiB; \
weights memory: 4.26GiB.
(Worker_PP0 pid=441) INFO 04-22 01:44:15 [v1/worker/gpu_worker.py:436] Available KV cache memory: 69.8 GiB
(Worker_PP3 pid=444) DEBUG 04-22 01:44:20 [v1/worker/gpu_worker.py:435] Memory profiling takes 9.4 seconds. \
Total non KV cache memory: 6.34GiB; torch peak memory increase: 2.01GiB; non-torch forward increase memory: 0.07GiB; \
weights memory: 4.26GiB.
"""


def test_vllm_pipeline_profile_is_the_pool_ranks_and_the_last_stage_is_kept():
    """The profile read beside the pool is the rank that printed the pool (PP0, not PP2 whose line came first); the
    last stage's own peak is kept for its row."""
    m = parse_log(PIPELINE_LOG)
    assert m.bytes["activations"] == round(1.1 * GiB) and m.bytes["kv_cache"] == round(69.8 * GiB)
    assert m.details["last_stage_activations_gib"] == pytest.approx(2.01)
    assert "last_stage_activations_gib" not in parse_log(PIPELINE_LOG.replace("Worker_PP", "Worker_TP")).details


def test_vllm_pipeline_suggestion_is_the_smallest_ranks():
    """Each rank prints its own --kv-cache-memory size (vLLM 0.19, Llama-3.1-8B at PP 4: PP2 70.18, PP3 68.23,
    PP0 69.14 GiB); every rank keeps the smallest rank's block count, so the last stage's size binds."""
    lines = [(2, 75351474176), (3, 73263618048), (0, 74242039808)]
    text = PIPELINE_LOG + "".join(
        f"(Worker_PP{r} pid={440 + r}) DEBUG 04-22 01:44:23 [v1/worker/gpu_worker.py:661] Replace "
        f"gpu_memory_utilization config with `--kv-cache-memory={n}` ({n / GiB:.2f} GiB) to fit into requested "
        "memory\n" for r, n in lines)
    assert parse_log(text).details["suggested_kv_cache_memory_bytes"] == 73263618048
