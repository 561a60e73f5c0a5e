"""The fit matrix: every scenario on every chosen GPU at a glance (memviz.core.fit.fit_matrix)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QLineEdit, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from memviz.core.fit import FitCell, context_unbounded
from memviz.core.units import Unit, format_bytes

VERDICT_COLORS = {"fits": "#009E73", "tight": "#E69F00", "does not fit": "#D55E00"}  # Okabe-Ito


def cell_text(c: FitCell, unit: Unit) -> str:
    mark = {"fits": "✓ fits", "tight": "~ tight", "does not fit": "✗ does not fit"}[c.verdict]
    return (f"{mark}: {format_bytes(c.needed_bytes, unit)} of {format_bytes(c.budget_bytes, unit)}\n"
            f"{_context(c.max_context)} · ≤ {c.max_batch:,d} sequences\n"
            + (f"decode ≤ {c.decode_tokens_per_s_max:,.0f} tokens/s (bound)" if c.decode_tokens_per_s_max is not None
               else "decode bound unknown (no bandwidth for this entry)"))


def _context(tokens: int) -> str:
    """The largest context in a cell: any at all where the search found no limit (`fit.context_unbounded`)."""
    return "any context" if context_unbounded(tokens) else f"≤ {tokens:,d} tokens"


class FitView(QWidget):
    """Rows: scenarios; columns: GPUs. Each cell: the verdict against the engine's budget, the largest
    context and batch that fit, and the decode speed bound."""

    sig_extra_changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        self.caption = QLabel("Choose GPUs under View → GPU capacity lines.")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.extra = QLineEdit(placeholderText="more columns, comma-separated: vram:24GiB, h100-80gx4 (4 in one "
                                               "machine), m3-max-128g (Apple unified), cpu-ram-64g")
        self.extra.editingFinished.connect(self.sig_extra_changed)
        layout.addWidget(self.extra)
        self.table = QTableWidget(0, 0)
        self.table.setWordWrap(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table, 1)
        self.cells: list[list[FitCell]] = []

    def extra_gpus(self) -> list[str]:
        return [g.strip() for g in self.extra.text().split(",") if g.strip()]

    def show_matrix(self, labels: list[str], cells: list[list[FitCell]], unit: Unit) -> None:
        self.cells = cells
        gpus = [c.gpu for c in cells[0]] if cells and cells[0] else []
        self.table.setRowCount(len(cells))
        self.table.setColumnCount(len(gpus))
        self.table.setHorizontalHeaderLabels(gpus)
        self.table.setVerticalHeaderLabels(labels)
        for r, row in enumerate(cells):
            for c, cell in enumerate(row):
                item = QTableWidgetItem(cell_text(cell, unit))
                item.setForeground(QColor(VERDICT_COLORS[cell.verdict]))
                item.setToolTip("tight: fits with less than 10 % of the budget to spare; budget: what the scenario's "
                                "engine may use of the GPU; tokens/s: a bandwidth bound, not a prediction")
                self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
        self.caption.setText("Each scenario on each GPU: verdict against the engine's budget, the largest context "
                             "and batch that fit, and the decode speed bound." if gpus else
                             "Choose GPUs under View → GPU capacity lines.")
