"""Desktop app bootstrap: high-DPI policy, application names, icon, chart options, error hook."""

from __future__ import annotations

import sys
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

    holder: dict[str, MainWindow] = {}
    install_excepthook(holder)
    window = holder["window"] = MainWindow()
    window.show()
    return app, window


def install_excepthook(holder: dict) -> None:
    """Report an uncaught exception in the window (once `holder["window"]` exists) and pass it on to the
    hook that was installed before (Python's own prints the traceback)."""
    previous = sys.excepthook

    def excepthook(kind, value, tb) -> None:
        previous(kind, value, tb)
        window = holder.get("window")
        if window is not None:
            window.report_error(f"Internal error: {value} (details on stderr). Nothing was changed by the failed "
                                "action; save your session under a new name if in doubt.")

    sys.excepthook = excepthook


def run(argv: list[str] | None = None) -> int:
    app, _window = create_window(argv)
    return app.exec()
