"""Stored probe runs and what they teach the estimator.

Every finished probe run is kept as one JSON file in the user's data folder
(`$MEMVIZ_DATA_DIR`, else `$XDG_DATA_HOME/memviz`, `~/.local/share/memviz`,
`~/Library/Application Support/memviz` or `%APPDATA%/memviz`), keyed by the
machine that made it: device name, device kind, driver, torch and transformers
versions, dtype, engine. From the runs of one machine:

- `calibrated_overhead`: the median measured overhead (interpreter, libraries,
  CUDA context, allocator reserve) replaces the engine's assumed constant;
- `residual_band`: the largest relative error of the estimated peak against the
  measured peak, drawn as a ± band around estimates.

Runs calibrate scenarios of their group (`calibration_key`): the device kind, and
whether bitsandbytes quantized the weights while loading — its and accelerate's
imports add 55-95 MiB of runtime on the CPU (docs/accuracy-cpu.md).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.files import write_text_atomic
from memviz.core.formats import BITSANDBYTES
from memviz.core.runs import COMPONENTS, MeasuredRun, parse_measured, parse_timings

KEY_FIELDS = ("device", "device_name", "driver", "torch", "transformers", "dtype", "engine")
CALIBRATION_KEYS = ("cpu", "cuda", "cpu+bitsandbytes", "cuda+bitsandbytes", "llamacpp:cpu", "llamacpp:cuda")


def calibration_key(device_kind: str, bitsandbytes: bool, engine: str = "transformers") -> str:
    """The group of runs that calibrates a scenario of `engine` on `device_kind` ("cpu"/"cuda"): each
    engine's process (Python + torch, or llama.cpp) has its own overhead."""
    base = f"{device_kind}+bitsandbytes" if bitsandbytes else device_kind
    return base if engine == "transformers" else f"{engine}:{base}"


def scenario_calibration_key(sc: Scenario) -> str:
    """`calibration_key` of a scenario: its engine, device and whether its weight format is bitsandbytes'."""
    return calibration_key(sc.device, sc.weight_format in BITSANDBYTES, sc.engine)


def data_dir() -> Path:
    if os.environ.get("MEMVIZ_DATA_DIR"):
        return Path(os.environ["MEMVIZ_DATA_DIR"])
    system = platform.system()
    if system == "Darwin":
        return Path.home() / "Library" / "Application Support" / "memviz"
    if system == "Windows":
        return Path(os.environ.get("APPDATA", Path.home())) / "memviz"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "memviz"  # empty: unset


def runs_dir() -> Path:
    return data_dir() / "runs"


@dataclass(frozen=True)
class StoredRun:
    id: str
    created: float
    machine: dict[str, Any]
    settings: dict[str, Any]
    measured: dict[str, int | None]
    estimate: dict[str, int]
    timings: dict[str, float | None]
    scenario: dict[str, Any] | None = None  # the scenario the probe estimated (runs stored since format 3)

    @property
    def device_kind(self) -> str:
        return "cpu" if str(self.machine.get("device", "cpu")).startswith("cpu") else "cuda"

    @property
    def key(self) -> str:
        return calibration_key(self.device_kind, self.settings.get("quant", "none") not in (None, "none"),
                               self.machine.get("engine") or "transformers")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "machine": self.machine, "settings": self.settings,
                "measured": self.measured, "estimate": self.estimate, "timings": self.timings,
                "scenario": self.scenario}

    def measured_run(self) -> MeasuredRun | None:
        """This stored run as the app's measured run (None for runs stored without their scenario)."""
        return None if self.scenario is None else MeasuredRun(self.id, "stored probe run", Scenario.from_dict(
            self.scenario), self.measured, self.timings, self.id)


def save_run(env: dict[str, Any], result: dict[str, Any], folder: Path | None = None) -> StoredRun:
    """Store a finished (non-partial) probe run; `env` and `result` are the probe's messages. Its id, the file's
    name, is the second it was stored and 48 random bits: 24 let two of 200 runs stored in one second share a name
    (and the later replace the earlier) about once in 800 times, as a concurrent-store test found."""
    if result.get("partial"):
        raise InputError("partial (out-of-memory) runs are not stored for calibration")
    run = StoredRun(
        id=time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:12], created=time.time(),
        machine={k: env.get(k) for k in KEY_FIELDS},
        settings={k: env.get(k) for k in ("batch", "prompt", "new", "attn", "cache", "quant", "threads", "weights",
                                          "context", "parallel")}
        | {"model": result.get("model"), "context_tokens": result.get("context_tokens")},
        measured=parse_measured({k: v for k, v in result["measured"].items() if k in COMPONENTS}),
        estimate=result["estimate"], timings=parse_timings(result.get("timings") or {}), scenario=result.get("scenario"),
    )
    folder = folder or runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / f"{run.id}.json", json.dumps(run.to_dict(), indent=2))
    return run


def load_runs(folder: Path | None = None, skipped: list[str] | None = None) -> list[StoredRun]:
    """All stored runs, oldest first; a damaged or foreign file is skipped, and named in `skipped` with why."""
    folder = folder or runs_dir()
    out = []
    for f in sorted(folder.glob("*.json")) if folder.exists() else []:
        try:
            d = json.loads(f.read_text(encoding="utf-8"))
            if not isinstance(d, dict):
                raise TypeError("not a JSON object")
            kinds = {"id": str, "machine": dict, "settings": dict, "estimate": dict}
            wrong = [k for k, kind in kinds.items() if not isinstance(d.get(k), kind)]
            if wrong:
                raise TypeError(f"{', '.join(wrong)} missing or of the wrong type")
            out.append(StoredRun(d["id"], float(d["created"]), dict(d["machine"]), dict(d["settings"]),
                                 parse_measured(d["measured"]), dict(d["estimate"]), parse_timings(d.get("timings") or {}),
                                 d.get("scenario")))
        except (OSError, ValueError, KeyError, TypeError, InputError) as exc:  # a damaged or foreign file: skipped
            if skipped is not None:
                skipped.append(f"{f.name} ({type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''})")
    return sorted(out, key=lambda r: r.created)


def delete_run(run_id: str, folder: Path | None = None) -> None:
    f = (folder or runs_dir()) / f"{run_id}.json"
    if not f.exists() or "/" in run_id or "\\" in run_id:
        raise InputError(f"no stored run {run_id!r}")
    f.unlink()


def export_runs(path: str | Path, folder: Path | None = None) -> Path:
    p = Path(path)
    write_text_atomic(p, json.dumps([r.to_dict() for r in load_runs(folder)], indent=2))
    return p


def _matching(runs: list[StoredRun], key: str) -> list[StoredRun]:
    return [r for r in runs if r.key == key and r.measured.get("overhead") is not None]


def calibrated_overhead(runs: list[StoredRun], key: str) -> int | None:
    """Median measured overhead of this machine's runs of group `key` (`calibration_key`), or None without runs."""
    m = _matching(runs, key)
    return int(statistics.median(r.measured["overhead"] for r in m)) if m else None


def residual_band(runs: list[StoredRun], key: str) -> float | None:
    """Largest |estimated peak − measured peak| / measured peak over the matching runs (a fraction)."""
    m = [r for r in _matching(runs, key) if r.measured.get("peak")]
    if not m:
        return None
    return max(abs(r.estimate["peak"] - r.measured["peak"]) / r.measured["peak"] for r in m)
