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
