"""Report-grade charts, checked on the scene's own geometry: no label overlaps another or leaves the plot at
any width from 1000 to 2400 px with up to 16 bars; the line drawn is the budget the verdict used; sweeps
keep the budgets readable; exports are light whatever the screen shows."""

import itertools

import numpy as np
import pytest
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPalette
from PySide6.QtWidgets import QApplication

from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import capacity_bytes, sweep
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset
from memviz.core.session import Session
from memviz.core.units import GiB
from memviz.gui import model
from memviz.gui.charts import RESERVED, RESERVED_LABEL, CompareChart, SweepChart
from memviz.gui.export import _settle, export_chart

FORMATS = ["bf16", "fp8", "awq-int4", "gptq-int4", "bnb-nf4", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "Q2_K",
           "F16", "Q4_0", "Q5_0", "Q5_K_S", "Q4_K_S"]


def session(n: int, engine: str = "auto") -> Session:
    scenarios = tuple(Scenario(weight_format=w, context_tokens=32768, kv_format="fp16" if w[0] in "QF" else "bf16",
                               engine="llamacpp" if w[0] in "QF" else engine if engine != "auto" else "transformers")
                      for w in FORMATS[:n])
    return Session(architecture=get_preset("llama-3.1-70b").architecture(), scenarios=scenarios,
                   gpus=("h100-80g", "rtx-a6000"))


def drawn_compare(qtbot, s: Session, width: int) -> CompareChart:
    chart = CompareChart()
    qtbot.addWidget(chart)
    chart.resize(width, 800)
    chart.show()
    chart.set_bars(model.bars(s, model.compute_estimates(s)), model.capacities(s), s.unit, model.title(s))
    _settle(chart)
    return chart


def drawn_sweep(qtbot, s: Session, axis: str, width: int, height: int) -> SweepChart:
    chart = SweepChart()
    qtbot.addWidget(chart)
    chart.resize(width, height)
    chart.show()
    chart.set_series(model.series(s, axis), model.capacities(s), s.unit, axis, axis == "batch", model.title(s))
    _settle(chart)
    return chart


@pytest.mark.parametrize(("width", "n"), [(1000, 16), (1000, 10), (1280, 10), (1280, 4), (1800, 16), (2400, 16),
                                          (2400, 1), (1000, 1)])
def test_no_label_overlaps_or_leaves_the_plot(qtbot, width, n):
    chart = drawn_compare(qtbot, session(n), width)
    plot = chart.plot_item.vb.sceneBoundingRect()
    rects = [label.sceneBoundingRect() for label in chart.labels]
    assert len(rects) == n
    for r in rects:
        assert plot.contains(r), (r, plot)
    for a, b in itertools.combinations(rects, 2):
        assert not a.intersects(b)
    legend = chart.legend.sceneBoundingRect()
    assert chart.layout_item.sceneBoundingRect().contains(legend) and not legend.intersects(plot)
    slot = plot.width() / (n + 0.2)
    axis = chart.plot_item.getAxis("bottom")
    metrics = QFontMetrics(axis.style.get("tickFont") or axis.font())
    for _, text in axis._tickLevels[0]:
        for line in text.split("\n"):
            assert metrics.horizontalAdvance(line) <= slot, line


def test_the_line_drawn_is_the_budget_the_verdict_used(qtbot):
    s = session(3, engine="vllm")
    chart = drawn_compare(qtbot, s, 1400)
    h100 = get_gpu("h100-80g")
    for i, (sc, bar) in enumerate(zip(s.scenarios, chart.bars, strict=True)):
        budget = capacity_bytes(h100, sc, s.architecture)
        assert bar.budgets[h100.label] == int(budget) < h100.memory_bytes  # vLLM 0.34: what it commits
        segments = [item for item in chart._transient if hasattr(item, "getData") and item.getData()[0] is not None]
        ys = [y for item in segments for x, y in zip(*item.getData(), strict=True)
              if not np.isnan(x) and abs(x - i) < 0.5]
        assert any(abs(y * 2**30 - budget) < 2**20 for y in ys)
        assert ("✓" if bar.fits[h100.label] else "✗") in chart.labels[i].textItem.toPlainText()
    legend = " ".join(label.text for _, label in chart.legend.items)
    # each scenario's measured pool beside its rest, within what the CUDA context and the margin leave: budgets within
    # 2 % of one another read as a range
    assert "77.10–77.17 GiB usable (dashed) of 79.65 GiB" in legend


def test_close_budgets_read_as_a_range_and_far_ones_apart():
    from memviz.core.units import GiB, Unit
    from memviz.gui.charts import budget_text

    assert budget_text([round(21.91 * GiB), round(22.21 * GiB), round(23.64 * GiB)], Unit.GiB) == "21.91–22.21 / 23.64 GiB"
    assert budget_text([round(21.28 * GiB), round(23.64 * GiB)], Unit.GiB) == "21.28 / 23.64 GiB"


