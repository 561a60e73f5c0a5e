"""Where llama-server's `--fit` puts layers and MoE experts when they do not all fit the GPU.

llama.cpp 0c1e570 (common/fit.cpp `common_params_fit_impl`, called by common/common.cpp before loading; on unless
`--fit off`; introduced by ggml-org/llama.cpp pull request #16653, October 2025) measures the memory of trial
placements with dry-run loads and keeps `fit_params_target` (1 GiB, common/common.h) free on each device. It changes
only what the user left unset:

- a context the user set (`-c N`) stays; memviz's scenarios always set one;
- `-ngl` set (memviz writes `-ngl 999` unless `fit` is on), `-ot` or `--n-cpu-moe` given: nothing changes;
- a dense model: the most layers that fit, filled from the back (the output layer first, `-ngl N`);
- a MoE model: first every expert tensor in host memory ("dense-only" layers). If that fits, layers become whole
  again from the front while they fit, the experts of the remaining last layers staying in host memory (one `-ot`
  pattern `blk\\.i\\.ffn_(up|down|gate_up|gate)_(ch|)exps` per layer); if even that does not fit, the most
  dense-only layers that fit, from the back.
  Last, the first of those layers gets its up experts back on the GPU if they fit (then its gate experts too), else
  its whole feed-forward goes to the host (`get_overflow_pattern`: LAYER_FRACTION_UP / GATE / ATTN).

memviz measures each trial with its own estimate of the device's memory (model, KV and compute buffers) against
the GPU's CUDA total less the runtime constant it counts for the CUDA context, as llama.cpp measures against the
free memory after its context. Not modelled: several GPUs (a layer split the search makes across them), the
context reduction llama.cpp applies only when no context was given, and, where even the dense-only layers do not
all fit, the one or two GPU layers whose experts llama.cpp leaves on the GPU (its layer count includes the output
layer); memviz moves every expert then. A sweep keeps the placement chosen at the scenario's own context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from memviz.core.arch import Architecture
from memviz.core.search import largest_true
from memviz.core.units import MiB

FIT_MARGIN_BYTES = 1024 * MiB  # common/common.h `fit_params_target`: 1 GiB left free per device


@dataclass(frozen=True)
class FitPlacement:
    """The placement `--fit` chose: `-ngl` (None: every layer); the first layer whose experts stay in host memory
    (None: none, or every one with `all_experts_on_host`) and which of its feed-forward tensors go there
    (`first_layer_rule`, one of `LAYER_RULES`: the rest of those layers keep every expert in host memory)."""

    gpu_layers: int | None = None
    experts_from: int | None = None
    all_experts_on_host: bool = False
    first_layer_rule: str = "moe"

    def options(self, a: Architecture) -> dict[str, Any]:
        """The scenario options that place the weights this way (`--n-cpu-moe`, `-ot`)."""
        rules = []
        if self.experts_from is not None and self.experts_from < a.num_layers:
            whole = self.experts_from + (self.first_layer_rule != "moe")  # the first layer its own rule, if it has one
            if whole > self.experts_from:
                rules.append(rf"blk\.{self.experts_from}\.{LAYER_RULES[self.first_layer_rule]}=CPU")
            if whole < a.num_layers:
                rules.append(experts_pattern(range(whole, a.num_layers)))
        return {"n_cpu_moe": a.num_layers if self.all_experts_on_host else 0, "override_tensor": ",".join(rules)}

    def describe(self, a: Architecture) -> str:
        if self.experts_from is not None:
            part = {"moe": "", "up": " (layer {0} keeps its up experts on the GPU)",
                    "gate": " (layer {0} keeps its up and gate experts on the GPU)",
                    "attn": " (layer {0} keeps its attention only)"}[self.first_layer_rule].format(self.experts_from)
            return (f"every layer on the GPU, the experts of layers {self.experts_from}-{a.num_layers - 1} "
                    f"in host memory{part}")
        layers = f"-ngl {self.gpu_layers}: {min(self.gpu_layers, a.num_layers)} of {a.num_layers} layers on the GPU"
        return layers + (", every expert in host memory" if self.all_experts_on_host else "")


#: what of one layer's feed-forward goes to host memory (common/fit.cpp `get_overflow_pattern`, by
#: common_layer_fraction_t): the experts (MOE), all but up (UP), the down tensors (GATE), all of it (ATTN)
LAYER_RULES = {"moe": r"ffn_(up|down|gate_up|gate)_(ch|)exps", "up": r"ffn_(gate|gate_up|down).*",
               "gate": r"ffn_down.*", "attn": r"ffn_(gate|up|gate_up|down).*"}


def applies(sc: Any, options: dict[str, Any]) -> bool:
    """Whether `--fit` may place anything: on, one named GPU, and no placement the user set."""
    return bool(options["fit"] and sc.device == "cuda" and sc.gpu and sc.tp == 1 and sc.pp == 1
                and sc.gpu_layers is None and not options["n_cpu_moe"] and not options["override_tensor"])


def experts_pattern(layers: range) -> str:
    """One `-ot` rule keeping the expert tensors of `layers` in host memory (common/fit.cpp LAYER_FRACTION_MOE)."""
    return r"blk\.(" + "|".join(str(i) for i in layers) + r")\.ffn_(up|down|gate_up|gate)_(ch|)exps=CPU"


@lru_cache(maxsize=256)
def fit_placement(a: Architecture, sc: Any) -> FitPlacement | None:
    """The placement llama.cpp's `--fit` gives scenario `sc` at its own context and batch; None when every layer
    fits already (or nothing fits: then it keeps the scenario's)."""
    from memviz.core.engines import get_engine  # the estimate assembles the engines: imported when first used
    from memviz.core.gpus import get_gpu

    fits = _fits_within(a, sc, get_engine(sc.engine).usable_bytes(get_gpu(sc.gpu), sc) - FIT_MARGIN_BYTES)
    n = a.num_layers
    if fits(FitPlacement()):
        return None
    if a.is_moe and fits(FitPlacement(experts_from=0)):
        whole = largest_true(lambda f: fits(FitPlacement(experts_from=f)), 0, n - 1)
        return _one_more_part(whole, fits)
    ngl = largest_true(lambda k: fits(FitPlacement(gpu_layers=k, all_experts_on_host=a.is_moe)), 0, n)
    return FitPlacement(gpu_layers=ngl, all_experts_on_host=a.is_moe) if ngl >= 0 else None


def _fits_within(a: Architecture, sc: Any, budget_bytes: float) -> Callable[[FitPlacement], bool]:
    """Whether a placement's device memory, as memviz estimates it for `sc`, stays within `budget_bytes` (the
    trial loads of common/fit.cpp `get_memory_for_layers`)."""
    from memviz.core.estimate import device_arrays  # the estimate assembles the engines: imported when first used

    own = dict(sc.options)

    def fits(p: FitPlacement) -> bool:
        trial = sc.with_changes(gpu_layers=p.gpu_layers, options={**own, "fit": False, **p.options(a)})
        gpus, _ = device_arrays(a, trial, np.asarray(sc.context_tokens), np.asarray(sc.batch))
        return max(float(np.max(d.needed)) for d in gpus) <= budget_bytes
    return fits


def logged_placement(a: Architecture, sc: Any, whole_layers: int, free_bytes: float) -> FitPlacement:
    """The placement a llama.cpp log's fit line states ("N layers (M overflowing)" on one GPU: the first N - M
    layers whole, the experts of the rest in host memory); which part of the first overflowing layer stays on the
    GPU is traced only at debug level, so it is decided as `--fit` decides it, with memviz's estimate against the
    free memory the log printed less `fit_params_target`."""
    return _one_more_part(whole_layers, _fits_within(a, sc, free_bytes - FIT_MARGIN_BYTES))


def _one_more_part(first: int, fits) -> FitPlacement:
    """common/fit.cpp's last step for the first layer whose experts stay on the host: its up experts back on the GPU
    if that fits (then its gate experts too, if that fits as well), else its whole feed-forward on the host."""
    up = FitPlacement(experts_from=first, first_layer_rule="up")
    if not fits(up):
        return FitPlacement(experts_from=first, first_layer_rule="attn")
    gate = FitPlacement(experts_from=first, first_layer_rule="gate")
    return gate if fits(gate) else up


def default_fit_placement(a: Architecture, sc: Any) -> str | None:
    """For a llama.cpp scenario with `fit` off (memviz's -ngl 999), where llama-server's default --fit would start it
    instead; None where --fit would change nothing, for other engines, and where fit is on already."""
    if sc.engine != "llamacpp" or sc.engine_options["fit"]:
        return None
    trial = sc.with_changes(options={**sc.engine_options, "fit": True})
    fit = fit_placement(a, trial) if applies(trial, trial.engine_options) else None
    return fit.describe(a) if fit else None
