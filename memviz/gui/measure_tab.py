"""The Measure tab: run the probe on the current model, watch its memory timeline, keep the result.

A finished run is attached to a scenario with the same settings (added if the
session has none), so the compare view shows the measured stack next to the
estimated bar, and its error per component appears in the tooltip and the
breakdown. Runs are also stored for calibration by the probe itself.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from memviz.core.engines.transformers_cache import QUANTIZED_CACHES
from memviz.core.errors import InputError
from memviz.core.runs import MeasuredRun
from memviz.core.units import MAX_BYTES, Unit, format_bytes
from memviz.gui import settings
from memviz.gui.palette import chart_colors
from memviz.gui.probe_client import ProbeClient, State

ENGINES = (("transformers", "transformers"), ("llama.cpp", "llamacpp"))
PHASE_MARKERS = ("build", "load", "warmup", "prefill", "decode")  # the ends of the phases the timeline marks
LLAMACPP_MIXES = ("Q4_K_M", "Q8_0", "Q6_K", "Q5_K_M", "Q4_0", "IQ4_XS", "Q3_K_M", "Q2_K", "F16")
LLAMACPP_FLAGS = (("--unified-kv", "one KV buffer for all sequences (-kvu)"), ("--no-mmap", "read the file (--no-mmap)"),
                  ("--no-repack", "no packed CPU weights (--no-repack)"), ("--swa-full", "full-size SWA cache"),
                  ("--no-kv-offload", "KV cache in host memory"),
                  ("--no-op-offload", "the host runs ops on its weights (--no-op-offload)"),
                  ("--no-host", "beside a GPU, let the CPU pack host weights (--no-host)"))


def _file_form(label: str, edit: QLineEdit, browse) -> tuple[QWidget, QFormLayout]:
    """A borderless form whose first row is `edit` with a browse button."""
    box = QWidget()
    form = QFormLayout(box)
    form.setContentsMargins(0, 0, 0, 0)
    row = QHBoxLayout()
    button = QPushButton("…")
    button.clicked.connect(browse)
    row.addWidget(edit)
    row.addWidget(button)
    form.addRow(label, row)
    return box, form


class SampleBuffer:
    """The timeline's (seconds, GiB) samples in growing numpy arrays: an append is O(1) amortised and a redraw
    hands pyqtgraph views, so 20,000 samples cost what 20 did (rebuilding lists per sample was quadratic). Times
    are kept at the probe's millisecond and in order: a sample earlier than the last is dropped, since pyqtgraph's
    automatic downsampling divides the view by the samples' mean spacing, and a sub-millisecond or backwards span
    makes that factor astronomically large ("Maximum allowed dimension exceeded")."""

    def __init__(self) -> None:
        self.t, self.v, self.n = np.empty(1024), np.empty(1024), 0

    def append(self, t_s: float, value: float) -> None:
        t_s = round(t_s, 3)
        if self.n and t_s < self.t[self.n - 1]:
            return
        if self.n == len(self.t):
            self.t, self.v = np.resize(self.t, 2 * self.n), np.resize(self.v, 2 * self.n)
        self.t[self.n], self.v[self.n] = t_s, value
        self.n += 1

    def __len__(self) -> int:
        return self.n

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self.t[: self.n], self.v[: self.n]


REDRAW_MS = 100  # samples arriving faster than this are drawn together
MAX_SAMPLE_S = 1e7  # a probe's clock, seconds since its start: 116 days bounds any run


def _plottable(x: object, limit: float) -> bool:
    """A number the timeline can draw: finite, from 0 to `limit` (pyqtgraph's downsampling fails on an axis
    spanning 1e300 or a NaN)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= limit


