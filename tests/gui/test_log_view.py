"""The Engine log tab's table: a vLLM log's figures beside the estimate of the scenario it ran."""

from __future__ import annotations

import json
from pathlib import Path

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.importers.logs import parse_log
from memviz.core.log_check import check_vllm
from memviz.core.units import GiB, Unit
from memviz.gui.log_view import comparison_rows, figure_rows, llamacpp_load

PUBLISHED = Path(__file__).parents[1] / "data" / "published"
CASES = json.loads((PUBLISHED / "vllm_logs.json").read_text())["cases"]
LOADS = json.loads((PUBLISHED / "llamacpp_logs.json").read_text())["cases"]


def test_a_vllm_logs_figures_follow_its_components_as_the_cli_checks_them():
    case = next(c for c in CASES if c["id"] == "qwq-32b-a800-v1-0.11")
    a = from_hf_config(case["model"]["config"], name="QwQ-32B")
    options = {"extensible_kv_cache": False, "block_size": 16, **case["options"]}  # 0.11: a profile-sized pool
    sc = Scenario(engine="vllm", gpu=case["gpu"], options=options,
                  gpu_memory_utilization=case.get("gpu_memory_utilization", 0.9), **case["scenario"])
    text = "\n".join(case["log"])
    est = estimate(a, sc)
    rows = {r[0]: r for r in comparison_rows(parse_log(text), est, Unit.GiB) + figure_rows(parse_log(text), None, est,
                                                                                           Unit.GiB)}
    _, checks = check_vllm(text, a, sc)
    graphs = next(r for r in checks if r.name == "CUDA graphs (captured)")
    assert rows["CUDA graphs (captured)"][1:3] == (f"{graphs.measured / GiB:.3f} GiB", f"{graphs.estimated / GiB:.3f} GiB")
    assert rows["KV tokens"][1] == "33,200 tokens" and rows["concurrency in printed pool"][1] == "16.21x"
    assert rows["concurrency in printed pool"][4] == "+0.1 %"
    assert "weights" in rows and "KV pool" not in rows  # the components are not repeated as figures
    other = estimate(a, sc.with_changes(engine="transformers", gpu=None))
    assert figure_rows(parse_log(text), None, other, Unit.GiB) == []


def test_a_llamacpp_logs_buffers_device_and_host_apart_with_the_tensor_types():
    """After "Use its settings" on a published load, every buffer the CLI checks is a row, equal on both sides."""
    from memviz.core.importers.llamacpp_log import architecture_of, read_llamacpp_load, scenario_of

    text = "\n".join(next(c for c in LOADS if c["id"].startswith("qwen3-coder"))["log"])
    load = read_llamacpp_load(text)
    a = architecture_of(load)
    measured = parse_log(text)
    rows = {r[0]: r for r in figure_rows(measured, llamacpp_load(measured, text), estimate(a, scenario_of(load, a)),
                                         Unit.GiB)}
    assert {"n_ctx", "model (device)", "model (host)", "compute (host)", "tensors q8_0"} <= set(rows)
    assert rows["n_ctx"][1:3] == ("65,536 cells", "65,536 cells") and rows["tensors q8_0"][4] == "+0.0 %"
    assert rows["compute (device)"][1] == rows["compute (device)"][2]
    buffers_only = "\n".join(line for line in text.splitlines() if "buffer size" in line)  # no context lines
    measured = parse_log(buffers_only)
    rows = {r[0] for r in figure_rows(measured, llamacpp_load(measured, buffers_only), estimate(a, scenario_of(load, a)),
                                      Unit.GiB)}
    assert "model (device)" in rows and "n_ctx" not in rows


def test_a_hybrid_models_attention_block_is_a_row():
    """A Mamba2 hybrid's "Setting attention block size to 4176 tokens" beside the block memviz sizes to its state."""
    case = next(c for c in CASES if c["id"] == "nemotron-cascade2-nvfp4-5090-250k-v1-0.20")
    a = from_hf_config(case["model"]["config"], name="Nemotron-Cascade-2")
    sc = Scenario(engine="vllm", gpu=case["gpu"], options={"extensible_kv_cache": False, **case["options"]},
                  gpu_memory_utilization=case["gpu_memory_utilization"], **case["scenario"])
    text = "\n".join(case["log"])
    rows = {r[0]: r for r in figure_rows(parse_log(text), None, estimate(a, sc), Unit.GiB, (0, 20, 1))}
    assert rows["attention block"][1:] == ("4,176 tokens", "4,176 tokens", "0 tokens", "+0.0 %")
    assert rows["tokens in printed pool"][1] == rows["tokens in printed pool"][2] == "1,206,303 tokens"
