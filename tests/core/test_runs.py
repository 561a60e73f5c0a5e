"""Measured runs are parsed and validated in one place, whatever their source."""

import pytest

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.runs import MeasuredRun, for_scenario

GOOD = {"partial": False, "measured": {"weights": 100, "kv_cache": 10, "activations": 5, "overhead": -3, "peak": 112},
        "timings": {"ttft_s": 0.1, "decode_tokens_per_s": 5.0, "total_s": 1.0}, "stored_run": "20261129-abc"}


def test_a_probe_result_becomes_a_run():
    run = MeasuredRun.from_probe(GOOD, Scenario(batch=2).to_dict())
    assert run.id == "20261129-abc" and run.measured["overhead"] == -3 and run.scenario.batch == 2
    assert MeasuredRun.from_dict(run.to_dict()) == run


@pytest.mark.parametrize(("result", "scenario"), [
    ({"measured": "x"}, Scenario().to_dict()),
    ({**GOOD, "measured": {**GOOD["measured"], "weights": -1}}, Scenario().to_dict()),
    ({**GOOD, "measured": {**GOOD["measured"], "weights": float("nan")}}, Scenario().to_dict()),
    ({**GOOD, "timings": {"ttft_s": "soon"}}, Scenario().to_dict()),
    (GOOD, {"weight_format": "bf16", "engine": "tensorrt"}),
    (GOOD, {"not_a_field": 1}),
])
def test_a_result_from_another_memviz_is_one_clear_message(result, scenario):
    with pytest.raises(InputError, match="does not match this memviz|another memviz version"):
        MeasuredRun.from_probe(result, scenario)


def test_a_log_is_a_run_without_a_peak():
    run = MeasuredRun.from_log("vllm", {"weights": 1, "kv_cache": 2, "activations": None, "overhead": 3, "total": 6},
                               Scenario(engine="vllm"))
    assert run.source == "vllm log" and run.measured["peak"] is None and run.measured["activations"] is None


def test_for_scenario_follows_the_link():
    run = MeasuredRun("a", "probe", Scenario(batch=3), {"weights": 1})
    assert for_scenario((run,), Scenario(batch=3, run_id="a")) is run
    assert for_scenario((run,), Scenario(batch=3)) is None  # no link, no run: never matched by chance


def test_unknown_schema_is_refused():
    data = MeasuredRun("a", "probe", Scenario(), {"weights": 1}).to_dict()
    data["schema"] = 9
    with pytest.raises(InputError, match="schema"):
        MeasuredRun.from_dict(data)
