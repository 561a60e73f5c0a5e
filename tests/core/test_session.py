import json

import pytest

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.presets import get_preset
from memviz.core.runs import MeasuredRun
from memviz.core.session import History, Session
from memviz.core.units import Unit


def make() -> Session:
    return Session(architecture=get_preset("deepseek-v3").architecture(), preset="deepseek-v3",
                   scenarios=(Scenario(weight_format="fp8-block", engine="vllm", tp=8), Scenario(sequence_tokens=(5, 9))),
                   gpus=("h200",), unit=Unit.GB,
                   runs=(MeasuredRun("r1", "probe", Scenario(sequence_tokens=(5, 9)), {"weights": 1}),))


def test_a_link_to_a_missing_run_is_refused(tmp_path):
    data = make().to_dict()
    data["scenarios"][0]["run_id"] = "nowhere"
    (tmp_path / "s.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="nowhere"):
        Session.load(tmp_path / "s.json")


def test_round_trip_through_a_file(tmp_path):
    s = make()
    s.save(tmp_path / "s.json")
    assert Session.load(tmp_path / "s.json") == s
    assert json.loads((tmp_path / "s.json").read_text())["format_version"] == 3


def test_a_hybrid_model_round_trips_with_its_layer_kinds(tmp_path):
    """A Nemotron-H session keeps which blocks are Mamba2, attention or feed-forward only, and the Mamba2 fields;
    a session written before these fields existed still opens (they take their defaults)."""
    from memviz.core.arch import from_hf_config

    nemotron = dict(model_type="nemotron_h", hidden_size=4480, num_attention_heads=40, num_key_value_heads=8,
                    head_dim=128, intermediate_size=15680, vocab_size=131072, mamba_num_heads=128, mamba_head_dim=80,
                    hybrid_override_pattern="M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-")
    s = Session(architecture=from_hf_config(nemotron), preset="", scenarios=(Scenario(engine="vllm"),),
                gpus=("h100-80g",), unit=Unit.GiB)
    s.save(tmp_path / "s.json")
    back = Session.load(tmp_path / "s.json")
    assert back == s and back.architecture.ffn_layers == s.architecture.ffn_layers
    old = json.loads((tmp_path / "s.json").read_text())
    dense = make().to_dict()
    for key in ("ffn_layers", "linear_mixer", "linear_chunk", "linear_conv_bias", "linear_proj_bias"):
        del dense["architecture"][key]
    (tmp_path / "old.json").write_text(json.dumps(dense))
    assert Session.load(tmp_path / "old.json") == make()
    assert old["architecture"]["linear_mixer"] == "mamba2"


@pytest.mark.parametrize(
    ("content", "message"),
    [("nope", "not valid JSON"), ("[]", "not a memviz session"),
     (json.dumps({"format": "memviz-session", "format_version": 7}), "not supported"),
     (json.dumps({"format": "memviz-session", "format_version": 1}), "missing"),
     (json.dumps({"format": "memviz-session", "format_version": 1, "architecture": {"name": "x"}, "scenarios": []}),
      "malformed")],
)
def test_bad_session_files(tmp_path, content, message):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(InputError, match=message):
        Session.load(p)


def test_history_undo_redo_and_limit():
    a = make()
    h = History(a, limit=2)
    b, c, d = (a.with_changes(gpus=(g,)) for g in ("rtx4090", "l4", "a100-80g"))
    for s in (b, c, d):
        h.push(s)
    assert h.undo() == c and h.undo() == b and h.undo() == b  # limit 2: a was dropped
    assert h.redo() == c
    h.push(a)
    assert not h.can_redo()


def test_a_version_2_session_with_untyped_runs_opens(tmp_path):
    s = make()
    data = s.to_dict()
    data["format_version"] = 2
    data["runs"] = [{"source": "probe", "scenario": Scenario().to_dict(), "measured": {"weights": 10, "peak": 20},
                     "timings": {"ttft_s": 0.5}, "stored_run": None}]
    (tmp_path / "old.json").write_text(json.dumps(data))
    loaded = Session.load(tmp_path / "old.json")
    run = loaded.runs[0]
    assert run.measured["weights"] == 10 and run.timings == {"ttft_s": 0.5} and run.scenario == Scenario()
    assert [sc.run_id for sc in loaded.scenarios] == [None, None]  # make()'s scenarios were not measured
    data["scenarios"][0] = Scenario().to_dict()
    (tmp_path / "old.json").write_text(json.dumps(data))
    relinked = Session.load(tmp_path / "old.json")
    assert relinked.scenarios[0].run_id == relinked.runs[0].id  # linked by its settings


def test_a_session_with_a_bad_run_is_refused_with_one_message(tmp_path):
    data = make().to_dict()
    data["runs"][0]["measured"]["weights"] = "lots"
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="whole number of bytes"):
        Session.load(tmp_path / "bad.json")
