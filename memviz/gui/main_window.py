"""The main window: architecture panel, scenario table, compare / sweep / breakdown views.

Every user edit produces a new Session snapshot pushed onto the undo history;
the views re-render from the current snapshot. Errors (bad files, invalid
values) are shown in the window and never change the session.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QToolBar,
    QToolButton,
)

from memviz.core import commands, report
from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.fit import fit_matrix
from memviz.core.gpus import GPU_GROUPS, GPUS, gpu_group
from memviz.core.importers.vllm_log import quantization_note
from memviz.core.presets import get_preset
from memviz.core.report import scenario_labels
from memviz.core.runs import MeasuredRun
from memviz.core.session import History, Session
from memviz.core.units import Unit
from memviz.gui import model, settings
from memviz.gui.arch_panel import ArchitecturePanel
from memviz.gui.breakdown import BreakdownView
from memviz.gui.charts import CompareChart, SweepChart
from memviz.gui.export import chart_image, export_chart, offscreen_copy
from memviz.gui.fit_view import FitView
from memviz.gui.log_view import LogView
from memviz.gui.measure_tab import MeasureTab
from memviz.gui.palette import REPORT_THEME
from memviz.gui.plan_view import PlanView
from memviz.gui.scenario_table import ScenarioTable, compare_quantizations


def default_session() -> Session:
    preset = get_preset("llama-3.1-8b")
    return Session(architecture=preset.architecture(), preset=preset.key,
                   scenarios=compare_quantizations(Scenario(context_tokens=8192)),
                   gpus=tuple(settings.read("gpus")), unit=Unit(settings.read("unit")))


def with_filter_suffix(path: str, chosen_filter: str) -> str:
    """A saved file name without a suffix takes the chosen filter's ("PNG image (*.png)" -> ".png")."""
    m = re.search(r"\*(\.[\w.]+)", chosen_filter or "")
    if not path or Path(path).suffix or m is None:
        return path
    return path + m.group(1)


