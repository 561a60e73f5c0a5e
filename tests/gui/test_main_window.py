"""Drive the real window offscreen: presets, scenarios, validation, units, undo, imports, exports, sessions."""

import csv
import json
import xml.dom.minidom

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from memviz.core.estimate import COMPONENTS, estimate
from memviz.core.presets import get_preset
from memviz.core.session import Session
from memviz.core.units import GB, GiB, Unit
from memviz.gui.main_window import MainWindow


@pytest.fixture
def win(qtbot):
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.resize(1500, 950)
    w.show()
    return w


def _bytes_of_chart(w, unit_bytes):
    heights = w.compare.bar_heights()
    return [{c: heights[c][i] * unit_bytes for c in COMPONENTS} for i in range(len(w.session.scenarios))]


def test_drawn_bars_equal_core_bytes(win):
    drawn = _bytes_of_chart(win, GiB)
    for sc, bar in zip(win.session.scenarios, drawn, strict=True):
        est = estimate(win.session.architecture, sc)
        for c in COMPONENTS:
            assert bar[c] == pytest.approx(est.bytes[c], abs=1)


def test_pick_preset_from_the_list(win, qtbot):
    win.arch_panel.search.setText("qwen3-30")
    visible = [win.arch_panel.preset_list.item(i) for i in range(win.arch_panel.preset_list.count())
               if not win.arch_panel.preset_list.item(i).isHidden()]
    assert [i.text() for i in visible] == ["Qwen3-30B-A3B"]
    win.arch_panel.preset_list.itemClicked.emit(visible[0])
    assert win.session.architecture == get_preset("qwen3-30b-a3b").architecture()
    assert "30,532,122,624" in win.arch_panel.facts.text()


def test_change_format_in_table_redraws(win):
    combo = win.table.table.cellWidget(0, 1)
    combo.setCurrentText("Q4_K_M")
    sc = win.session.scenarios[0]
    # transformers would dequantize a GGUF file: the row moves to llama.cpp, its default cache with it
    assert (sc.weight_format, sc.engine, sc.kv_format) == ("Q4_K_M", "llamacpp", "fp16")
    expected = estimate(win.session.architecture, sc).bytes["weights"]
    assert win.compare.bar_heights()["weights"][0] * GiB == pytest.approx(expected, abs=1)
    assert win.last_refresh_ms > 0


def test_add_duplicate_delete_and_compare_quantizations(win):
    n = len(win.session.scenarios)
    win.table.add()
    win.table.duplicate()
    assert len(win.session.scenarios) == n + 2
    win.table.table.setCurrentCell(0, 0)
    win.table.delete()
    assert len(win.session.scenarios) == n + 1
    win.table.table.item(0, 0).setText("my scenario")
    assert win.session.scenarios[0].name == "my scenario"
    win.compare_quantizations()
    assert [s.weight_format for s in win.session.scenarios][:3] == ["bf16", "fp8", "int8"]


def test_invalid_field_is_marked_and_estimate_kept(win):
    before = win.session
    edit = win.arch_panel.edits["num_kv_heads"]
    edit.setText("5")
    edit.editingFinished.emit()
    assert win.session is before
    assert "multiple" in win.arch_panel.error_label.text()
    assert "border" in edit.styleSheet() and edit.toolTip()
    edit.setText("abc")
    edit.editingFinished.emit()
    assert "whole number" in win.arch_panel.error_label.text() and win.session is before
    edit.setText("4")
    edit.editingFinished.emit()
    assert win.session.architecture.num_kv_heads == 4 and win.arch_panel.error_label.text() == ""


