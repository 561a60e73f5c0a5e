"""Regenerate the golden images the chart tests compare against (tests/gui/test_golden.py).

    QT_QPA_PLATFORM=offscreen python scripts/golden_images.py

Run it after an intended change to how charts look, look at every picture it writes, then commit them.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.gui.test_golden import CASES, FITS, GOLDEN, render, render_fit  # noqa: E402

if __name__ == "__main__":
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    for name in CASES:
        path = GOLDEN / f"{name}.png"
        render(name).save(str(path))
        print(path)
    for theme in FITS:
        render_fit(theme).save(str(GOLDEN / f"fit-matrix-{theme}.png"))
        print(GOLDEN / f"fit-matrix-{theme}.png")
