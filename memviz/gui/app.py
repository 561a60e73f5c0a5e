"""Desktop app bootstrap: high-DPI policy, application names, icon, chart options, error hook."""

from __future__ import annotations

import sys
import traceback
from importlib import resources


def create_window(argv: list[str] | None = None):
    """Create (or reuse) the QApplication and a shown main window; returns (app, window)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QIcon
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv)
    app.setApplicationName("memviz")
    app.setOrganizationName("memviz")
    app.setDesktopFileName("memviz")
    app.setWindowIcon(QIcon(str(resources.files("memviz.data") / "memviz.svg")))

    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True)
    from memviz.gui.main_window import MainWindow

    window = MainWindow()

    def excepthook(kind, value, tb) -> None:
        print("".join(traceback.format_exception(kind, value, tb)), file=sys.stderr)
        window.report_error(f"Internal error: {value} (details on stderr; your session is unchanged)")

    sys.excepthook = excepthook
    window.show()
    return app, window


def run(argv: list[str] | None = None) -> int:
    app, _window = create_window(argv)
    return app.exec()
