"""The Measure tab with the llama.cpp engine: its arguments parse in the real llama.cpp probe, and a replayed
real llama.cpp run (ok, crashing, hanging, printing garbage) drives the real Qt client and the tab."""

import sys
from pathlib import Path

import pytest

from memviz.core.presets import get_preset
from memviz.gui.measure_tab import MeasureTab, SampleBuffer
from memviz.gui.probe_client import State
from memviz.probe import llamacpp_runner
from tests.conftest import needs_llamacpp

QWEN = get_preset("qwen2.5-0.5b").architecture()

FAKE = str(Path(__file__).parents[1] / "probe" / "fake_probe.py")


@pytest.fixture
def tab(qtbot):
    t = MeasureTab(silence_timeout_s=3)
    qtbot.addWidget(t)
    t.set_source(["--preset", "qwen2.5-0.5b"], "Qwen2.5-0.5B")
    t.engine.setCurrentIndex(t.engine.findData("llamacpp"))
    yield t
    t.client.wait_for_end(2000)


def test_llamacpp_options_become_probe_arguments(tab):
    assert tab.lcpp_box.isVisibleTo(tab) and not tab.hf_box.isVisibleTo(tab)
    tab.mix.setCurrentText("IQ4_XS")
    tab.context.setValue(3000)
    tab.batch.setValue(3)
    tab.flash.setCurrentText("off")
    tab.flags["--no-mmap"].setChecked(True)
    argv = tab.arguments()
    args = llamacpp_runner.parser().parse_args(argv[argv.index("--engine"):])
    assert (args.preset, args.weights, args.context, args.parallel, args.flash_attn) == ("qwen2.5-0.5b", "IQ4_XS", 3000,
                                                                                         3, "off")
    assert args.no_mmap and not args.no_repack and not args.no_host
    tab.flags["--no-host"].setChecked(True)
    argv = tab.arguments()
    args = llamacpp_runner.parser().parse_args(argv[argv.index("--engine"):])
    args.cpu_features = "avx2"  # the runner reads them from llama.cpp's system info
    assert args.no_host and not dict(llamacpp_runner.scenario(QWEN, args).options)["host_buffer"]
    tab.gguf_edit.setText("/models/x.gguf")
    argv = tab.arguments()
    assert llamacpp_runner.parser().parse_args(argv[argv.index("--engine"):]).gguf == "/models/x.gguf"


def test_a_real_llamacpp_run_reaches_the_tab(tab, qtbot):
    with qtbot.waitSignal(tab.sig_run_finished, timeout=15_000) as got:
        assert tab.client.start(sys.executable, [FAKE, "llamacpp-ok"])
    result, run = got.args
    scenario = run.scenario
    assert scenario.engine == "llamacpp" and scenario.weight_format == "Q4_K_M" and scenario.batch == 2
    measured, estimated = result["buffers"]["model"]["CPU_REPACK"], result["estimated_buffers"]["model"]["CPU_REPACK"]
    assert abs(measured - estimated) <= 0.005 * 2**20  # printed in MiB with two decimals
    assert "kv_cache" in tab.summary.text() and "TTFT" in tab.summary.text()
    assert "llama.cpp (llama-cpp-python 0.3.36)" in tab.log.toPlainText()
    qtbot.waitUntil(lambda: tab.client.state is State.IDLE, timeout=5000)


@pytest.mark.parametrize(("mode", "needle"), [("llamacpp-crash", "without a result"),
                                              ("llamacpp-hang", "stopped responding")])
def test_a_crashing_or_hanging_llamacpp_is_reported(tab, qtbot, mode, needle):
    with qtbot.waitSignal(tab.client.sig_failed, timeout=20_000) as got:
        tab.client.start(sys.executable, [FAKE, mode])
    assert needle in got.args[0]
    qtbot.waitUntil(lambda: tab.client.state is State.IDLE, timeout=10_000)
    assert needle in tab.summary.text()


def test_garbage_between_llamacpp_lines_is_skipped(tab, qtbot):
    with qtbot.waitSignal(tab.sig_run_finished, timeout=15_000) as got:
        tab.client.start(sys.executable, [FAKE, "llamacpp-garbage"])
    assert got.args[0]["measured"]["kv_cache"] == 12 * 2**20


@pytest.mark.slow
def test_the_tab_runs_the_real_llamacpp_probe(tab, qtbot):
    needs_llamacpp()
    config = Path(__file__).parents[1] / "data" / "llamacpp" / "configs" / "llama-gqa.json"
    tab.set_source(["--config", str(config)], "tiny llama")
    tab.mix.setCurrentText("Q4_0")
    tab.context.setValue(1000)
    tab.batch.setValue(2)
    tab.prompt.setValue(16)
    tab.new.setValue(4)
    with qtbot.waitSignal(tab.sig_run_finished, timeout=120_000) as got:
        assert tab.start()
    result, run = got.args
    scenario = run.scenario
    assert scenario.weight_format == "Q4_0" and scenario.engine_options["cpu"] in ("avx2", "avx512", "amx", "generic")
    assert result["measured"]["kv_cache"] == result["estimate"]["kv_cache"] and tab.samples


def test_the_timeline_marks_phases_and_a_failed_run_resets(tab, qtbot):
    with qtbot.waitSignal(tab.sig_run_finished, timeout=15_000):
        tab.client.start(sys.executable, [FAKE, "llamacpp-ok"])
    assert [m.label.format for m in tab.markers] == ["build", "load", "prefill", "decode"]
    qtbot.waitUntil(lambda: tab.client.state is State.IDLE, timeout=5000)
    tab.samples = SampleBuffer()  # as a run that failed before its first sample
    with qtbot.waitSignal(tab.client.sig_failed, timeout=20_000):
        tab.client.start(sys.executable, [FAKE, "crash"])
    qtbot.waitUntil(lambda: tab.client.state is State.IDLE, timeout=10_000)
    assert tab.progress.value() == 0 and tab.timeline.getViewBox().viewRange()[0] == [0, 1]
