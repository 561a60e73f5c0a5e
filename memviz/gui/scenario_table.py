"""The scenario table: one row per deployment scenario of the current model.

Cells edit a scenario field through combo boxes and spin boxes; every edit emits
the whole new tuple of scenarios, validated by the core's Scenario. An invalid
combination (e.g. TP with transformers) is refused with the reason and the table
returns to the last valid state.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QStyledItemDelegate,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memviz.core.engines import ENGINES, default_engine, parse_option_pairs
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.formats import KV_FORMATS, weight_formats
from memviz.core.gpus import GPUS, get_gpu
from memviz.core.report import scenario_labels

COLUMNS = ("name", "weight_format", "kv_format", "context_tokens", "batch", "engine", "tp", "pp", "gpu", "gpu_layers",
           "kv_offload", "options", "extrapolate", "hidden")
HEADERS = ("Name", "Weights", "KV cache", "Context (tokens)", "Sequences", "Engine", "TP", "PP", "GPU (vLLM pool)",
           "GPU layers", "KV in host RAM", "Engine options", "Beyond max context", "Hide in charts")
ALL_LAYERS = -1  # the GPU-layers box's "all" (Scenario.gpu_layers None)
BEYOND = "background: #FBE3D6"  # a context beyond the model's positions (extrapolated, or refused)
NAME_COLUMN = COLUMNS.index("name")
TEXT_COLUMNS = (NAME_COLUMN, COLUMNS.index("options"))


def format_options(options: tuple[tuple[str, object], ...]) -> str:
    """Options as typed in the cell and on the command line (`-o`): booleans as true / false."""
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options)


def options_help(engine: str) -> str:
    e = ENGINES[engine]
    lines = [f"{e.label} — follows {e.version}", "Type name=value pairs separated by commas:"]
    for o in e.options:
        lines.append(f"  {o.name} ({o.kind_label}, default {'derived' if o.default is None else o.default}): {o.help}")
    return "\n".join(lines)

#: the "compare quantizations" action: (weights, engine) pairs of the common formats
COMMON_QUANTIZATIONS = (
    ("bf16", "vllm"), ("fp8", "vllm"), ("int8", "vllm"), ("awq-int4", "vllm"), ("gptq-int4", "vllm"),
    ("bnb-nf4", "transformers"), ("Q8_0", "llamacpp"), ("Q4_K_M", "llamacpp"),
)


def compare_quantizations(base: Scenario) -> tuple[Scenario, ...]:
    """The common formats on the base scenario's context and batch, each in its usual engine."""
    out = []
    for fmt, engine in COMMON_QUANTIZATIONS:
        kv = ENGINES[engine].default_kv(fmt)
        out.append(base.with_changes(name="", weight_format=fmt, engine=engine, kv_format=kv, tp=1, gpu_layers=None,
                                     kv_offload=False, attention=None))
    return tuple(out)


def _followed_kv(sc: Scenario, engine: str, weights: str) -> str:
    """The scenario's cache once its weights or engine change to `weights` / `engine`: its own, or, where it is the
    engine's default for its weights (`Engine.default_kv`), the default of the new weights and engine."""
    if sc.kv_format != ENGINES[sc.engine].default_kv(sc.weight_format):
        return sc.kv_format
    return ENGINES[engine].default_kv(weights) if engine in ENGINES else sc.kv_format


PLACEHOLDER_ROLE = Qt.ItemDataRole.UserRole + 1  # the generated label an unnamed scenario shows, greyed
_GPU_BY_LABEL = {g.label: key for key, g in GPUS.items()}


def _combo_value(column: str, text: str):
    """A combo's text as the scenario field: "—" is none; the GPU column shows names and stores keys (a GPU with
    an entered CUDA total, "RTX 4080 16GB @ 15.99GiB", is not in the catalogue's list)."""
    if text == "—":
        return None
    return (_GPU_BY_LABEL.get(text) or get_gpu(text).key) if column == "gpu" else text


class PlaceholderDelegate(QStyledItemDelegate):
    """Draws an empty name cell's generated label in grey, the way an edit field shows its placeholder."""

    def paint(self, painter, option, index) -> None:
        super().paint(painter, option, index)
        placeholder = index.data(PLACEHOLDER_ROLE)
        if placeholder and not index.data(Qt.ItemDataRole.DisplayRole):
            painter.save()
            painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(option.rect.adjusted(4, 0, -4, 0), int(Qt.AlignmentFlag.AlignVCenter), placeholder)
            painter.restore()


