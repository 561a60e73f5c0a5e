"""What the charts draw, as plain data: one Bar per scenario, one Series per sweep curve.

`memviz.gui.model` fills them from the core without importing a widget; the
charts (`memviz.gui.charts`) only draw them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from memviz.core.estimate import COMPONENTS


@dataclass
class Bar:
    """One scenario's stack: component bytes, their provenance, and the fit per GPU label."""

    label: str
    bytes: dict[str, int]
    provenance: dict[str, str]
    fits: dict[str, bool] = field(default_factory=dict)
    measured: dict[str, int] | None = None
    band: float | None = None  # ± fraction of the total, from stored probe runs' residuals

    @property
    def total(self) -> int:
        return sum(self.bytes[c] for c in COMPONENTS)


@dataclass
class Series:
    """One scenario's total memory along the sweep axis, and where it stops fitting."""

    label: str
    x: np.ndarray
    total_bytes: np.ndarray
    largest_fit: dict[str, int] = field(default_factory=dict)  # GPU label -> largest x that fits
