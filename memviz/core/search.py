"""Bisection for the largest whole number that passes a monotone test (what fits: a context, a batch, layers)."""

from __future__ import annotations

from collections.abc import Callable


def largest_true(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """Largest n in [lo, hi] with ok(n), for ok true up to some n and false beyond; lo - 1 when ok(lo) is false."""
    if not ok(lo):
        return lo - 1
    if ok(hi):
        return hi
    while hi - lo > 1:  # ok(lo) holds, ok(hi) does not
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo
