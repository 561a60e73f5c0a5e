"""Byte units. GiB (2**30) and GB (10**9) are different units and are never mixed."""

from __future__ import annotations

import math
from enum import Enum

from memviz.core.errors import InputError

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40
KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12


class Unit(str, Enum):
    """Display unit; the enum value is the printed suffix."""

    GiB = "GiB"
    GB = "GB"

    @property
    def bytes(self) -> int:
        return GiB if self is Unit.GiB else GB


def to_unit(nbytes: float, unit: Unit = Unit.GiB) -> float:
    """`nbytes` expressed in `unit` (GiB = 2**30 bytes, GB = 10**9 bytes)."""
    return nbytes / unit.bytes


def format_bytes(nbytes: float, unit: Unit = Unit.GiB, digits: int = 2) -> str:
    """`nbytes` as text with the unit always printed, e.g. '3.26 GiB' (a difference that rounds to zero shows no
    sign: '0.000 GiB', not '-0.000 GiB')."""
    text = f"{to_unit(nbytes, unit):,.{digits}f}"
    if not float(text.replace(",", "")):
        text = text.lstrip("-")
    return f"{text} {unit.value}"


MAX_BYTES = 1 << 60  # 1 EiB: far beyond any memory a scenario or a machine has


def parse_bytes(text: str) -> int:
    """Parse '24GiB', '80 GB', '512MiB' or a plain byte count into bytes. A plain number under 1 MiB is refused:
    no memory size is that small, and '64' meant as 64 GiB would silently read as 64 bytes."""
    units = {"tib": TiB, "gib": GiB, "mib": MiB, "kib": KiB, "tb": TB, "gb": GB, "mb": MB, "kb": KB, "b": 1}
    s = text.strip().lower().replace(" ", "").replace("_", "")
    suffix = next((u for u in units if s.endswith(u)), "")
    number, factor = (s[: -len(suffix)], units[suffix]) if suffix else (s, 1)
    try:
        value = float(number)
    except ValueError:
        raise InputError(f"cannot read a memory size from {text!r} (expected e.g. '24GiB' or '80GB')") from None
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"memory size must be a positive number, got {text!r:.40}")
    if not suffix and value < MiB:
        raise InputError(f"memory size {text!r:.40} has no unit: write e.g. '{number}GiB' or '{number}GB'")
    if value * factor > MAX_BYTES:
        raise InputError(f"memory size {text!r:.40} is beyond any machine (more than 1 EiB)")
    return int(round(value * factor))
