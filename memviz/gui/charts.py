"""The compare (stacked bars) and sweep (memory vs context/batch) charts.

They only draw what they are given; the numbers come from `memviz.core`. Every
value is drawn in the session's unit (GiB or GB) and the unit is always printed.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QCursor, QFont, QFontMetrics
from PySide6.QtWidgets import QToolTip

from memviz.core.estimate import COMPONENTS
from memviz.core.fit import context_unbounded
from memviz.core.units import Unit, format_bytes, to_unit
from memviz.gui.chart_data import Bar, Series
from memviz.gui.palette import (
    COMPONENT_COLORS,
    COMPONENT_LABELS,
    Theme,
    capacity_color,
    screen_theme,
    series_color,
)


def _wrap(label: str, width: int = 18) -> str:
    """Break a scenario label on its separators so tick labels stay within `width` characters where they can."""
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
    """A plot with its legend below it (never over the data); `layout_item` is what gets exported.
    `apply_theme` redraws the last drawing in other colours (exports use the report theme)."""

    verdict_marks = False  # ✓/✗ above the data, named in the legend
    def __init__(self) -> None:
        super().__init__()
        self.theme = screen_theme()
        self.setBackground(self.theme.background)
        self.layout_item = self.ci
        self.plot_item = self.ci.addPlot(row=0, col=0)
        self.plot_item.showGrid(x=False, y=True, alpha=0.25)
        self.plot_item.setMenuEnabled(False)
        self.legend = pg.LegendItem(colCount=2, labelTextColor=self.theme.foreground, labelTextSize="10pt")
        self.ci.addItem(self.legend, row=1, col=0)
        self._style_axes()
        self._last: tuple | None = None  # the arguments of the last drawing, to redraw in another theme
        self._legend_texts: list[str] = []
        self._legend_variants: tuple[list[str], list[str]] = ([], [])
        self._legend_key: tuple | None = None
        self._legend_font = QFont()
        self._legend_font.setPointSizeF(10)
        self.setMinimumSize(420, 300)

    @property
    def _fg(self) -> str:
        return self.theme.foreground

    def _style_axes(self) -> None:
        for axis in ("left", "bottom"):
            self.plot_item.getAxis(axis).setTextPen(self._fg)
            self.plot_item.getAxis(axis).setPen(self._fg)

    def apply_theme(self, theme: Theme | None = None) -> None:
        """Colours of `theme` (default: the screen's, from the palette), and the last drawing again."""
        self.theme = theme or screen_theme()
        self.setBackground(self.theme.background)
        self._style_axes()
        self.legend.setLabelTextColor(self._fg)
        if self._last is not None:
            self._draw(*self._last)

    def _draw(self, *args) -> None:
        raise NotImplementedError

    def _legend_columns(self, texts: list[str]) -> int:
        """Two legend columns when the widest entry fits in half the chart's width, else one."""
        metrics = QFontMetrics(self._legend_font)
        widest = max((metrics.horizontalAdvance(t) + 60 for t in texts), default=0)
        return 2 if 2 * widest <= self.width() - 40 else 1

    def _fit_legend(self) -> None:
        """Redraw when the chart's width calls for another number of legend columns: nothing is cut off."""
        if getattr(self, "closed", False) or getattr(self, "_last", None) is None:  # from close() and __init__ too
            return
        texts, columns = self._legend_choice(*self._legend_variants)
        if columns != self.legend.columnCount or texts != self._legend_texts:
            self._draw(*self._last)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if hasattr(self, "legend"):
            self._fit_legend()

    def _set_legend(self, entries: list[tuple]) -> None:
        """The legend's (sample item, text[, short text]) entries, in two columns when they fit, else the short
        texts (GPU names only) in two columns when those fit, else the full texts in one."""
        variants = ([e[1] for e in entries], [e[2] if len(e) > 2 else e[1] for e in entries])
        texts, columns = self._legend_choice(*variants)
        key = (tuple(texts), columns, self.theme, tuple(type(e[0]) for e in entries))
        if key == self._legend_key:  # an edit that changes no entry keeps the legend (rebuilding costs ~7 ms)
            return
        self._legend_key, self._legend_variants, self._legend_texts = key, variants, texts
        self.legend.clear()
        self.legend.setColumnCount(columns)
        for (item, *_), text in zip(entries, texts, strict=True):
            self.legend.addItem(item, text)

    def _legend_choice(self, full: list[str], short: list[str]) -> tuple[list[str], int]:
        """(texts, columns): the full texts in two columns if they fit, the short ones in two if those fit,
        else the full texts in one."""
        if self._legend_columns(full) == 2:
            return full, 2
        if self._legend_columns(short) == 2:
            return short, 2
        return full, 1
        # LegendItem.updateSize leaves out its grid's spacing and margins: reserve what the grid needs
        self.legend.setMinimumHeight(self.legend.layout.preferredSize().height())

    def _capacity_lines(self, capacities: list[tuple[str, int]], budgets: list[dict[str, int]], unit: Unit,
                        top: float) -> tuple[list, list[tuple]]:
        """Per GPU: the full capacity as a faint line, and the budget each scenario's engine may use (what
        the fit verdict is judged against) as a dashed line; returns (plot items, legend entries). A line
        above `top` (the visible range) says so in the legend."""
        items, entries = [], []
        for i, (label, cap) in enumerate(capacities):
            color = capacity_color(i, self.theme)
            faint = pg.mkPen(_with_alpha(color, 90), width=1)
            items.append(pg.InfiniteLine(pos=to_unit(cap, unit), angle=0, movable=False, pen=faint))
            usable = sorted({b[label] for b in budgets if label in b}) or [cap]
            dashed = pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine)
            above = " (above the range)" if to_unit(min(usable), unit) > top else ""
            mark = " ✓/✗" if self.verdict_marks else ""
            if usable == [cap]:
                entry = f"{label}: {format_bytes(cap, unit)}{mark}{above}"
            else:
                entry = f"{label}: {budget_text(usable, unit)} usable (dashed) of {format_bytes(cap, unit)}{mark}{above}"
            entries.append((pg.PlotDataItem(pen=dashed), entry, f"{label}{mark}{above}"))
            items.extend(self._budget_items(label, usable, budgets, dashed, unit))
        return items, entries

    def _budget_items(self, label, usable, budgets, pen, unit) -> list:
        return [pg.InfiniteLine(pos=to_unit(u, unit), angle=0, movable=False, pen=pen) for u in usable]