def test_batch_sweep_keeps_the_budgets_readable(qtbot):
    chart = drawn_sweep(qtbot, session(4), "batch", 1280, 720)
    top = chart.plot_item.vb.viewRange()[1][1]
    assert top <= 2.5 * 79.65 * 1.1 + 1e-6  # not the 5,000 GiB the largest batch needs
    legend = chart.legend.sceneBoundingRect()
    assert chart.layout_item.sceneBoundingRect().contains(legend)


def test_exports_are_light_on_a_dark_screen_and_no_series_is_black_on_black(qtbot, tmp_path):
    app = QApplication.instance()
    light = app.palette()
    dark = QPalette(light)
    dark.setColor(QPalette.ColorRole.Base, QColor("#121212"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#eeeeee"))
    app.setPalette(dark)
    try:
        chart = drawn_sweep(qtbot, session(8), "context", 1400, 800)
        assert chart.theme.background == "#121212"
        colors = {c.opts["pen"].color().name() for c in chart.curves}
        assert "#000000" not in colors and "#eeeeee" in colors  # Okabe-Ito's black is the foreground
        out = export_chart(chart, tmp_path / "s.png", 1400)
        image = QImage(str(out))
        assert image.pixelColor(2, 2).name() == "#ffffff"
        assert chart.theme.background == "#121212"  # the screen keeps its theme
        kept = export_chart(chart, tmp_path / "dark.png", 1400, theme=None)
        assert QImage(str(kept)).pixelColor(2, 2).name() == "#121212"
    finally:
        app.setPalette(light)


def test_export_options_scale_title_subtitle_and_the_csv_names_the_model(tmp_path):
    import csv
    import subprocess
    import sys

    from memviz.gui.main_window import with_filter_suffix

    base = [sys.executable, "-m", "memviz", "export", "--preset", "llama-3.2-1b", "--weights", "bf16,Q4_K_M",
            "--gpu", "rtx4090", "--width", "1000"]
    for scale, name in ((1, "a.png"), (2, "b.png")):
        assert subprocess.run([*base, "--scale", str(scale), "--out", str(tmp_path / name)]).returncode == 0
    one, two = QImage(str(tmp_path / "a.png")), QImage(str(tmp_path / "b.png"))
    assert (two.width(), two.height()) == (2 * one.width(), 2 * one.height())
    assert subprocess.run([*base, "--title", "My report", "--out", str(tmp_path / "c.svg")]).returncode == 0
    svg = (tmp_path / "c.svg").read_text()
    assert "My report" in svg and "memviz" in svg and "rtx" not in svg.lower().split("my report")[0]
    assert subprocess.run([*base, "--out", str(tmp_path / "d.csv")]).returncode == 0
    rows = list(csv.DictReader((tmp_path / "d.csv").read_text().splitlines()))
    assert {r["model"] for r in rows} == {"Llama-3.2-1B"} and {r["engine"] for r in rows} == {"transformers", "llamacpp"}
    assert with_filter_suffix("/tmp/chart", "SVG (*.svg)") == "/tmp/chart.svg"
    assert with_filter_suffix("/tmp/chart.pdf", "SVG (*.svg)") == "/tmp/chart.pdf"


def test_the_window_exports_in_the_screens_colours_when_asked(qtbot, tmp_path):
    from memviz.gui import settings
    from memviz.gui.main_window import MainWindow
    from memviz.gui.palette import Theme

    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.show()
    w.compare.apply_theme(Theme("#121212", "#eeeeee"))  # as on a dark desktop
    light = QImage(str(w.export_current_chart(tmp_path / "a.png", 1000)))
    settings.write("export_screen_colours", True)
    dark = QImage(str(w.export_current_chart(tmp_path / "b.png", 1000)))
    assert light.pixelColor(2, 2).name() == "#ffffff" and dark.pixelColor(2, 2).name() == "#121212"


@pytest.mark.parametrize("log_x", [False, True])
def test_a_sweep_curve_ends_at_the_top_of_the_plot_in_every_format(qtbot, log_x):
    """Qt's SVG generator writes no clip paths: a curve above the y range is cut at the top edge, so the SVG ends
    it at the axes as the PNG and PDF do; below the top the drawn values are the core's."""
    from memviz.gui.charts import cut_above, sweep_top

    s = session(4).with_changes(gpus=("rtx4090",))  # bf16 70B runs far above 2.5 x 24 GiB
    chart = SweepChart()
    qtbot.addWidget(chart)
    series = model.series(s, "context")
    caps = model.capacities(s)
    chart.set_series(series, caps, s.unit, "context", log_x, "t")
    top = sweep_top(series, caps, s.unit)
    for curve, ser in zip(chart.curves, series, strict=True):
        x, y = curve.getOriginalDataset()
        assert (y[np.isfinite(y)] <= top * (1 + 1e-12)).all()  # a curve wholly above draws nothing, as before
        inside = np.isin(x, ser.x)
        core = ser.total_bytes / s.unit.bytes
        assert np.allclose(y[inside], np.where(core > top, np.nan, core), equal_nan=True)
    assert any(np.isnan(c.getOriginalDataset()[1]).any() for c in chart.curves)  # a curve did leave the plot
    x, y = cut_above(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 5.0, 1.0]), 4.0)
    assert x.tolist() == [1.0, 2.0, 2.5, 3.0, 3.25, 4.0] and np.isnan(y[3]) and y[[2, 4]].tolist() == [4.0, 4.0]


