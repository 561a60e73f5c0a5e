"""llama.cpp's compute buffer for MLA (DeepSeek-V2-shaped) and shared-expert MoE (Qwen2-MoE-shaped) models,
measured with a real llama.cpp: each shape is built by memviz's GGUF builder (F16, random weights), run by
`memviz probe --engine llamacpp` over contexts, micro-batches and flash attention on / off, and the buffers llama.cpp
printed are kept. `--write PATH` stores them as tests/data/llamacpp/mla_moe_buffers.json does; the table beside
memviz's figures goes to docs/llamacpp-accuracy.md.

    python benchmarks/llamacpp_mla_sweep.py [--write tests/data/llamacpp/mla_moe_buffers.json]
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

MiB = 2**20
_MLA = {"model_type": "deepseek_v2", "vocab_size": 512, "num_hidden_layers": 2, "intermediate_size": 256,
        "moe_intermediate_size": 64, "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
        "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": None, "v_head_dim": 128,
        "max_position_embeddings": 4096, "tie_word_embeddings": False}


def _mla(hidden: int, heads: int, rank: int, nope: int = 128, rope: int = 64, **changes) -> dict:
    return {**_MLA, "hidden_size": hidden, "num_attention_heads": heads, "num_key_value_heads": heads,
            "kv_lora_rank": rank, "qk_nope_head_dim": nope, "qk_rope_head_dim": rope, **changes}


SHAPES = {
    "mla-h1024-8x512": _mla(1024, 8, 512), "mla-h1024-16x512": _mla(1024, 16, 512),
    "mla-h1024-32x512": _mla(1024, 32, 512), "mla-h1024-16x256": _mla(1024, 16, 256),
    "mla-h2048-16x512": _mla(2048, 16, 512), "mla-h2048-32x256": _mla(2048, 32, 256),
    "mla-16x512-nope64-rope32": _mla(1024, 16, 512, 64, 32, v_head_dim=64),
    "mla-16x256-nope64-rope128": _mla(1024, 16, 256, 64, 128),
    "mla-moe-dominated": _mla(1024, 4, 128, 64, 32, v_head_dim=64, intermediate_size=4096, moe_intermediate_size=1024,
                              n_routed_experts=16, num_experts_per_tok=8, n_shared_experts=2),
    "qwen2moe-wide-shared": {"model_type": "qwen2_moe", "vocab_size": 512, "hidden_size": 1024, "num_hidden_layers": 2,
                             "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 2048,
                             "moe_intermediate_size": 512, "num_experts": 16, "num_experts_per_tok": 4,
                             "shared_expert_intermediate_size": 4096, "max_position_embeddings": 4096,
                             "tie_word_embeddings": False},
}
SETTINGS = list(itertools.product((1024, 4096), (128, 512), ("on", "off")))


def probe_buffers(config: dict, args: list[str], data: str, env: dict[str, str] | None = None) -> dict:
    """`memviz probe --engine llamacpp` on `config` with `args` (and `env` added to the environment): llama.cpp's
    compute, KV and model buffers (MiB, as printed) and memviz's compute estimate."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config, f)
    cmd = [sys.executable, "-m", "memviz.probe", "--engine", "llamacpp", "--config", f.name, *args, "--no-store"]
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {}), "MEMVIZ_DATA_DIR": data}).stdout
    Path(f.name).unlink()
    result = next(json.loads(x) for x in reversed(out.splitlines()) if '"event":"result"' in x)
    b = result["buffers"]
    return {**{f"{k}_mib": round(sum(b[k].values()) / MiB, 2) for k in ("compute", "kv", "model")},
            "memviz_compute_mib": round(result["estimated_buffers"]["compute"] / MiB, 2)}


def measure(config: dict, context: int, ubatch: int, flash: str, data: str) -> dict:
    return {"context": context, "ubatch": ubatch, "flash_attn": flash, **probe_buffers(config, [
        "--weights", "F16", "--context", str(context), "--ubatch", str(ubatch), "--flash-attn", flash, "--prompt", "8",
        "--new", "1"], data)}


def compute_row(m: dict) -> str:
    """llama.cpp's compute buffer / memviz's (error) and the KV, as table cells."""
    err = 100 * (m["memviz_compute_mib"] - m["compute_mib"]) / m["compute_mib"]
    return f"{m['compute_mib']:.2f} / {m['memviz_compute_mib']:.2f} ({err:+.1f} %) | {m['kv_mib']:.2f} |"


def write_cases(path: str, what: str, shapes: dict, cases: list[dict]) -> None:
    """The measurements as JSON, with llama.cpp's version and CPU features and `what` was run as their source."""
    import llama_cpp

    source = (f"llama.cpp 0c1e570 (llama-cpp-python {llama_cpp.__version__}, CPU build), "
              f"{llama_cpp.llama_print_system_info().decode().strip()}; {what}, figures as llama.cpp printed them (MiB)")
    Path(path).write_text(json.dumps({"source": source, "shapes": shapes, "cases": [
        {k: v for k, v in c.items() if k != "memviz_compute_mib"} for c in cases]}, indent=1) + "\n")


def run_table(settings: str, runs: list[tuple[str, dict, tuple]], measure_fn, data: str | None = None) -> list[dict]:
    """Measures each (shape name, config, settings) run with `measure_fn(config, *settings, data folder)`, printing a
    Markdown row each (`settings` names their columns); returns the measurements."""
    print(f"| shape | {settings} | compute MiB (llama.cpp / memviz) | KV MiB |")
    print("|---|" + "---|" * (settings.count("|") + 1) + "---|---:|")
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, config, values in runs:
            m = measure_fn(config, *values, data or tmp)
            cases.append({"shape": name, **m})
            print(f"| {name} | {' | '.join(map(str, values))} | {compute_row(m)}", flush=True)
    return cases


def sweep_cli(json_path: str, columns: str, shapes: dict, settings_of, measure_fn, what: str) -> None:
    """A sweep's command line: `--write` stores the measurements at a path (as `json_path`), `--data` keeps the built
    files between runs; `settings_of(name)` lists each shape's settings, `columns` names them, `what` says what was
    run (the JSON's source)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", help=f"store the measurements as JSON ({json_path})")
    ap.add_argument("--data", help="memviz data folder keeping the built files between runs (default: a temporary one)")
    args = ap.parse_args()
    runs = [(name, config, values) for name, config in shapes.items() for values in settings_of(name)]
    cases = run_table(columns, runs, measure_fn, args.data)
    if args.write:
        write_cases(args.write, what, shapes, cases)


def main() -> None:
    sweep_cli("tests/data/llamacpp/mla_moe_buffers.json", "context | n_ubatch | flash attention", SHAPES,
              lambda name: SETTINGS, measure, "benchmarks/llamacpp_mla_sweep.py: shapes built by "
              "memviz.probe.gguf_build (F16, random weights)")


if __name__ == "__main__":
    main()