class MeasureTab(QWidget):
    sig_run_finished = Signal(object, object)  # (result dict, MeasuredRun)

    def __init__(self, silence_timeout_s: float = 600.0) -> None:
        super().__init__()
        self.client = ProbeClient(self, silence_timeout_s)
        self.source_args: list[str] = []
        self.samples = SampleBuffer()
        self.redraw = QTimer(self, singleShot=True, interval=REDRAW_MS)
        self.redraw.timeout.connect(self._draw_samples)
        self.markers: list[pg.InfiniteLine] = []  # phase ends on the timeline
        layout = QHBoxLayout(self)
        split = QSplitter()
        layout.addWidget(split)

        form_box = QGroupBox("Probe")
        form = QFormLayout(form_box)
        self.source_label = QLabel()
        self.source_label.setWordWrap(True)
        form.addRow("Model", self.source_label)
        self.engine = QComboBox()
        for label, key in ENGINES:
            self.engine.addItem(label, key)
        self.engine.currentIndexChanged.connect(self._engine_changed)
        form.addRow("Engine", self.engine)
        self.hf_box, self.lcpp_box = self._transformers_options(), self._llamacpp_options()
        form.addRow(self.hf_box)
        form.addRow(self.lcpp_box)
        self.batch, self.prompt, self.new = QSpinBox(), QSpinBox(), QSpinBox()
        for box, (lo, hi, val) in ((self.batch, (1, 4096, 1)), (self.prompt, (1, 1_000_000, 512)), (self.new, (1, 100_000, 32))):
            box.setRange(lo, hi)
            box.setValue(val)
            box.setGroupSeparatorShown(True)
        self.interpreter = QLineEdit(settings.read("probe_python") or sys.executable)
        self.interpreter.setToolTip("The Python that runs the probe (transformers: torch and transformers; "
                                    "llama.cpp: llama-cpp-python); default: this app's")
        self.interpreter.editingFinished.connect(lambda: settings.write("probe_python", self.interpreter.text().strip()))
        for label, w in (("Sequences", self.batch), ("Prompt tokens", self.prompt), ("New tokens", self.new),
                         ("Probe Python", self.interpreter)):
            form.addRow(label, w)
        self._engine_changed()
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.toggle)
        form.addRow(self.run_button)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.phase_label = QLabel("idle")
        form.addRow(self.progress)
        form.addRow(self.phase_label)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        summary_area = QScrollArea()  # a run over several GPUs adds a line per device: scroll, never clip
        summary_area.setWidgetResizable(True)
        summary_area.setFrameShape(QScrollArea.Shape.NoFrame)
        summary_area.setWidget(self.summary)
        summary_area.setMinimumHeight(8 * self.fontMetrics().lineSpacing())
        form.addRow(summary_area)
        form_scroll = QScrollArea()  # the options scroll on small screens instead of raising the window's minimum
        form_scroll.setWidgetResizable(True)
        form_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        form_scroll.setWidget(form_box)
        split.addWidget(form_scroll)

        right = QWidget()
        rl = QVBoxLayout(right)
        bg, fg = chart_colors()
        self.timeline = pg.PlotWidget(background=bg)
        self.timeline.setLabel("left", "Process memory (GiB)")
        self.timeline.getAxis("left").enableAutoSIPrefix(False)
        self.timeline.setLabel("bottom", "time (s)")
        self.timeline.showGrid(x=True, y=True, alpha=0.25)
        self.curve = self.timeline.plot([], [], pen=pg.mkPen("#0072B2", width=2))
        self.curve.setDownsampling(auto=True, method="peak")  # peaks stay visible however many samples
        self.curve.setClipToView(True)
        self.empty_hint = pg.TextItem("Run the probe: its process memory appears here, load → prefill → decode",
                                      color=fg, anchor=(0.5, 0.5))
        self.empty_hint.setPos(0.5, 0.5)
        self.timeline.addItem(self.empty_hint)
        rl.addWidget(self.timeline, 2)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(5000)
        rl.addWidget(self.log, 1)
        split.addWidget(right)

        self.client.sig_message.connect(self._message)
        self.client.sig_log.connect(self.log.appendPlainText)
        self.client.sig_result.connect(self._result)
        self.client.sig_failed.connect(self._failed)
        self.client.sig_finished.connect(self._finished)

    def _transformers_options(self) -> QWidget:
        self.folder_edit = QLineEdit(placeholderText="optional: a local model folder with weights")
        box, form = _file_form("Model folder", self.folder_edit, self._browse)
        self.dtype = QComboBox()
        self.dtype.addItems(["bf16", "fp16", "fp32"])
        self.quant = QComboBox()
        self.quant.addItems(["none", "bnb-int8", "bnb-nf4"])
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda", "cuda:1", "cuda:0,1"])
        self.device.setEditable(True)  # any cuda:N or cuda:N,M,... (several GPUs: a pipeline split)
        self.attn = QComboBox()
        self.attn.addItems(["auto", "sdpa", "eager"])  # auto: what transformers picks for the model
        self.cache = QComboBox()
        self.cache.addItems(["dynamic", "static", *QUANTIZED_CACHES])  # QuantizedCache: int4 / int2 quanto, fp8
        self.cache.setToolTip("generate's cache: DynamicCache, StaticCache, or QuantizedCache (int4 / int2 need "
                              "optimum-quanto in the probe's environment; fp8 needs transformers 5.25)")
        for label, w in (("dtype", self.dtype), ("Quantization", self.quant), ("Device", self.device),
                         ("Attention", self.attn), ("Cache", self.cache)):
            form.addRow(label, w)
        return box

    def _llamacpp_options(self) -> QWidget:
        self.gguf_edit = QLineEdit(placeholderText="optional: a GGUF file; else one is built at the mix below")
        box, form = _file_form("GGUF file", self.gguf_edit, self._browse_gguf)
        self.mix = QComboBox()
        self.mix.addItems(LLAMACPP_MIXES)
        self.mix.setEditable(True)  # any llama.cpp file type (IQ3_M, Q3_K_L, ...)
        self.context = QSpinBox()
        self.context.setRange(256, 1 << 24)
        self.context.setValue(4096)
        self.context.setGroupSeparatorShown(True)
        self.context.setToolTip("llama.cpp -c: cells for all sequences together")
        self.flash = QComboBox()
        self.flash.addItems(["auto", "on", "off"])
        self.cache_type = QComboBox()
        self.cache_type.addItems(["f16", "q8_0", "q4_0", "bf16", "f32"])
        self.ubatch, self.gpu_layers = QSpinBox(), QSpinBox()
        self.ubatch.setRange(1, 1 << 16)
        self.ubatch.setValue(512)
        self.gpu_layers.setRange(0, 1000)
        self.gpu_layers.setToolTip("-ngl: layers on the GPU (a CUDA build of llama-cpp-python)")
        for label, w in (("Mix", self.mix), ("Context", self.context), ("Flash attention", self.flash),
                         ("Cache type", self.cache_type), ("Micro-batch", self.ubatch), ("GPU layers", self.gpu_layers)):
            form.addRow(label, w)
        self.flags = {flag: QCheckBox(text) for flag, text in LLAMACPP_FLAGS}
        for check in self.flags.values():
            form.addRow(check)
        return box

    def _engine_changed(self) -> None:
        llamacpp = self.engine.currentData() == "llamacpp"
        self.hf_box.setVisible(not llamacpp)
        self.lcpp_box.setVisible(llamacpp)

    def _browse_gguf(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "GGUF file", "", "GGUF (*.gguf);;All files (*)")
        if path:
            self.gguf_edit.setText(path)

    def set_source(self, args: list[str], description: str) -> None:
        """The model the probe runs when no folder is given: ['--preset', key] or ['--config', path]."""
        self.source_args = args
        self.source_label.setText(description)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Model folder (config.json + safetensors)")
        if path:
            self.folder_edit.setText(path)

    def arguments(self) -> list[str]:
        python = self.interpreter.text().strip() or sys.executable
        # a frozen app runs its own `probe` subcommand; a Python interpreter runs the module
        entry = ["probe"] if getattr(sys, "frozen", False) and python == sys.executable else ["-m", "memviz.probe"]
        shared = ["--prompt", str(self.prompt.value()), "--new", str(self.new.value())]
        if self.engine.currentData() == "llamacpp":
            gguf = self.gguf_edit.text().strip()
            source = ["--gguf", gguf] if gguf else [*self.source_args, "--weights", self.mix.currentText().strip()]
            flags = [flag for flag, check in self.flags.items() if check.isChecked()]
            return [*entry, "--engine", "llamacpp", *source, "--context", str(self.context.value()), "--parallel",
                    str(self.batch.value()), "--flash-attn", self.flash.currentText(), "--cache-type-k",
                    self.cache_type.currentText(), "--cache-type-v", self.cache_type.currentText(), "--ubatch",
                    str(self.ubatch.value()), "--gpu-layers", str(self.gpu_layers.value()), *flags, *shared]
        source = ["--model", self.folder_edit.text().strip()] if self.folder_edit.text().strip() else self.source_args
        return [*entry, *source, "--dtype", self.dtype.currentText(), "--quant", self.quant.currentText(),
                "--device", self.device.currentText(), "--batch", str(self.batch.value()), "--prompt",
                str(self.prompt.value()), "--new", str(self.new.value()), "--attn", self.attn.currentText(),
                "--cache", self.cache.currentText()]

    def toggle(self) -> None:
        if self.client.state is State.IDLE:
            self.start()
        else:
            self.client.cancel()

    def start(self) -> bool:
        own_file = self.gguf_edit if self.engine.currentData() == "llamacpp" else self.folder_edit
        if not self.source_args and not own_file.text().strip():
            self.summary.setText("Pick a preset, import a config, or give a model folder to measure.")
            return False
        self.samples = SampleBuffer()
        self.empty_hint.setVisible(True)
        self.curve.setData([], [])
        self._clear_markers()
        self.log.clear()
        self.summary.clear()
        self.progress.setValue(0)
        self.phase_label.setText("starting…")
        self.run_button.setText("Stop")
        return self.client.start(self.interpreter.text().strip() or sys.executable, self.arguments())

    def _message(self, msg) -> None:
        d = msg.data
        if msg.event == "sample":
            value = d.get("rss") or d.get("nvml_process_used") or d.get("reserved") or 0
            if not _plottable(d.get("t_s"), MAX_SAMPLE_S) or not _plottable(value, MAX_BYTES):
                return  # a malformed sample is not drawn (the run's result is still checked on its own)
            self.samples.append(float(d["t_s"]), value / 2**30)
            self.empty_hint.setVisible(False)
            if not self.redraw.isActive():
                self.redraw.start()
        elif msg.event == "phase":
            self.phase_label.setText(f"phase: {d['name']}")
            if d["name"] in PHASE_MARKERS and isinstance(d.get("t_s"), (int, float)):
                self._mark_phase(d["name"], float(d["t_s"]))
            self.progress.setValue({"baseline": 5, "build": 15, "runtime": 20, "load": 50, "context": 55, "warmup": 60,
                                    "prefill": 75,
                                    "decode": 100}.get(d["name"], self.progress.value()))
        elif msg.event == "progress" and d.get("phase") == "decode":
            self.progress.setValue(75 + int(25 * d["fraction"]))
        elif msg.event == "env" and d.get("engine") == "llamacpp":
            self.log.appendPlainText(f"llama.cpp (llama-cpp-python {d.get('llama_cpp_python')}) on {d['device']}, "
                                     f"CPU features {d.get('cpu_features')}, file {d.get('model_file')}")
        elif msg.event == "env":
            self.log.appendPlainText(f"device {d['device']} ({d['device_name']}), torch {d['torch']}, "
                                     f"transformers {d['transformers']}, {d['threads']} threads")

    def _draw_samples(self) -> None:
        self.curve.setData(*self.samples.arrays())

    def _result(self, result: dict) -> None:
        """The run's summary, and the run itself to the window; a result that cannot be read is a message."""
        self._draw_samples()
        try:
            self._show_result(result)
        except (InputError, KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
            self._failed(f"the probe's result could not be read ({type(exc).__name__}: {exc})", str(result)[:4000])

    def _show_result(self, result: dict) -> None:
        m, e = result["measured"], result["estimate"]
        lines = [f"{'PARTIAL (' + result.get('message', '') + ')' if result.get('partial') else 'Finished'}:"]
        for k in ("weights", "kv_cache", "activations", "overhead", "peak"):
            if m.get(k) is not None:
                err = (e[k] - m[k]) / m[k] * 100 if m[k] else float("nan")
                lines.append(f"{k}: {format_bytes(m[k], Unit.GiB, 3)} measured, estimate {err:+.1f} %")
        estimated = {u["device"]: u for u in e.get("per_device", [])}
        for u in result.get("per_device", []):  # a model spread over several GPUs
            est = estimated.get(u["device"], {}).get("peak")
            versus = f", estimate {(est - u['peak']) / u['peak'] * 100:+.1f} %" if est and u["peak"] else ""
            lines.append(f"{u['device']}: peak {format_bytes(u['peak'], Unit.GiB, 3)} measured{versus}")
        t = result.get("timings") or {}
        if t.get("ttft_s") is not None:
            lines.append(f"TTFT {t['ttft_s'] * 1e3:.0f} ms, decode {t['decode_tokens_per_s'] or 0:.1f} tokens/s")
        self.summary.setText("\n".join(lines))
        if not result.get("partial"):  # the probe reports the scenario its own estimate used
            run = MeasuredRun.from_probe(result, result.get("attach_as") or result.get("scenario"))
            sc = run.scenario
            self.sig_run_finished.emit(result, replace(run, scenario=sc.with_changes(
                name=f"measured {sc.weight_format} B={sc.batch}")))

    def _failed(self, reason: str, details: str) -> None:
        self.summary.setText(f"<span style='color:#D55E00'>{reason}</span>")
        self.progress.setValue(0)
        if not self.samples:  # nothing measured: an empty timeline from 0 s, not pyqtgraph's -15...15
            self.timeline.setXRange(0, 1, padding=0)
        if details:
            self.log.appendPlainText(details)

    def _mark_phase(self, name: str, t_s: float) -> None:
        """A labelled vertical line where a phase ends on the memory timeline."""
        _, fg = chart_colors()
        line = pg.InfiniteLine(pos=t_s, angle=90, movable=False, pen=pg.mkPen(fg, width=1, style=Qt.PenStyle.DotLine),
                               label=name, labelOpts={"position": 0.92, "color": fg, "rotateAxis": (1, 0)})
        self.timeline.addItem(line)
        self.markers.append(line)

    def _clear_markers(self) -> None:
        for line in self.markers:
            self.timeline.removeItem(line)
        self.markers = []

    def _finished(self) -> None:
        self.run_button.setText("Run")
        self.phase_label.setText("idle")
