"""The Engine log tab's table: a vLLM log's figures beside the estimate of the scenario it ran."""

from __future__ import annotations

import json
from pathlib import Path

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.importers.logs import parse_log
from memviz.core.log_check import check_vllm
from memviz.core.units import GiB, Unit
from memviz.gui.log_view import comparison_rows

CASES = json.loads((Path(__file__).parents[1] / "data" / "published" / "vllm_logs.json").read_text())["cases"]


def test_a_vllm_logs_figures_follow_its_components_as_the_cli_checks_them():
    case = next(c for c in CASES if c["id"] == "qwq-32b-a800-v1-0.11")
    a = from_hf_config(case["model"]["config"], name="QwQ-32B")
    sc = Scenario(engine="vllm", gpu=case["gpu"], options=case["options"], **case["scenario"])
    text = "\n".join(case["log"])
    rows = {r[0]: r for r in comparison_rows(parse_log(text), estimate(a, sc), Unit.GiB)}
    _, checks = check_vllm(text, a, sc)
    graphs = next(r for r in checks if r.name == "CUDA graphs (captured)")
    assert rows["CUDA graphs (captured)"][1:3] == (f"{graphs.measured / GiB:.3f} GiB", f"{graphs.estimated / GiB:.3f} GiB")
    assert rows["KV tokens"][1] == "33,200 tokens" and rows["concurrency in printed pool"][1] == "16.21x"
    assert rows["concurrency in printed pool"][4] == "+0.1 %"
    assert "weights" in rows and "KV pool" not in rows  # the components are not repeated as figures
    other = estimate(a, sc.with_changes(engine="transformers", gpu=None))
    assert "KV tokens" not in {r[0] for r in comparison_rows(parse_log(text), other, Unit.GiB)}