MAX_BARS_SHOWN = 20  # bars side by side before the compare view scrolls
#: the stack's segments from the bottom: the four components, the KV cache as much as the sequences need, and on top,
#: faded, the pool an engine reserves beyond that on the scenario's GPU (vLLM): the solid stack is what the ✓ / ✗
#: judge against each GPU's budget, the whole bar what the engine takes on the scenario's GPU
RESERVED = "kv_reserved"
SEGMENTS = (*COMPONENTS, RESERVED)
RESERVED_LABEL = "KV pool beyond the sequences' need (vLLM reserves it)"
RESERVED_ALPHA = 70
#: budgets closer than this fraction read as one range in a legend (vLLM sizes each scenario's pool beside its own rest)
BUDGET_RANGE_FRACTION = 0.02


def budget_text(usable: list[int], unit: Unit) -> str:
    """The sorted budgets as a legend says them: those within `BUDGET_RANGE_FRACTION` of their neighbour as one
    range ("21.91–22.21"), the groups apart ("21.91–22.21 / 23.64 GiB")."""
    groups: list[list[int]] = []
    for u in usable:
        if groups and u - groups[-1][-1] <= BUDGET_RANGE_FRACTION * groups[-1][-1]:
            groups[-1].append(u)
        else:
            groups.append([u])
    def number(nbytes: int) -> str:
        return format_bytes(nbytes, unit).removesuffix(f" {unit.value}")

    texts = [number(g[0]) if len(g) == 1 else f"{number(g[0])}–{number(g[-1])}" for g in groups]
    return f"{' / '.join(texts)} {unit.value}"


def segment_bytes(b: Bar, segment: str) -> int:
    """The bytes of one drawn segment of `b`'s stack (`SEGMENTS`): its KV cache split where a pool is reserved."""
    if segment == RESERVED:
        return b.kv_reserved
    return b.bytes[segment] - b.kv_reserved if segment == "kv_cache" else b.bytes[segment]


