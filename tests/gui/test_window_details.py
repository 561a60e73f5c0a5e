"""Small things a user meets in the window (issue 12, item 10), each checked on the widgets themselves."""

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QKeySequence, QMouseEvent
from PySide6.QtWidgets import QMenu, QMessageBox

from memviz.gui.main_window import MainWindow


def window(qtbot) -> MainWindow:
    w = MainWindow()
    w.confirm_discard = lambda: True  # closing at teardown must not wait on a dialog
    qtbot.addWidget(w)
    w.show()
    return w


def test_no_shortcut_starts_with_the_quit_key(qtbot):
    w = window(qtbot)
    quit_key = QKeySequence(QKeySequence.StandardKey.Quit)
    for action in w.findChildren(type(w.undo_action)):
        seq = action.shortcut()
        if action.text() != "&Quit" and seq.count() > 1:
            assert seq[0] != quit_key[0], action.text()


def test_the_window_fits_a_1280x720_screen(qtbot):
    w = window(qtbot)
    hint = w.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 720 - 40  # a taskbar's worth to spare


def test_gpu_menu_stays_open_while_gpus_are_ticked(qtbot):
    w = window(qtbot)
    action = w.gpu_actions["a100-80g"]
    before = action.isChecked()
    menu = w._gpu_menus["Data centre"]  # the GPUs sit on shelves: GeForce and Radeon, workstation, data centre, unified
    assert action in menu.actions() and [m.title() for m in w._gpu_menu.findChildren(QMenu)] == list(w._gpu_menus)
    menu.setActiveAction(action)
    release = QMouseEvent(QEvent.Type.MouseButtonRelease, QPointF(1, 1), QPointF(1, 1), Qt.MouseButton.LeftButton,
                          Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    assert w.eventFilter(menu, release)  # handled: the menu does not close
    assert action.isChecked() is not before


def test_unsaved_changes_offer_save(qtbot, tmp_path, monkeypatch):
    w = window(qtbot)
    w.path = tmp_path / "s.memviz.json"
    w.table.add()
    assert w.dirty
    offered = []

    def answer(*args):
        offered.append(args[3])
        return QMessageBox.StandardButton.Save

    monkeypatch.setattr(QMessageBox, "question", answer)
    assert w._ask_discard() and not w.dirty and w.path.exists()
    assert offered[0] & QMessageBox.StandardButton.Save


def test_a_field_error_goes_when_the_valid_value_is_typed_back(qtbot):
    w = window(qtbot)
    edit = w.arch_panel.edits["decoder_layers"]
    valid = edit.text()
    edit.setText("lots")
    edit.editingFinished.emit()
    assert edit.styleSheet() and w.arch_panel.error_label.text()
    edit.setText(valid)
    edit.editingFinished.emit()
    assert not edit.styleSheet() and not w.arch_panel.error_label.text()


def test_preset_selection_follows_the_model_and_enter_picks_the_only_match(qtbot):
    w = window(qtbot)
    panel = w.arch_panel
    panel.search.setText("qwen3-30b")
    panel.search.returnPressed.emit()
    assert w.session.preset == "qwen3-30b-a3b"
    assert panel.preset_list.currentItem().data(Qt.ItemDataRole.UserRole) == "qwen3-30b-a3b"
    w.set_architecture(w.session.architecture.with_changes(name="edited", num_layers=3), None)
    assert panel.preset_list.currentItem() is None


def test_table_names_gpus_and_shows_the_generated_label_for_unnamed_rows(qtbot):
    from memviz.gui.scenario_table import COLUMNS, PLACEHOLDER_ROLE

    w = window(qtbot)
    gpu_box = w.table.table.cellWidget(0, COLUMNS.index("gpu"))
    gpu_box.setCurrentText("H100 SXM 80GB")
    assert w.session.scenarios[0].gpu == "h100-80g" and gpu_box.currentText() == "H100 SXM 80GB"
    name = w.table.table.item(1, 0)
    assert name.text() == "" and name.data(PLACEHOLDER_ROLE).startswith(w.session.scenarios[1].weight_format)
    assert w.table.table.columnWidth(0) <= 260  # no longer half the table


def test_log_headers_and_breakdown_formulas_are_readable(qtbot):
    from PySide6.QtGui import QFontMetrics

    from memviz.gui.breakdown import HEADERS

    w = window(qtbot)
    w.resize(1280, 720)
    w.open_log("tests/data/logs/vllm_llama3_8b_pr10511.log")
    header = w.log_view.table.horizontalHeader()
    metrics = QFontMetrics(header.font())
    for c in range(w.log_view.table.columnCount() - 1):
        text = w.log_view.table.horizontalHeaderItem(c).text()
        assert header.sectionSize(c) >= metrics.horizontalAdvance(text), text
    w.tabs.setCurrentWidget(w.breakdown)
    table = w.breakdown.table
    formula = HEADERS.index("Formula / inputs")
    assert table.wordWrap() and table.columnWidth(formula) <= max(320, table.width() * 2 // 5)
    assert all(table.item(r, formula).toolTip() == table.item(r, formula).text() for r in range(table.rowCount()))


def test_one_place_sets_context_and_sequences(qtbot):
    w = window(qtbot)
    w.shape_context.setValue(32768)
    w.shape_batch.setValue(4)
    w.apply_shape(selected_only=False)
    assert {(sc.context_tokens, sc.batch) for sc in w.session.scenarios} == {(32768, 4)}
    w.table.table.setCurrentCell(1, 0)
    w.shape_context.setValue(1024)
    w.apply_shape(selected_only=True)
    assert [sc.context_tokens for sc in w.session.scenarios][:3] == [32768, 1024, 32768]
    w.undo()
    assert {sc.context_tokens for sc in w.session.scenarios} == {32768}
    w.shape_context.setValue(10_000_000)  # beyond the model's positions: refused, nothing changes
    w.apply_shape(selected_only=False)
    assert {sc.context_tokens for sc in w.session.scenarios} == {32768} and "positions" in w.banner.text()


def test_many_bars_sort_hide_and_scroll(qtbot):
    from memviz.core.estimate import Scenario
    from memviz.gui.charts import MAX_BARS_SHOWN
    from memviz.gui.scenario_table import COLUMNS

    w = window(qtbot)
    scenarios = tuple(Scenario(context_tokens=1024 * (1 + (i * 7) % 24)) for i in range(24))
    w.apply(w.session.with_changes(scenarios=scenarios))
    lo, hi = w.compare.plot_item.vb.viewRange()[0]
    assert hi - lo <= MAX_BARS_SHOWN + 0.2 and w.compare.plot_item.vb.state["mouseEnabled"][0]
    assert sum(label.isVisible() for label in w.compare.labels) <= MAX_BARS_SHOWN
    next(a for a in w.findChildren(type(w.undo_action)) if a.text() == "&Sort by total").trigger()
    totals = [e.total for e in w.estimates]
    assert totals == sorted(totals)
    w.table.table.cellWidget(0, COLUMNS.index("hidden")).setChecked(True)
    assert w.session.scenarios[0].hidden and len(w.compare.bars) == 23 and len(w.table.scenarios) == 24


def test_offload_is_set_in_the_table_and_host_ram_is_shown(qtbot):
    from memviz.core.estimate import Scenario
    from memviz.gui.scenario_table import COLUMNS

    w = window(qtbot)
    w.apply(w.session.with_changes(scenarios=(Scenario(weight_format="Q4_K_M", engine="llamacpp", kv_format="fp16",
                                                       context_tokens=8192), Scenario(engine="vllm"))))
    full_host = w.compare.bars[0].host_bytes
    w.table.table.cellWidget(0, COLUMNS.index("gpu_layers")).setValue(16)
    sc = w.session.scenarios[0]
    assert sc.gpu_layers == 16 and w.compare.bars[0].host_bytes > full_host + 1e9  # half the layers in host RAM
    assert "host RAM" in w.compare.labels[0].textItem.toPlainText()
    w.table.table.cellWidget(0, COLUMNS.index("kv_offload")).setChecked(True)
    assert w.session.scenarios[0].kv_offload
    w.table.table.cellWidget(1, COLUMNS.index("gpu_layers")).setValue(8)  # vLLM does not offload
    assert w.session.scenarios[1].gpu_layers is None and "offload" in w.table.message.text()


def test_a_refused_edit_puts_the_widget_back(qtbot):
    from memviz.gui.scenario_table import COLUMNS

    w = window(qtbot)
    engine = w.table.table.cellWidget(0, COLUMNS.index("engine"))
    tp = w.table.table.cellWidget(0, COLUMNS.index("tp"))
    engine.setCurrentText("transformers")
    tp.setValue(2)  # tensor parallelism is vLLM's only: refused by the core
    assert w.session.scenarios[0].tp == 1 and tp.value() == 1


def test_a_default_cache_follows_the_weights_and_the_engine_a_chosen_one_stays(qtbot):
    """An fp32 model's cache is fp32 in transformers and vLLM (their default for those weights), llama.cpp's f16:
    a cache left at its default follows the weights and the engine; one the user chose does not."""
    from memviz.core.estimate import Scenario
    from memviz.gui.scenario_table import COLUMNS

    w = window(qtbot)
    w.apply(w.session.with_changes(scenarios=(Scenario(engine="transformers"), Scenario(engine="transformers",
                                                                                        kv_format="int4"))))
    weights = w.table.table.cellWidget(0, COLUMNS.index("weight_format"))
    weights.setCurrentText("fp32")
    assert (w.session.scenarios[0].weight_format, w.session.scenarios[0].kv_format) == ("fp32", "fp32")
    w.table.table.cellWidget(0, COLUMNS.index("engine")).setCurrentText("llamacpp")
    assert w.session.scenarios[0].kv_format == "fp16"
    w.table.table.cellWidget(1, COLUMNS.index("engine")).setCurrentText("vllm")  # vLLM has no quanto int4 cache
    assert (w.session.scenarios[1].engine, w.session.scenarios[1].kv_format) == ("transformers", "int4")
    assert "vLLM has no KV cache dtype 'int4'" in w.banner.text()
