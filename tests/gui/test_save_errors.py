"""A save that fails says so and keeps the session; uncaught errors reach the window and the previous hook."""

import sys

from memviz.gui.app import install_excepthook
from memviz.gui.main_window import MainWindow


def test_failed_save_is_reported_and_loses_nothing(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    good = tmp_path / "s.json"
    assert w.save_as(good)
    before = good.read_bytes()
    w.apply(w.session.with_changes(unit=w.session.unit))
    assert not w.save_as(tmp_path / "missing-folder" / "s.json")
    assert "Could not save" in w.banner.text() and "unchanged" in w.banner.text()
    assert w.path == good and good.read_bytes() == before


def test_excepthook_reports_in_the_window_and_chains(qtbot, monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "excepthook", lambda *exc: seen.append(exc[1]))
    holder: dict = {}
    install_excepthook(holder)
    sys.excepthook(ValueError, ValueError("before the window"), None)  # no window yet: only the previous hook
    w = holder["window"] = MainWindow()
    qtbot.addWidget(w)
    sys.excepthook(RuntimeError, RuntimeError("boom"), None)
    assert [str(e) for e in seen] == ["before the window", "boom"]
    assert "Internal error: boom" in w.banner.text()