class ScenarioTable(QWidget):
    sig_changed = Signal(object)  # tuple[Scenario, ...]
    sig_selected = Signal(int)
    sig_compare_quantizations = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._scenarios: tuple[Scenario, ...] = ()
        self.context_limit: int | None = None  # the model's positions
        self._shown: tuple[Scenario, ...] = ()  # what the row widgets show now
        layout = QVBoxLayout(self)
        bar = QHBoxLayout()
        self.add_button = QPushButton("Add")
        self.duplicate_button = QPushButton("Duplicate")
        self.delete_button = QPushButton("Delete")
        self.compare_button = QPushButton("Compare quantizations")
        self.add_button.clicked.connect(self.add)
        self.duplicate_button.clicked.connect(self.duplicate)
        self.delete_button.clicked.connect(self.delete)
        self.compare_button.clicked.connect(self.sig_compare_quantizations)
        for b in (self.add_button, self.duplicate_button, self.delete_button, self.compare_button):
            bar.addWidget(b)
        bar.addStretch(1)
        self.message = QLabel()
        self.message.setStyleSheet("color: #D55E00")
        bar.addWidget(self.message)
        layout.addLayout(bar)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)  # options keep their text's width (scrolling)
        self.table.setColumnWidth(0, 220)
        self.table.setItemDelegateForColumn(0, PlaceholderDelegate(self.table))
        self.table.itemChanged.connect(self._name_edited)
        self.table.currentCellChanged.connect(lambda row, *_: self.sig_selected.emit(row))
        layout.addWidget(self.table)

    @property
    def scenarios(self) -> tuple[Scenario, ...]:
        return self._scenarios

    def selected_row(self) -> int:
        row = self.table.currentRow()
        return row if 0 <= row < len(self._scenarios) else len(self._scenarios) - 1

    def set_scenarios(self, scenarios: tuple[Scenario, ...]) -> None:
        """Show `scenarios`; existing cell widgets are updated in place (rebuilding them is slow)."""
        keep = self.table.currentRow()
        shown = self._shown
        self._scenarios = scenarios
        self.table.blockSignals(True)
        old_rows = self.table.rowCount()
        self.table.setRowCount(len(scenarios))
        placeholders = scenario_labels([sc.with_changes(name="") for sc in scenarios])  # as the charts tell twins apart
        for r, sc in enumerate(scenarios):
            if r >= old_rows:
                self._build_row(r)
            self.table.item(r, NAME_COLUMN).setData(PLACEHOLDER_ROLE, placeholders[r])
            if r < old_rows and r < len(shown) and shown[r] == sc:  # an edit changes one row: the others keep theirs
                continue
            values = {"name": sc.name, "gpu": get_gpu(sc.gpu).label if sc.gpu else "—", "options": format_options(sc.options),
                      "gpu_layers": ALL_LAYERS if sc.gpu_layers is None else sc.gpu_layers}
            for c, key in enumerate(COLUMNS):
                value = values.get(key, getattr(sc, key))
                widget = self.table.cellWidget(r, c)
                if c in TEXT_COLUMNS:
                    self.table.item(r, c).setText(value)
                    if key == "options":
                        self.table.item(r, c).setToolTip(options_help(sc.engine))
                    continue
                widget.blockSignals(True)
                if isinstance(widget, QComboBox):
                    if widget.findText(str(value)) < 0:  # a variant found by name, not listed (a mix's "+qkv-branch")
                        widget.addItem(str(value))
                    widget.setCurrentText(str(value))
                elif isinstance(widget, QCheckBox):
                    widget.setChecked(bool(value))
                else:
                    widget.setValue(int(value))
                widget.blockSignals(False)
            self._mark_context(r, sc.longest_sequence)
        self.table.blockSignals(False)
        self._shown = scenarios
        if scenarios:
            self.table.setCurrentCell(min(max(keep, 0), len(scenarios) - 1), 0)
        self.message.clear()

    def _build_row(self, r: int) -> None:
        self.table.setItem(r, 0, QTableWidgetItem(""))
        self._combo(r, 1, list(weight_formats()))
        self._combo(r, 2, list(KV_FORMATS))
        self._spin(r, 3, 1, 10_000_000, 1024)
        self._spin(r, 4, 1, 100_000, 1)
        self._combo(r, 5, list(ENGINES))
        self._spin(r, 6, 1, 64, 1)
        self._spin(r, 7, 1, 64, 1)
        self._combo(r, 8, ["—", *(g.label for g in GPUS.values())])
        layers = QSpinBox()
        layers.setRange(ALL_LAYERS, 10_000)
        layers.setSpecialValueText("all")
        layers.setKeyboardTracking(False)
        layers.setToolTip("layers on the GPU (llama.cpp -ngl, transformers' device map); the rest run from host RAM")
        layers.valueChanged.connect(lambda v, row=r: self._edit(row, "gpu_layers", None if v == ALL_LAYERS else int(v)))
        self.table.setCellWidget(r, COLUMNS.index("gpu_layers"), layers)
        self.table.setItem(r, COLUMNS.index("options"), QTableWidgetItem(""))
        for key, tip in (("kv_offload", "keep the KV cache in host RAM (llama.cpp --no-kv-offload)"),
                         ("extrapolate", "estimate contexts beyond the model's positions anyway (rope scaling aside)"),
                         ("hidden", "leave this scenario out of the charts (it stays in the table and the data)")):
            check = QCheckBox()
            check.setToolTip(tip)
            check.toggled.connect(lambda on, row=r, k=key: self._edit(row, k, bool(on)))
            self.table.setCellWidget(r, COLUMNS.index(key), check)

    def revert(self) -> None:
        """Every row back to the last valid scenarios (after a refused edit left a widget showing it)."""
        self._shown = ()
        self.set_scenarios(self._scenarios)

    def set_context_limit(self, limit: int | None) -> None:
        """The model's positions: contexts beyond are marked, and refused unless the row extrapolates."""
        self.context_limit = limit or None
        for r, sc in enumerate(self._scenarios):
            self._mark_context(r, sc.longest_sequence)

    def _mark_context(self, row: int, tokens: int) -> None:
        spin = self.table.cellWidget(row, COLUMNS.index("context_tokens"))
        beyond = self.context_limit is not None and tokens > self.context_limit
        spin.setStyleSheet(BEYOND if beyond else "")
        limit = f"the model has {self.context_limit:,d} positions" if self.context_limit else ""
        spin.setToolTip(f"{limit}; this row extrapolates beyond them" if beyond else limit)

    def _combo(self, row: int, col: int, options: list[str]) -> None:
        box = QComboBox()
        box.addItems(options)
        box.currentTextChanged.connect(lambda text, r=row, c=col: self._edit(r, COLUMNS[c], _combo_value(COLUMNS[c], text)))
        self.table.setCellWidget(row, col, box)

    def _spin(self, row: int, col: int, lo: int, hi: int, step: int) -> None:
        box = QSpinBox()
        box.setRange(lo, hi)
        box.setSingleStep(step)
        box.setGroupSeparatorShown(True)
        box.setKeyboardTracking(False)
        box.valueChanged.connect(lambda v, r=row, c=col: self._edit(r, COLUMNS[c], int(v)))
        self.table.setCellWidget(row, col, box)

    def _name_edited(self, item: QTableWidgetItem) -> None:
        if item.column() == 0:
            self._edit(item.row(), "name", item.text().strip())
        elif item.column() == COLUMNS.index("options"):
            try:
                options = parse_option_pairs(item.text().split(","))
            except InputError as exc:
                self.revert()
                self.message.setText(f"Row {item.row() + 1}: {exc}")
                return
            self._edit(item.row(), "options", options)

    def _edit(self, row: int, key: str, value) -> None:
        if not 0 <= row < len(self._scenarios):
            return
        sc = self._scenarios[row]
        if key == "context_tokens" and self.context_limit and value > self.context_limit and not sc.extrapolate:
            self.revert()
            self._mark_context(row, value)
            self.message.setText(f"Row {row + 1}: {value:,d} tokens exceed the model's {self.context_limit:,d} "
                                 "positions; tick 'Beyond max context' to estimate anyway")
            return
        changes = {key: value}
        if key == "weight_format" and not ENGINES[sc.engine].accepts_weights(value):
            changes["engine"] = default_engine(value)  # a GGUF mix moves to llama.cpp, bitsandbytes to transformers
        if key in ("weight_format", "engine"):  # a cache left at its default follows the weights and the engine
            changes["kv_format"] = _followed_kv(sc, changes.get("engine", sc.engine),
                                                changes.get("weight_format", sc.weight_format))
        try:
            new = self._scenarios[row].with_changes(**changes)
        except InputError as exc:
            self.message.setText(f"Row {row + 1}: {exc}")
            self.revert()
            self.message.setText(f"Row {row + 1}: {exc}")
            return
        self.message.clear()
        self.sig_changed.emit(self._scenarios[:row] + (new,) + self._scenarios[row + 1 :])

    def add(self) -> None:
        base = self._scenarios[self.selected_row()] if self._scenarios else Scenario()
        self.sig_changed.emit(self._scenarios + (base.with_changes(name=""),))

    def duplicate(self) -> None:
        if self._scenarios:
            sc = self._scenarios[self.selected_row()]
            self.sig_changed.emit(self._scenarios + (sc.with_changes(name=f"{sc.name} copy" if sc.name else ""),))

    def delete(self) -> None:
        if len(self._scenarios) > 1:
            r = self.selected_row()
            self.sig_changed.emit(self._scenarios[:r] + self._scenarios[r + 1 :])
        else:
            self.message.setText("A session keeps at least one scenario.")
