"""Import actions, the cache picker and the engine-log view in the real window."""

from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from memviz.core.estimate import estimate
from memviz.core.units import GiB
from memviz.gui.main_window import MainWindow
from tests.core.importers.files import cuda_padding, write_gguf_model, write_mmproj, write_safetensors_model
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
    assert sc.weight_format == "stored" and sc.engine == "llamacpp" and sc.kv_format == "fp16"  # llama.cpp's cache
    est = estimate(win.session.architecture, sc)
    assert est.bytes["weights"] + est.host.weights == sum(b for _, b in expected.values()) + cuda_padding(tmp_path / "m.gguf")
    assert win.compare.bar_heights()["weights"][0] * GiB == pytest.approx(est.bytes["weights"], abs=1)
    # back to a preset: the stored scenario falls back to bf16 instead of failing
    win.load_preset("gpt2")
    assert all(s.weight_format != "stored" for s in win.session.scenarios)


def test_an_mmproj_file_joins_the_imported_gguf_in_its_llamacpp_scenario(win, tmp_path):
    """File > Add mmproj: its bytes join the stored weights, its warm-up buffer the activations (the bars are the
    core's figures), the launch command names it; undo takes it back; a language model's file is refused."""
    from memviz.core.units import Unit
    from memviz.gui.breakdown import breakdown_rows

    write_gguf_model(tmp_path / "m.gguf")
    _, nbytes = write_mmproj(tmp_path / "mm.gguf", "gemma3", 1152, 4304, 16, 256, 14, image=896)
    assert win.import_config(tmp_path / "m.gguf")
    before = estimate(win.session.architecture, win.session.scenarios[0])
    assert win.add_mmproj(tmp_path / "mm.gguf")
    sc = win.session.scenarios[0]
    est = estimate(win.session.architecture, sc)
    assert dict(sc.options)["mmproj"] is True and est.engine_facts["mmproj_compute"]["projector"] == "gemma3"
    from memviz.gui.scenario_table import COLUMNS

    assert win.table.table.item(0, COLUMNS.index("options")).text() == "mmproj=true"  # as -o takes it
    assert est.bytes["weights"] - before.bytes["weights"] == nbytes
    assert win.compare.bar_heights()["activations"][0] * GiB == pytest.approx(est.bytes["activations"], abs=1)
    assert f"--mmproj {tmp_path / 'mm.gguf'}" in est.launch_command()
    rows = [r for r in breakdown_rows(est, Unit.GiB) if r[0].startswith("weights: ")]
    assert sum(int(r[1].replace(",", "")) for r in rows) == est.bytes["weights"] + est.host.weights - cuda_padding(
        tmp_path / "m.gguf")
    win.undo()
    assert not win.session.architecture.encoders
    kept = win.session
    assert not win.add_mmproj(tmp_path / "m.gguf")
    assert win.session is kept and "not an mmproj file" in win.banner.text()


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


def test_a_llamacpp_log_becomes_the_model_and_a_scenario_with_its_buffers(win, tmp_path):
    import json

    from memviz.core.units import MiB

    cases = json.loads(Path("tests/data/published/llamacpp_logs.json").read_text())["cases"]
    log = tmp_path / "server.log"
    log.write_text("\n".join(next(c for c in cases if c["id"].startswith("pythia-2.8b-q4_0"))["log"]))
    win.open_log(log)
    assert win.log_view.adopt_button.isEnabled()
    before = len(win.session.scenarios)
    win.log_view.adopt_button.click()
    a, sc = win.session.architecture, win.session.scenarios[-1]
    assert (a.model_type, a.num_layers, a.hidden_size) == ("gpt_neox", 32, 2560)
    assert len(win.session.scenarios) == before + 1 and sc.engine == "llamacpp" and sc.weight_format == "Q4_0"
    run = win.session.runs[-1]
    assert sc.run_id == run.id and run.measured["kv_cache"] == round(640 * MiB)
    est = win.estimates[-1]
    assert est.bytes["kv_cache"] == run.measured["kv_cache"]  # the chart's bar and the log's line agree
    assert win.log_view.table.rowCount() > 0
    win.undo_action.trigger()
    assert len(win.session.scenarios) == before


