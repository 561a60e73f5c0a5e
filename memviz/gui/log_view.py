"""Engine log view: paste or open a llama.cpp / ollama / vLLM log, see it as a measured stack
next to the estimate of the selected scenario, with the difference per component."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memviz.core.errors import InputError
from memviz.core.estimate import COMPONENTS, Estimate
from memviz.core.importers.llamacpp_log import LlamaCppLoad, dumps_metadata, read_llamacpp_load
from memviz.core.importers.logs import LogMeasurement, parse_log
from memviz.core.importers.vllm_log import read_vllm_settings
from memviz.core.log_check import BufferCheck, load_checks, logged_weights, vllm_checks
from memviz.core.units import Unit, format_bytes

HEADERS = ("Component", "Measured (log)", "Estimate", "Estimate − measured", "Error")


def comparison_rows(measured: LogMeasurement, est: Estimate | None, unit: Unit) -> list[tuple[str, ...]]:
    """Component by component; the total sums the components the log states on both sides (a vLLM log states
    no activation or overhead figure: its weights + pool against the estimate's, not the estimate's whole)."""
    stated = [c for c in COMPONENTS if measured.bytes.get(c) is not None]
    partial = len(stated) < len(COMPONENTS)
    estimated: dict[str, int] = {}
    if est is not None:
        estimated = dict(est.bytes)
        if measured.engine == "vllm":
            estimated["weights"] = logged_weights(est)  # as vLLM's weights line counts them
        estimated["total"] = sum(estimated[k] for k in (stated if partial else COMPONENTS))
    rows = []
    for c in (*COMPONENTS, "total"):
        m, e = measured.bytes.get(c), estimated.get(c)
        diff = e - m if (m is not None and e is not None) else None
        rows.append((
            f"total of {', '.join(stated)}" if c == "total" and partial else c,
            format_bytes(m, unit, 3) if m is not None else "not in log",
            format_bytes(e, unit, 3) if e is not None else "—",
            format_bytes(diff, unit, 3) if diff is not None else "—",
            f"{diff / m * 100:+.1f} %" if diff is not None and m else "—",
        ))
    return rows


#: `vllm_checks` rows the component rows already show
VLLM_COMPONENT_CHECKS = ("weights", "non-torch", "activation peak", "KV pool")


def llamacpp_load(measured: LogMeasurement, text: str) -> LlamaCppLoad | None:
    """The load a llama.cpp log reports, read once when the log is parsed (None: not a llama.cpp log, or one
    without the buffer lines of a load)."""
    if measured.engine != "llamacpp":
        return None
    try:
        return read_llamacpp_load(text, need_metadata=False)
    except InputError:
        return None


def figure_rows(measured: LogMeasurement, load: LlamaCppLoad | None, est: Estimate | None,
                unit: Unit, vllm_version: tuple[int, int, int] | None = None) -> list[tuple[str, ...]]:
    """The engine's own figures beside the estimate of a scenario of that engine, as `memviz log --check` sets
    them: a vLLM log's pool tokens, implied profile, captured CUDA graphs and concurrency; a llama.cpp load's
    context cells, buffers on the device and the host apart, and tensors per type."""
    if est is None:
        return []
    if measured.engine == "vllm" and est.scenario.engine == "vllm":
        return [figure_row(r, unit) for r in vllm_checks(measured, est, vllm_version)
                if r.name not in VLLM_COMPONENT_CHECKS]
    if load is not None and est.scenario.engine in ("llamacpp", "ollama"):
        return [figure_row(r, unit) for r in load_checks(load, est)]
    return []


def figure_row(r: BufferCheck, unit: Unit) -> tuple[str, ...]:
    """One figure an engine printed, beside memviz's, as a table row."""
    if r.unit == "bytes":
        m, e, d = (format_bytes(v, unit, 3) for v in (r.measured, r.estimated, r.estimated - r.measured))
    elif r.unit == "x / 100":
        m, e, d = (f"{v / 100:,.2f}x" for v in (r.measured, r.estimated, r.estimated - r.measured))
    else:
        m, e, d = (f"{v:,d} {r.unit}" for v in (r.measured, r.estimated, r.estimated - r.measured))
    return r.name, m, e, d, "—" if r.error is None else f"{r.error * 100:+.1f} %"


class LogView(QWidget):
    sig_measured = Signal(object)  # LogMeasurement, to attach to the selected scenario
    sig_adopt = Signal(str)  # a llama.cpp log's text, to make its model and load the session's

    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.parse_button = QPushButton("Parse log")
        self.parse_button.clicked.connect(self.parse)
        top.addWidget(QLabel("Paste a llama.cpp / ollama / vLLM start-up log, or use File → Open engine log…"), 1)
        top.addWidget(self.parse_button)
        self.adopt_button = QPushButton("Use its settings")
        self.adopt_button.setToolTip("llama.cpp logs: take the model from the metadata dump and the context, batch, "
                                     "flash attention and offload from the log; vLLM logs: the settings they print, on "
                                     "this model and the selected scenario's GPU; as a new scenario with these figures")
        self.adopt_button.setEnabled(False)
        self.adopt_button.clicked.connect(lambda: self.sig_adopt.emit(self.text.toPlainText()))
        top.addWidget(self.adopt_button)
        layout.addLayout(top)
        split = QSplitter()
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("llm_load_tensors: CUDA0 model buffer size = ... MiB\n"
                                     "… or vLLM: model weights take … GiB; non_torch_memory takes …")
        split.addWidget(self.text)
        right = QWidget()
        rl = QVBoxLayout(right)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # headers whole
        self.table.horizontalHeader().setStretchLastSection(True)
        rl.addWidget(self.status)
        rl.addWidget(self.table)
        split.addWidget(right)
        split.setStretchFactor(0, 2)  # the table's five columns need more room than the log's lines
        split.setStretchFactor(1, 3)
        layout.addWidget(split)
        self.measurement: LogMeasurement | None = None
        self.load: LlamaCppLoad | None = None
        self.vllm_version: tuple[int, int, int] | None = None

    def parse(self) -> LogMeasurement | None:
        try:
            self.measurement = parse_log(self.text.toPlainText())
        except InputError as exc:
            self.status.setText(f"<span style='color:#D55E00'>{exc}</span>")
            return None
        text = self.text.toPlainText()
        self.load = llamacpp_load(self.measurement, text)
        self.vllm_version = read_vllm_settings(text).version if self.measurement.engine == "vllm" else None
        self.adopt_button.setEnabled(self.measurement.engine == "vllm"
                                     or (self.measurement.engine == "llamacpp" and dumps_metadata(text)))
        self.sig_measured.emit(self.measurement)
        return self.measurement

    def show_comparison(self, est: Estimate | None, label: str, unit: Unit) -> None:
        m = self.measurement
        if m is None:
            return
        figures = figure_rows(m, self.load, est, unit, self.vllm_version)
        rows = comparison_rows(m, est, unit) + figures
        details = "" if figures or not m.details else "; " + ", ".join(
            f"{k.replace('_', ' ')} {v:,g}" if isinstance(v, int | float) else f"{k.replace('_', ' ')} {v}"
            for k, v in m.details.items())
        self.status.setText(f"<b>{m.engine}</b> log, {m.lines_matched} lines recognised; compared with <b>{label}</b>"
                            + details)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
