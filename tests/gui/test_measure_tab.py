"""The real probe, started from the Measure tab on a tiny config; its run is drawn over the estimate."""

from pathlib import Path

import pytest

from memviz.gui.main_window import MainWindow

CONFIG = Path(__file__).parents[1] / "data" / "probe" / "llama_gqa.json"


@pytest.mark.slow
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
    result, run = got.args
    scenario = run.scenario
    assert result["measured"]["kv_cache"] == result["estimate"]["kv_cache"]
    assert tab.samples and "measured" in tab.summary.text()
    i = next(i for i, sc in enumerate(w.session.scenarios) if sc.run_id == run.id)
    assert w.session.scenarios[i].with_changes(name="", run_id=None) == scenario.with_changes(name="")
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


def test_a_run_spread_over_two_gpus_lists_each_device(qtbot):
    """A two-GPU result (shape of memviz.probe.runner's) names each device's measured peak and its estimate."""
    import argparse

    from memviz.core.presets import get_preset
    from memviz.probe.runner import estimate_result

    args = argparse.Namespace(quant="none", dtype="bf16", model=None, batch=2, attn="sdpa", cache="dynamic")
    estimate, scenario = estimate_result(get_preset("llama-3.2-1b").architecture(), args, ["cuda:0", "cuda:1"], 1000)
    per_device = [{**{k: round(u[k] * 1.1) for k in ("weights", "kv_cache", "activations", "overhead", "peak")},
                   "device": u["device"]} for u in estimate["per_device"]]
    busiest = max(per_device, key=lambda u: u["peak"])
    result = dict(partial=False, measured={k: busiest[k] for k in busiest if k != "device"}, estimate=estimate,
                  scenario=scenario, per_device=per_device, timings={}, model="Llama-3.2-1B")
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.measure.sig_run_finished) as got:
        w.measure._result(result)
    text = w.measure.summary.text()
    assert "cuda:0: peak" in text and "cuda:1: peak" in text and text.count("estimate -9.1 %") >= 2
    assert got.args[1].scenario.pp == 2
