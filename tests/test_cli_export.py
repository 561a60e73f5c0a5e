"""`memviz export`, headless, as a subprocess (the same rendering code as the window)."""

import csv
import json
import os
import subprocess
import sys
import xml.dom.minidom

import pytest

from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

ENV = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


def export(*args):
    return subprocess.run([sys.executable, "-m", "memviz", "export", *args], capture_output=True, text=True, env=ENV,
                          timeout=120)


BASE = ["--preset", "llama-3.1-8b", "--weights", "bf16,awq-int4,Q4_K_M", "--context", "16384", "--gpu", "rtx4090,h100-80g"]


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
@pytest.mark.parametrize("chart", ["compare", "sweep"])
def test_chart_files(tmp_path, suffix, chart):
    out = tmp_path / f"c.{suffix}"
    r = export(*BASE, "--chart", chart, "--width", "1700", "--out", str(out))
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    if suffix == "png":
        from PySide6.QtGui import QImage

        assert QImage(str(out)).width() == 1700
    elif suffix == "svg":
        assert xml.dom.minidom.parseString(data).documentElement.tagName == "svg"
    else:
        assert data.startswith(b"%PDF")


def test_data_files_equal_core(tmp_path):
    out = tmp_path / "d.csv"
    assert export(*BASE, "--out", str(out)).returncode == 0
    rows = list(csv.DictReader(out.read_text().splitlines()))
    a = get_preset("llama-3.1-8b").architecture()
    expected = {
        "bf16": estimate(a, Scenario(weight_format="bf16", context_tokens=16384)).total,
        "Q4_K_M": estimate(a, Scenario(weight_format="Q4_K_M", engine="llamacpp", context_tokens=16384)).total,
    }
    got = {r["weight_format"]: int(r["total_bytes"]) for r in rows}
    assert got["bf16"] == expected["bf16"] and got["Q4_K_M"] == expected["Q4_K_M"]
    js = tmp_path / "d.json"
    assert export(*BASE, "--out", str(js)).returncode == 0
    assert len(json.loads(js.read_text())["scenarios"]) == 3
    md = tmp_path / "d.md"
    assert export(*BASE, "--unit", "GB", "--out", str(md)).returncode == 0
    assert "(GB)" in md.read_text()


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["--preset", "gpt2", "--out", "x.docx"], "unknown output type"),
     (["--preset", "gpt2", "--weights", "int3", "--out", "x.png"], "unknown weight format"),
     (["--preset", "gpt2", "--gpu", "nope", "--out", "x.png"], "unknown GPU"),
     (["--preset", "gpt2", "--out", "/definitely/missing/dir/x.csv"], "No such file")],
)
def test_bad_input_exits_2(args, needle):
    r = export(*args)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr


def _estimate_json(*args):
    r = subprocess.run([sys.executable, "-m", "memviz", "estimate", *args, "--json"], capture_output=True, text=True,
                       env=ENV, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("args", [
    ["--preset", "llama-3.1-8b", "--engine", "vllm", "--context", "8192", "--batch", "4",
     "-o", "kv_cache_memory_bytes=4GiB", "--gpu", "rtx4090"],
    ["--preset", "llama-3.1-70b", "--weights", "fp8", "--engine", "vllm", "--tp", "2", "--gpu", "h100-80g",
     "--gpu-memory-utilization", "0.85"],
    ["--preset", "llama-3.1-8b", "--weights", "Q4_K_M", "-o", "n_ubatch=256", "--gpu-layers", "20",
     "--attention", "flash", "--gpu", "rtx4090"],
    ["--preset", "llama-3.1-8b", "--weights", "Q4_K_M", "--engine", "ollama", "--gpu", "rtx4090"],
    ["--preset", "llama-3.1-8b", "--sequences", "1000,3000", "--overhead", "800MiB", "--device", "cpu"],
])
def test_export_takes_the_scenario_estimate_takes(tmp_path, args):
    """Every scenario setting of `estimate` reaches `export`: its data file holds the same totals, options and launch
    command (vLLM's pinned pool, TP, llama.cpp's options and offload, Ollama's context for its GPU tier)."""
    est = _estimate_json(*args)
    out = tmp_path / "d.json"
    r = export(*args, "--out", str(out))
    assert r.returncode == 0, r.stderr
    (sc,) = json.loads(out.read_text())["scenarios"]
    assert sc["total_bytes"] == max(d["total"] for d in est["devices"])
    assert sc["context_tokens"] == est["scenario"]["context_tokens"]
    assert sc["launch_command"] == est["launch_command"]


def test_export_scenarios_run_on_the_first_gpu(tmp_path):
    """vLLM sizes its pool for the GPU the scenario runs on: the first of --gpu, each GPU a capacity column."""
    out = tmp_path / "d.csv"
    assert export("--preset", "llama-3.1-8b", "--engine", "vllm", "--gpu", "rtx4090,h100-80g", "--out",
                  str(out)).returncode == 0
    (row,) = csv.DictReader(out.read_text().splitlines())
    a = get_preset("llama-3.1-8b").architecture()
    on_4090 = estimate(a, Scenario(engine="vllm", gpu="rtx4090", context_tokens=4096))
    assert int(row["total_bytes"]) == on_4090.total > 20 * 2**30
    assert row["fits_rtx4090"] == row["fits_h100-80g"] == "True"
