"""Fixed, colour-blind-safe colours (Okabe & Ito, 2008) and the light/dark chart theme."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QGuiApplication, QPalette

COMPONENT_COLORS = {
    "weights": "#0072B2",  # blue
    "kv_cache": "#E69F00",  # orange
    "activations": "#009E73",  # bluish green
    "overhead": "#CC79A7",  # reddish purple
}
COMPONENT_LABELS = {"weights": "Weights", "kv_cache": "KV cache", "activations": "Activations / workspace",
                    "overhead": "Runtime / allocator overhead"}
# Okabe & Ito's black is the theme's foreground, so that it never vanishes on a dark background
CAPACITY_COLORS = ("#D55E00", "#56B4E9", "#777777", "#F0E442", None)
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", None)


@dataclass(frozen=True)
class Theme:
    background: str
    foreground: str


REPORT_THEME = Theme("#ffffff", "#000000")  # exports: a light page whatever the screen shows


def screen_theme() -> Theme:
    """The charts' colours on screen, from the application palette (follows the system theme)."""
    app = QGuiApplication.instance()
    if app is None:
        return REPORT_THEME
    pal = app.palette()
    bg: QColor = pal.color(QPalette.ColorRole.Base)
    fg: QColor = pal.color(QPalette.ColorRole.Text)
    return Theme(bg.name(), fg.name())


def chart_colors() -> tuple[str, str]:
    """(background, foreground) of the screen theme."""
    t = screen_theme()
    return t.background, t.foreground


def series_color(i: int, theme: Theme) -> str:
    return SERIES_COLORS[i % len(SERIES_COLORS)] or theme.foreground


def capacity_color(i: int, theme: Theme) -> str:
    return CAPACITY_COLORS[i % len(CAPACITY_COLORS)] or theme.foreground

