"""JSON-lines messages between the probe and its client (pure: no torch, no Qt).

One JSON object per line on stdout, each with `"v": 1` and an `"event"`:

- `start`  {pid, argv}: first line, before any heavy import
- `env`    {device, device_name, torch, transformers, python, driver, threads, allocator_conf, memory_total}
- `phase`  {name, bytes: {...}, t_s}: baseline, runtime, load, warmup, prefill, decode
- `sample` {t_s, rss|allocated|reserved|nvml_used}: the memory timeline, a few per second
- `progress` {phase, fraction}
- `result` {measured: {weights, kv_cache, activations, overhead, peak}, timings: {ttft_s,
           decode_tokens_per_s, total_s}, estimate: {...same keys...}, error: {...}, partial, phase_failed}
- `error`  {message, kind, phase, traceback}

Exactly one `result` or `error` ends a run. Exit status: 0 ok, 2 bad input,
3 out of memory (with a partial `result`), 1 any other failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

VERSION = 1
EVENTS = ("start", "env", "phase", "sample", "progress", "result", "error")
COMPONENTS = ("weights", "kv_cache", "activations", "overhead", "peak")
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_OOM = 0, 1, 2, 3


def encode(event: str, **fields: Any) -> str:
    """One line of JSON for `event` (no newline inside)."""
    if event not in EVENTS:
        raise ValueError(f"unknown probe event {event!r}")
    return json.dumps({"v": VERSION, "event": event, **fields}, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class Message:
    event: str
    data: dict[str, Any]


def decode(line: str) -> Message | None:
    """A probe message, or None for a line that is not one (log text, garbage)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or obj.get("v") != VERSION or obj.get("event") not in EVENTS:
        return None
    return Message(obj["event"], obj)
