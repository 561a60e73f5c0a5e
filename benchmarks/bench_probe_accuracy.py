"""Estimate-vs-measured accuracy of memviz on real transformers runs (prints a Markdown table).

Runs the probe over configs x dtypes x batch x prompt lengths (random-initialised
tiny models of four families, on the CPU unless --device says otherwise) and
writes, per run, measured bytes and the estimate's error per component.

Run: python benchmarks/bench_probe_accuracy.py [--device cpu|cuda] [--out table.md] [--raw runs.jsonl]
     [--configs a.json,b.json or preset names]
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
from memviz.core.calibration import calibrated_overhead, load_runs, save_run, scenario_calibration_key
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

DATA = Path(__file__).parents[1] / "tests" / "data" / "probe"
KEYS = ("weights", "kv_cache", "activations", "overhead", "peak")


def run_probe(args: list[str], data_dir: str, raw: Path | None = None) -> dict | None:
    r = subprocess.run([sys.executable, "-m", "memviz.probe", *args], capture_output=True, text=True, timeout=1800,
                       env={**os.environ, "MEMVIZ_DATA_DIR": data_dir})
    if raw is not None:  # every line the probe printed, for replay tests and later analysis
        with raw.open("a") as f:
            f.write(r.stdout if r.stdout.endswith("\n") or not r.stdout else r.stdout + "\n")
    for line in r.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("event") == "result":
            return msg
        if msg.get("event") == "error":
            print(f"  error: {msg['message']}", file=sys.stderr)
    return None


def _label(argv: list[str]) -> str:
    def opt(name: str, default: str = "") -> str:
        return argv[argv.index(name) + 1] if name in argv else default

    name = opt("--preset") or Path(opt("--config")).stem
    return (f"| {name} | {opt('--dtype', 'bf16')} | {opt('--quant', 'none')} | "
            f"{opt('--batch', '1')} | {opt('--prompt')} |")


def _architecture(argv: list[str]):
    if "--preset" in argv:
        return get_preset(argv[argv.index("--preset") + 1]).architecture()
    return from_config_path(argv[argv.index("--config") + 1])


def read_raw(path: Path, data_dir: str) -> list[tuple[list[str], dict | None]]:
    """Recorded probe runs (the JSON lines --raw wrote), each stored for calibration as the probe would."""
    runs, argv, env = [], [], {}
    for line in path.read_text().splitlines():
        msg = json.loads(line)
        if msg["event"] == "start":
            argv, env = msg["argv"], {}
        elif msg["event"] == "env":
            env = msg
        elif msg["event"] == "result":
            save_run(env, msg, Path(data_dir) / "runs")
            runs.append((argv, msg))
    return runs


def table(done: list[tuple[list[str], dict | None]], data_dir: str) -> str:
    """Measured components and the current estimate's error per component (re-estimated from each run's
    scenario, so recorded runs show what today's code says); "calibrated" is what the app's "use calibrated
    overhead" does: the median measured overhead of the stored runs of the scenario's group."""
    rows = ["| model | dtype | quant | B | prompt | weights (MiB) | w err | KV (MiB) | KV err | act (MiB) | act err | "
            "overhead (MiB) | ovh err | peak (MiB) | peak est (MiB) | peak err | peak err, calibrated | TTFT (s) | "
            "decode tok/s |", "|" + "---|" * 19]
    stored = load_runs(Path(data_dir) / "runs")
    overheads = set()
    for argv, res in done:
        if res is None:
            rows.append(f"{_label(argv)} failed |" + " |" * 13)
            continue
        m, t = res["measured"], res["timings"]
        arch = _architecture(argv)
        scenario = Scenario.from_dict(res["scenario"])
        est = estimate(arch, scenario)
        e = {**est.bytes, "peak": est.total}  # one device: its peak is the total
        overhead = calibrated_overhead(stored, scenario_calibration_key(scenario))
        overheads.add(f"{scenario_calibration_key(scenario)} {overhead / 2**20:.0f} MiB")
        calibrated = estimate(arch, scenario.with_changes(runtime_overhead_bytes=overhead, allocator_fraction=0.0))

        def err(k, m=m, e=e):
            return f"{(e[k] - m[k]) / m[k] * 100:+.1f} %" if m[k] else "—"

        rows.append(f"{_label(argv)} {m['weights'] / 2**20:.1f} | {err('weights')} | "
                    f"{m['kv_cache'] / 2**20:.2f} | {err('kv_cache')} | {m['activations'] / 2**20:.1f} | {err('activations')} | "
                    f"{m['overhead'] / 2**20:.0f} | {err('overhead')} | {m['peak'] / 2**20:.0f} | {e['peak'] / 2**20:.0f} | "
                    f"{err('peak')} | {(calibrated.total - m['peak']) / m['peak'] * 100:+.1f} % | {t['ttft_s']:.3f} | "
                    f"{t['decode_tokens_per_s'] or 0:.0f} |")
    rows.append(f"\nCalibrated overhead (median of the stored runs of each group): {', '.join(sorted(overheads))}.")
    return "\n".join(rows) + "\n"


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
    p.add_argument("--raw", default="", help="append every probe's JSON lines to this file")
    p.add_argument("--from-raw", default="", help="tabulate runs recorded with --raw (comma-separated files) instead")
    a = p.parse_args()
    data_dir = tempfile.mkdtemp()
    done: list[tuple[list[str], dict | None]] = []
    if a.from_raw:
        for f in a.from_raw.split(","):
            done += read_raw(Path(f), data_dir)
    for cfg, dtype, quant, batch, prompt in () if a.from_raw else itertools.product(
            a.configs.split(","), a.dtypes.split(","), a.quants.split(","), a.batches.split(","), a.prompts.split(",")):
        print(f"{Path(cfg).stem} {dtype} {quant} B={batch} prompt={prompt}", file=sys.stderr, flush=True)
        src = ["--preset", cfg] if not cfg.endswith(".json") else ["--config", cfg]
        argv = [*src, "--dtype", dtype, "--device", a.device, "--batch", batch, "--prompt", prompt, "--new", a.new,
                "--quant", quant]
        done.append((argv, run_probe(argv, data_dir, Path(a.raw) if a.raw else None)))
    text = table(done, data_dir)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
