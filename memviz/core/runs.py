"""A measured run: what a probe, an engine log or a stored run says one scenario really used.

One typed object for all three sources, parsed and validated here only: the app
reads probe results written by another Python (perhaps another memviz install),
session files and logs, so nothing from them reaches a chart unchecked. A run
keeps the settings it measured; a scenario links to its run by id
(`Scenario.run_id`), so renaming it keeps the link, and a run whose settings no
longer match its scenario's is stale: shown as such, never compared.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from typing import Any

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario

RUN_SCHEMA = 1
COMPONENTS = ("weights", "kv_cache", "activations", "overhead", "peak")
TIMINGS = ("ttft_s", "decode_tokens_per_s", "total_s")


def _bytes(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or abs(value) > 2**62 or (isinstance(value, float) and not value.is_integer()):
        raise InputError(f"measured {name} must be a whole number of bytes, got {value!r}")
    if name != "overhead" and value < 0:  # overhead is what the peak holds beyond the rest: it can be negative
        raise InputError(f"measured {name} must not be negative, got {value!r}")
    return int(value)


def _seconds(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InputError(f"timing {name} must be a non-negative number, got {value!r}")
    return float(value)


def parse_measured(measured: Any) -> dict[str, int | None]:
    """Measured components (bytes, None where not measured), checked: every source's figures pass here."""
    if not isinstance(measured, dict):
        raise InputError("measured components must be a mapping of components to bytes")
    unknown = set(measured) - set(COMPONENTS)
    if unknown:
        raise InputError(f"unknown measured components {sorted(unknown)}; known: {', '.join(COMPONENTS)}")
    return {c: _bytes(c, measured.get(c)) for c in COMPONENTS}


def parse_timings(timings: Any) -> dict[str, float]:
    """TTFT, decode speed and total time (only those measured), checked."""
    if not isinstance(timings, dict):
        raise InputError("timings must be a mapping")
    return {k: _seconds(k, timings.get(k)) for k in TIMINGS if timings.get(k) is not None}


@dataclass(frozen=True)
class MeasuredRun:
    id: str
    source: str  # "probe", "llamacpp log", "vllm log"
    scenario: Scenario  # the settings it measured
    measured: dict[str, int | None]  # COMPONENTS, bytes (None: not measured)
    timings: dict[str, float | None] = field(default_factory=dict)
    stored_run: str | None = None  # the calibration store's id of a probe run
    schema: int = RUN_SCHEMA

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not isinstance(self.id, str) or not self.id:
            raise InputError("a measured run needs a text id and source")
        object.__setattr__(self, "measured", parse_measured(self.measured))
        object.__setattr__(self, "timings", parse_timings(self.timings))

    @classmethod
    def from_probe(cls, result: Any, scenario: Any) -> MeasuredRun:
        """A finished probe `result` message and the scenario dict (or Scenario) it measured."""
        if not isinstance(result, dict) or not isinstance(result.get("measured"), dict):
            raise InputError("the probe's result has no measured components: it may come from another memviz version")
        try:
            sc = scenario if isinstance(scenario, Scenario) else Scenario.from_dict(scenario)
            stored = result.get("stored_run")
            return cls(id=stored if isinstance(stored, str) and stored else uuid.uuid4().hex[:12], source="probe",
                       scenario=sc, measured={c: result["measured"].get(c) for c in COMPONENTS},
                       timings={k: v for k, v in (result.get("timings") or {}).items() if k in TIMINGS},
                       stored_run=stored if isinstance(stored, str) else None)
        except InputError as exc:
            raise InputError(f"the probe's result does not match this memviz ({exc}); is the probe Python running "
                             "the same memviz version?") from None

    @classmethod
    def from_log(cls, engine: str, bytes_: dict[str, int | None], scenario: Scenario) -> MeasuredRun:
        """An engine log's components (`LogMeasurement.bytes`) as a run of `scenario`."""
        return cls(id=uuid.uuid4().hex[:12], source=f"{engine} log", scenario=scenario,
                   measured={c: bytes_.get(c) for c in COMPONENTS if c != "peak"})

    @classmethod
    def from_dict(cls, data: Any) -> MeasuredRun:
        if not isinstance(data, dict):
            raise InputError("a measured run must be an object")
        if data.get("schema", RUN_SCHEMA) != RUN_SCHEMA:
            raise InputError(f"measured run schema {data.get('schema')!r} is not supported (this memviz reads "
                             f"{RUN_SCHEMA})")
        try:
            return cls(id=data.get("id") or uuid.uuid4().hex[:12], source=data.get("source", "probe"),
                       scenario=Scenario.from_dict(data["scenario"]), measured=data["measured"],
                       timings=data.get("timings") or {}, stored_run=data.get("stored_run"))
        except KeyError as exc:
            raise InputError(f"measured run is missing {exc.args[0]!r}") from None

    def to_dict(self) -> dict[str, Any]:
        return {"schema": self.schema, "id": self.id, "source": self.source, "scenario": self.scenario.to_dict(),
                "measured": dict(self.measured), "timings": dict(self.timings), "stored_run": self.stored_run}


def settings_key(sc: Scenario) -> Scenario:
    """What a run must share with a scenario to be compared with its estimate: everything but the name and link."""
    return sc.with_changes(name="", run_id=None, hidden=False)


def for_scenario(runs: tuple[MeasuredRun, ...], sc: Scenario) -> MeasuredRun | None:
    """The run `sc` links to, or None."""
    return next((r for r in runs if r.id == sc.run_id), None) if sc.run_id else None


def is_stale(run: MeasuredRun, sc: Scenario) -> bool:
    """The scenario was edited after the run: its estimate is no longer the one the run measured against."""
    return settings_key(run.scenario) != settings_key(sc)