def test_a_model_without_attention_or_mlp_leaves_those_fields_empty(win, tmp_path):
    """Falcon-Mamba's blocks have neither: the fields memviz's architecture fills for them are not shown as facts."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "falcon_mamba", "hidden_size": 256, "intermediate_size": 512,
                                  "num_hidden_layers": 2, "state_size": 16, "vocab_size": 1024}))
    assert win.import_config(config)
    edits = win.arch_panel.edits
    for key in ("num_heads", "num_kv_heads", "head_dim", "v_head_dim", "intermediate_size"):
        assert edits[key].text() == "" and not edits[key].isEnabled() and edits[key].placeholderText() == "none"
        assert edits[key].toolTip() in ("no attention layers", "no MLP")
    assert "2 × Mamba" in win.arch_panel.facts.text() and edits["hidden_size"].isEnabled()
    context = edits["max_position_embeddings"]  # the config states no limit: empty, and empty again commits none
    assert context.text() == "" and context.placeholderText() == "no limit"
    context.setText("65536")
    context.editingFinished.emit()
    assert win.session.architecture.max_position_embeddings == 65536
    context.setText("")
    context.editingFinished.emit()
    assert win.session.architecture.max_position_embeddings == 0 and win.arch_panel.error_label.text() == ""
    win.arch_panel.preset_list.itemClicked.emit(win.arch_panel.preset_list.item(0))
    assert all(e.isEnabled() and e.placeholderText() != "none" for e in edits.values())


def test_invalid_scenario_combination_is_refused(win):
    before = win.session
    win.table.table.cellWidget(0, 5).setCurrentText("transformers")
    after_engine = win.session
    win.table.table.cellWidget(0, 6).setValue(2)  # TP with transformers
    assert win.session is after_engine and after_engine is not before
    assert "tensor parallelism" in win.table.message.text()


def test_typed_engine_options_are_applied_and_shown_whole(win):
    """Options typed in the table reach the scenario (vLLM data and expert parallelism: 8 GPUs, a bar per GPU's
    share) and the column keeps their whole text, the table scrolling sideways instead of eliding it."""
    from memviz.gui.scenario_table import COLUMNS

    win.table.table.cellWidget(0, 5).setCurrentText("vllm")
    col = COLUMNS.index("options")
    text = "data_parallel_size=8, enable_expert_parallel=true"
    win.table.table.item(0, col).setText(text)
    sc = win.session.scenarios[0]
    assert dict(sc.options) == {"data_parallel_size": 8, "enable_expert_parallel": True}
    assert win.compare.bar_heights()["weights"][0] * GiB == pytest.approx(
        estimate(win.session.architecture, sc).bytes["weights"], abs=1)
    table = win.table.table
    assert table.columnWidth(col) >= table.fontMetrics().horizontalAdvance(text)


def test_units_switch_everywhere(win):
    gib = win.compare.bar_heights()["weights"][0]
    win.set_unit(Unit.GB)
    assert win.compare.bar_heights()["weights"][0] == pytest.approx(gib * GiB / GB)
    assert "(GB)" in win.compare.plot_item.getAxis("left").labelText
    win.set_unit(Unit.GiB)


def test_undo_redo(win):
    first = win.session
    win.load_preset("gpt2")
    assert win.session.architecture.model_type == "gpt2" and win.dirty
    win.undo()
    assert win.session == first
    win.redo()
    assert win.session.architecture.model_type == "gpt2"


def test_tooltip_has_bytes_and_provenance(win):
    tip = win.compare.tooltip_for(0, "weights")
    assert f"{win.session and estimate(win.session.architecture, win.session.scenarios[0]).bytes['weights']:,d}" in tip
    assert "exact" in tip and "GiB" in tip and "GB" in tip


def test_gpu_lines_and_fit_marks(win):
    win.toggle_gpu("rtx3060-12g", True)
    assert "rtx3060-12g" in win.session.gpus
    assert any(not ok for b in win.compare.bars for ok in b.fits.values())


def test_sweep_view(win, qtbot):
    win.tabs.setCurrentWidget(win.sweep)
    assert len(win.sweep.curves) == len(win.session.scenarios)
    s = win.sweep.series[0]
    assert s.x.min() >= 256 and s.x.max() >= 131072
    win.log_box.setChecked(True)
    assert win.sweep.plot_item.ctrl.logXCheck.isChecked()


def test_breakdown_lists_components_and_copies(win, qtbot):
    win.tabs.setCurrentWidget(win.breakdown)
    names = [r[0] for r in win.breakdown.rows]
    assert names[:4] == list(COMPONENTS)
    assert any(n.startswith("weights: mlp") for n in names)
    win.breakdown.copy()
    from PySide6.QtWidgets import QApplication

    assert QApplication.clipboard().text().startswith("Item\tBytes")


def test_import_config_good_and_bad(win, tmp_path):
    good = tmp_path / "good"
    good.mkdir()
    (good / "config.json").write_text(json.dumps(get_preset("phi-3-mini-4k").config))
    assert win.import_config(good)
    assert win.session.architecture.model_type == "phi3"
    before = win.session
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope")
    assert not win.import_config(bad)
    assert win.session is before and "not valid JSON" in win.banner.text()


def test_importing_a_model_llamacpp_cannot_run_leaves_its_gguf_rows_out_and_says_why(win, tmp_path):
    """The default comparison holds llama.cpp rows (Q4_K_M, Q8_0): a LongCat-Flash config, which llama.cpp has no
    architecture for, switches the model, the other rows stay, the banner names what was left out; undo restores."""
    from tests.core.engines.test_longcat_flash import RELEASED

    before = win.session
    gguf_rows = [sc for sc in before.scenarios if sc.engine == "llamacpp"]
    assert gguf_rows
    path = tmp_path / "config.json"
    path.write_text(json.dumps(RELEASED))
    assert win.import_config(path)
    assert win.session.architecture.model_type == "longcat_flash"
    assert len(win.session.scenarios) == len(before.scenarios) - len(gguf_rows)
    assert all(sc.engine != "llamacpp" for sc in win.session.scenarios)
    assert win.banner.text().startswith(f"{len(gguf_rows)} scenario(s) left out: llama.cpp 0c1e570 cannot run")
    win.undo()
    assert win.session == before


def test_the_layers_field_counts_longcat_flash_decoder_layers_and_an_edit_keeps_its_sublayers(win, tmp_path):
    """LongCat-Flash-Chat's 28 decoder layers (num_layers in its config) are 56 MLA sublayers to memviz: the field
    shows and takes decoder layers, the derived facts say both, an edit keeps every decoder layer's two sublayers
    (experts on the first)."""
    from tests.core.engines.test_longcat_flash import RELEASED

    path = tmp_path / "config.json"
    path.write_text(json.dumps(RELEASED))
    assert win.import_config(path)
    panel = win.arch_panel
    assert panel.edits["decoder_layers"].text() == str(RELEASED["num_layers"]) == "28"
    assert "28 decoder layers of 2 attention sublayers (56 × full)" in panel.facts.text()
    panel.edits["decoder_layers"].setText("14")
    panel.edits["decoder_layers"].editingFinished.emit()
    a = win.session.architecture
    assert (a.num_layers, a.decoder_layers) == (28, 14)
    assert a.moe_layers == (True, False) * 14
    assert not panel.edits["decoder_layers"].styleSheet()


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_chart_export(win, tmp_path, suffix):
    out = win.export_current_chart(tmp_path / f"chart{suffix}", width_px=1600)
    data = out.read_bytes()
    if suffix == ".png":
        img = QImage(str(out))
        assert img.width() == 1600 and img.height() > 500
    elif suffix == ".svg":
        doc = xml.dom.minidom.parseString(data)
        assert doc.documentElement.tagName == "svg"
        assert b"#0072b2" in data.lower()  # the weights colour: the bars are in the file
        assert b"Llama-3.1-8B" in data
    else:
        assert data.startswith(b"%PDF") and len(data) > 2000


def test_data_export_csv_equals_core(win, tmp_path):
    from memviz.core import report

    out = report.write(win.session, tmp_path / "data.csv")
    rows = list(csv.DictReader(out.read_text().splitlines()))
    for row, sc in zip(rows, win.session.scenarios, strict=True):
        est = estimate(win.session.architecture, sc)
        assert int(row["total_bytes"]) == est.total
        assert int(row["kv_cache_bytes"]) == est.bytes["kv_cache"]
    md = report.write(win.session, tmp_path / "data.md").read_text()
    assert md.count("\n|") == len(win.session.scenarios) + 2
    js = json.loads(report.write(win.session, tmp_path / "data.json").read_text())
    assert js["unit"] == "GiB" and len(js["scenarios"]) == len(win.session.scenarios)


def test_session_round_trip_reopens_identically(win, qtbot, tmp_path):
    win.load_preset("gemma-2-9b")
    win.table.add()
    win.table.table.cellWidget(1, 2).setCurrentText("fp8")
    win.set_unit(Unit.GB)
    path = tmp_path / "s.memviz.json"
    win.save_as(path)
    assert not win.dirty and "s.memviz.json" in win.windowTitle()
    other = MainWindow()
    other.confirm_discard = lambda: True
    qtbot.addWidget(other)
    assert other.open_session(path)
    assert other.session == win.session
    assert other.compare.bar_heights() == win.compare.bar_heights()
    assert Session.load(path) == win.session


def test_open_bad_session_keeps_current(win, tmp_path):
    before = win.session
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "memviz-session", "format_version": 99}))
    assert not win.open_session(bad)
    assert win.session is before and "format_version" in win.banner.text()


@pytest.mark.parametrize(("change", "needle"), [
    (lambda d: d["scenarios"][0].update(context_tokens=10**7), "positions"),  # parses, but cannot be estimated
    (lambda d: d.update(gpus=["h999"]), "unknown GPU"),
    (lambda d: d.update(scenarios=[d["scenarios"][0]] * 1001), "at most 1,000"),
    (lambda d: d["scenarios"][0].update(engine=None), "engine must be text"),
    (lambda d: d.update(runs=[1]), "session"),
])
def test_a_session_that_cannot_be_drawn_is_refused_whole(win, tmp_path, change, needle):
    """Checked and estimated before it replaces anything: the window keeps working on the current session."""
    before = win.session
    d = before.to_dict()
    change(d)
    path = tmp_path / "s.memviz.json"
    path.write_text(json.dumps(d))
    assert not win.open_session(path)
    assert win.session is before and needle in win.banner.text()
    win.load_preset("gpt2")  # still usable
    assert win.session.architecture.name.startswith("GPT-2")


def test_unsaved_changes_prompt_can_cancel(win):
    win.load_preset("gpt2")
    win.confirm_discard = lambda: False
    before = win.session
    win.new_session()
    assert win.session is before


def test_keyboard_shortcuts(win, qtbot):
    n = len(win.session.scenarios)
    qtbot.keyClick(win, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert len(win.session.scenarios) == n + 1
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(win.session.scenarios) == n


def test_a_context_beyond_the_models_positions_is_marked_and_refused_unless_extrapolated(win, qtbot):
    from memviz.gui.scenario_table import BEYOND, COLUMNS

    win.load_preset("qwen3-8b")
    assert win.table.context_limit == 40960
    spin = win.table.table.cellWidget(0, COLUMNS.index("context_tokens"))
    before = win.session.scenarios
    spin.setValue(131072)
    assert win.session.scenarios == before and "40,960 positions" in win.table.message.text()
    assert spin.styleSheet() == BEYOND
    win.table.table.cellWidget(0, COLUMNS.index("extrapolate")).setChecked(True)
    spin = win.table.table.cellWidget(0, COLUMNS.index("context_tokens"))
    spin.setValue(131072)
    assert win.session.scenarios[0].context_tokens == 131072 and win.session.scenarios[0].extrapolate
    assert spin.styleSheet() == BEYOND and "extrapolates" in spin.toolTip()
    win.load_preset("gpt2")  # switching model shortens the other rows to its 1,024 positions
    assert all(sc.context_tokens <= 1024 or sc.extrapolate for sc in win.session.scenarios)


def test_a_run_follows_its_scenario_and_turns_stale_when_it_is_edited(win):
    from memviz.core import commands
    from memviz.core.runs import MeasuredRun

    sc = win.session.scenarios[0]
    win.apply(commands.attach_run(win.session, MeasuredRun("r", "probe", sc, {"weights": 5 * 2**30})))
    assert win.compare.bars[0].measured["weights"] == 5 * 2**30 and not win.compare.bars[0].measured_stale
    renamed = win.session.scenarios[0].with_changes(name="renamed")
    win.apply(win.session.with_changes(scenarios=(renamed, *win.session.scenarios[1:])))
    assert win.compare.bars[0].measured and "estimate error" in win.compare.tooltip_for(0, "weights")
    edited = renamed.with_changes(context_tokens=renamed.context_tokens * 2)
    win.apply(win.session.with_changes(scenarios=(edited, *win.session.scenarios[1:])))
    assert win.compare.bars[0].measured_stale and "stale" in win.compare.tooltip_for(0, "weights")
    assert "estimate error" not in win.compare.tooltip_for(0, "weights")


def test_picking_a_delta_net_model_keeps_every_engines_scenarios(win):
    """The default comparison runs in vLLM and llama.cpp; both model Qwen3-Next's delta-net state, so nothing is
    refused and each bar is that engine's estimate."""
    engines = [sc.engine for sc in win.session.scenarios]
    assert "vllm" in engines and "llamacpp" in engines
    win.load_preset("qwen3-next-80b-a3b")
    assert win.session.preset == "qwen3-next-80b-a3b"
    assert [sc.engine for sc in win.session.scenarios] == engines
    a = get_preset("qwen3-next-80b-a3b").architecture()
    for sc, e in zip(win.session.scenarios, win.estimates, strict=True):
        assert e.total == estimate(a, sc).total


def test_a_gpu_with_an_entered_cuda_total_shows_by_its_label_and_keeps_its_key(win):
    """A session whose scenario names "rtx4080@15.99GiB" (the CUDA total a WSL2 log printed) shows the card's label
    with that total in the GPU column; choosing another GPU and that entry again keeps the total."""
    from memviz.gui.scenario_table import COLUMNS

    sc = win.session.scenarios[0].with_changes(engine="vllm", gpu="rtx4080@15.99GiB", context_tokens=4096)
    assert win.apply(win.session.with_changes(scenarios=(sc,)))
    combo = win.table.table.cellWidget(0, COLUMNS.index("gpu"))
    assert combo.currentText() == "RTX 4080 16GB @ 15.99GiB"
    combo.setCurrentText("RTX 4090 24GB")
    assert win.session.scenarios[0].gpu == "rtx4090"
    combo.setCurrentText("RTX 4080 16GB @ 15.99GiB")
    assert win.session.scenarios[0].gpu == "rtx4080@15.99GiB"
    assert estimate(win.session.architecture, win.session.scenarios[0]).engine_facts["budget_bytes"] == \
        estimate(win.session.architecture, sc).engine_facts["budget_bytes"]
