"""Vector exports read back and compared with the PNG export of the same chart: bars, ticks, labels and
markers must sit where the PNG has them (QSvgRenderer always; librsvg and poppler where installed)."""

import shutil
import subprocess

import numpy as np
import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from memviz.core.estimate import Scenario
from memviz.core.presets import get_preset
from memviz.core.session import Session
from memviz.gui.export import bake_non_scaling_strokes
from memviz.gui.headless import render

WIDTH, HEIGHT = 1400, 800  # the headless chart's scene size: SVG view box and PNG width match it
SESSION = Session(
    architecture=get_preset("llama-3.1-8b").architecture(),
    scenarios=tuple(Scenario(weight_format=f, context_tokens=8192, batch=4) for f in ("bf16", "fp8", "awq-int4"))
    + (Scenario(weight_format="Q4_K_M", engine="llamacpp", kv_format="fp16", context_tokens=8192, batch=4),),
    gpus=("rtx4090", "l40s"),
)


def _pixels(image: QImage) -> np.ndarray:
    """Grey levels of the picture at 1/5 scale (averages away antialiasing differences)."""
    small = image.convertToFormat(QImage.Format.Format_Grayscale8).scaled(
        QSize(WIDTH // 5, HEIGHT // 5), mode=Qt.TransformationMode.SmoothTransformation)
    ptr = small.constBits()
    return np.frombuffer(ptr, np.uint8, small.sizeInBytes()).reshape(small.height(), small.bytesPerLine())[:, : small.width()]


def _difference(a: QImage, b: QImage) -> float:
    return float(np.mean(np.abs(_pixels(a).astype(int) - _pixels(b).astype(int))))


def _from_svg(path) -> QImage:
    image = QImage(QSize(WIDTH, HEIGHT), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    QSvgRenderer(str(path)).render(painter)
    painter.end()
    return image


def _from_tool(args: list[str], out) -> QImage:
    subprocess.run(args, check=True, capture_output=True, timeout=60)
    return QImage(str(out))


@pytest.fixture(params=["compare", "sweep"])
def exported(request, tmp_path, qtbot):
    files = {s: render(SESSION, request.param, tmp_path / f"chart.{s}", WIDTH, log_x=True) for s in ("png", "svg", "pdf")}
    png = QImage(str(files["png"]))
    assert (png.width(), png.height()) == (WIDTH, HEIGHT)
    return files, png


def test_svg_matches_the_png(exported):
    files, png = exported
    assert _difference(_from_svg(files["svg"]), png) < 1.5


@pytest.mark.skipif(not shutil.which("rsvg-convert"), reason="librsvg2-bin not installed")
def test_svg_matches_the_png_in_librsvg(exported, tmp_path):
    files, png = exported
    out = tmp_path / "rsvg.png"
    rendered = _from_tool(["rsvg-convert", "-w", str(WIDTH), "-b", "white", "-o", str(out), str(files["svg"])], out)
    assert _difference(rendered, png) < 3  # librsvg shapes text a few pixels wider; bars off their axes gave 44-48


@pytest.mark.skipif(not shutil.which("pdftoppm"), reason="poppler-utils not installed")
def test_pdf_matches_the_png(exported, tmp_path):
    files, png = exported
    prefix = tmp_path / "pdf"
    _from_tool(["pdftoppm", "-r", "96", "-png", "-singlefile", str(files["pdf"]), str(prefix)], prefix.with_suffix(".png"))
    rendered = QImage(str(prefix.with_suffix(".png")))
    assert abs(rendered.width() - WIDTH) <= 2 and abs(rendered.height() - HEIGHT) <= 2
    assert _difference(rendered.scaled(QSize(WIDTH, HEIGHT)), png) < 1.5


def test_cosmetic_shapes_are_baked_into_device_coordinates():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg"><g fill="red" transform="matrix(200,0,0,-4,100,600)">'
           '<rect vector-effect="non-scaling-stroke" x="-0.5" y="0" width="1" height="10"/>'
           '<polyline vector-effect="non-scaling-stroke" points="0,0 1,10"/></g>'
           '<g transform="matrix(2,0,0,2,0,0)"><text>kept</text></g></svg>')
    out = bake_non_scaling_strokes(svg)
    assert 'd="M0.000,600.000 L200.000,600.000 L200.000,560.000 L0.000,560.000 Z"' in out
    assert 'points="100.000,600.000 300.000,560.000"' in out
    assert 'transform="matrix(2,0,0,2,0,0)"' in out  # groups holding other elements keep their transform
