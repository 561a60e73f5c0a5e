"""`memviz plan` as a real subprocess: candidates with launch commands, JSON, Markdown, nothing-fits and bad input."""

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "memviz", "plan", *args], capture_output=True, text=True)


def test_plan_prints_ranked_candidates_with_commands(tmp_path):
    md = tmp_path / "plan.md"
    r = run("--preset", "llama-3.1-70b", "--gpu", "rtx4090x2", "--context", "8192", "--concurrency", "2", "--top", "3",
            "--markdown", str(md))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Llama-3.1-70B: 8,192 tokens × 2 sequences on 2× RTX 4090 24GB")
    assert r.stdout.count("$ llama-server") + r.stdout.count("$ vllm serve") >= 3 and "1. " in r.stdout
    assert md.read_text().startswith("## Plan: Llama-3.1-70B") and "](plan.pareto.png)" in md.read_text()
    from PySide6.QtGui import QImage

    assert QImage(str(tmp_path / "plan.pareto.png")).width() == 1800


def test_plan_json_agrees_with_estimate():
    r = run("--preset", "qwen3-30b-a3b", "--gpu", "h100-80g", "--context", "16384", "--concurrency", "4", "--json")
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["kept"] >= 1 and len(d["candidates"]) == 5
    best = d["candidates"][0]
    args = ["estimate", "--preset", "qwen3-30b-a3b", "--engine", best["engine"], "--weights", best["weight_format"],
            "--kv", best["kv_format"], "--context", "16384", "--batch", "4", "--tp", str(best["tp"]), "--pp", str(best["pp"]),
            "--gpu", "h100-80g", "--json"]
    e = json.loads(subprocess.run([sys.executable, "-m", "memviz", *args], capture_output=True, text=True).stdout)
    assert e["fit"]["needed_bytes"] == best["needed_bytes_per_gpu"] and e["fit"]["fits"]


def test_nothing_fits_exits_1_and_names_the_closest():
    r = run("--preset", "llama-3.1-405b", "--gpu", "rtx4090", "--context", "8192")
    assert r.returncode == 1 and "nothing fits: the closest is" in r.stdout and "GiB per GPU of" in r.stdout


@pytest.mark.parametrize(("args", "needle"), [
    (["--preset", "gpt2", "--gpu", "h999"], "unknown GPU"),
    (["--preset", "gpt2", "--vram", "0GiB"], "must be a positive number"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--vram", "24GiB"], "not allowed with"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--max-quality-loss", "-2"], "quality loss"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--nodes", "2", "--engine", "transformers"], "one machine"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--engine", "tgi"], "planner knows"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--headroom", "1.5"], "headroom"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--concurrency", "0"], "batch must be"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--context", "8192"], "exceed GPT-2 (124M)'s 1,024 positions"),
    (["--preset", "gpt2", "--gpu", "rtx4090", "--host-ram", "64"], "has no unit"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle):
    r = run(*args)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_plan_held_back_by_host_ram_says_so():
    """Every candidate fits the GPU; too little host RAM for llama.cpp's host buffers is the reason, named as such."""
    r = run("--preset", "qwen3-30b-a3b", "--gpu", "rtx4090", "--context", "32768", "--engine", "llamacpp",
            "--host-ram", "10MiB")
    assert r.returncode == 1 and "does not fit in host RAM: needs" in r.stdout and "GiB per GPU" not in r.stdout
