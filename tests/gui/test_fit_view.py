"""The fit matrix shows the core's verdicts, largest context and batch, and speed bound for every pair."""

from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import fit_matrix, max_batch, max_context, needed_bytes
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset
from memviz.gui.main_window import MainWindow


def test_fit_matrix_cells_are_the_solvers_answers():
    a = get_preset("llama-3.1-8b").architecture()
    scs = [Scenario(context_tokens=8192), Scenario(weight_format="awq-int4", engine="vllm", context_tokens=8192)]
    gpus = [get_gpu("rtx4090"), get_gpu("h100-80g")]
    ests = [estimate(a, sc) for sc in scs]
    cells = fit_matrix(ests, gpus)
    for est, row in zip(ests, cells, strict=True):
        for gpu, c in zip(gpus, row, strict=True):
            assert c.max_context == max_context(a, est.scenario, gpu) and c.max_batch == max_batch(a, est.scenario, gpu)
            assert (c.verdict == "does not fit") == (needed_bytes(est) > c.budget_bytes)
            assert c.decode_tokens_per_s_max > 0
    tight = fit_matrix([estimate(a, Scenario(context_tokens=8192, batch=4))], [get_gpu("rtx4090")])[0][0]
    assert tight.verdict == "tight" and 0.9 < tight.needed_bytes / tight.budget_bytes <= 1  # 8,874 tokens fit


def test_fit_tab_shows_every_scenario_on_every_gpu(qtbot):
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.show()
    w.tabs.setCurrentWidget(w.fit_view)
    w._refresh_visible()
    table = w.fit_view.table
    assert table.rowCount() == len(w.session.scenarios) and table.columnCount() == len(w.session.gpus)
    assert all(table.item(r, c).text().split(":")[0] in ("✓ fits", "~ tight", "✗ does not fit")
               for r in range(table.rowCount()) for c in range(table.columnCount()))
    assert "tokens/s (bound)" in table.item(0, 0).text()