def _with_alpha(color: str, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


def visible_top(data_max: float, capacities: list[float]) -> float:
    """Top of the y range: the data and the capacity lines near it. A capacity far above the
    data (more than 3x) would squash the bars to a sliver, so it is left above the range."""
    near = [c for c in capacities if c <= 3 * data_max] if data_max > 0 else capacities
    return max([data_max, *near]) or 1.0


class CompareChart(_Chart):
    """One stacked bar per scenario, side by side, with each GPU's budget and capacity. Above each bar: its
    total and, per GPU, ✓ or ✗ in that GPU's colour; labels are sized to their bar's slot on every resize."""

    verdict_marks = True

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
        self.items[RESERVED] = pg.BarGraphItem(x=[], height=[], width=0.62,
                                               brush=_with_alpha(COMPONENT_COLORS["kv_cache"], RESERVED_ALPHA),
                                               pen=pg.mkPen(self._fg, width=0.5, style=Qt.PenStyle.DashLine))
        self.plot_item.addItem(self.items[RESERVED])
        self._transient: list = []  # totals, markers and capacity lines of the last drawing
        self.labels: list[pg.TextItem] = []
        self._stack: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # component -> (bottoms, heights) of every bar
        self._shown_bars: tuple | None = None
        self._tops: list[float] = []
        self._floor_top = 1.0
        self.plot_item.vb.sigResized.connect(self._layout_labels)
        self.plot_item.vb.sigXRangeChanged.connect(self._layout_labels)
        self.scene().sigMouseMoved.connect(self._hover)

    def _add(self, item) -> None:
        self.plot_item.addItem(item)
        self._transient.append(item)

    def close(self) -> bool:
        """Stop laying out labels before pyqtgraph clears the scene (its resize would reach deleted items)."""
        self.plot_item.vb.sigResized.disconnect(self._layout_labels)
        self.plot_item.vb.sigXRangeChanged.disconnect(self._layout_labels)
        self.labels = []
        return super().close()

    def set_bars(self, bars: list[Bar], capacities: list[tuple[str, int]], unit: Unit, title: str) -> None:
        self._last = (bars, capacities, unit, title)
        self._draw(bars, capacities, unit, title)

    def _draw(self, bars: list[Bar], capacities: list[tuple[str, int]], unit: Unit, title: str) -> None:
        for item in self._transient:
            self.plot_item.removeItem(item)
        self._transient = []
        while len(self.labels) > len(bars):  # bar labels are reused: an edit only changes their text
            self.plot_item.removeItem(self.labels.pop())
        self.bars, self.unit = bars, unit
        self.plot_item.setTitle(title, color=self._fg, size="12pt")
        self.plot_item.setLabel("left", f"Memory per device ({unit.value})", color=self._fg)
        bottom = np.zeros(len(bars))
        self._stack = {}
        for c in SEGMENTS:
            h = np.array([to_unit(segment_bytes(b, c), unit) for b in bars], dtype=float)
            self._stack[c] = (bottom.copy(), h)
            bottom += h
        self._shown_bars = None
        budget_max = max([to_unit(u, unit) for b in bars for u in b.budgets.values()], default=0.0)
        top = visible_top(float(max(bottom, default=0.0)), [to_unit(cap, unit) for _, cap in capacities] +
                          ([budget_max] if budget_max else []))
        self._tops = [float(bottom[i]) * (1 + (b.band or 0)) for i, b in enumerate(bars)]
        for i, b in enumerate(bars):
            if i == len(self.labels):
                self.labels.append(pg.TextItem(anchor=(0.5, 1.0)))
                self.plot_item.addItem(self.labels[i])
            self.labels[i]._memviz_want = self._label_html(b, capacities, unit)  # set once the bar is in view
            # a budget line passing at the label's height goes behind it, not through its text
            self.labels[i].fill = pg.mkBrush(_with_alpha(self.theme.background, 225))
            self.labels[i].setZValue(10)
            if b.measured:
                self._measured_marker(i, b.measured, b.measured_stale)
        banded = [(i, b) for i, b in enumerate(bars) if b.band]
        if banded:
            self._add(pg.ErrorBarItem(x=np.array([i for i, _ in banded], dtype=float),
                                      y=np.array([bottom[i] for i, _ in banded]),
                                      height=np.array([2 * b.band * bottom[i] for i, b in banded]),
                                      beam=0.18, pen=pg.mkPen(self._fg, width=1.5)))
        lines, entries = self._capacity_lines(capacities, [b.budgets for b in bars], unit, top * 1.12)
        for line in lines:
            self._add(line)
        reserved = [(self.items[RESERVED], RESERVED_LABEL)] if any(b.kv_reserved for b in bars) else []
        self._set_legend([(self.items[c], COMPONENT_LABELS[c]) for c in COMPONENTS] + reserved + entries)
        n = max(len(bars), 1)
        shown = min(n, MAX_BARS_SHOWN)  # beyond it the plot scrolls sideways (drag or wheel)
        self.plot_item.setMouseEnabled(x=n > MAX_BARS_SHOWN, y=False)
        self.plot_item.vb.setLimits(xMin=-0.6, xMax=n - 0.4, minXRange=min(n, 3) + 0.2, maxXRange=shown + 0.2)
        self.plot_item.setXRange(-0.6, shown - 0.4, padding=0)
        self._floor_top = top * 1.12 if top else 1.0
        self._layout_labels()

    def _budget_items(self, label, usable, budgets, pen, unit) -> list:
        """A dashed segment over each bar's slot at the budget of that bar's engine (one item, gaps between)."""
        xs, ys = [], []
        for i, b in enumerate(budgets):
            if label in b:
                xs += [i - 0.48, i + 0.48, np.nan]
                ys += [to_unit(b[label], unit)] * 2 + [np.nan]
        return [pg.PlotDataItem(xs, ys, pen=pen, connect="finite")] if xs else []

    def _label_html(self, b: Bar, capacities: list[tuple[str, int]], unit: Unit) -> str:
        marks = " ".join(f'<span style="color:{capacity_color(j, self.theme)}; font-size:120%; font-weight:700">'
                         f'{"✓" if b.fits.get(label) else "✗"}</span>' for j, (label, _) in enumerate(capacities))
        total = f'<span style="color:{self._fg}; font-weight:600">{format_bytes(b.total, unit)}</span>'
        if b.host_bytes >= 2**20:  # offloaded layers or KV: host RAM named under the device total
            total += f'<br><span style="color:{self._fg}">+ {format_bytes(b.host_bytes, unit)} host RAM</span>'
        return f'<div style="text-align:center">{total}<br>{marks}</div>' if marks else \
            f'<div style="text-align:center">{total}</div>'

    def _layout_labels(self) -> None:
        """Each label as wide as its bar's slot at most, ticks wrapped to the slot, and the y range tall enough
        for the highest label: no label overlaps another or leaves the plot at any width."""
        vb = self.plot_item.vb
        width_px, height_px = vb.width(), vb.height()
        if not self.bars or width_px <= 0 or height_px <= 0:
            return
        lo, hi = self.plot_item.vb.viewRange()[0]
        self._show_bars(lo, hi)
        slot_px = width_px / max(hi - lo, 1.0)
        size = 9.0 if slot_px >= 90 else 8.0 if slot_px >= 60 else 7.0
        font = QFont()
        font.setPointSizeF(size)
        text_width = max(slot_px * 0.94, 20)
        need = self._floor_top
        for i, label in enumerate(self.labels):
            label.setVisible(lo < i < hi)  # a scrolled-away bar's label would leave the plot
            if not lo < i < hi:
                continue  # laid out when scrolled into view: with many bars, an edit touches the visible ones only
            want = getattr(label, "_memviz_want", "")
            if getattr(label, "_memviz_html", None) != want:  # setHtml re-lays out the text: only on change
                label.setHtml(want)
                label._memviz_html, label._memviz_layout = want, None  # setHtml resets the font and width
            if getattr(label, "_memviz_layout", None) != (size, text_width):  # re-laying text out is the cost
                label.textItem.setFont(font)
                label.setTextWidth(text_width)
                label._memviz_layout = (size, text_width)
            label_h = label.textItem.boundingRect().height()
            # data per pixel once the range is [0, need]: solve top + h*(need/height_px) + gap <= need
            gap = 4 / height_px
            need = max(need, self._tops[i] / max(1 - (label_h / height_px) - gap, 0.2))
        for i, label in enumerate(self.labels):
            label.setPos(i, self._tops[i] + need * 2 / height_px)
        self.plot_item.setYRange(0, need, padding=0)
        chars = max(6, int(slot_px / 6.8))
        ticks = [(i, _wrap(b.label, chars)) for i, b in enumerate(self.bars) if lo < i < hi]  # the axis paints them all
        axis = self.plot_item.getAxis("bottom")
        if ticks != getattr(self, "_ticks", None):
            self._ticks = ticks
            axis.setTicks([ticks])
            axis.setHeight(18 + 14 * max((text.count("\n") + 1 for _, text in ticks), default=1))

    def _measured_marker(self, i: int, measured: dict[str, int], stale: bool) -> None:
        """Measured components as an outlined stack just right of the estimated bar (grey and dotted when the
        scenario was edited after the run: stale)."""
        y = 0.0
        pen = pg.mkPen("#999999" if stale else self._fg, width=1.2, style=Qt.PenStyle.DotLine if stale else Qt.PenStyle.SolidLine)
        for c in COMPONENTS:
            h = to_unit(measured.get(c) or 0, self.unit)
            if h:
                brush = pg.mkBrush("#99999940" if stale else COMPONENT_COLORS[c] + "80")
                self._add(pg.BarGraphItem(x=[i + 0.36], y0=[y], height=[h], width=0.1, brush=brush, pen=pen))
            y += h

    def bar_heights(self) -> dict[str, list[float]]:
        """Heights per drawn segment of every bar (`SEGMENTS`: the KV cache the sequences need, the reserved rest
        apart), in the chart's unit (for tests and exports)."""
        return {c: [float(v) for v in h] for c, (_, h) in self._stack.items()}

    def _show_bars(self, lo: float, hi: float) -> None:
        """Give the bar items the bars in view only (drawing 200 stacks costs ~10 ms a paint, 20 next to nothing)."""
        n = len(self.bars)
        first, last = max(0, int(np.floor(lo))), min(n, int(np.ceil(hi)) + 1)
        if self._shown_bars == (first, last, self._fg):
            return
        self._shown_bars = (first, last, self._fg)
        x = np.arange(first, last, dtype=float)
        for c, (y0, h) in self._stack.items():
            style = Qt.PenStyle.DashLine if c == RESERVED else Qt.PenStyle.SolidLine
            drawn = h[first:last] > 0 if c == RESERVED else np.ones(last - first, dtype=bool)  # no empty outline
            self.items[c].setOpts(x=x[drawn], y0=y0[first:last][drawn], height=h[first:last][drawn],
                                  pen=pg.mkPen(self._fg, width=0.5, style=style))

    def tooltip_for(self, index: int, component: str) -> str:
        b = self.bars[index]
        if component == RESERVED:
            return "<br>".join([f"<b>{b.label}</b>", f"{RESERVED_LABEL}: {b.kv_reserved:,d} bytes",
                                f"= {format_bytes(b.kv_reserved, Unit.GiB, 3)} = {format_bytes(b.kv_reserved, Unit.GB, 3)}",
                                f"the sequences need {format_bytes(b.kv_required or 0, self.unit, 3)} of the "
                                f"{format_bytes(b.bytes['kv_cache'], self.unit, 3)} pool; on another GPU the pool is "
                                "that GPU's", f"total: {format_bytes(b.total, self.unit, 3)}"])
        n = b.bytes[component]
        lines = [f"<b>{b.label}</b>", f"{COMPONENT_LABELS[component]}: {n:,d} bytes",
                 f"= {format_bytes(n, Unit.GiB, 3)} = {format_bytes(n, Unit.GB, 3)}",
                 f"provenance: {b.provenance.get(component, '?')}"]
        if b.measured and b.measured_stale:
            lines.append("measured run: stale (the scenario was edited after it ran; measure again to compare)")
        elif b.measured and b.measured.get(component) is not None:
            m = b.measured[component]
            err = (n - m) / m * 100 if m else float("nan")
            lines.append(f"measured: {format_bytes(m, self.unit, 3)} (estimate error {err:+.1f} %)")
        lines.append(f"total: {format_bytes(b.total, self.unit, 3)}")
        if b.host_bytes:
            lines.append(f"host RAM: {format_bytes(b.host_bytes, self.unit, 3)} (offloaded layers, KV, engine buffers)")
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
        for c, (bottoms, heights) in self._stack.items():
            if heights[i] and bottoms[i] <= p.y() <= bottoms[i] + heights[i]:
                QToolTip.showText(QCursor.pos(), self.tooltip_for(i, c), self)
                return
        QToolTip.hideText()


class SweepChart(_Chart):
    """Memory against context length or batch, one curve per scenario, with each GPU's budget and capacity;
    a dot where a curve crosses the budget it is judged against (the legend's "≤ N")."""

    def __init__(self) -> None:
        super().__init__()
        self.series: list[Series] = []
        self.curves: list[pg.PlotDataItem] = []

    def set_series(self, series: list[Series], capacities: list[tuple[str, int]], unit: Unit, axis: str,
                   log_x: bool, title: str) -> None:
        self._last = (series, capacities, unit, axis, log_x, title)
        self._draw(*self._last)

    def _draw(self, series: list[Series], capacities: list[tuple[str, int]], unit: Unit, axis: str, log_x: bool,
              title: str) -> None:
        self.plot_item.clear()
        self.series, self.curves = series, []
        self.plot_item.setTitle(title, color=self._fg, size="12pt")
        self.plot_item.setLabel("left", f"Memory per device ({unit.value})", color=self._fg)
        self.plot_item.setLabel("bottom", "Context (tokens per sequence)" if axis == "context" else "Concurrent sequences",
                                color=self._fg)
        self.plot_item.setLogMode(x=log_x, y=False)
        spots, entries = [], []
        ymax = sweep_top(series, capacities, unit)
        for i, s in enumerate(series):
            color = series_color(i, self.theme)
            fit_text = "; ".join(_fit_text(gpu, x, axis) for gpu, x in s.largest_fit.items())
            name = f"{s.label}  [{fit_text}]" if fit_text else s.label
            if s.pooled:  # the curve is the need the verdicts judge; the pool vLLM sizes fills its budget
                name += " (what its sequences need; vLLM's pool fills the rest)"
            lowest = float(s.total_bytes.min()) / unit.bytes if s.total_bytes.size else 0.0
            if lowest > ymax:  # the whole curve lies above the cut (`sweep_top`): say so, as for capacity lines
                name += f" (above the range: from {lowest:,.0f} {unit.value})"
            curve = self.plot_item.plot(*cut_above(s.x, s.total_bytes / unit.bytes, ymax, log_x), connect="finite",
                                        pen=pg.mkPen(color, width=2.5))
            entries.append((curve, name))
            self.curves.append(curve)
            for gpu, x_fit in s.largest_fit.items():  # where the curve meets the budget the verdict used, if drawn
                if 0 < x_fit <= s.x[-1] and gpu in s.budgets:
                    y = min(float(np.interp(x_fit, s.x, s.total_bytes)), s.budgets[gpu]) / unit.bytes
                    spots.append({"pos": (np.log10(x_fit) if log_x else x_fit, y), "brush": color})
        if spots:
            self.plot_item.addItem(pg.ScatterPlotItem(spots=spots, symbol="o", size=10, pen=pg.mkPen(self._fg, width=1)))
        lines, gpu_entries = self._capacity_lines(capacities, [s.budgets for s in series], unit, ymax)
        for line in lines:
            self.plot_item.addItem(line)
        self._set_legend(entries + gpu_entries)
        self.plot_item.setYRange(0, ymax, padding=0)
        self.plot_item.enableAutoRange(axis="x")
        xs = np.concatenate([s.x for s in series]) if series else np.array([1])
        self.plot_item.getAxis("bottom").setTicks([_x_ticks(int(xs.min()), int(xs.max()), log_x)] if xs.size else None)


def _fit_text(gpu: str, x: int, axis: str) -> str:
    """A series' largest fit on one GPU for its legend: none, any context (the search found no limit: a state per
    sequence, chunked prefill), or the bound."""
    if x <= 0:
        return f"{gpu}: ✗ never fits"
    if axis == "context" and context_unbounded(x):
        return f"{gpu}: any context"
    return f"{gpu} ≤ {x:,d}"


def cut_above(x: np.ndarray, y: np.ndarray, top: float, log_x: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The curve (x, y) cut where it leaves the plot through its top: each crossing kept as a point on the edge
    (interpolated along the segment as drawn, in log10 x on a log axis), what lies above as NaN, to be drawn with
    connect="finite". Qt's SVG generator writes no clip paths, so an uncut curve ran over the title there while the
    PNG and PDF clipped it at the axes."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    above = y > top
    if not above.any():
        return x, y
    i = np.flatnonzero(above[1:] != above[:-1])  # segment i -> i + 1 crosses the top
    u = np.log10(x) if log_x else x
    crossing = u[i] + (top - y[i]) / (y[i + 1] - y[i]) * (u[i + 1] - u[i])
    return (np.insert(x, i + 1, 10**crossing if log_x else crossing),
            np.insert(np.where(above, np.nan, y), i + 1, top))


def sweep_top(series: list[Series], capacities: list[tuple[str, int]], unit: Unit) -> float:
    """Top of the sweep's y range: the data, but no higher than 2.5x the largest GPU, so that where the
    curves cross the budgets stays readable when a sweep runs to thousands of GiB."""
    data_max = max([0.0, *(float(s.total_bytes.max()) / unit.bytes for s in series if s.total_bytes.size)])
    caps = [to_unit(c, unit) for _, c in capacities]
    if caps:
        data_max = min(data_max, 2.5 * max(caps))
    return visible_top(data_max, caps) * 1.1


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
