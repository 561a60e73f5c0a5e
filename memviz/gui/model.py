"""Turn a session into what the charts draw: bars, series and capacity lines.

Pure computation on top of `memviz.core` (no widgets), shared by the window and
the headless `memviz export`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from memviz.core.calibration import scenario_calibration_key
from memviz.core.estimate import Estimate, estimate
from memviz.core.fit import capacity_bytes, largest_fit, needed_bytes, sweep, within
from memviz.core.gpus import get_gpu
from memviz.core.report import scenario_labels
from memviz.core.runs import for_scenario, is_stale
from memviz.core.session import Session
from memviz.gui.chart_data import Bar, Series

SWEEP_POINTS = 384


def capacities(session: Session) -> list[tuple[str, int]]:
    return [(get_gpu(g).label, get_gpu(g).memory_bytes) for g in session.gpus]


def bars(session: Session, estimates: list[Estimate], bands: dict[str, float | None] | None = None) -> list[Bar]:
    """Chart bars; `bands` maps a calibration key ("cpu", "cuda+bitsandbytes"...) to its ± fraction
    (transformers runs only)."""
    out = []
    bands = bands or {}
    gpus = [get_gpu(g) for g in session.gpus]
    shown = [est for est in estimates if not est.scenario.hidden]
    for est, label in zip(shown, scenario_labels([est.scenario for est in shown]), strict=True):
        sc = est.scenario
        budgets = {g.label: int(capacity_bytes(g, sc, est.architecture)) for g in gpus}
        need = needed_bytes(est)
        fits = {label: within(need, budget) for label, budget in budgets.items()}
        run = for_scenario(session.runs, sc)
        measured = run.measured if run else None
        stale = bool(run) and is_stale(run, sc)
        band = bands.get(scenario_calibration_key(sc))
        out.append(Bar(label=label, bytes=dict(est.bytes),
                       provenance={c.name: c.provenance for c in est.components}, fits=fits, budgets=budgets,
                       measured=measured, measured_stale=stale, band=band,
                       host_bytes=est.host.total if sc.device == "cuda" else 0,
                       kv_required=est.kv_cache_required if est.kv_cache_required < est.bytes["kv_cache"] else None))
    return out


@lru_cache(maxsize=4096)
def _estimate(a, sc) -> Estimate:
    return estimate(a, sc)


def compute_estimates(session: Session) -> list[Estimate]:
    """Every scenario's estimate; an edit recomputes only the scenarios it changed (estimates are pure
    functions of the frozen architecture and scenario, so they are cached by value)."""
    return [_estimate(session.architecture, sc) for sc in session.scenarios]


def sweep_grid(session: Session, axis: str) -> np.ndarray:
    """Geometric grid: contexts from 256 to the model's max positions (without one: 2x the largest scenario,
    at least 8192), or batches 1..256."""
    if axis == "batch":
        return np.unique(np.geomspace(1, 256, SWEEP_POINTS).astype(np.int64))
    largest = max([sc.context_tokens for sc in session.scenarios] or [4096])
    hi = session.architecture.max_position_embeddings or max(2 * largest, 8192)
    return np.unique(np.geomspace(min(256, hi), hi, SWEEP_POINTS).astype(np.int64))


def series(session: Session, axis: str) -> list[Series]:
    x = sweep_grid(session, axis)
    out = []
    shown = [sc for sc in session.scenarios if not sc.hidden]
    for sc, label in zip(shown, scenario_labels(shown), strict=True):
        s = sweep(session.architecture, sc, x, axis)
        fits = {get_gpu(g).label: largest_fit(session.architecture, sc, get_gpu(g), axis) for g in session.gpus}
        budgets = {get_gpu(g).label: int(capacity_bytes(get_gpu(g), sc, session.architecture)) for g in session.gpus}
        out.append(Series(label=label, x=x, total_bytes=s.needed, largest_fit=fits, budgets=budgets,
                          engine=sc.engine, pooled=bool(np.any(s.needed < s.total))))
    return out


def title(session: Session) -> str:
    a = session.architecture
    return f"{a.name} — memory per device ({session.unit.value})"


def plan_subtitle(p, today: str | None = None) -> str:
    """The Pareto picture's subtitle: what was planned, the headroom, how quality is measured, version, date."""
    import datetime

    from memviz import __version__

    r = p.requirements
    engines = ", ".join(dict.fromkeys(c.scenario.engine for c in (*p.ranked, *p.rejected)))
    day = today or datetime.date.today().isoformat()
    return (f"{engines} · {p.considered} configurations · {r.headroom:.0%} headroom · quality loss: relative to 16 bit "
            f"per published record (metric in the tooltip and the report) · memviz {__version__} · {day}")


def subtitle(session: Session, today: str | None = None) -> str:
    """What a report picture needs to be read alone: engines, contexts x sequences, GPUs, memviz version, date."""
    import datetime

    from memviz import __version__

    scs = session.scenarios
    engines = ", ".join(dict.fromkeys(sc.engine for sc in scs))
    shapes = ", ".join(dict.fromkeys(f"{sc.context_tokens:,d} tokens × {sc.sequences}" for sc in scs))
    gpus = ", ".join(get_gpu(g).label for g in session.gpus) or "no GPU chosen"
    day = today or datetime.date.today().isoformat()
    return f"{engines} · {shapes} · {gpus} · memviz {__version__} · {day}"