def test_a_sweep_curve_wholly_above_the_range_says_so_in_the_legend(qtbot):
    """The sweep cuts its range at 2.5x the largest GPU (`sweep_top`): a curve that starts above the cut (bf16
    Llama-3.1-70B beside an RTX A6000, 131 GiB and up) is not drawn, and its legend entry gives where it starts."""
    s = Session(architecture=get_preset("llama-3.1-70b").architecture(), gpus=("rtx-a6000",),
                scenarios=(Scenario(weight_format="bf16", context_tokens=32768),
                           Scenario(weight_format="Q4_K_M", engine="llamacpp", kv_format="fp16",
                                    context_tokens=32768)))
    chart = drawn_sweep(qtbot, s, "context", 1400, 800)
    lowest = model.series(s, "context")[0].total_bytes.min() / 2**30
    legend = [label.text for _, label in chart.legend.items]
    assert any(f"(above the range: from {lowest:,.0f} GiB)" in text for text in legend)
    assert sum("above the range: from" in text for text in legend) == 1  # the Q4_K_M curve is drawn


def test_a_reserved_pool_is_drawn_faded_on_top_of_what_the_sequences_need(qtbot):
    """Gemma-3-12B on vLLM with its pool sized on a B200, compared with an H100 too: the solid stack is what the
    scenario needs (the ✓ both GPUs give it), the faded cap the rest of the B200's pool; their sum is the estimate."""
    s = Session(architecture=get_preset("gemma-3-12b").architecture(),
                scenarios=(Scenario(engine="vllm", gpu="b200", context_tokens=32768),), gpus=("b200", "h100-80g"))
    chart = drawn_compare(qtbot, s, 1400)
    est = estimate(s.architecture, s.scenarios[0])
    heights = chart.bar_heights()
    assert heights["kv_cache"][0] * GiB == pytest.approx(est.kv_cache_required, abs=1)
    assert heights[RESERVED][0] * GiB == pytest.approx(est.bytes["kv_cache"] - est.kv_cache_required, abs=1)
    assert sum(h[0] for h in heights.values()) * GiB == pytest.approx(est.total, abs=4)
    assert chart.bars[0].fits == {"B200 180GB": True, "H100 SXM 80GB": True}
    solid = sum(h[0] for c, h in heights.items() if c != RESERVED) * GiB
    assert solid < chart.bars[0].budgets["H100 SXM 80GB"]  # the line the H100's ✓ is judged against: above it
    assert RESERVED_LABEL in chart._legend_texts
    assert RESERVED_LABEL not in drawn_compare(qtbot, session(2), 1400)._legend_texts  # no reserved pool, no entry


def test_a_pooled_engines_sweep_draws_what_its_sequences_need(qtbot):
    """vLLM's pool sized on a B200 fills its budget at every context: the curve is the need the verdicts judge
    (`fit.sweep`'s `needed`), below the budget where it fits, and the legend says so."""
    s = Session(architecture=get_preset("gemma-3-12b").architecture(),
                scenarios=(Scenario(engine="vllm", gpu="b200", context_tokens=32768),), gpus=("b200", "h100-80g"))
    series = model.series(s, "context")
    need = sweep(s.architecture, s.scenarios[0], series[0].x, "context").needed
    assert np.array_equal(series[0].total_bytes, need) and series[0].pooled
    assert float(series[0].total_bytes.max()) < series[0].budgets["H100 SXM 80GB"]
    chart = drawn_sweep(qtbot, s, "context", 1400, 800)
    assert "vLLM's pool fills the rest" in chart._legend_texts[0]
    plain = model.series(session(1), "context")
    assert not plain[0].pooled


def test_a_sweep_memory_does_not_bound_stays_on_its_grid_and_says_any_context(qtbot):
    """Falcon-Mamba on vLLM: a state per sequence, chunked prefill. The context search ends at its limit (16,777,216
    tokens), far beyond the drawn grid: no marker there (it stretched the x axis and squeezed the curves into its
    first pixels), and the legend says any context, not "≤ 16,777,216"."""
    s = Session(architecture=get_preset("falcon-mamba-7b").architecture(), gpus=("rtx4090",),
                scenarios=(Scenario(engine="vllm", context_tokens=8192),))
    chart = drawn_sweep(qtbot, s, "context", 1600, 900)
    legend = [label.text for _, label in chart.legend.items]
    assert any("RTX 4090 24GB: any context" in text for text in legend) and not any("16,777,216" in t for t in legend)
    grid_end = model.sweep_grid(s, "context").max()
    assert chart.plot_item.vb.viewRange()[0][1] < 1.1 * grid_end
