"""Estimate-vs-measured accuracy of memviz on real transformers runs (prints a Markdown table).

Runs the probe over configs x dtypes x batch x prompt lengths (random-initialised
tiny models of four families, on the CPU unless --device says otherwise) and
writes, per run, measured bytes and the estimate's error per component.

Run: python benchmarks/bench_probe_accuracy.py [--device cpu|cuda] [--out table.md] [--configs a.json,b.json]
     [--quants none,bnb-nf4,bnb-int8] (bitsandbytes rows load in the model's dtype, quantized while loading)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from memviz.core.arch import from_config_path
from memviz.core.calibration import calibrated_overhead, load_runs, scenario_calibration_key
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

DATA = Path(__file__).parents[1] / "tests" / "data" / "probe"
KEYS = ("weights", "kv_cache", "activations", "overhead", "peak")


def run_probe(args: list[str], data_dir: str) -> dict | None:
    r = subprocess.run([sys.executable, "-m", "memviz.probe", *args], capture_output=True, text=True, timeout=1800,
                       env={**os.environ, "MEMVIZ_DATA_DIR": data_dir})
    for line in r.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("event") == "result":
            return msg
        if msg.get("event") == "error":
            print(f"  error: {msg['message']}", file=sys.stderr)
    return None


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--configs", default=",".join(str(f) for f in sorted(DATA.glob("*.json"))))
    p.add_argument("--dtypes", default="fp32,bf16")
    p.add_argument("--batches", default="1,4")
    p.add_argument("--prompts", default="128,1024")
    p.add_argument("--new", default="16")
    p.add_argument("--quants", default="none")
    p.add_argument("--out", default="")
    a = p.parse_args()
    rows = ["| model | dtype | quant | B | prompt | weights (MiB) | w err | KV (MiB) | KV err | act (MiB) | act err | "
            "overhead (MiB) | ovh err | peak (MiB) | peak est (MiB) | peak err | peak err, calibrated | TTFT (s) | "
            "decode tok/s |", "|" + "---|" * 19]
    data_dir = tempfile.mkdtemp()
    done = []
    for cfg, dtype, quant, batch, prompt in itertools.product(a.configs.split(","), a.dtypes.split(","),
                                                              a.quants.split(","), a.batches.split(","), a.prompts.split(",")):
        name = Path(cfg).stem
        print(f"{name} {dtype} {quant} B={batch} prompt={prompt}", file=sys.stderr, flush=True)
        src = ["--preset", cfg] if not cfg.endswith(".json") else ["--config", cfg]
        res = run_probe([*src, "--dtype", dtype, "--device", a.device, "--batch", batch, "--prompt", prompt,
                         "--new", a.new, "--quant", quant], data_dir)
        done.append((cfg, f"| {name} | {dtype} | {quant} | {batch} | {prompt} |", res))
    # what the app's "use calibrated overhead" does: the median measured overhead of this machine's stored runs
    # of the scenario's group (device kind; bitsandbytes or not)
    stored = load_runs(Path(data_dir) / "runs")
    overheads = set()
    for cfg, label, res in done:
        if res is None:
            rows.append(f"{label} failed |" + " |" * 13)
            continue
        m, e, t = res["measured"], res["estimate"], res["timings"]
        arch = from_config_path(cfg) if cfg.endswith(".json") else get_preset(cfg).architecture()
        scenario = Scenario.from_dict(res["scenario"])
        overhead = calibrated_overhead(stored, scenario_calibration_key(scenario))
        overheads.add(f"{scenario_calibration_key(scenario)} {overhead / 2**20:.0f} MiB")
        calibrated = estimate(arch, scenario.with_changes(runtime_overhead_bytes=overhead))

        def err(k, m=m, e=e):
            return f"{(e[k] - m[k]) / m[k] * 100:+.1f} %" if m[k] else "—"

        rows.append(f"{label} {m['weights'] / 2**20:.1f} | {err('weights')} | "
                    f"{m['kv_cache'] / 2**20:.2f} | {err('kv_cache')} | {m['activations'] / 2**20:.1f} | {err('activations')} | "
                    f"{m['overhead'] / 2**20:.0f} | {err('overhead')} | {m['peak'] / 2**20:.0f} | {e['peak'] / 2**20:.0f} | "
                    f"{err('peak')} | {(calibrated.total - m['peak']) / m['peak'] * 100:+.1f} % | {t['ttft_s']:.3f} | "
                    f"{t['decode_tokens_per_s'] or 0:.0f} |")
    rows.append(f"\nCalibrated overhead (median of the stored runs of each group): {', '.join(sorted(overheads))}.")
    table = "\n".join(rows) + "\n"
    print(table)
    if a.out:
        Path(a.out).write_text(table)


if __name__ == "__main__":
    main()
