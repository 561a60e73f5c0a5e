"""Imports run off the GUI thread: the reader is another thread, its errors come back, and the window keeps
handling events (timers, painting) while it reads."""

import threading

import pytest
from PySide6.QtCore import QTimer

from memviz.core.errors import InputError
from memviz.gui.background import off_gui_thread


def test_the_work_runs_in_another_thread_and_returns(qtbot):
    gui = threading.get_ident()
    assert off_gui_thread(threading.get_ident) != gui


def test_errors_come_back_to_the_caller(qtbot):
    def fail():
        raise InputError("bad file")

    with pytest.raises(InputError, match="bad file"):
        off_gui_thread(fail)


def test_the_event_loop_runs_while_reading(qtbot):
    ticks = []
    timer = QTimer(interval=5)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    release = threading.Event()
    threading.Timer(0.3, release.set).start()
    off_gui_thread(lambda: release.wait(5))  # a slow read: 0.3 s
    timer.stop()
    assert len(ticks) >= 5  # the GUI thread kept running its timers
