"""Chart export: PNG at a chosen width (QImage), SVG (QSvgGenerator) and PDF (QPdfWriter), each
rendered from an offscreen copy of the chart laid out at the export width, in the light report theme.

SVG and PDF render the chart's scene through a QPainter. pyqtgraph 0.14's own
SVGExporter cannot parse the path data Qt 6.12 writes (it fails on every item),
so it is not used. The same functions serve the window's File > Export and the
headless `memviz export`, so a report picture is exactly what the window shows.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from html import escape
from pathlib import Path

from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QCoreApplication, QMarginsF, QRect, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QImage, QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator

from memviz.core.errors import InputError
from memviz.gui.palette import REPORT_THEME, Theme

CHART_SUFFIXES = (".png", ".svg", ".pdf")


def export_chart(chart, path: str | Path, width_px: int = 1800, theme: Theme | None = REPORT_THEME, scale: float = 1.0,
                 title: str | None = None, subtitle: str | None = None) -> Path:
    """Write `chart` (a CompareChart or SweepChart: plot, legend, title) to PNG, SVG or PDF by suffix, in
    `theme` (default the light report theme; None keeps the screen's colours). `scale` multiplies a PNG's
    pixels (2: a 1800-px layout drawn on 3600 px, for print); `title` replaces the chart's title and
    `subtitle` goes under it in smaller type.

    The picture is drawn anew by an offscreen copy of the chart laid out at `width_px` (and the shown
    chart's aspect ratio), then rendered at scale 1: pyqtgraph's legend and text items do not scale with
    a painter, so a chart laid out at one width and scaled to another has its legend outgrow the page."""
    with offscreen_copy(chart, width_px, theme, title, subtitle) as copy:
        return _export(copy, Path(path), scale)


@contextmanager
def offscreen_copy(chart, width_px: int, theme: Theme | None = REPORT_THEME, title: str | None = None,
                   subtitle: str | None = None):
    """The chart drawn anew, offscreen, at `width_px` and the shown chart's aspect ratio, in `theme`, with
    another title and a subtitle if given."""
    if chart._last is None:
        raise InputError("the chart has nothing drawn to export")
    copy = type(chart)()
    copy.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    copy.apply_theme(theme or chart.theme)
    aspect = chart.height() / chart.width() if chart.width() > 0 else 800 / 1400
    copy.resize(int(width_px), max(300, round(width_px * aspect)))
    copy.show()
    try:
        heading = title or chart._last[-1]
        if subtitle:
            heading = f'<p align="center" style="margin:0">{escape(heading)}<br>' \
                      f'<span style="font-size:9pt">{escape(subtitle)}</span></p>'
        copy._last = (*chart._last[:-1], heading)
        copy._draw(*copy._last)
        _settle(copy)
        yield copy
    finally:
        copy.close()
        copy.deleteLater()


def chart_image(chart, scale: float = 1.0) -> QImage:
    """The chart rendered into an image at the resolution its scene was laid out at, `scale` device pixels
    per layout pixel (a device pixel ratio, so text and lines scale with everything else)."""
    _settle(chart)
    rect = chart.layout_item.sceneBoundingRect()
    image = QImage(round(rect.width() * scale), round(rect.height() * scale), QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    dots_per_meter = round(_scene_dpi(chart) / 0.0254)  # logical: the device pixel ratio does the scaling
    image.setDotsPerMeterX(dots_per_meter)
    image.setDotsPerMeterY(dots_per_meter)
    image.fill(chart.backgroundBrush().color())
    _render(chart, image, QRectF(0, 0, rect.width(), rect.height()), rect)
    return image


def _settle(chart) -> None:
    """Let the chart finish laying out (label sizes change the axis height, which resizes the plot again)."""
    for _ in range(3):
        chart.ci.layout.activate()
        QCoreApplication.processEvents()


def _export(chart, p: Path, scale: float = 1.0) -> Path:
    _settle(chart)
    suffix = p.suffix.lower()
    item = chart.layout_item
    if suffix == ".png":
        if not chart_image(chart, scale).save(str(p), "PNG"):
            raise InputError(f"could not write {p}")
    elif suffix == ".svg":
        rect = item.sceneBoundingRect()
        generator = QSvgGenerator()
        generator.setFileName(str(p))
        generator.setSize(QSize(int(rect.width()), int(rect.height())))
        generator.setViewBox(QRect(0, 0, int(rect.width()), int(rect.height())))
        generator.setResolution(_scene_dpi(chart))
        generator.setTitle(getattr(chart.plot_item.titleLabel, "text", "") or "memviz chart")
        _render(chart, generator, QRectF(0, 0, rect.width(), rect.height()), rect)
        p.write_text(bake_non_scaling_strokes(p.read_text(encoding="utf-8")), encoding="utf-8")
    elif suffix == ".pdf":
        rect = item.sceneBoundingRect()
        writer = QPdfWriter(str(p))
        writer.setResolution(_scene_dpi(chart))
        writer.setPageSize(QPageSize(QSizeF(rect.width() * 0.75, rect.height() * 0.75), QPageSize.Unit.Point, "chart"))
        writer.setPageMargins(QMarginsF(0, 0, 0, 0))
        _render(chart, writer, QRectF(0, 0, writer.width(), writer.height()), rect)
    else:
        raise InputError(f"cannot export a chart as {suffix or 'a file without suffix'}; use {', '.join(CHART_SUFFIXES)}")
    if not p.exists() or p.stat().st_size == 0:
        raise InputError(f"export to {p} produced no file")
    return p


_SVG = "{http://www.w3.org/2000/svg}"
_NUMBER = r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PAIR = re.compile(rf"({_NUMBER}),({_NUMBER})")
_MATRIX = re.compile(rf"matrix\(({_NUMBER}),({_NUMBER}),({_NUMBER}),({_NUMBER}),({_NUMBER}),({_NUMBER})\)")


def bake_non_scaling_strokes(svg: str) -> str:
    """Move data-space transforms into the coordinates of cosmetic-pen shapes.

    pyqtgraph draws bars and curves in data coordinates under the plot's scale (214 px per bar, 3.6 px
    per GiB) with cosmetic pens; Qt writes those as `vector-effect="non-scaling-stroke"` shapes inside a
    `matrix(...)` group. Browsers and Qt honour the attribute, but renderers of SVG Tiny without it
    (librsvg, so GNOME and Inkscape previews) scale a 1-pixel outline into a 214-pixel band. Putting the
    matrix into the points makes every renderer draw the same picture."""
    ET.register_namespace("", _SVG[1:-1])
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(svg)
    for group in root.iter(f"{_SVG}g"):
        m = _MATRIX.fullmatch(group.get("transform", ""))
        shapes = list(group)
        if not m or not shapes or any(ch.get("vector-effect") != "non-scaling-stroke" for ch in shapes):
            continue
        a, b, c, d, e, f = map(float, m.groups())

        def move(x: float, y: float) -> str:
            return f"{a * x + c * y + e:.3f},{b * x + d * y + f:.3f}"  # noqa: B023 - used within this iteration

        for ch in shapes:
            if ch.tag == f"{_SVG}rect":
                x, y, w, h = (float(ch.attrib.pop(k)) for k in ("x", "y", "width", "height"))
                ch.tag = f"{_SVG}path"
                ch.set("d", f"M{move(x, y)} L{move(x + w, y)} L{move(x + w, y + h)} L{move(x, y + h)} Z")
                continue
            for attr in ("d", "points"):
                if attr in ch.attrib:
                    ch.set(attr, _PAIR.sub(lambda k: move(float(k.group(1)), float(k.group(2))), ch.get(attr)))
        group.set("transform", "matrix(1,0,0,1,0,0)")
    return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(root, encoding="unicode")


def _scene_dpi(chart) -> int:
    """The resolution the scene was laid out at. pyqtgraph records bars and curves as QPictures at the
    screen's logical DPI and a QPicture replayed on a device of another resolution is scaled by the ratio
    (bars shifted and stretched against the axes), so vector devices take the same resolution."""
    return round(chart.logicalDpiX())


def _render(chart, device, target: QRectF, source: QRectF) -> None:
    """Paint the scene on a vector device in pyqtgraph's export mode: scatter markers are drawn as
    paths rather than fragments of a cached pixmap atlas (which SVG would embed whole, every marker
    of every colour at each point). pyqtgraph's exporter only walks the items to switch the mode."""
    modes = ImageExporter(chart.layout_item)
    painter = QPainter(device)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        modes.setExportMode(True, {"antialias": True, "background": chart.backgroundBrush().color(), "painter": painter})
        chart.scene().render(painter, target, source)
    finally:
        modes.setExportMode(False)
        painter.end()
