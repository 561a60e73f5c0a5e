"""The session document (a model, its edits, the scenarios, the GPUs) and its undo history.

A session is an immutable snapshot; every edit makes a new one, so undo/redo is a
stack of snapshots (glue's CommandStack idea without command objects). On disk it
is versioned JSON: `{"format": "memviz-session", "format_version": 2, ...}`; each
version has its own loader so older files keep opening.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.files import write_text_atomic
from memviz.core.runs import MeasuredRun, settings_key
from memviz.core.units import Unit

FORMAT = "memviz-session"
FORMAT_VERSION = 3  # 2: scenarios carry their engine's options; 3: runs are typed and linked by id
MAX_SCENARIOS = 1000  # a chart of 1,000 bars is already unreadable; beyond, a file is a mistake or hostile


@dataclass(frozen=True)
class Session:
    architecture: Architecture
    scenarios: tuple[Scenario, ...]
    preset: str | None = None  # the preset the model came from, if any
    gpus: tuple[str, ...] = ("rtx4090", "h100-80g")
    unit: Unit = Unit.GiB
    runs: tuple[MeasuredRun, ...] = field(default=())  # measured runs (probe, engine logs)

    def __post_init__(self) -> None:
        """Checked whole before a window replaces its session with this one."""
        from memviz.core.gpus import get_gpu

        if len(self.scenarios) > MAX_SCENARIOS:
            raise InputError(f"a session holds at most {MAX_SCENARIOS:,d} scenarios, this one {len(self.scenarios):,d}")
        if not all(isinstance(sc, Scenario) for sc in self.scenarios) or not all(
                isinstance(r, MeasuredRun) for r in self.runs):
            raise InputError("session scenarios and runs must be objects")
        if self.preset is not None and not isinstance(self.preset, str):
            raise InputError(f"session preset must be a name, got {self.preset!r:.60}")
        for g in self.gpus:
            if not isinstance(g, str):
                raise InputError(f"session GPUs must be names, got {g!r:.60}")
            get_gpu(g)

    def with_changes(self, **changes: Any) -> Session:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "preset": self.preset,
            "architecture": self.architecture.to_dict(),
            "scenarios": [s.to_dict() for s in self.scenarios],
            "gpus": list(self.gpus),
            "unit": self.unit.value,
            "runs": [r.to_dict() for r in self.runs],
        }

    @classmethod
    def from_dict(cls, data: Any) -> Session:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError("not a memviz session (missing \"format\": \"memviz-session\")")
        version = data.get("format_version")
        loader = _LOADERS.get(version) if type(version) is int else None
        if loader is None:
            raise InputError(f"session format_version {version!r} is not supported (this memviz reads {sorted(_LOADERS)})")
        return loader(data)

    def save(self, path: str | Path) -> None:
        """Write the session atomically: a failed save leaves the previous file as it was."""
        write_text_atomic(path, json.dumps(self.to_dict(), indent=2))

    @classmethod
    def load(cls, path: str | Path) -> Session:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"no session file at {p}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{p} is not valid JSON: {exc}") from None
        return cls.from_dict(data)


def _bounded(items: Any, key: str) -> list:
    """A list from a session file, refused before it is parsed item by item if it is not one or too long."""
    if not isinstance(items, list):
        raise InputError(f"session {key} must be a list")
    if len(items) > MAX_SCENARIOS:
        raise InputError(f"a session holds at most {MAX_SCENARIOS:,d} {key}, this one {len(items):,d}")
    return items


def _load_v1(data: dict[str, Any]) -> Session:
    try:
        return Session(
            architecture=Architecture.from_dict(data["architecture"]),
            scenarios=tuple(Scenario.from_dict(s) for s in _bounded(data["scenarios"], "scenarios")),
            preset=data.get("preset"),
            gpus=tuple(data.get("gpus", ())),
            unit=Unit(data.get("unit", "GiB")),
            runs=tuple(MeasuredRun.from_dict(r) for r in _bounded(data.get("runs", ()), "runs")),
        )
    except KeyError as exc:
        raise InputError(f"session is missing {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"session is malformed: {exc}") from None


def _load_v2(data: dict[str, Any]) -> Session:
    """Version 2 matched runs to scenarios by their settings: link each scenario to its run by id."""
    session = _load_v1(data)
    scenarios = []
    for sc in session.scenarios:
        run = next((r for r in reversed(session.runs) if settings_key(r.scenario) == settings_key(sc)), None)
        scenarios.append(sc.with_changes(run_id=run.id) if run else sc)
    return session.with_changes(scenarios=tuple(scenarios))


def _load_v3(data: dict[str, Any]) -> Session:
    session = _load_v1(data)
    ids = {r.id for r in session.runs}
    dangling = [sc.run_id for sc in session.scenarios if sc.run_id and sc.run_id not in ids]
    if dangling:
        raise InputError(f"session scenarios link to runs it does not hold: {', '.join(dangling)}")
    return session


# a version-1 scenario is a version-2 scenario without options; a version-2 run is a version-3 run without
# schema and id, matched to its scenario by settings
_LOADERS = {1: _load_v2, 2: _load_v2, 3: _load_v3}


class History:
    """Undo/redo over session snapshots (at most `limit` undo steps)."""

    def __init__(self, initial: Session, limit: int = 100) -> None:
        self._undo: list[Session] = []
        self._redo: list[Session] = []
        self._current = initial
        self._limit = limit

    @property
    def current(self) -> Session:
        return self._current

    def push(self, session: Session) -> None:
        if session == self._current:
            return
        self._undo.append(self._current)
        del self._undo[: -self._limit]
        self._redo.clear()
        self._current = session

    def reset(self, session: Session) -> None:
        self._undo.clear()
        self._redo.clear()
        self._current = session

    def can_undo(self) -> bool:
        return bool(self._undo)

    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo(self) -> Session:
        if self._undo:
            self._redo.append(self._current)
            self._current = self._undo.pop()
        return self._current

    def redo(self) -> Session:
        if self._redo:
            self._undo.append(self._current)
            self._current = self._redo.pop()
        return self._current
