"""The real Qt probe client against a scripted child: ok, crash, hang, out of memory, garbage, bad input."""

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QProcess

from memviz.gui.probe_client import ProbeClient, State

FAKE = str(Path(__file__).parents[1] / "probe" / "fake_probe.py")
RECORDED = Path(__file__).parents[1] / "data" / "probe" / "transformers_gpt2_cpu.jsonl"


@pytest.fixture
def client(qtbot):
    c = ProbeClient(silence_timeout_s=2)
    yield c
    c.wait_for_end(2000)


def test_ok(client, qtbot):
    phases = []
    client.sig_message.connect(lambda m: m.event == "phase" and phases.append(m.data["name"]))
    with qtbot.waitSignal(client.sig_result, timeout=10_000) as got:
        assert client.start(sys.executable, [FAKE, "ok"])
        assert not client.start(sys.executable, [FAKE, "ok"])  # one run at a time
    recorded = json.loads(RECORDED.read_text().splitlines()[-1])
    assert got.args[0]["measured"] == recorded["measured"]
    qtbot.waitUntil(lambda: client.state is State.IDLE, timeout=5000)
    assert phases[-1] == "decode"


@pytest.mark.parametrize(("mode", "needle"), [("crash", "without a result"), ("garbage", "without a result"),
                                              ("bad_input", "needs torch")])
def test_failures_are_reported(client, qtbot, mode, needle):
    with qtbot.waitSignal(client.sig_failed, timeout=10_000) as got:
        client.start(sys.executable, [FAKE, mode])
    assert needle in got.args[0]
    if mode == "crash":
        assert "Segmentation" in got.args[1]
    qtbot.waitUntil(lambda: client.state is State.IDLE, timeout=5000)


def test_oom_gives_a_partial_result(client, qtbot):
    with qtbot.waitSignal(client.sig_result, timeout=10_000) as got:
        client.start(sys.executable, [FAKE, "oom"])
    assert got.args[0]["partial"] and got.args[0]["phase_failed"] == "prefill"
    measured = got.args[0]["measured"]
    assert measured["weights"] > 0 and measured["kv_cache"] is None and measured["peak"] is None


def test_hang_is_stopped_by_the_watchdog(client, qtbot):
    with qtbot.waitSignal(client.sig_failed, timeout=15_000) as got:
        client.start(sys.executable, [FAKE, "hang"])
    assert "stopped responding" in got.args[0]


def test_stop_kills_the_probe(client, qtbot):
    client.start(sys.executable, [FAKE, "hang"])
    qtbot.waitUntil(lambda: client.process.state() == QProcess.ProcessState.Running, timeout=10_000)
    with qtbot.waitSignal(client.sig_finished, timeout=10_000):
        client.cancel()
    assert client.state is State.IDLE


def test_missing_interpreter(client, qtbot):
    with qtbot.waitSignal(client.sig_failed, timeout=10_000) as got:
        client.start("/definitely/not/python", ["-m", "memviz.probe"])
    assert "could not start" in got.args[0]


def test_interpreter_without_memviz_is_explained(client, qtbot, tmp_path):
    with qtbot.waitSignal(client.sig_failed, timeout=20_000) as got:
        client.start(sys.executable, ["-I", "-S", "-m", "memviz.probe"])  # isolated: site-packages and cwd not on the path
    assert "does not have memviz" in got.args[0] and "pip install" in got.args[0]


@pytest.mark.parametrize("mode", ["trickle", "endless-line"])
def test_output_without_line_ends_neither_grows_nor_keeps_the_watchdog_quiet(client, qtbot, mode):
    with qtbot.waitSignal(client.sig_failed, timeout=20_000) as got:
        client.start(sys.executable, [FAKE, mode])
    assert "stopped responding" in got.args[0]
    assert len(client._buffer) <= 1 << 20
