"""llama.cpp's buffers for an MLA model in a legacy GGUF (attn_kv_b whole, no key_length_mla: converted before
llama.cpp PR #12801) beside the same shape in a current file, measured with a real llama.cpp: both files are
built by memviz's GGUF builder (F16, random weights) and run by `memviz probe --engine llamacpp`. The legacy file
caches K and V per head, the current one the latent only. `--write PATH` stores the runs as
tests/data/llamacpp/mla_legacy_buffers.json does.

    python benchmarks/llamacpp_mla_legacy.py [--write tests/data/llamacpp/mla_legacy_buffers.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.importers.gguf_file import read_gguf
from memviz.probe.gguf_build import write_f16

MiB = 2**20
CONFIG = {"model_type": "deepseek_v2", "vocab_size": 512, "num_hidden_layers": 2, "intermediate_size": 256,
          "moe_intermediate_size": 64, "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
          "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": None, "max_position_embeddings": 8192,
          "tie_word_embeddings": False, "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16,
          "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}
SETTINGS = ((4096, "on"), (4096, "off"), (8192, "on"))
#: more legacy shapes (head count, per-head sizes, hidden size, latent rank), flash attention on and off
SHAPES = {"16 heads 128/64/128, hidden 1024": {},
          "8 heads": {"num_attention_heads": 8, "num_key_value_heads": 8},
          "32 heads": {"num_attention_heads": 32, "num_key_value_heads": 32},
          "16 heads 64/32/64, hidden 2048, rank 256": {"hidden_size": 2048, "kv_lora_rank": 256, "qk_nope_head_dim": 64,
                                                      "qk_rope_head_dim": 32, "v_head_dim": 64}}


def measure(path: Path, context: int, flash: str, data: str) -> dict:
    cmd = [sys.executable, "-m", "memviz.probe", "--engine", "llamacpp", "--gguf", str(path), "--context", str(context),
           "--flash-attn", flash, "--prompt", "8", "--new", "1", "--no-store"]
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "MEMVIZ_DATA_DIR": data}).stdout
    result = next(json.loads(x) for x in reversed(out.splitlines()) if '"event":"result"' in x)
    b = result["buffers"]
    return {"kv_bytes": sum(b["kv"].values()), "compute_bytes": sum(b["compute"].values()),
            "cells": b["kv_caches"]["cache0_cells"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", help="store the runs as JSON")
    args = ap.parse_args()
    cases = []
    runs = [(name, legacy, context, flash) for legacy in (True, False) for context, flash in SETTINGS
            for name in list(SHAPES)[:1]]
    runs += [(name, True, 4096, flash) for name in list(SHAPES)[1:] for flash in ("on", "off")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, legacy, context, flash in runs:
            config = {**CONFIG, **SHAPES[name]}
            path = Path(tmp) / f"{abs(hash((name, legacy)))}.gguf"
            if not path.exists():
                write_f16(from_hf_config(config, name="mla").with_changes(mla_kv_b_unsplit=legacy), path)
            a = read_gguf(path)
            run = measure(path, context, flash, tmp)
            e = estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="stored", context_tokens=context,
                                     options={"flash_attn": flash}))
            cases.append({"shape": name, "config": config, "legacy_file": legacy, "context": context,
                          "flash_attn": flash, **run})
            print(f"{name:42s} {'legacy' if legacy else 'split '} -c {context} -fa {flash:3s}: "
                  f"KV {run['kv_bytes'] / MiB:7.2f} / {e.bytes['kv_cache'] / MiB:7.2f} MiB, "
                  f"compute {run['compute_bytes'] / MiB:7.2f} / {e.bytes['activations'] / MiB:7.2f} MiB (measured / memviz)")
    if args.write:
        Path(args.write).write_text(json.dumps({"source": "benchmarks/llamacpp_mla_legacy.py, llama-cpp-python 0.3.36 "
                                                "(llama.cpp 0c1e570), this project's CPU", "cases": cases},
                                               indent=1) + "\n")


if __name__ == "__main__":
    main()
