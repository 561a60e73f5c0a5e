import json

import pytest

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.presets import get_preset
from memviz.core.session import History, Session
from memviz.core.units import Unit


def make() -> Session:
    return Session(architecture=get_preset("deepseek-v3").architecture(), preset="deepseek-v3",
                   scenarios=(Scenario(weight_format="fp8-block", engine="vllm", tp=8), Scenario(sequence_tokens=(5, 9))),
                   gpus=("h200",), unit=Unit.GB, runs=({"measured": {"weights": 1}},))


def test_round_trip_through_a_file(tmp_path):
    s = make()
    s.save(tmp_path / "s.json")
    assert Session.load(tmp_path / "s.json") == s
    assert json.loads((tmp_path / "s.json").read_text())["format_version"] == 2


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
