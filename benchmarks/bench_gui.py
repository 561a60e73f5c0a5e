"""GUI benchmark (prints figures; no assertions).

- start-up: wall time from launching a fresh interpreter to the first painted main
  window (the same bootstrap as `memviz`), median of 5 runs; target < 1.5 s;
- live recompute + redraw of the compare view after an edit, 8 scenarios; target < 16 ms.

Run: QT_QPA_PLATFORM=offscreen python benchmarks/bench_gui.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys, time
from PySide6.QtCore import QTimer
from memviz.gui.app import create_window
app, window = create_window([])
window.confirm_discard = lambda: True
def painted():
    print(time.time(), "torch" in sys.modules, flush=True)
    app.quit()
QTimer.singleShot(0, painted)
app.exec()
"""


def startup() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    times = []
    with tempfile.TemporaryDirectory() as home:
        env.update(HOME=home, XDG_CONFIG_HOME=home)
        for _ in range(5):
            t0 = time.time()
            out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True).stdout
            t_paint, torch_loaded = out.split()
            times.append(float(t_paint) - t0)
    print(f"start-up to first painted window: median {statistics.median(times):.2f} s, best {min(times):.2f} s "
          f"(target < 1.5 s); torch imported: {torch_loaded}")


def redraw() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from memviz.gui import settings

    settings.use_path(os.path.join(tempfile.mkdtemp(), "s.ini"))
    from memviz.gui.main_window import MainWindow

    w = MainWindow()
    w.show()
    app.processEvents()
    assert len(w.session.scenarios) == 8
    samples = []
    for i in range(40):
        sc = w.session.scenarios[0].with_changes(context_tokens=4096 + 1024 * i)
        w.apply(w.session.with_changes(scenarios=(sc, *w.session.scenarios[1:])))
        app.processEvents()
        samples.append(w.last_refresh_ms)
    print(f"edit -> recompute + redraw (compare view, 8 scenarios): median {statistics.median(samples):.1f} ms, "
          f"max {max(samples):.1f} ms (target < 16 ms)")
    w.tabs.setCurrentWidget(w.sweep)
    t0 = time.perf_counter()
    w._stale.add(w.sweep)
    w._refresh_visible()
    print(f"sweep view redraw (8 scenarios x {w.sweep.series[0].x.size} points): {(time.perf_counter() - t0) * 1e3:.1f} ms")


def many(n: int = 200) -> None:
    """An edit and a unit switch with n scenarios: recompute + redraw (as the 8-scenario figure), and with
    Qt's paint included."""
    from PySide6.QtWidgets import QApplication

    from memviz.core.estimate import Scenario
    from memviz.core.units import Unit
    from memviz.gui.main_window import MainWindow

    app = QApplication.instance()
    w = MainWindow()
    w.confirm_discard = lambda: True
    w.show()
    scenarios = tuple(Scenario(context_tokens=1024 * (1 + i % 16), batch=1 + i % 4, name=f"s{i}") for i in range(n))
    w.apply(w.session.with_changes(scenarios=scenarios))
    app.processEvents()
    redraws, painted = [], []
    for i in range(30):
        sc = w.session.scenarios[0].with_changes(batch=1 + i % 3)
        t0 = time.perf_counter()
        w.apply(w.session.with_changes(scenarios=(sc, *w.session.scenarios[1:])))
        redraws.append(w.last_refresh_ms)
        app.processEvents()
        painted.append((time.perf_counter() - t0) * 1e3)
    switches = []
    for unit in (Unit.GB, Unit.GiB, Unit.GB, Unit.GiB, Unit.GB):
        t0 = time.perf_counter()
        w.set_unit(unit)
        app.processEvents()
        switches.append((time.perf_counter() - t0) * 1e3)
    print(f"edit with {n} scenarios: recompute + redraw median {statistics.median(redraws):.1f} ms, with paint "
          f"{statistics.median(painted):.1f} ms (target < 50 ms); unit switch {statistics.median(switches):.0f} ms")


if __name__ == "__main__":
    startup()
    redraw()
    many()
