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
    """One scenario's stack: component bytes, their provenance, the fit per GPU label and the budget the fit
    was judged against (`memviz.core.fit.capacity_bytes`: vLLM's share of the CUDA total, else the GPU)."""

    label: str
    bytes: dict[str, int]
    provenance: dict[str, str]
    fits: dict[str, bool] = field(default_factory=dict)
    budgets: dict[str, int] = field(default_factory=dict)  # GPU label -> bytes this scenario's engine may use
    measured: dict[str, int] | None = None
    measured_stale: bool = False  # the scenario was edited after its run: shown, not compared
    band: float | None = None  # ± fraction of the total, from stored probe runs' residuals
    host_bytes: int = 0  # what the scenario keeps in host RAM (offloaded layers, KV, llama.cpp's output buffer)
    # the KV its sequences need where the engine reserves a larger pool (vLLM on the scenario's GPU), else None
    kv_required: int | None = None

    @property
    def kv_reserved(self) -> int:
        """The pool beyond what the sequences need (0 where the engine holds what they need)."""
        return self.bytes["kv_cache"] - self.kv_required if self.kv_required is not None else 0

    @property
    def total(self) -> int:
        return sum(self.bytes[c] for c in COMPONENTS)


@dataclass
class Series:
    """One scenario's memory along the sweep axis, as the fit judges it (`Arrays.needed`: the total, with vLLM's
    pool sized on the scenario's GPU replaced by the KV its sequences need), and where it stops fitting; `pooled`:
    the engine reserves a pool beyond that need at some point of the sweep."""

    label: str
    x: np.ndarray
    total_bytes: np.ndarray
    largest_fit: dict[str, int] = field(default_factory=dict)  # GPU label -> largest x that fits
    budgets: dict[str, int] = field(default_factory=dict)  # GPU label -> bytes this scenario's engine may use
    engine: str = ""
    pooled: bool = False
