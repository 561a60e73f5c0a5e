"""Chart export: PNG at a chosen width (pyqtgraph's ImageExporter), SVG (QSvgGenerator)
and PDF (QPdfWriter).

SVG and PDF render the chart's scene through a QPainter. pyqtgraph 0.14's own
SVGExporter cannot parse the path data Qt 6.12 writes (it fails on every item),
so it is not used. The same functions serve the window's File > Export and the
headless `memviz export`, so a report picture is exactly what the window shows.
"""

from __future__ import annotations

from pathlib import Path

from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QMarginsF, QRect, QRectF, QSize, QSizeF
from PySide6.QtGui import QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator

from memviz.core.errors import InputError

CHART_SUFFIXES = (".png", ".svg", ".pdf")


def export_chart(chart, path: str | Path, width_px: int = 1800) -> Path:
    """Write `chart` (a CompareChart or SweepChart: plot, legend, title) to PNG, SVG or PDF by suffix."""
    p = Path(path)
    suffix = p.suffix.lower()
    item = chart.layout_item
    if suffix == ".png":
        exporter = ImageExporter(item)
        exporter.parameters()["width"] = int(width_px)
        exporter.parameters()["antialias"] = True
        exporter.export(str(p))
    elif suffix == ".svg":
        rect = item.sceneBoundingRect()
        generator = QSvgGenerator()
        generator.setFileName(str(p))
        generator.setSize(QSize(int(rect.width()), int(rect.height())))
        generator.setViewBox(QRect(0, 0, int(rect.width()), int(rect.height())))
        generator.setTitle(getattr(chart.plot_item.titleLabel, "text", "") or "memviz chart")
        _render(chart, generator, QRectF(0, 0, rect.width(), rect.height()), rect)
    elif suffix == ".pdf":
        rect = item.sceneBoundingRect()
        writer = QPdfWriter(str(p))
        writer.setResolution(150)
        writer.setPageSize(QPageSize(QSizeF(rect.width() * 0.75, rect.height() * 0.75), QPageSize.Unit.Point, "chart"))
        writer.setPageMargins(QMarginsF(0, 0, 0, 0))
        _render(chart, writer, QRectF(0, 0, writer.width(), writer.height()), rect)
    else:
        raise InputError(f"cannot export a chart as {suffix or 'a file without suffix'}; use {', '.join(CHART_SUFFIXES)}")
    if not p.exists() or p.stat().st_size == 0:
        raise InputError(f"export to {p} produced no file")
    return p


def _render(chart, device, target: QRectF, source: QRectF) -> None:
    painter = QPainter(device)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        chart.scene().render(painter, target, source)
    finally:
        painter.end()
