"""Accuracy of memviz's llama.cpp engine against a real llama.cpp, over a matrix of architectures, mixes and
settings: runs `memviz probe --engine llamacpp` per case and prints a Markdown table (docs/llamacpp-accuracy.md).

    python benchmarks/llamacpp_probe_matrix.py > docs/llamacpp-accuracy.md
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIGS = Path(__file__).parents[1] / "tests" / "data" / "llamacpp" / "configs"
ARCHS = ("llama-gqa", "qwen2-tied", "gemma2-swa", "qwen3moe", "deepseek2-mla", "gpt-oss-swa-moe")
MIXES = ("Q8_0", "Q4_K_M", "Q4_0", "Q2_K", "IQ4_XS")
SETTINGS = {
    "fa on, 1 seq, ctx 1000": ["--flash-attn", "on", "--context", "1000"],
    "fa off, 4 seqs, ctx 3000": ["--flash-attn", "off", "--context", "3000", "--parallel", "4"],
    "4 seqs unified, KV q8_0, ctx 3000": ["--context", "3000", "--parallel", "4", "--unified-kv", "--cache-type-k",
                                          "q8_0", "--cache-type-v", "q8_0"],
    "KV q4_0, no-mmap, ctx 2048": ["--context", "2048", "--cache-type-k", "q4_0", "--cache-type-v", "q4_0", "--no-mmap"],
}
MiB = 2**20


def run(data: str, arch: str, mix: str, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "memviz.probe", "--engine", "llamacpp", "--config", str(CONFIGS / f"{arch}.json"),
           "--weights", mix, "--prompt", "32", "--new", "4", "--no-store", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "MEMVIZ_DATA_DIR": data}).stdout
    ends = [json.loads(x) for x in out.splitlines() if '"event":"result"' in x or '"event":"error"' in x]
    return ends[-1] if ends else {"event": "error", "message": "no result"}


def row(arch: str, mix: str, name: str, r: dict) -> str:
    if r["event"] != "result":
        return f"| {arch} | {mix} | {name} | {r['message']} | | | | |"
    b, e = r["buffers"], r["estimated_buffers"]
    model = sum(b["model"].values()) / MiB
    model_err = (sum(e["model"].values()) - sum(b["model"].values())) / MiB
    kv = r["measured"]["kv_cache"] / MiB
    kv_err = (r["estimate"]["kv_cache"] - r["measured"]["kv_cache"]) / MiB
    compute = sum(b["compute"].values())
    err = (e["compute"] - compute) / compute * 100
    return (f"| {arch} | {mix} | {name} | {model:.2f} | {model_err:+.3f} | {kv:.2f} | {kv_err:+.3f} | "
            f"{compute / MiB:.2f} | {err:+.1f} % |")


def main() -> None:
    import llama_cpp

    print("# memviz's llama.cpp engine against a real llama.cpp\n")
    print(f"llama-cpp-python {llama_cpp.__version__} (llama.cpp 0c1e570), "
          f"{llama_cpp.llama_print_system_info().decode().strip()}, {platform.machine()}, "
          "made by `benchmarks/llamacpp_probe_matrix.py`. Tiny models of the six shapes in "
          "tests/data/llamacpp/configs, random weights quantized by llama.cpp itself. Buffer sizes are llama.cpp's "
          "own log lines (MiB, two decimals: ±0.005 MiB is print resolution); errors are estimate − measured.\n")
    print("| model | mix | settings | model buffers MiB | error MiB | KV MiB | error MiB | compute MiB | error |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as data:
        for arch in ARCHS:
            for mix in MIXES:
                for name, extra in SETTINGS.items():
                    print(row(arch, mix, name, run(data, arch, mix, extra)), flush=True)


if __name__ == "__main__":
    main()
