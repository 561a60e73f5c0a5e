"""The planner's time for the full grid of one model (target: under 200 ms each on the development machine).

Run: python benchmarks/bench_planner.py   (prints one line per case: median and slowest of 7 runs, candidates)
"""

from __future__ import annotations

import statistics
import time

from memviz.core.planner import Requirements, parse_hardware, plan
from memviz.core.presets import get_preset

CASES = [("llama-3.1-70b", "h100-80gx8", 1, None), ("llama-3.1-70b", "rtx4090x2", 1, 128 * 2**30),
         ("deepseek-v3", "h100-80gx8", 1, None), ("deepseek-v3", "h100-80gx8", 2, None)]


def main() -> None:
    for preset, gpus, nodes, host in CASES:
        a = get_preset(preset).architecture()
        hw = parse_hardware(gpus, nodes, host)
        req = Requirements(context_tokens=32768, concurrency=8)
        times = []
        for _ in range(7):
            t = time.perf_counter()
            p = plan(a, hw, req)
            times.append(time.perf_counter() - t)
        where = f"{nodes} × {gpus}" + (f" + {host / 2**30:.0f} GiB host RAM" if host else "")
        print(f"{preset:14s} on {where:34s}: median {statistics.median(times) * 1000:6.1f} ms, slowest "
              f"{max(times) * 1000:6.1f} ms (first {times[0] * 1000:6.1f} ms); {p.considered} configurations, "
              f"{len(p.ranked)} kept")


if __name__ == "__main__":
    main()
