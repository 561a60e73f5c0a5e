"""Reading files off the GUI thread: the window keeps painting while a model file is read."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication

T = TypeVar("T")
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memviz-read")
SLICE_S = 0.03  # how long the GUI thread waits on the reader between two rounds of painting


def off_gui_thread(fn: Callable[[], T]) -> T:
    """`fn()` run in a worker thread; meanwhile the GUI thread paints and handles timers but takes no user input
    (nothing can start a second read or edit the session under it). Its exception is raised here."""
    future = _WORKER.submit(fn)
    while True:
        try:
            return future.result(timeout=SLICE_S)
        except FutureTimeout:
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
