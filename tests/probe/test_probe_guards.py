"""The probe refuses what would kill it before it loads anything, and treats the CPU's out-of-memory as one."""

import json
import subprocess
import sys

import pytest

from memviz.probe import runner
from tests.conftest import needs_llamacpp


def last(cmd: list[str]) -> tuple[int, dict]:
    r = subprocess.run([sys.executable, "-m", "memviz.probe", *cmd], capture_output=True, text=True, timeout=180)
    return r.returncode, json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_model_larger_than_this_machine_is_refused_before_loading():
    rc, msg = last(["--preset", "llama-3.1-405b", "--device", "cpu", "--no-store"])
    assert rc == 2 and msg["event"] == "error" and "--force" in msg["message"] and "GiB" in msg["message"]


def test_llamacpp_probe_refuses_too_a_model_larger_than_this_machine():
    needs_llamacpp()
    rc, msg = last(["--engine", "llamacpp", "--preset", "llama-3.1-405b", "--weights", "Q4_K_M", "--no-store"])
    assert rc == 2 and "--force" in msg["message"]


def test_a_zero_sample_interval_is_refused():
    with pytest.raises(runner.BadInput, match="sample-interval"):
        runner.check_sample_interval(0)


def test_the_cpu_allocators_error_counts_as_out_of_memory():
    assert runner.is_out_of_memory(RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: "
                                                "can't allocate memory: you tried to allocate 1099511627776 bytes"))
    assert runner.is_out_of_memory(MemoryError())
    assert not runner.is_out_of_memory(RuntimeError("shape mismatch"))


def test_stop_unwinds_so_cleanup_runs():
    with pytest.raises(KeyboardInterrupt):
        runner._terminate(15, None)
