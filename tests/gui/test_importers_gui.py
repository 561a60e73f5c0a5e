"""Import actions, the cache picker and the engine-log view in the real window."""

import pytest
from PySide6.QtCore import QTimer

from memviz.core.estimate import estimate
from memviz.core.units import GiB
from memviz.gui.main_window import MainWindow
from tests.core.importers.files import write_gguf_model, write_safetensors_model
from tests.core.importers.test_hf_cache import make_cache


@pytest.fixture
def win(qtbot):
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.show()
    return w


def test_import_gguf_adds_a_stored_scenario_with_exact_bytes(win, tmp_path):
    expected = write_gguf_model(tmp_path / "m.gguf")
    assert win.import_config(tmp_path / "m.gguf")
    sc = win.session.scenarios[0]
    assert sc.weight_format == "stored" and sc.engine == "llamacpp"
    est = estimate(win.session.architecture, sc)
    assert est.bytes["weights"] + est.host.weights == sum(b for _, b in expected.values())
    assert win.compare.bar_heights()["weights"][0] * GiB == pytest.approx(est.bytes["weights"], abs=1)
    # back to a preset: the stored scenario falls back to bf16 instead of failing
    win.load_preset("gpt2")
    assert all(s.weight_format != "stored" for s in win.session.scenarios)


def test_import_safetensors_folder(win, tmp_path):
    tensors = write_safetensors_model(tmp_path / "st", sharded=True)
    assert win.import_config(tmp_path / "st")
    est = estimate(win.session.architecture, win.session.scenarios[0])
    assert est.bytes["weights"] == sum(a.nbytes for a in tensors.values())


def test_broken_file_keeps_session(win, tmp_path):
    before = win.session
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 10)
    assert not win.import_config(bad)
    assert win.session is before and "bad.gguf" in win.banner.text()


def test_stored_format_without_a_file_is_refused(win):
    before = win.session
    win.table.table.cellWidget(0, 1).setCurrentText("stored")
    assert win.session is before and "imported" in win.banner.text()


def test_cache_picker_loads_a_cached_model(win, tmp_path, qtbot):
    make_cache(tmp_path)

    def choose():
        from PySide6.QtWidgets import QApplication

        dialog = QApplication.activeModalWidget()
        dialog.table.selectRow(0)
        dialog.accept()

    QTimer.singleShot(200, choose)
    win.pick_from_cache(tmp_path)
    assert win.session.architecture.hidden_size == 2048


def test_engine_log_overlays_measured_stack(win, qtbot):
    win.tabs.setCurrentWidget(win.log_view)
    win.open_log("tests/data/logs/vllm_llama3_8b_pr10511.log")
    run = win.session.runs[-1]
    assert run.measured["weights"] == round(14.96 * GiB) and run.source == "vllm log"
    bar = win.compare.bars[win.table.selected_row()]
    assert bar.measured == run.measured
    assert "measured" in win.compare.tooltip_for(win.table.selected_row(), "weights")
    assert win.log_view.table.rowCount() == 5 and "%" in win.log_view.table.item(0, 4).text()


def test_measured_runs_are_exported_with_the_data(win, tmp_path):
    import csv

    from memviz.core import report

    win.open_log("tests/data/logs/vllm_llama3_8b_pr10511.log")
    rows = list(csv.DictReader(report.write(win.session, tmp_path / "d.csv").read_text().splitlines()))
    measured = [r for r in rows if r["measured_weights_bytes"]]
    assert len(measured) == 1 and int(measured[0]["measured_weights_bytes"]) == round(14.96 * GiB)