class MainWindow(QMainWindow):
    def __init__(self, session: Session | None = None) -> None:
        super().__init__()
        self.setWindowTitle("memviz")
        self.history = History(session or default_session())
        self.path: Path | None = None
        self._saved: Session | None = self.history.current
        self._shown_arch: Architecture | None = None
        self.last_refresh_ms = 0.0
        self.estimates: list = []
        self.confirm_discard = self._ask_discard  # replaced in tests

        self.compare = CompareChart()
        self.sweep = SweepChart()
        self.breakdown = BreakdownView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.compare, "Compare")
        self.tabs.addTab(self.sweep, "Sweep")
        self.fit_view = FitView()
        self.fit_view.sig_extra_changed.connect(lambda: (self._stale.add(self.fit_view), self._refresh_visible()))
        self.tabs.addTab(self.fit_view, "Fit")
        self.tabs.addTab(self.breakdown, "Breakdown")
        self.log_view = LogView()
        self.tabs.addTab(self.log_view, "Engine log")
        self.log_view.sig_measured.connect(self.attach_log)
        self.log_view.sig_adopt.connect(self.adopt_log)
        self.measure = MeasureTab()
        self.tabs.addTab(self.measure, "Measure")
        self.plan_view = PlanView()
        self.tabs.addTab(self.plan_view, "Plan")
        self.plan_view.sig_add.connect(self.add_planned)
        self.plan_view.sig_error.connect(lambda msg: self.statusBar().showMessage(f"Plan: {msg}", 8000))
        self.measure.sig_run_finished.connect(self.attach_probe_run)
        self.measure.engine.currentIndexChanged.connect(self._update_probe_source)
        self.reload_calibration()
        self._stale: set = set()
        self.tabs.currentChanged.connect(lambda _i: self._refresh_visible())
        self.setCentralWidget(self.tabs)

        self.arch_panel = ArchitecturePanel()
        scroll = QScrollArea()
        scroll.setWidget(self.arch_panel)
        scroll.setWidgetResizable(True)
        dock = QDockWidget("Model", self)
        dock.setObjectName("model_dock")
        dock.setWidget(scroll)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        self.table = ScenarioTable()
        tdock = QDockWidget("Scenarios", self)
        tdock.setObjectName("scenario_dock")
        tdock.setWidget(self.table)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, tdock)

        self.banner = QLabel()
        self.banner.setStyleSheet("color: #D55E00")
        self.statusBar().addPermanentWidget(self.banner, 1)

        self.arch_panel.sig_preset.connect(self.load_preset)
        self.arch_panel.sig_changed.connect(lambda a: self.set_architecture(a, None))
        self.arch_panel.sig_import_config.connect(self._import_config_dialog)
        self.arch_panel.sig_import_folder.connect(self._import_folder_dialog)
        self.table.sig_changed.connect(lambda scs: self.apply(self.session.with_changes(scenarios=scs)))
        self.table.sig_selected.connect(lambda _row: (self._stale.update({self.breakdown, self.log_view}),
                                                      self._refresh_visible()))
        self.table.sig_compare_quantizations.connect(self.compare_quantizations)

        self._build_actions()
        geometry = settings.read_bytes("geometry")
        if geometry:
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 950)
        self._fit_screen()
        state = settings.read_bytes("window_state")
        if state:
            self.restoreState(state)
        self.refresh()

    def _fit_screen(self) -> None:
        """Within the available area of the screen the window is on (a geometry saved on a larger screen
        would open off-screen or squeezed)."""
        screen = (self.screen() or QApplication.primaryScreen()).availableGeometry()
        self.resize(min(self.width(), screen.width()), min(self.height(), screen.height()))
        if not screen.contains(self.frameGeometry().topLeft()):
            self.move(screen.topLeft())

    def eventFilter(self, watched, event) -> bool:
        """A click on a checkable GPU in its menu toggles it and leaves the menu open."""
        if watched in getattr(self, "_gpu_menus", {}).values() and event.type() == QEvent.Type.MouseButtonRelease:
            action = watched.activeAction()
            if action is not None and action.isCheckable():
                action.trigger()
                return True
        return super().eventFilter(watched, event)

    # --- state -------------------------------------------------------------------
    @property
    def session(self) -> Session:
        return self.history.current

    @property
    def dirty(self) -> bool:
        return self.session != self._saved

    def apply(self, session: Session) -> bool:
        """Make `session` current (undoable) and redraw; a session the core rejects is not applied."""
        t0 = time.perf_counter()
        try:
            estimates = model.compute_estimates(session)
        except InputError as exc:
            self.report_error(str(exc))
            self.table.revert()  # the edited widget shows the rejected value until then
            return False
        self.history.push(session)
        self.refresh(estimates, t0)
        return True

    def set_architecture(self, a: Architecture, preset: str | None) -> bool:
        """Switch the model (`commands.switch_architecture`), saying which scenarios it left out and why (undo
        brings them back); False where the session was not applied."""
        left_out = commands.unrunnable(self.session, a)
        applied = self.apply(commands.switch_architecture(self.session, a, preset))
        if applied:
            self.banner.clear()
            self.banner.setToolTip("")
            if left_out:
                self.report_error(f"{len(left_out)} scenario(s) left out: {left_out[0]}")
        return applied

    def _update_probe_source(self) -> None:
        self.measure.set_source(*commands.probe_source(self.session, self.measure.engine.currentData()))

    def refresh(self, estimates=None, t0: float | None = None) -> None:
        t0 = time.perf_counter() if t0 is None else t0
        s = self.session
        if s.architecture != self._shown_arch:
            self.arch_panel.set_architecture(s.architecture)
            self.arch_panel.select_preset(s.preset)
            self.table.set_context_limit(s.architecture.max_position_embeddings)
            self._shown_arch = s.architecture
            self._update_probe_source()
        if self.table.scenarios != s.scenarios:
            self.table.set_scenarios(s.scenarios)
        self.estimates = estimates if estimates is not None else model.compute_estimates(s)
        caps = model.capacities(s)
        self.compare.set_bars(model.bars(s, self.estimates, self.calibration.band), caps, s.unit, model.title(s))
        self._stale = {self.sweep, self.fit_view, self.breakdown, self.log_view, self.plan_view}
        self._refresh_visible()
        for unit, action in self.unit_actions.items():
            action.setChecked(unit is s.unit)
        for key, action in self.gpu_actions.items():
            action.setChecked(key in s.gpus)
        self.undo_action.setEnabled(self.history.can_undo())
        self.redo_action.setEnabled(self.history.can_redo())
        name = self.path.name if self.path else "untitled"
        self.setWindowTitle(f"memviz — {name}{' *' if self.dirty else ''}")
        self.last_refresh_ms = (time.perf_counter() - t0) * 1e3

    def _refresh_visible(self) -> None:
        """Redraw the sweep or breakdown only when shown (the compare view is always current)."""
        current = self.tabs.currentWidget()
        if current in self._stale:
            self._stale.discard(current)
            if current is self.sweep:
                s, axis = self.session, self.axis_box.currentText()
                self.sweep.set_series(model.series(s, axis), model.capacities(s), s.unit, axis, self.log_box.isChecked(),
                                      model.title(s))
            elif current is self.fit_view:
                s = self.session
                specs = [*s.gpus, *self.fit_view.extra_gpus()]
                try:
                    cells = fit_matrix(self.estimates, specs) if specs else []
                except InputError as exc:
                    self.report_error(f"Fit matrix: {exc}")
                    cells = fit_matrix(self.estimates, list(s.gpus)) if s.gpus else []
                self.fit_view.show_matrix(scenario_labels(s.scenarios), cells, s.unit)
            elif current is self.plan_view:
                self._refresh_plan()
            elif current is self.log_view:
                est = self._selected_estimate()
                self.log_view.show_comparison(est, self._label(est), self.session.unit)
            else:
                self._refresh_breakdown()

    def _refresh_plan(self) -> None:
        """The planner follows the session's model, unit and the selected scenario's shape."""
        s = self.session
        est = self._selected_estimate()
        sc = est.scenario if est is not None else Scenario()
        ref = get_preset(s.preset).repo if s.preset else s.architecture.name
        self.plan_view.set_model(s.architecture, ref, s.unit, sc.longest_sequence, sc.sequences)
        if self.plan_view.result is not None and self.plan_view.result.architecture != s.architecture:
            self.plan_view.run()

    def add_planned(self, candidates: list) -> None:
        """Chosen planner candidates become scenarios (undoable); their GPUs join the capacity lines."""
        scenarios = [c.scenario for c in candidates]
        self.apply(commands.add_planned(self.session, scenarios, [c.hardware.gpu.key for c in candidates]))
        self.statusBar().showMessage(f"Added {len(scenarios)} scenario(s) from the plan", 8000)

    def _label(self, est) -> str:
        """The label the charts give the scenario of `est` (one of `self.estimates`), told apart from its twins."""
        index = next((i for i, e in enumerate(self.estimates) if e is est), None)
        return "" if index is None else scenario_labels(self.session.scenarios)[index]

    def _selected_estimate(self):
        row = self.table.selected_row()
        return self.estimates[row] if 0 <= row < len(self.estimates) else None

    def _refresh_breakdown(self) -> None:
        est = self._selected_estimate()
        self.breakdown.show_estimate(est, self._label(est), self.session.unit,
                                     self.session.gpus)

    def report_error(self, message: str) -> None:
        self.banner.setText(message)
        self.banner.setToolTip(message)  # whole, where the status bar cuts a long one
        self.statusBar().showMessage(message, 15000)

    # --- actions -----------------------------------------------------------------
    def _action(self, text: str, slot, shortcut=None, menu=None) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        a.triggered.connect(slot)
        if menu is not None:
            menu.addAction(a)
        return a

    def _build_actions(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._action("&New session", self.new_session, QKeySequence.StandardKey.New, f)
        self._action("&Open session…", self._open_dialog, QKeySequence.StandardKey.Open, f)
        self.recent_menu = f.addMenu("Open &recent")
        self._action("&Save session", self.save, QKeySequence.StandardKey.Save, f)
        self._action("Save session &as…", self._save_as_dialog, QKeySequence.StandardKey.SaveAs, f)
        f.addSeparator()
        self._action("Import config / safetensors / GGUF file…", self._import_config_dialog, "Ctrl+I", f)
        self._action("Import model folder…", self._import_folder_dialog, None, f)
        self._action("Add mmproj file (llama.cpp --mmproj)…", self._add_mmproj_dialog, None, f)
        self._action("Pick from the Hugging Face cache…", lambda: self.pick_from_cache(), None, f)
        self._action("Fetch config.json by model id (network)…", self.fetch_config_by_id, None, f)
        self._action("Open engine log…", self._open_log_dialog, "Ctrl+L", f)
        f.addSeparator()
        self._action("&Export chart (PNG, SVG, PDF)…", self._export_chart_dialog, "Ctrl+E", f)
        self._action("Export &data (CSV, JSON, Markdown)…", self._export_data_dialog, "Ctrl+Shift+E", f)
        self._action("Export &plan (Markdown + Pareto chart)…", self._export_plan_dialog, None, f)
        f.addSeparator()
        self._action("&Quit", self.close, QKeySequence.StandardKey.Quit, f)

        e = mb.addMenu("&Edit")
        self.undo_action = self._action("&Undo", self.undo, QKeySequence.StandardKey.Undo, e)
        self.redo_action = self._action("&Redo", self.redo, QKeySequence.StandardKey.Redo, e)
        e.addSeparator()
        self._action("Copy chart", self.copy_chart, "Ctrl+Shift+C", e)
        keep = self._action("Export charts in the screen's colours", lambda on: settings.write("export_screen_colours", on),
                            None, e)
        keep.setCheckable(True)
        keep.setChecked(bool(settings.read("export_screen_colours")))
        self._action("Copy table (Markdown)", self.copy_table, "Ctrl+Alt+C", e)

        sc = mb.addMenu("&Scenarios")
        self._action("&Add scenario", self.table.add, "Ctrl+T", sc)
        self._action("&Duplicate scenario", self.table.duplicate, "Ctrl+D", sc)
        self._action("De&lete scenario", self.table.delete, "Ctrl+Backspace", sc)
        self._action("&Compare quantizations", self.compare_quantizations, "Ctrl+Shift+Q", sc)
        self._action("Use &calibrated overhead (stored probe runs)", self.apply_calibrated_overhead, None, sc)
        self._action("&Sort by total", lambda: self.apply(commands.sort_by_total(
            self.session, [e.total for e in self.estimates])), None, sc)

        view = mb.addMenu("&View")
        tb = QToolBar("View")
        tb.setObjectName("view_toolbar")
        self.addToolBar(tb)
        group = QActionGroup(self)
        self.unit_actions: dict[Unit, QAction] = {}
        for unit, key in ((Unit.GiB, "Ctrl+1"), (Unit.GB, "Ctrl+2")):
            a = self._action(f"Units: {unit.value}", lambda _=False, u=unit: self.set_unit(u), key, view)
            a.setCheckable(True)
            group.addAction(a)
            tb.addAction(a)
            self.unit_actions[unit] = a
        tb.addSeparator()
        gpu_button = QToolButton()
        gpu_button.setText("GPU capacity lines")
        gpu_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        gpu_menu = view.addMenu("GPU capacity lines")
        self.gpu_actions: dict[str, QAction] = {}
        self._gpu_menus: dict[str, QMenu] = {g: gpu_menu.addMenu(g) for g in GPU_GROUPS}  # one a shelf
        for menu in self._gpu_menus.values():
            menu.installEventFilter(self)  # several GPUs can be ticked without the menu closing each time
        for key, gpu in GPUS.items():
            group = gpu_group(gpu)
            a = QAction(gpu.describe(), self)
            a.setCheckable(True)
            a.triggered.connect(lambda checked, k=key: self.toggle_gpu(k, checked))
            self._gpu_menus[group].addAction(a)
            self.gpu_actions[key] = a
        self._gpu_menu = gpu_menu
        gpu_button.setMenu(gpu_menu)
        tb.addWidget(gpu_button)
        tb.addSeparator()
        tb.addWidget(QLabel(" Sweep over "))
        self.axis_box = QComboBox()
        self.axis_box.addItems(["context", "batch"])
        self.axis_box.setCurrentText(settings.read("sweep_axis"))
        self.axis_box.currentTextChanged.connect(lambda v: (settings.write("sweep_axis", v), self.refresh()))
        tb.addWidget(self.axis_box)
        tb.addSeparator()
        tb.addWidget(QLabel(" Context "))
        self.shape_context = QSpinBox()
        self.shape_context.setRange(1, 10_000_000)
        self.shape_context.setValue(8192)
        self.shape_context.setGroupSeparatorShown(True)
        tb.addWidget(self.shape_context)
        tb.addWidget(QLabel(" × sequences "))
        self.shape_batch = QSpinBox()
        self.shape_batch.setRange(1, 100_000)
        tb.addWidget(self.shape_batch)
        for label, selected in (("to all", False), ("to selected", True)):
            button = QToolButton()
            button.setText(f"Apply {label}")
            button.clicked.connect(lambda _=False, sel=selected: self.apply_shape(sel))
            tb.addWidget(button)
        tb.addSeparator()
        self.log_box = QCheckBox("log x")
        self.log_box.setChecked(bool(settings.read("log_x")))
        self.log_box.toggled.connect(lambda v: (settings.write("log_x", v), self.refresh()))
        tb.addWidget(self.log_box)
        self._update_recent_menu()

    def apply_shape(self, selected_only: bool) -> None:
        """The toolbar's context and sequences on every scenario, or the selected one (one undo step)."""
        rows = [self.table.selected_row()] if selected_only else None
        self.apply(commands.set_shape(self.session, self.shape_context.value(), self.shape_batch.value(), rows))

    def set_unit(self, unit: Unit) -> None:
        settings.write("unit", unit.value)
        self.apply(self.session.with_changes(unit=unit))

    def toggle_gpu(self, key: str, on: bool) -> None:
        gpus = tuple(g for g in self.session.gpus if g != key) + ((key,) if on else ())
        settings.write("gpus", list(gpus))
        self.apply(self.session.with_changes(gpus=gpus))

    def undo(self) -> None:
        self.history.undo()
        self.refresh()

    def redo(self) -> None:
        self.history.redo()
        self.refresh()

    def compare_quantizations(self) -> None:
        base = self.session.scenarios[self.table.selected_row()] if self.session.scenarios else Scenario()
        self.apply(self.session.with_changes(scenarios=compare_quantizations(base)))

    def load_preset(self, key: str) -> None:
        try:
            p = get_preset(key)
        except InputError as exc:
            self.report_error(str(exc))
            return
        self.set_architecture(p.architecture(), p.key)

    def import_config(self, path: str | Path) -> bool:
        """Load a model from a config.json, a safetensors file/index/folder or a GGUF file;
        on error the session is untouched and the message names the file."""
        from memviz.core.importers import import_path
        from memviz.gui.background import off_gui_thread

        self.statusBar().showMessage(f"Reading {path}…")
        try:
            a = off_gui_thread(lambda: import_path(path))
        except InputError as exc:
            self.report_error(f"Import failed ({path}): {exc}")
            return False
        if not self.set_architecture(a, None):
            return False
        if not self.banner.text():
            self.statusBar().showMessage(f"Read {path}", 5000)
        return True

    def add_mmproj(self, path: str | Path) -> bool:
        """Give the model the encoders of a llama.cpp mmproj file, loaded by its llama.cpp / Ollama scenarios
        (undoable); a file that is not one is reported and the session kept."""
        from memviz.core.importers.gguf_file import read_mmproj
        from memviz.gui.background import off_gui_thread

        try:
            encoders = off_gui_thread(lambda: read_mmproj(path))
        except InputError as exc:
            self.report_error(f"Cannot add the mmproj file ({path}): {exc}")
            return False
        if not self.apply(commands.attach_mmproj(self.session, encoders)):
            return False
        self.statusBar().showMessage(f"Added {path} as the model's mmproj", 5000)
        return True

    def attach_log(self, measurement) -> None:
        """Keep a parsed engine log as a measured run of the selected scenario (drawn next to its bar)."""
        est = self._selected_estimate()
        if est is None:
            return
        run = MeasuredRun.from_log(measurement.engine, measurement.bytes, est.scenario)
        self.apply(commands.attach_run(self.session, run))
        self.log_view.show_comparison(est, self._label(est), self.session.unit)

    def adopt_log(self, text: str) -> None:
        """Make a llama.cpp log's model and load the session's model and a scenario, its buffers attached; a vLLM
        log's settings a scenario on the session's model and the selected scenario's GPU (undoable); a log memviz
        cannot read that far is reported and the session kept."""
        try:
            if self.log_view.measurement is not None and self.log_view.measurement.engine == "vllm":
                est = self._selected_estimate()
                gpu = est.scenario.gpu if est is not None else None
                if not gpu:
                    raise InputError("a vLLM log does not name its GPU: set it in the selected scenario's GPU column")
                session = commands.adopt_vllm_log(self.session, text, gpu)
            else:
                session = commands.adopt_llamacpp_log(self.session, text)
        except InputError as exc:
            self.report_error(f"Cannot use this log's model and settings: {exc}")
            return
        if self.apply(session):
            index = next(i for i, sc in enumerate(self.session.scenarios) if sc.run_id == self.session.runs[-1].id)
            self.table.table.selectRow(index)
            est = self.estimates[index]
            self.log_view.show_comparison(est, self._label(est), self.session.unit)
            if est.scenario.engine == "vllm" and (note := quantization_note(text, self.session.architecture)):
                self.report_error(f"Note: {note}")

    def reload_calibration(self) -> None:
        """Read the stored probe runs (once, not on every redraw): ± bands and calibrated overheads."""
        self.calibration = commands.read_calibration()

    def apply_calibrated_overhead(self) -> None:
        """Set each scenario's runtime overhead to the calibrated value of its group (undoable)."""
        session = commands.apply_calibrated_overhead(self.session, self.calibration)
        if session == self.session:
            self.report_error("No stored probe runs match these scenarios' devices: run the probe first (Measure tab).")
            return
        self.apply(session)

    def attach_probe_run(self, result: dict, run: MeasuredRun) -> None:
        """Show a finished probe run next to the estimate of the same settings (adding that scenario if needed)."""
        self.reload_calibration()
        self.apply(commands.attach_run(self.session, run))

    def open_log(self, path: str | Path) -> None:
        from memviz.core.importers.logs import read_log

        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = read_log(fh)
        except OSError as exc:
            self.report_error(f"Could not read {path}: {exc.strerror}")
            return
        except InputError as exc:
            self.report_error(f"{path}: {exc}")
            return
        self.log_view.text.setPlainText(text)
        self.tabs.setCurrentWidget(self.log_view)
        self.log_view.parse()

    def pick_from_cache(self, cache_dir: str | Path | None = None) -> None:
        from memviz.gui.cache_dialog import CacheDialog

        try:
            dialog = CacheDialog(self, cache_dir)
        except InputError as exc:
            self.report_error(str(exc))
            return
        if dialog.exec() and dialog.selected() is not None:
            self.import_config(dialog.selected().snapshot)

    def fetch_config_by_id(self) -> None:
        """NETWORK ACCESS, on explicit request only: download one config.json from the Hub."""
        from PySide6.QtWidgets import QInputDialog

        from memviz.core.importers.hf_cache import fetch_config

        repo, ok = QInputDialog.getText(self, "Fetch config.json (network access)",
                                        "This downloads config.json from the Hugging Face Hub.\nModel id:")
        if ok and repo.strip():
            try:
                self.import_config(fetch_config(repo.strip()))
            except InputError as exc:
                self.report_error(str(exc))

    # --- files -------------------------------------------------------------------
    def _ask_discard(self) -> bool:
        """Save, discard or cancel; True when the session may be replaced."""
        if not self.dirty:
            return True
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(self, "Unsaved changes", "Save the changes of this session first?",
                                      buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
        if answer == buttons.Save:
            self.save()
            return not self.dirty  # a cancelled or failed save keeps the session
        return answer == buttons.Discard

    def new_session(self) -> None:
        if self.confirm_discard():
            self.history.reset(default_session())
            self.path, self._saved = None, self.session
            self.refresh()

    def open_session(self, path: str | Path) -> bool:
        if not self.confirm_discard():
            return False
        try:  # the whole file is checked and estimated before it replaces anything
            s = Session.load(path)
            estimates = model.compute_estimates(s)
        except InputError as exc:
            self.report_error(f"Could not open {path}: {exc}")
            return False
        self.history.reset(s)
        self.path, self._saved = Path(path), s
        self._update_recent_menu(settings.add_recent(str(path)))
        self.refresh(estimates)
        return True

    def save_as(self, path: str | Path) -> bool:
        """Save the session to `path` (atomically); a failure is reported and the file on disk is unchanged."""
        try:
            self.session.save(path)
        except OSError as exc:
            self.report_error(f"Could not save {path}: {exc.strerror or exc}. The file on disk is unchanged; "
                              "the session is still open here.")
            return False
        self.path, self._saved = Path(path), self.session
        self._update_recent_menu(settings.add_recent(str(path)))
        self.refresh()
        return True

    def save(self) -> None:
        if self.path is None:
            self._save_as_dialog()
        else:
            self.save_as(self.path)

    def current_chart(self):
        current = self.tabs.currentWidget()
        if current is self.plan_view and self.plan_view.result is not None:
            return self.plan_view.chart
        return self.sweep if current is self.sweep else self.compare

    def export_current_chart(self, path: str | Path, width_px: int | None = None) -> Path:
        """The current chart at the export width, in the report theme, titled with the model and a subtitle
        naming engines, settings, GPUs, memviz's version and the date."""
        theme = None if settings.read("export_screen_colours") else REPORT_THEME
        chart = self.current_chart()
        sub = model.plan_subtitle(self.plan_view.result) if chart is self.plan_view.chart else model.subtitle(self.session)
        return export_chart(chart, path, width_px or int(settings.read("export_width")), theme, subtitle=sub)

    def copy_chart(self) -> None:
        """The current chart, as exported (report theme, export width), to the clipboard."""
        with offscreen_copy(self.current_chart(), int(settings.read("export_width"))) as copy:
            QApplication.clipboard().setImage(chart_image(copy))

    def copy_table(self) -> None:
        s = self.session
        QApplication.clipboard().setText(report.to_markdown(s.architecture, s.scenarios, s.gpus, s.unit))

    def _update_recent_menu(self, recent: list[str] | None = None) -> None:
        self.recent_menu.clear()
        for p in recent if recent is not None else settings.read("recent_files"):
            self._action(p, lambda _=False, path=p: self.open_session(path), None, self.recent_menu)

    def _file_dialog(self, save: bool, caption: str, filters: str) -> str:
        fn = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
        path, chosen = fn(self, caption, str(self.path.parent if self.path else Path.home()), filters)
        return with_filter_suffix(path, chosen) if save else path

    def _open_dialog(self) -> None:
        path = self._file_dialog(False, "Open session", "memviz sessions (*.memviz.json *.json)")
        if path:
            self.open_session(path)

    def _save_as_dialog(self) -> None:
        path = self._file_dialog(True, "Save session", "memviz sessions (*.memviz.json)")
        if path:
            self.save_as(path if path.endswith(".json") else path + ".memviz.json")

    def _import_config_dialog(self) -> None:
        path = self._file_dialog(False, "Import model file",
                                 "Model files (*.json *.safetensors *.gguf);;config.json (*.json);;safetensors (*.safetensors);;"
                                 "GGUF (*.gguf)")
        if path:
            self.import_config(path)

    def _add_mmproj_dialog(self) -> None:
        path = self._file_dialog(False, "Add mmproj file", "mmproj GGUF (*.gguf)")
        if path:
            self.add_mmproj(path)

    def _open_log_dialog(self) -> None:
        path = self._file_dialog(False, "Open engine log", "Logs (*.log *.txt);;All files (*)")
        if path:
            self.open_log(path)

    def _import_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Import model folder")
        if path:
            self.import_config(path)

    def _export_dialog(self, caption: str, filters: str, write) -> None:
        """Ask for a file, `write(path)` it, and say where it went; a failure is reported, nothing else changes."""
        path = self._file_dialog(True, caption, filters)
        if path:
            try:
                self.statusBar().showMessage(f"Exported {write(path)}", 8000)
            except (InputError, OSError) as exc:
                self.report_error(str(exc))

    def _export_chart_dialog(self) -> None:
        self._export_dialog("Export chart", "PNG image (*.png);;SVG (*.svg);;PDF (*.pdf)", self.export_current_chart)

    def _export_plan_dialog(self) -> None:
        self._export_dialog("Export plan", "Markdown (*.md)", self.plan_view.write_markdown)

    def _export_data_dialog(self) -> None:
        self._export_dialog("Export data", "CSV (*.csv);;JSON (*.json);;Markdown (*.md)",
                            lambda path: report.write(self.session, path))

    # --- Qt events ---------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.compare.apply_theme()
            self.sweep.apply_theme()
            self.plan_view.chart.apply_theme()
            self.refresh()
        super().changeEvent(event)

    def closeEvent(self, event) -> None:
        if not self.confirm_discard():
            event.ignore()
            return
        self.measure.client.wait_for_end()
        settings.write_bytes("geometry", bytes(self.saveGeometry()))
        settings.write_bytes("window_state", bytes(self.saveState()))
        event.accept()
