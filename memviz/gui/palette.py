"""Fixed, colour-blind-safe colours (Okabe & Ito, 2008) and the light/dark chart theme."""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

COMPONENT_COLORS = {
    "weights": "#0072B2",  # blue
    "kv_cache": "#E69F00",  # orange
    "activations": "#009E73",  # bluish green
    "overhead": "#CC79A7",  # reddish purple
}
COMPONENT_LABELS = {"weights": "Weights", "kv_cache": "KV cache", "activations": "Activations / workspace",
                    "overhead": "Runtime / allocator overhead"}
CAPACITY_COLORS = ("#D55E00", "#56B4E9", "#777777", "#F0E442", "#000000")
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000")
OVER_CAPACITY = "#D55E00"


def chart_colors() -> tuple[str, str]:
    """(background, foreground) for charts, from the application palette (follows the system theme)."""
    app = QGuiApplication.instance()
    if app is None:
        return "#ffffff", "#000000"
    pal = app.palette()
    bg: QColor = pal.color(QPalette.ColorRole.Base)
    fg: QColor = pal.color(QPalette.ColorRole.Text)
    return bg.name(), fg.name()

