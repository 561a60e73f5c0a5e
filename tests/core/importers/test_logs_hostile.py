"""Engine logs from anywhere: any text of log-like tokens gives a measurement or one InputError, adversarial
long lines are one error, and logs over 64 MiB are refused, not cut silently (files and stdin)."""

import io
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memviz.core.errors import InputError
from memviz.core.importers.logs import MAX_LOG_CHARS, parse_log, read_log

TOKENS = ["llama_kv_cache:", "CUDA0", "CPU", "KV buffer size =", "model buffer size =", "compute buffer size =",
          "MiB", "GiB", "1.5", "1,024", "(Worker_TP1 pid=7)", "Loading model weights took", "GB", "vllm", "INFO",
          "Memory profiling takes", "the rest of the memory reserved for KV Cache is", "GPU KV cache size:",
          "tokens", "Maximum concurrency", "x", "load_tensors:", "offloaded", "layers to GPU", "=", ":", "\n", " ",
          "-1", "1e308", "nan", "999999999999999999999"]


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=200))
def test_log_like_text_gives_a_measurement_or_one_error(words):
    try:
        m = parse_log(" ".join(words))
    except InputError as exc:
        assert str(exc)
        return
    assert m.engine and m.lines_matched >= 1


@pytest.mark.parametrize("line", ["1" * 100_000, "model buffer size " * 6000, "(Worker " * 12_000,
                                  "Loading model weights took " * 4000, "KV buffer size = " * 6000, " " * 100_000 + "x",
                                  "1.1." * 25_000, "GiB " * 25_000])
def test_adversarial_lines_are_one_error(line):
    """These lines took 48-79 s at 30,000 characters (backtracking); their time: benchmarks/bench_hostile_inputs.py."""
    with pytest.raises(InputError):
        parse_log(("INFO\n" + line + "\n") * 3)


def test_longer_than_64_mib_is_refused_not_cut():
    with pytest.raises(InputError, match="longer than 64 MiB"):
        read_log(io.StringIO("x" * (MAX_LOG_CHARS + 1)))
    assert read_log(io.StringIO("ok")) == "ok"


def test_cli_stdin_has_the_same_cap():
    r = subprocess.run([sys.executable, "-m", "memviz", "log", "-"], input="y" * (MAX_LOG_CHARS + 10),
                       capture_output=True, text=True)
    assert r.returncode == 2 and "longer than 64 MiB" in r.stderr and len(r.stderr.strip().splitlines()) == 1
