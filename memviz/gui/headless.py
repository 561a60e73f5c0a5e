"""Headless chart rendering for `memviz export`: the window's chart code, offscreen."""

from __future__ import annotations

import os
from pathlib import Path

from memviz.core.session import Session


def render(session: Session, chart: str, out: str | Path, width_px: int = 1800, log_x: bool = False,
           scale: float = 1.0, title: str | None = None, subtitle: str | None = "auto") -> Path:
    """Draw `chart` ("compare" or "sweep") for `session` and export it to PNG, SVG or PDF; the subtitle
    "auto" names engines, settings, GPUs, memviz's version and the date, None leaves it out."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True)
    from memviz.gui import model
    from memviz.gui.charts import CompareChart, SweepChart
    from memviz.gui.export import export_chart

    caps = model.capacities(session)
    if chart == "compare":
        widget = CompareChart()
        widget.set_bars(model.bars(session, model.compute_estimates(session)), caps, session.unit, model.title(session))
    else:
        widget = SweepChart()
        widget.set_series(model.series(session, "context"), caps, session.unit, "context", log_x, model.title(session))
    widget.resize(1400, 800)
    widget.show()
    app.processEvents()
    try:
        sub = model.subtitle(session) if subtitle == "auto" else subtitle
        return export_chart(widget, out, width_px, scale=scale, title=title, subtitle=sub)
    finally:
        widget.close()
        widget.deleteLater()
