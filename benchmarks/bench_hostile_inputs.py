"""How long hostile inputs take, per surface (the robustness tests check the answers; this prints the times).

Run: python benchmarks/bench_hostile_inputs.py   (adversarial log lines, a 100 MB real log, hostile sessions)
and, for the fuzzed surfaces' case counts and runtimes:
FUZZ_EXAMPLES=3000 python -m pytest -q tests/core/test_hostile_inputs.py tests/core/importers -k "hostile or fuzz" \
    --hypothesis-show-statistics
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.importers.logs import parse_log
from memviz.core.presets import get_preset
from memviz.core.session import Session

LOGS = Path(__file__).parents[1] / "tests" / "data" / "logs"
LINES = {"digits": "1" * 100_000, "repeated words": "model buffer size " * 6000, "(Worker repeated": "(Worker " * 12_000,
         "vLLM phrase repeated": "Loading model weights took " * 4000, "spaces": " " * 100_000 + "x"}


def timed(fn) -> tuple[float, str]:
    t = time.perf_counter()
    try:
        fn()
        outcome = "ok"
    except InputError as exc:
        outcome = f"InputError: {str(exc)[:60]}"
    return time.perf_counter() - t, outcome


def main() -> None:
    for name, line in LINES.items():
        s, out = timed(lambda line=line: parse_log(("INFO\n" + line + "\n") * 3))
        print(f"log line, {name:22s} {len(line):7,d} chars: {s * 1e3:8.1f} ms  {out}")
    real = (LOGS / "llamacpp_rtx4080_pr552.log").read_text()
    big = real * (100_000_000 // len(real))
    s, out = timed(lambda: parse_log(big))
    print(f"real llama.cpp log repeated to {len(big) / 1e6:.0f} MB: {s:.2f} s  {out}")
    a = get_preset("qwen2.5-0.5b").architecture()
    d = Session(a, (Scenario(),)).to_dict()
    for name, change in {"1,001 scenarios": lambda d: d.update(scenarios=d["scenarios"] * 1001),
                         "100,000 layers": lambda d: d["architecture"].update(num_layers=100_000,
                                                                               layer_types=["full_attention"] * 100_000),
                         "unknown GPU": lambda d: d.update(gpus=["h999"])}.items():
        doc = json.loads(json.dumps(d))
        change(doc)
        s, out = timed(lambda doc=doc: Session.from_dict(doc))
        print(f"session with {name:16s}: {s * 1e3:8.1f} ms  {out}")


if __name__ == "__main__":
    main()
