"""Sweeps and fit solvers on top of `device_arrays`.

A sweep evaluates one scenario at many contexts (or batches) at once with numpy.
The solvers answer "does it fit": the largest context for a batch, the largest
batch for a context, the fewest GPUs. Memory grows monotonically with context and
batch, so the largest fitting value is found by bisection on integers. For vLLM
the fit compares the KV cache *required* against the pool it would reserve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memviz.core.arch import Architecture
from memviz.core.engines import get_engine
from memviz.core.errors import InputError
from memviz.core.estimate import COMPONENTS, Arrays, Estimate, Scenario, device_arrays
from memviz.core.gpus import GPU
from memviz.core.search import largest_true


@dataclass
class Sweep(Arrays):
    """Component arrays of the busiest device at each point of `x` along `axis` ("context" or "batch")."""

    axis: str = "context"
    x: np.ndarray | None = None


def _needed(a: Architecture, sc: Scenario, context: np.ndarray, batch: np.ndarray) -> np.ndarray:
    """Bytes the busiest device needs (vLLM: required KV, not the reserved pool)."""
    gpus, _ = device_arrays(a, sc, context, batch)
    return np.max([d.needed for d in gpus], axis=0)


def sweep(a: Architecture, sc: Scenario, values: np.ndarray, axis: str = "context") -> Sweep:
    """Evaluate `sc` at every context (axis="context") or batch (axis="batch") in `values`."""
    values = np.asarray(values, dtype=np.int64)
    if axis == "context":
        context, batch = values, np.full(values.shape, sc.batch)
    elif axis == "batch":
        context, batch = np.full(values.shape, sc.context_tokens), values
    else:
        raise ValueError(f"axis must be 'context' or 'batch', got {axis!r}")
    base = sc.with_changes(sequence_tokens=())
    gpus, _ = device_arrays(a, base, context, batch)
    totals = np.stack([d.total for d in gpus])
    pick = np.argmax(totals, axis=0)
    comp = {c: np.choose(pick, [getattr(d, c) for d in gpus]) for c in (*COMPONENTS, "kv_required")}
    return Sweep(device="busiest", axis=axis, x=values, **comp)


def capacity_bytes(gpu: GPU, sc: Scenario, a: Architecture) -> float:
    """Usable bytes per device, as the engine budgets them (vLLM without its extensible cache: gpu_memory_utilization
    x the CUDA total). A pool the engine commits whole (vLLM's kv_cache_memory_bytes, or its pool sized from measured
    memory) is the KV budget: the engine's budget is then the pool beside the rest on the busiest device, so the
    sequences fit when they fit the pool (the pool beside the rest within the
    GPU is the engine's own refusal, `refused_on`)."""
    engine = get_engine(sc.engine)
    if not engine.commits_budget(sc):
        return engine.usable_bytes(gpu, sc)
    on_gpu = sc.with_changes(gpu=gpu.key, sequence_tokens=())
    gpus, _ = device_arrays(a, on_gpu, np.asarray(sc.context_tokens), np.asarray(sc.batch))
    busiest = max(gpus, key=lambda d: float(d.committed))
    return min(float(busiest.committed), engine.commit_cap_bytes(gpu, sc, float(busiest.activations)))


def needed_bytes(est: Estimate) -> int:
    """Bytes the busiest device needs: the total with vLLM's reserved pool replaced by the KV required."""
    return est.total - est.bytes["kv_cache"] + est.kv_cache_required


def within(need: float, budget: float) -> bool:
    """The fit rule, the one place it is written: what the busiest device needs within the engine's budget."""
    return need <= budget


def refused_on(est: Estimate, gpu: GPU) -> bool:
    """The engine itself refuses the scenario on this GPU (vLLM: no room beside its budget for the CUDA context
    and NCCL buffers, or one max_model_len request beyond the pool); facts are computed for the scenario's GPU."""
    return est.scenario.gpu == gpu.key and "refusal" in est.engine_facts


def estimate_fits(est: Estimate, gpu: GPU) -> bool:
    return within(needed_bytes(est), capacity_bytes(gpu, est.scenario, est.architecture)) and not refused_on(est, gpu)


def fits(a: Architecture, sc: Scenario, gpu: GPU) -> bool:
    return bool(_needed(a, sc, np.asarray(sc.context_tokens), np.asarray(sc.batch)) <= capacity_bytes(gpu, sc, a))


#: how far the context search goes for a model that states no length limit
CONTEXT_SEARCH_LIMIT = 1 << 24


def max_context(a: Architecture, sc: Scenario, gpu: GPU, limit: int | None = None) -> int:
    """Largest context per sequence (at the scenario's batch) that fits; 0 if none.

    Capped at `limit` (default: the model's max_position_embeddings, or CONTEXT_SEARCH_LIMIT)."""
    cap = capacity_bytes(gpu, sc, a)
    base = sc.with_changes(sequence_tokens=())
    hi = limit or a.max_position_embeddings or CONTEXT_SEARCH_LIMIT
    return largest_true(lambda n: bool(_needed(a, base, np.asarray(n), np.asarray(sc.batch)) <= cap), 1, hi)


def context_unbounded(tokens: int) -> bool:
    """Whether a largest context is the search's end (a model without a length limit whose memory does not grow with
    the context: a recurrent state, chunked prefill): no limit found, not a limit."""
    return tokens >= CONTEXT_SEARCH_LIMIT


def context_text(tokens: int) -> str:
    """A largest context as text (`context_unbounded`)."""
    if context_unbounded(tokens):
        return f"≥ {tokens:,d} tokens (memory does not bound it)"
    return f"{tokens:,d} tokens"


def max_batch(a: Architecture, sc: Scenario, gpu: GPU, limit: int = 1 << 16) -> int:
    """Largest number of concurrent sequences (at the scenario's context) that fits; 0 if none."""
    cap = capacity_bytes(gpu, sc, a)
    base = sc.with_changes(sequence_tokens=())
    return largest_true(lambda n: bool(_needed(a, base, np.asarray(sc.context_tokens), np.asarray(n)) <= cap), 1, limit)


def largest_fit(a: Architecture, sc: Scenario, gpu: GPU, axis: str) -> int:
    """The largest context (axis="context") or batch (axis="batch") that fits, exact to the token or
    sequence: the one answer the CLI, the breakdown and the sweep's legend give."""
    return max_context(a, sc, gpu) if axis == "context" else max_batch(a, sc, gpu)


def min_gpus(a: Architecture, sc: Scenario, gpu: GPU, most: int = 64) -> Scenario | None:
    """The scenario split over the fewest GPUs that fits, or None within `most`.

    vLLM splits by tensor parallelism (TP of 1, 2, 4 or 8 dividing the attention
    heads, times pipeline stages); the other engines split layers (pipeline)."""
    engine = get_engine(sc.engine)
    candidates: list[tuple[int, int]] = []
    for n in range(1, most + 1):
        if engine.supports_tp:
            candidates += [(tp, n // tp) for tp in (1, 2, 4, 8) if n % tp == 0 and a.num_heads % tp == 0]
        else:
            candidates.append((1, n))
    seen = set()
    for tp, pp in sorted(candidates, key=lambda c: (c[0] * c[1], -c[0])):
        if (tp, pp) in seen or pp > a.num_layers // a.block_layers:
            continue
        seen.add((tp, pp))
        trial = sc.with_changes(tp=tp, pp=pp, gpu=gpu.key, options=engine.options_on(sc, pp))
        try:
            if fits(a, trial, gpu):
                return trial
        except InputError:  # a split the engine refuses (heads, EPLB's experts per rank, ...): try the next
            continue
    return None


TIGHT_FRACTION = 0.9  # "tight": fits, but needs more than 90 % of the budget (little room for what varies)


@dataclass(frozen=True)
class FitCell:
    """One scenario on one GPU: the verdict, what it needs of the budget, how far it stretches, how fast it can go."""

    gpu: str  # the GPU's label
    verdict: str  # "fits" | "tight" | "does not fit"
    needed_bytes: int
    budget_bytes: int
    max_context: int
    max_batch: int
    decode_tokens_per_s_max: float | None  # a roofline bound (memviz.core.speed), not a prediction; None: unknown


def split_over(a: Architecture, sc: Scenario, n: int) -> Scenario:
    """`sc` spread over n GPUs of one machine as its engine would: vLLM by tensor parallelism when the
    attention heads divide (else pipeline stages), the other engines by pipeline stages of whole layers."""
    if n == 1:
        return sc
    if sc.engine == "vllm" and a.num_heads % n == 0:
        return sc.with_changes(tp=n, pp=1)
    return sc.with_changes(tp=1, pp=min(n, a.num_layers))


def fit_matrix(estimates: list[Estimate], gpus: list[str]) -> list[list[FitCell]]:
    """Rows of scenarios (their estimates), columns of GPU specs (a catalogue key, "vram:24GiB", or
    "h100-80gx4" for four in one machine), each cell from the same solvers as everywhere."""
    from memviz.core.estimate import estimate
    from memviz.core.gpus import gpu_pool
    from memviz.core.speed import speed_bounds

    pools = [gpu_pool(g) for g in gpus]
    rows = []
    for est in estimates:
        row = []
        for gpu, n in pools:
            a = est.architecture
            sc = split_over(a, est.scenario, n)
            e = est if n == 1 else estimate(a, sc)
            need, budget = needed_bytes(e), capacity_bytes(gpu, sc, a)
            verdict = "does not fit" if not within(need, budget) else "tight" if need > TIGHT_FRACTION * budget else "fits"
            bound = speed_bounds(e, gpu).decode_tokens_per_s_max
            row.append(FitCell(gpu.label if n == 1 else f"{n}× {gpu.label}", verdict, int(need), int(budget),
                               max_context(a, sc, gpu), max_batch(a, sc, gpu), bound if np.isfinite(bound) else None))
        rows.append(row)
    return rows
