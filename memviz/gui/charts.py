"""The compare (stacked bars) and sweep (memory vs context/batch) charts.

They only draw what they are given; the numbers come from `memviz.core`. Every
value is drawn in the session's unit (GiB or GB) and the unit is always printed.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QToolTip

from memviz.core.estimate import COMPONENTS
from memviz.core.units import Unit, format_bytes, to_unit
from memviz.gui.chart_data import Bar, Series
from memviz.gui.palette import CAPACITY_COLORS, COMPONENT_COLORS, COMPONENT_LABELS, OVER_CAPACITY, SERIES_COLORS, chart_colors


def _wrap(label: str, width: int = 18) -> str:
    """Break a scenario label on its separators so tick labels stay readable."""
    parts, line, out = label.split(" · "), "", []
    for p in parts:
        if line and len(line) + len(p) + 3 > width:
            out.append(line)
            line = p
        else:
            line = f"{line} · {p}" if line else p
    out.append(line)
    return "\n".join(out)


class _Chart(pg.GraphicsLayoutWidget):
    """A plot with its legend below it (never over the data); `layout_item` is what gets exported."""

    def __init__(self) -> None:
        bg, fg = chart_colors()
        super().__init__()
        self.setBackground(bg)
        self._fg = fg
        self.layout_item = self.ci
        self.plot_item = self.ci.addPlot(row=0, col=0)
        self.plot_item.showGrid(x=False, y=True, alpha=0.25)
        self.plot_item.setMenuEnabled(False)
        self.legend = pg.LegendItem(colCount=2, labelTextColor=fg, labelTextSize="10pt")
        self.ci.addItem(self.legend, row=1, col=0)
        self._style_axes()
        self.setMinimumSize(420, 300)

    def _style_axes(self) -> None:
        for axis in ("left", "bottom"):
            self.plot_item.getAxis(axis).setTextPen(self._fg)
            self.plot_item.getAxis(axis).setPen(self._fg)

    def apply_theme(self) -> None:
        bg, self._fg = chart_colors()
        self.setBackground(bg)
        self._style_axes()
        self.legend.setLabelTextColor(self._fg)

    def _clear(self) -> None:
        self.plot_item.clear()
        self.legend.clear()

    def _capacity_lines(self, capacities: list[tuple[str, int]], unit: Unit, top: float) -> list[pg.InfiniteLine]:
        """Dashed horizontal lines; their labels go in the legend so they never cover data.
        Lines above `top` (the visible range) are listed in the legend as such."""
        lines = []
        for i, (label, cap) in enumerate(capacities):
            pen = pg.mkPen(CAPACITY_COLORS[i % len(CAPACITY_COLORS)], width=2, style=Qt.PenStyle.DashLine)
            lines.append(pg.InfiniteLine(pos=to_unit(cap, unit), angle=0, movable=False, pen=pen))
            where = " (above the visible range)" if to_unit(cap, unit) > top else ""
            self.legend.addItem(pg.PlotDataItem(pen=pen), f"{label} capacity: {format_bytes(cap, unit)}{where}")
        return lines


def visible_top(data_max: float, capacities: list[float]) -> float:
    """Top of the y range: the data and the capacity lines near it. A capacity far above the
    data (more than 3x) would squash the bars to a sliver, so it is left above the range."""
    near = [c for c in capacities if c <= 3 * data_max] if data_max > 0 else capacities
    return max([data_max, *near]) or 1.0


class CompareChart(_Chart):
    """One stacked bar per scenario, side by side, with GPU capacity lines."""

    def __init__(self) -> None:
        super().__init__()
        self.bars: list[Bar] = []
        self.unit = Unit.GiB
        self.plot_item.setMouseEnabled(x=False, y=False)
        self.plot_item.getAxis("bottom").setHeight(58)
        self.items: dict[str, pg.BarGraphItem] = {}
        for c in COMPONENTS:
            item = pg.BarGraphItem(x=[], height=[], width=0.62, brush=COMPONENT_COLORS[c],
                                   pen=pg.mkPen(self._fg, width=0.5), name=COMPONENT_LABELS[c])
            self.plot_item.addItem(item)
            self.items[c] = item
        self._transient: list = []  # totals, markers and capacity lines of the last drawing
        self.scene().sigMouseMoved.connect(self._hover)

    def _add(self, item) -> None:
        self.plot_item.addItem(item)
        self._transient.append(item)

    def set_bars(self, bars: list[Bar], capacities: list[tuple[str, int]], unit: Unit, title: str) -> None:
        for item in self._transient:
            self.plot_item.removeItem(item)
        self._transient = []
        self.bars, self.unit = bars, unit
        self.legend.clear()
        for c, item in self.items.items():
            self.legend.addItem(item, COMPONENT_LABELS[c])
        self.plot_item.setTitle(title, color=self._fg, size="12pt")
        self.plot_item.setLabel("left", f"Memory per device ({unit.value})", color=self._fg)
        x = np.arange(len(bars), dtype=float)
        bottom = np.zeros(len(bars))
        for c in COMPONENTS:
            h = np.array([to_unit(b.bytes[c], unit) for b in bars])
            self.items[c].setOpts(x=x, y0=bottom.copy(), height=h, pen=pg.mkPen(self._fg, width=0.5))
            bottom += h
        top = visible_top(float(max(bottom, default=0.0)), [to_unit(cap, unit) for _, cap in capacities])
        for i, b in enumerate(bars):
            over = [g for g, ok in b.fits.items() if not ok]
            html = f'<div style="text-align:center; color:{self._fg}; font-weight:600">{format_bytes(b.total, unit)}</div>'
            if over:
                html += f'<div style="text-align:center; color:{OVER_CAPACITY}">✗ exceeds {", ".join(over)}</div>'
            t = pg.TextItem(html=html, anchor=(0.5, 1.0))
            t.setTextWidth(230)
            t.setPos(i, bottom[i] * (1 + (b.band or 0)) + top * 0.01)
            self._add(t)
            if b.measured:
                self._measured_marker(i, b.measured)
        banded = [(i, b) for i, b in enumerate(bars) if b.band]
        if banded:
            self._add(pg.ErrorBarItem(x=np.array([i for i, _ in banded], dtype=float),
                                      y=np.array([bottom[i] for i, _ in banded]),
                                      height=np.array([2 * b.band * bottom[i] for i, b in banded]),
                                      beam=0.18, pen=pg.mkPen(self._fg, width=1.5)))
        for line in self._capacity_lines(capacities, unit, top * 1.12):
            self._add(line)
        self.plot_item.getAxis("bottom").setTicks([[(i, _wrap(b.label)) for i, b in enumerate(bars)]])
        self.plot_item.setXRange(-0.6, max(len(bars) - 0.4, 0.6), padding=0)
        self.plot_item.setYRange(0, top * 1.12 if top else 1, padding=0)

    def _measured_marker(self, i: int, measured: dict[str, int]) -> None:
        """Measured components as an outlined stack just right of the estimated bar."""
        y = 0.0
        for c in COMPONENTS:
            h = to_unit(measured.get(c) or 0, self.unit)
            if h:
                self._add(pg.BarGraphItem(x=[i + 0.36], y0=[y], height=[h], width=0.1,
                                          brush=pg.mkBrush(COMPONENT_COLORS[c] + "80"), pen=pg.mkPen(self._fg, width=1.2)))
            y += h

    def bar_heights(self) -> dict[str, list[float]]:
        """Drawn heights per component, in the chart's unit (for tests and exports)."""
        return {c: [float(v) for v in item.opts["height"]] for c, item in self.items.items()}

    def tooltip_for(self, index: int, component: str) -> str:
        b = self.bars[index]
        n = b.bytes[component]
        lines = [f"<b>{b.label}</b>", f"{COMPONENT_LABELS[component]}: {n:,d} bytes",
                 f"= {format_bytes(n, Unit.GiB, 3)} = {format_bytes(n, Unit.GB, 3)}",
                 f"provenance: {b.provenance.get(component, '?')}"]
        if b.measured and b.measured.get(component) is not None:
            m = b.measured[component]
            err = (n - m) / m * 100 if m else float("nan")
            lines.append(f"measured: {format_bytes(m, self.unit, 3)} (estimate error {err:+.1f} %)")
        lines.append(f"total: {format_bytes(b.total, self.unit, 3)}")
        if b.band:
            lines.append(f"± {b.band * 100:.1f} % (largest peak error of this machine's stored probe runs)")
        return "<br>".join(lines)

    def _hover(self, pos: QPointF) -> None:
        if not self.bars or not self.plot_item.sceneBoundingRect().contains(pos):
            return
        p = self.plot_item.vb.mapSceneToView(pos)
        i = int(round(p.x()))
        if not (0 <= i < len(self.bars)) or abs(p.x() - i) > 0.31:
            QToolTip.hideText()
            return
        y = 0.0
        for c in COMPONENTS:
            h = to_unit(self.bars[i].bytes[c], self.unit)
            if y <= p.y() <= y + h:
                QToolTip.showText(QCursor.pos(), self.tooltip_for(i, c), self)
                return
            y += h
        QToolTip.hideText()


