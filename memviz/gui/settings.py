"""Preferences (not the session): window layout, unit, recent files, capacity GPUs.

One QSettings wrapper with typed reads and defaults. Tests point it at a
temporary INI file so they never touch the user's configuration.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QSettings

_DEFAULTS: dict[str, Any] = {
    "unit": "GiB",
    "recent_files": [],
    "gpus": ["rtx4090", "h100-80g"],
    "log_x": False,
    "sweep_axis": "context",
    "export_width": 1800,
    "export_screen_colours": False,  # exports in the light report theme unless the user keeps the screen's
}
MAX_RECENT = 8
_path: str | None = None


def use_path(path: str | None) -> None:
    """Store settings in an INI file at `path` (tests); None restores the platform default."""
    global _path
    _path = path


def _settings() -> QSettings:
    if _path is not None:
        return QSettings(_path, QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "memviz", "memviz")


def read(key: str) -> Any:
    raw = _settings().value(key)
    if raw is None:
        return _DEFAULTS.get(key)
    try:
        return json.loads(raw)
    except (TypeError, json.JSONDecodeError):
        return _DEFAULTS.get(key)


def write(key: str, value: Any) -> None:
    _settings().setValue(key, json.dumps(value))


def read_bytes(key: str) -> bytes | None:
    raw = _settings().value(key)
    return bytes(raw) if raw is not None else None


def write_bytes(key: str, value: bytes) -> None:
    _settings().setValue(key, value)


def add_recent(path: str) -> list[str]:
    recent = [path] + [p for p in read("recent_files") if p != path]
    write("recent_files", recent[:MAX_RECENT])
    return recent[:MAX_RECENT]
