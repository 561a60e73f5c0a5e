"""Atomic saves: a failure leaves the previous file whole and no temporary file behind."""

import os

import pytest

from memviz.core.files import write_text_atomic
from memviz.core.presets import get_preset
from memviz.core.session import Session


def test_a_failed_save_keeps_the_previous_session(tmp_path, monkeypatch):
    path = tmp_path / "s.memviz.json"
    write_text_atomic(path, '{"old": true}')
    before = path.read_bytes()

    def full_disk(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_text_atomic(path, "x" * 10_000)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.memviz.json"]


def test_session_save_round_trips(tmp_path):
    from memviz.core.estimate import Scenario

    s = Session(architecture=get_preset("llama-3.2-1b").architecture(), scenarios=(Scenario(),))
    s.save(tmp_path / "a.json")
    assert Session.load(tmp_path / "a.json").scenarios == s.scenarios
