"""The real probe, started from the Measure tab on a tiny config; its run is drawn over the estimate."""

from pathlib import Path

import pytest

from memviz.gui.main_window import MainWindow

CONFIG = Path(__file__).parents[1] / "data" / "probe" / "llama_gqa.json"


def test_real_probe_run_overlays_the_estimate(qtbot, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    monkeypatch.setenv("MEMVIZ_DATA_DIR", str(tmp_path))
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.show()
    assert w.import_config(CONFIG)
    tab = w.measure
    w.tabs.setCurrentWidget(tab)
    assert tab.source_args == ["--config", str(CONFIG)]
    tab.dtype.setCurrentText("fp32")
    tab.device.setCurrentText("cpu")
    tab.batch.setValue(2)
    tab.prompt.setValue(128)
    tab.new.setValue(8)
    with qtbot.waitSignal(tab.sig_run_finished, timeout=120_000) as got:
        assert tab.start()
    result, scenario = got.args
    assert result["measured"]["kv_cache"] == result["estimate"]["kv_cache"]
    assert tab.samples and "measured" in tab.summary.text()
    assert scenario in w.session.scenarios
    i = w.session.scenarios.index(scenario)
    assert w.compare.bars[i].measured["kv_cache"] == result["measured"]["kv_cache"]
    assert "estimate error" in w.compare.tooltip_for(i, "weights")
    assert list(tmp_path.glob("runs/*.json"))


def test_stored_runs_give_bands_and_calibrated_overhead(qtbot):
    from memviz.core import calibration
    from memviz.core.estimate import Scenario
    from tests.core.test_calibration import ENV, result

    calibration.save_run(ENV, result(400 * 2**20, 1000, 1100))
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.apply(w.session.with_changes(scenarios=(Scenario(device="cpu"), Scenario(engine="vllm"))))
    assert w.compare.bars[0].band == pytest.approx(0.1) and w.compare.bars[1].band is None
    assert "± 10.0 %" in w.compare.tooltip_for(0, "weights")
    w.apply_calibrated_overhead()
    assert w.session.scenarios[0].runtime_overhead_bytes == 400 * 2**20
    assert w.session.scenarios[1].runtime_overhead_bytes is None
