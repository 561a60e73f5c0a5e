"""The planner panel: hardware and requirements in, the Pareto view and the ranked candidates out
(`memviz.core.planner`); chosen candidates go to the scenario table, the plan to a Markdown report."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.files import write_text_atomic
from memviz.core.plan_report import nothing_fits, plan_markdown
from memviz.core.planner import GRID, Plan, Requirements, parse_hardware, plan
from memviz.core.units import Unit, format_bytes, parse_bytes
from memviz.gui.pareto_chart import ParetoChart

COLUMNS = ("#", "configuration", "hardware", "per GPU (need / budget)", "decode bound (tokens/s)", "quality loss",
           "evidence")
ROWS_SHOWN = 50


class PlanView(QWidget):
    """Form on the left, chart over table on the right. `sig_add` carries the chosen candidates' rows."""

    sig_add = Signal(list)
    sig_error = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.result: Plan | None = None
        self.unit = Unit.GiB
        form = QFormLayout()
        self.gpus = QLineEdit("rtx4090", placeholderText="rtx4090, h100-80gx8, vram:24GiB; commas for alternatives")
        self.nodes = QSpinBox(minimum=1, maximum=64, value=1)
        self.host_ram = QLineEdit(placeholderText="e.g. 128GiB: allows layer offload")
        self.context = QSpinBox(minimum=1, maximum=2**24, value=8192, singleStep=1024, groupSeparatorShown=True)
        self.concurrency = QSpinBox(minimum=1, maximum=4096, value=1)
        self.min_speed = QDoubleSpinBox(minimum=0, maximum=1e6, decimals=1, specialValueText="any")
        self.max_loss = QDoubleSpinBox(minimum=0, maximum=1000, decimals=2, value=0, specialValueText="any",
                                       suffix=" %")
        self.engines = {e: QCheckBox(e, checked=True) for e in GRID}
        engines = QVBoxLayout()
        for box in self.engines.values():
            engines.addWidget(box)
        for label, w in (("GPUs per node", self.gpus), ("Nodes", self.nodes), ("Host RAM", self.host_ram),
                         ("Tokens per sequence", self.context), ("Concurrent sequences", self.concurrency),
                         ("Decode ≥ (tokens/s)", self.min_speed), ("Quality loss ≤", self.max_loss)):
            form.addRow(label, w)
        form.addRow("Engines", engines)
        self.run_button = QPushButton("Plan")
        self.run_button.clicked.connect(self.run)
        self.add_button = QPushButton("Add selected to scenarios")
        self.add_button.clicked.connect(self._add_selected)
        self.message = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.run_button)
        left.addWidget(self.add_button)
        left.addWidget(self.message, 1)
        self.chart = ParetoChart()
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.chart)
        right.addWidget(self.table)
        outer = QHBoxLayout(self)
        side = QWidget()
        side.setLayout(left)
        side.setMaximumWidth(380)
        outer.addWidget(side)
        outer.addWidget(right, 1)
        self.architecture: Architecture | None = None
        self.model_ref: str | None = None

    def set_model(self, a: Architecture, model_ref: str | None, unit: Unit, context_tokens: int, sequences: int) -> None:
        """The session's model and the selected scenario's shape as the starting requirements."""
        if a != self.architecture:
            self.context.setValue(min(context_tokens, self.context.maximum()))
            self.concurrency.setValue(min(sequences, self.concurrency.maximum()))
        unit_changed = unit is not self.unit
        self.architecture, self.model_ref, self.unit = a, model_ref, unit
        if unit_changed and self.result is not None and self.result.architecture == a:
            self.show_plan(self.result)  # the same plan in the session's new unit

    def requirements(self) -> Requirements:
        return Requirements(self.context.value(), self.concurrency.value(), self.min_speed.value() or None,
                            self.max_loss.value() or None)

    def run(self) -> Plan | None:
        """Plan with the form's values; a bad value is one message, and the previous result stays."""
        if self.architecture is None:
            return None
        try:
            host = parse_bytes(self.host_ram.text()) if self.host_ram.text().strip() else None
            hardware = parse_hardware(self.gpus.text(), self.nodes.value(), host)
            engines = tuple(e for e, box in self.engines.items() if box.isChecked())
            if not engines:
                raise InputError("choose at least one engine")
            result = plan(self.architecture, hardware, self.requirements(), engines)
        except InputError as exc:
            self.message.setText(f"✗ {exc}")
            self.sig_error.emit(str(exc))
            return None
        self.show_plan(result)
        return result

    def show_plan(self, p: Plan) -> None:
        self.result = p
        hw = ", ".join(h.label for h in p.hardware)
        self.chart.set_plan(list(p.ranked), list(p.rejected), self.unit,
                            f"{p.architecture.name}: {p.requirements.context_tokens:,d} tokens × "
                            f"{p.requirements.concurrency} on {hw}")
        self.message.setText(f"{len(p.ranked)} of {p.considered} configurations kept." if p.ranked
                             else f"✗ {nothing_fits(p)}")
        shown = p.ranked[:ROWS_SHOWN]
        self.table.setRowCount(len(shown))
        for r, c in enumerate(shown):
            loss = c.quality.loss_pct
            speed = c.decode_tokens_per_s_max
            cells = (str(r + 1), c.label(), c.hardware.label,
                     f"{format_bytes(c.needed_bytes, self.unit)} / {format_bytes(c.budget_bytes, self.unit)}",
                     "—" if speed is None else f"{speed:,.1f}", "no evidence" if loss is None else f"{loss:.2f} %",
                     c.quality.describe())
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(c.launch_command(self.model_ref))
                self.table.setItem(r, col, item)

    def selected(self) -> list:
        if self.result is None:
            return []
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        return [self.result.ranked[r] for r in rows if r < len(self.result.ranked)]

    def _add_selected(self) -> None:
        chosen = self.selected() or list(self.result.ranked[:1] if self.result else [])
        if chosen:
            self.sig_add.emit(chosen)

    def write_markdown(self, path: str | Path, top: int = 10) -> Path:
        """The plan as a Markdown report section, with the Pareto chart as a PNG beside it."""
        from memviz.gui.export import export_chart

        if self.result is None:
            raise InputError("run the planner first")
        p = Path(path)
        from memviz.gui.model import plan_subtitle

        png = export_chart(self.chart, p.with_suffix(".pareto.png"), subtitle=plan_subtitle(self.result))
        write_text_atomic(p, plan_markdown(self.result, self.model_ref, top, png.name))
        return p
