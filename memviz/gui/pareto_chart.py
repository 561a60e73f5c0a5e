"""The Pareto view of a plan: memory per GPU against quality loss, the decode bound as marker size, the
engines as colours, each hardware's GPU memory as a vertical line, and the non-dominated front drawn.

It draws what `memviz.core.planner` computed: points are candidates' needed bytes and quality losses,
the front is `pareto_front`. Candidates without quality evidence cannot be placed on the loss axis;
the legend says how many were left out.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QToolTip

from memviz.core.planner import Candidate, pareto_front
from memviz.core.units import Unit, format_bytes, to_unit
from memviz.gui.charts import _Chart
from memviz.gui.palette import capacity_color, series_color

ENGINES = ("vllm", "llamacpp", "transformers")


def marker_size(tokens_per_s: float | None) -> float:
    """8 px at ≤ 1 token/s to 26 px at ≥ 10,000 tokens/s (log scale); unknown bounds get the smallest."""
    if not tokens_per_s or tokens_per_s <= 1:
        return 8.0
    return 8.0 + 18.0 * min(math.log10(tokens_per_s), 4.0) / 4.0


def tooltip(c: Candidate, unit: Unit) -> str:
    q = c.quality
    lines = [c.label(), f"on {c.hardware.label}",
             f"{format_bytes(c.needed_bytes, unit)} of {format_bytes(c.budget_bytes, unit)} per GPU",
             "decode bound: " + ("unknown" if c.decode_tokens_per_s_max is None
                                 else f"{c.decode_tokens_per_s_max:,.1f} tokens/s"),
             f"quality loss: {'no evidence' if q.loss_pct is None else f'{q.loss_pct:.2f} %'}"]
    for part, m in (("weights", q.weights), ("KV", q.kv)):
        lines.append(f"{part}: {m.describe()}")
        if m.evidence is not None:
            lines.append(f"   source: {m.evidence.source_title} — {m.evidence.source_url}")
    if c.problem:
        lines.append(f"not kept: {c.problem}")
    return "\n".join(lines)


def front_steps(front: list[Candidate], unit: Unit) -> tuple[list[float], list[float]]:
    """The front as a staircase: from each point across to the next one's memory, then down to its loss
    (what any memory between two front points can reach)."""
    xs, ys = [], []
    for i, c in enumerate(front):
        x, y = to_unit(c.needed_bytes, unit), c.quality.loss_pct
        if i:
            xs.append(x)
            ys.append(ys[-1])
        xs.append(x)
        ys.append(y)
    return xs, ys


class ParetoChart(_Chart):
    def __init__(self) -> None:
        super().__init__()
        self.plot_item.showGrid(x=True, y=True, alpha=0.25)
        self.points: list[Candidate] = []
        self.front: list[Candidate] = []
        self.unit = Unit.GiB
        self.scene().sigMouseMoved.connect(self._hover)

    def set_plan(self, kept: list[Candidate], rejected: list[Candidate], unit: Unit, title: str) -> None:
        self._last = (kept, rejected, unit, title)
        self._draw(*self._last)

    def _draw(self, kept: list[Candidate], rejected: list[Candidate], unit: Unit, title: str) -> None:
        self.plot_item.clear()
        self.unit = unit
        self.plot_item.setTitle(title, color=self._fg, size="12pt")
        self.plot_item.setLabel("bottom", f"Memory needed on the busiest GPU ({unit.value})", color=self._fg)
        self.plot_item.setLabel("left", "Quality loss against 16 bit (%)", color=self._fg)
        placed = [c for c in (*kept, *rejected) if c.quality.loss_pct is not None]
        self.points = placed
        self.front = pareto_front(kept)
        entries = []
        for i, engine in enumerate(ENGINES):
            color = series_color(i, self.theme)
            spots = [self._spot(c, color, filled=not c.problem) for c in placed if c.scenario.engine == engine]
            if spots:
                scatter = pg.ScatterPlotItem(spots=spots)
                self.plot_item.addItem(scatter)
                entries.append((pg.ScatterPlotItem(symbol="o", size=10, brush=color, pen=pg.mkPen(color)), engine))
        if self.front:
            xs, ys = front_steps(self.front, unit)
            line = self.plot_item.plot(xs, ys, pen=pg.mkPen(self._fg, width=1.5, style=Qt.PenStyle.DashLine))
            entries.append((line, f"non-dominated front ({len(self.front)})"))
        entries += self._hardware_lines(kept, rejected, unit)
        left_out = sum(1 for c in (*kept, *rejected) if c.quality.loss_pct is None)
        entries.append((pg.ScatterPlotItem(symbol="o", size=10, brush=None, pen=pg.mkPen(self._fg)),
                        "hollow: does not fit, or misses a limit"))
        entries.append((pg.ScatterPlotItem(symbol="o", size=16, brush=self._fg, pen=pg.mkPen(self._fg)),
                        "size: decode bound (log)"))
        if left_out:
            entries.append((pg.ScatterPlotItem(symbol="x", size=10, brush=self._fg, pen=pg.mkPen(self._fg)),
                            f"{left_out} without quality evidence: not drawn"))
        self._set_legend(entries)
        self.plot_item.enableAutoRange()

    def _spot(self, c: Candidate, color: str, filled: bool) -> dict:
        return {"pos": (to_unit(c.needed_bytes, self.unit), c.quality.loss_pct), "size": marker_size(c.decode_tokens_per_s_max),
                "brush": color if filled else None, "pen": pg.mkPen(color, width=1.5), "symbol": "o", "data": c}

    def _hardware_lines(self, kept, rejected, unit: Unit) -> list[tuple]:
        """A vertical line at each hardware choice's GPU memory (what per-GPU needs are judged against,
        before the engine's share and the headroom)."""
        entries, seen = [], {}
        for c in (*kept, *rejected):
            seen.setdefault(c.hardware.gpu.label, c.hardware.gpu.memory_bytes)
        for i, (label, cap) in enumerate(seen.items()):
            pen = pg.mkPen(capacity_color(i, self.theme), width=2, style=Qt.PenStyle.DashLine)
            self.plot_item.addItem(pg.InfiniteLine(pos=to_unit(cap, unit), angle=90, movable=False, pen=pen))
            entries.append((pg.PlotDataItem(pen=pen), f"{label}: {format_bytes(cap, unit)} per GPU"))
        return entries

    def nearest(self, pos: QPointF) -> Candidate | None:
        """The drawn candidate under scene position `pos` (within 12 px), if any."""
        if not self.points or not self.plot_item.sceneBoundingRect().contains(pos):
            return None
        vb = self.plot_item.vb
        best, dist = None, 12.0
        for c in self.points:
            p = vb.mapViewToScene(pg.Point(to_unit(c.needed_bytes, self.unit), c.quality.loss_pct))
            d = math.hypot(p.x() - pos.x(), p.y() - pos.y())
            if d < dist:
                best, dist = c, d
        return best

    def _hover(self, pos: QPointF) -> None:
        c = self.nearest(pos)
        if c is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(QCursor.pos(), tooltip(c, self.unit), self)