def test_an_adopted_log_of_the_older_quantizer_rules_shows_its_format_in_the_table(win, tmp_path):
    """The CI's Pythia Q5_K_M file is read with the older quantizers' attn_qkv branch: the table's format cell
    shows that variant, though the list of formats does not hold it."""
    import json

    cases = json.loads(Path("tests/data/published/llamacpp_logs.json").read_text())["cases"]
    log = tmp_path / "server.log"
    log.write_text("\n".join(next(c for c in cases if c["id"] == "pythia-2.8b-q5_k_m-cuda-v100-2k")["log"]))
    win.open_log(log)
    win.log_view.adopt_button.click()
    row = len(win.session.scenarios) - 1
    assert win.session.scenarios[row].weight_format == "Q5_K_M+qkv-branch"
    assert win.table.table.cellWidget(row, 1).currentText() == "Q5_K_M+qkv-branch"


def test_a_llamacpp_log_without_a_metadata_dump_cannot_be_adopted(win, tmp_path):
    log = tmp_path / "buffers.log"
    log.write_text("llm_load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n"
                   "llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB\n")
    win.open_log(log)
    assert not win.log_view.adopt_button.isEnabled()


def test_a_vllm_log_becomes_a_scenario_on_this_model_and_the_selected_gpu(win, tmp_path):
    from tests.core.importers.test_vllm_log import LOG_010

    win.load_preset("qwen2.5-7b")
    win.log_view.text.setPlainText(LOG_010)
    win.log_view.parse()
    assert win.log_view.adopt_button.isEnabled()
    before = len(win.session.scenarios)
    win.log_view.adopt_button.click()  # the selected scenario has no GPU: one message, the session kept
    assert len(win.session.scenarios) == before
    win.apply(win.session.with_changes(scenarios=tuple(sc.with_changes(gpu="a100-80g")
                                                       for sc in win.session.scenarios)))
    win.log_view.adopt_button.click()
    sc = win.session.scenarios[-1]
    assert len(win.session.scenarios) == before + 1 and sc.name == "from the vLLM log"
    assert (sc.engine, sc.gpu, sc.gpu_memory_utilization, sc.context_tokens) == ("vllm", "a100-80g", 0.25, 16384)
    assert sc.run_id == win.session.runs[-1].id


def test_the_log_table_counts_weights_and_total_as_the_vllm_log_does():
    from memviz.core.estimate import Scenario, estimate
    from memviz.core.importers.logs import parse_log
    from memviz.core.log_check import logged_weights
    from memviz.core.presets import get_preset
    from memviz.core.units import Unit
    from memviz.gui.log_view import comparison_rows
    from tests.core.importers.test_vllm_log import LOG_010

    est = estimate(get_preset("qwen2.5-7b").architecture(),
                   Scenario(engine="vllm", gpu="a100-80g", context_tokens=16384, gpu_memory_utilization=0.25))
    rows = {r[0]: r for r in comparison_rows(parse_log(LOG_010), est, Unit.GiB)}
    assert rows["weights"][2] == f"{logged_weights(est) / 2**30:.3f} GiB"
    assert "total of weights, kv_cache" in rows and rows["activations"][1] == "not in log"


def test_a_vllm_log_whose_checkpoint_decides_the_format_says_so(win):
    """A compressed-tensors start adopted on a 16-bit model: the scenario is made, and the banner says the checkpoint's
    config (or a chosen format) decides its weights."""
    from tests.core.importers.test_vllm_log import LOG_010

    win.load_preset("qwen2.5-7b")
    win.apply(win.session.with_changes(scenarios=tuple(sc.with_changes(gpu="a100-80g")
                                                       for sc in win.session.scenarios)))
    win.log_view.text.setPlainText(LOG_010.replace("kv_cache_dtype=auto", "quantization=compressed-tensors, kv_cache_dtype=auto"))
    win.log_view.parse()
    win.log_view.adopt_button.click()
    assert win.session.scenarios[-1].name == "from the vLLM log"
    assert "compressed-tensors quantization" in win.banner.text()