class SweepChart(_Chart):
    """Memory against context length or batch, one curve per scenario, with capacity lines."""

    def __init__(self) -> None:
        super().__init__()
        self.series: list[Series] = []
        self.curves: list[pg.PlotDataItem] = []

    def set_series(self, series: list[Series], capacities: list[tuple[str, int]], unit: Unit, axis: str,
                   log_x: bool, title: str) -> None:
        self._clear()
        self.series, self.curves = series, []
        self.plot_item.setTitle(title, color=self._fg, size="12pt")
        self.plot_item.setLabel("left", f"Memory per device ({unit.value})", color=self._fg)
        self.plot_item.setLabel("bottom", "Context (tokens per sequence)" if axis == "context" else "Concurrent sequences",
                                color=self._fg)
        self.plot_item.setLogMode(x=log_x, y=False)
        spots = []
        for i, s in enumerate(series):
            color = SERIES_COLORS[i % len(SERIES_COLORS)]
            fit_text = "; ".join(f"{gpu} ≤ {x:,d}" if x > 0 else f"{gpu}: ✗ never fits" for gpu, x in s.largest_fit.items())
            name = f"{s.label}  [{fit_text}]" if fit_text else s.label
            curve = self.plot_item.plot(s.x, s.total_bytes / unit.bytes, pen=pg.mkPen(color, width=2.5))
            self.legend.addItem(curve, name)
            self.curves.append(curve)
            for x_fit in s.largest_fit.values():
                if x_fit > 0:
                    y = float(np.interp(x_fit, s.x, s.total_bytes)) / unit.bytes
                    spots.append({"pos": (np.log10(x_fit) if log_x else x_fit, y), "brush": color})
        if spots:
            self.plot_item.addItem(pg.ScatterPlotItem(spots=spots, symbol="o", size=10, pen=pg.mkPen(self._fg, width=1)))
        data_max = max([0.0, *(float(s.total_bytes.max()) / unit.bytes for s in series if s.total_bytes.size)])
        ymax = visible_top(data_max, [to_unit(c, unit) for _, c in capacities])
        for line in self._capacity_lines(capacities, unit, ymax * 1.1):
            self.plot_item.addItem(line)
        self.plot_item.setYRange(0, ymax * 1.1, padding=0)
        self.plot_item.enableAutoRange(axis="x")
        xs = np.concatenate([s.x for s in series]) if series else np.array([1])
        self.plot_item.getAxis("bottom").setTicks([_x_ticks(int(xs.min()), int(xs.max()), log_x)] if xs.size else None)


def _token_label(n: int) -> str:
    """1024 -> '1K', 131072 -> '128K', 1048576 -> '1M' (binary multiples, as context sizes are quoted)."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10}K"
    return f"{n:,d}"


def _x_ticks(lo: int, hi: int, log_x: bool, most: int = 9) -> list[tuple[float, str]]:
    """Ticks at powers of two (log axis) or at round binary steps (linear axis), at most `most` of them."""
    if log_x:
        powers = [1 << k for k in range(0, 40) if lo <= 1 << k <= hi]
        step = max(1, -(-len(powers) // most))
        return [(float(np.log10(p)), _token_label(p)) for p in powers[::step]]
    step = 1 << max(0, int(np.ceil(np.log2(max(hi, 1) / most))))
    return [(float(v), _token_label(v)) for v in range(0, hi + 1, step)]
