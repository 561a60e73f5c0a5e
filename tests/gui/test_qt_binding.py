"""Guard against a Qt binding that corrupts reference counts under chart updates.

PySide6 6.12.0 drops one reference to Py_True per QGraphicsItem.itemChange call on
Python 3.11; after a few thousand chart items the interpreter aborts with
"bool_dealloc". The app adds and removes items on every redraw, so this runs the
same pattern in a child process and requires it to survive.
"""

import os
import subprocess
import sys

CHILD = """
from PySide6.QtWidgets import QApplication
import pyqtgraph as pg
app = QApplication([])
w = pg.PlotWidget()
w.show()
for _ in range(4000):
    t = pg.TextItem("x")
    w.addItem(t)
    w.removeItem(t)
print("ok")
"""


def test_many_chart_item_updates_do_not_abort():
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
