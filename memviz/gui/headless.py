"""Headless chart rendering for `memviz export`: the window's chart code, offscreen."""

from __future__ import annotations

import os
from pathlib import Path

from memviz.core.planner import Plan
from memviz.core.session import Session
from memviz.core.units import Unit


def _application():
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True)
    return app


def _export(app, widget, out: str | Path, width_px: int, **kw) -> Path:
    from memviz.gui.export import export_chart

    widget.resize(1400, 800)
    widget.show()
    app.processEvents()
    try:
        return export_chart(widget, out, width_px, **kw)
    finally:
        widget.close()
        widget.deleteLater()


def render_plan(p: Plan, out: str | Path, width_px: int = 1800) -> Path:
    """The plan's Pareto view (memviz.gui.pareto_chart) exported to PNG, SVG or PDF."""
    app = _application()
    from memviz.gui.model import plan_subtitle
    from memviz.gui.pareto_chart import ParetoChart

    chart = ParetoChart()
    r = p.requirements
    hw = ", ".join(h.label for h in p.hardware)
    chart.set_plan(list(p.ranked), list(p.rejected), Unit.GiB,
                   f"{p.architecture.name}: {r.context_tokens:,d} tokens × {r.concurrency} on {hw}")
    return _export(app, chart, out, width_px, subtitle=plan_subtitle(p))


def render(session: Session, chart: str, out: str | Path, width_px: int = 1800, log_x: bool = False,
           scale: float = 1.0, title: str | None = None, subtitle: str | None = "auto") -> Path:
    """Draw `chart` ("compare" or "sweep") for `session` and export it to PNG, SVG or PDF; the subtitle
    "auto" names engines, settings, GPUs, memviz's version and the date, None leaves it out."""
    app = _application()
    from memviz.gui import model
    from memviz.gui.charts import CompareChart, SweepChart

    caps = model.capacities(session)
    if chart == "compare":
        widget = CompareChart()
        widget.set_bars(model.bars(session, model.compute_estimates(session)), caps, session.unit, model.title(session))
    else:
        widget = SweepChart()
        widget.set_series(model.series(session, "context"), caps, session.unit, "context", log_x, model.title(session))
    sub = model.subtitle(session) if subtitle == "auto" else subtitle
    return _export(app, widget, out, width_px, scale=scale, title=title, subtitle=sub)
