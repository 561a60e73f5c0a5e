"""Golden images: the compare and sweep charts in the light and dark themes, rendered offscreen as exported,
against stored PNGs (tests/data/golden) with a tolerance for antialiasing. After an intended change:
`QT_QPA_PLATFORM=offscreen python scripts/golden_images.py`, look at the pictures, commit them."""

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from memviz.core.estimate import Scenario
from memviz.core.presets import get_preset
from memviz.core.session import Session
from memviz.gui import model
from memviz.gui.charts import CompareChart, SweepChart
from memviz.gui.export import chart_image, offscreen_copy
from memviz.gui.palette import REPORT_THEME, Theme

GOLDEN = Path(__file__).parents[1] / "data" / "golden"
DARK = Theme("#121212", "#eeeeee")
FITS = ("light", "dark")
CASES = {f"{chart}-{theme}": (chart, t) for chart in ("compare", "sweep") for theme, t in (("light", REPORT_THEME),
                                                                                           ("dark", DARK))}


def session() -> Session:
    scenarios = (Scenario(weight_format="bf16", context_tokens=16384, batch=2),
                 Scenario(weight_format="awq-int4", engine="vllm", context_tokens=16384, batch=2),
                 Scenario(weight_format="Q4_K_M", engine="llamacpp", kv_format="fp16", context_tokens=16384, batch=2))
    return Session(architecture=get_preset("llama-3.1-8b").architecture(), scenarios=scenarios, gpus=("rtx4090", "l40s"))


def render(name: str) -> QImage:
    chart_kind, theme = CASES[name]
    s = session()
    chart = CompareChart() if chart_kind == "compare" else SweepChart()
    chart.resize(1200, 700)
    if chart_kind == "compare":
        chart.set_bars(model.bars(s, model.compute_estimates(s)), model.capacities(s), s.unit, model.title(s))
    else:
        chart.set_series(model.series(s, "context"), model.capacities(s), s.unit, "context", True, model.title(s))
    with offscreen_copy(chart, 1200, theme) as copy:
        image = chart_image(copy)
    chart.close()
    return image


def render_fit(theme_name: str = "light") -> QImage:
    """The Fit tab's matrix for the golden session in a light or dark widget palette (cell colours are the
    verdicts')."""
    from PySide6.QtGui import QColor, QPalette

    from memviz.core.fit import fit_matrix
    from memviz.gui.fit_view import FitView

    s = session()
    view = FitView()
    if theme_name == "dark":
        palette = QPalette(view.palette())
        for role, color in ((QPalette.ColorRole.Window, "#202020"), (QPalette.ColorRole.Base, "#121212"),
                            (QPalette.ColorRole.Text, "#eeeeee"), (QPalette.ColorRole.WindowText, "#eeeeee"),
                            (QPalette.ColorRole.Button, "#2a2a2a"), (QPalette.ColorRole.ButtonText, "#eeeeee")):
            palette.setColor(role, QColor(color))
        view.setPalette(palette)
    view.resize(1200, 420)
    view.extra.setText("vram:16GiB, rtx4090x2, m3-max-128g")
    cells = fit_matrix(model.compute_estimates(s), [*s.gpus, *view.extra_gpus()])
    view.show_matrix(model.scenario_labels(s.scenarios), cells, s.unit)
    view.show()
    image = view.grab().toImage()
    view.close()
    return image


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)[
        :, : image.width(), :3].astype(np.int16)


@pytest.mark.parametrize("name", sorted(CASES))
def test_chart_matches_its_golden_image(qtbot, name):
    golden = QImage(str(GOLDEN / f"{name}.png"))
    assert not golden.isNull(), f"missing {name}.png: run scripts/golden_images.py"
    got = render(name)
    assert (got.width(), got.height()) == (golden.width(), golden.height())
    diff = np.abs(pixels(got) - pixels(golden)).max(axis=2)
    assert diff.mean() < 2.0 and (diff > 64).mean() < 0.01, (diff.mean(), (diff > 64).mean())
    background = golden.pixelColor(3, 3).name()
    assert background == ("#121212" if name.endswith("dark") else "#ffffff")


@pytest.mark.parametrize("theme", FITS)
def test_fit_matrix_matches_its_golden_image(qtbot, theme):
    golden = QImage(str(GOLDEN / f"fit-matrix-{theme}.png"))
    assert not golden.isNull(), f"missing fit-matrix-{theme}.png: run scripts/golden_images.py"
    got = render_fit(theme)
    assert (got.width(), got.height()) == (golden.width(), golden.height())
    diff = np.abs(pixels(got) - pixels(golden)).max(axis=2)
    assert diff.mean() < 2.0 and (diff > 64).mean() < 0.01, (diff.mean(), (diff > 64).mean())
