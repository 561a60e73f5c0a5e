"""`memviz` with no arguments starts the window (smoke test in a real subprocess) and the app bootstrap."""

import os
import subprocess
import sys

import pytest


def test_memviz_without_arguments_starts_and_stays_up(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)}
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "memviz"], env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            with pytest.raises(subprocess.TimeoutExpired):  # returns as soon as the app exits: that is the failure
                proc.wait(timeout=6)
        finally:
            proc.terminate()
            proc.wait(10)
    assert "Traceback" not in log.read_text()


def test_create_window_bootstrap(qtbot):
    from memviz.gui.app import create_window

    app, window = create_window([])
    qtbot.addWidget(window)
    window.confirm_discard = lambda: True
    assert app.applicationName() == "memviz" and window.isVisible()
    assert not app.windowIcon().isNull()
