"""Measure llama.cpp's own buffer sizes for tiny GGUF files and compare them with the llama.cpp engine.

Needs the `llamacpp` extra (llama-cpp-python). Writes GGUF files with gguf's GGUFWriter (random F16 weights,
llama architecture, a byte-level vocabulary padded to the vocabulary size), loads each in a child process
through the low-level API with the given context parameters, and reads llama.cpp's log lines
("KV buffer size", "compute buffer size", "output buffer size", "n_ctx", "n_ubatch"). Prints one JSON line
per case; `--write PATH` stores them as tests/data/llamacpp/cpu_buffers.json does.

    python benchmarks/llamacpp_buffers.py [--write tests/data/llamacpp/cpu_buffers.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np

LOAD = r"""
import sys, json, llama_cpp as l
path, cfg = sys.argv[1], json.loads(sys.argv[2])
l.llama_backend_init()
m = l.llama_model_load_from_file(path.encode(), l.llama_model_default_params())
cp = l.llama_context_default_params()
for k, v in cfg.items():
    setattr(cp, k, v)
print("CTX_OK" if l.llama_init_from_model(m, cp) else "CTX_FAIL", file=sys.stderr)
"""
PATTERNS = {
    "compute": r"(\S+) compute buffer size =\s+([\d.]+) MiB", "output": r"(\S+)\s+output buffer size =\s+([\d.]+) MiB",
    "kv": r"(\S+) KV buffer size =\s+([\d.]+) MiB",
}


def write_gguf(path: Path, h: int, heads: int, kv: int, inter: int, vocab: int, layers: int = 2,
               experts: int = 0, topk: int = 0) -> None:
    d = h // heads
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(layers)
    w.add_context_length(8192)
    w.add_embedding_length(h)
    w.add_feed_forward_length(inter)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    if experts:
        w.add_expert_count(experts)
        w.add_expert_used_count(topk)
        w.add_expert_feed_forward_length(inter)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    tokens += [f"t{i}" for i in range(vocab - len(tokens))]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * vocab)
    w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (vocab - 259))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    rng = np.random.default_rng(0)

    def f16(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float16)

    w.add_tensor("token_embd.weight", f16(vocab, h))
    w.add_tensor("output.weight", f16(vocab, h))
    w.add_tensor("output_norm.weight", np.ones(h, dtype=np.float32))
    for i in range(layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(h, dtype=np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(h, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", f16(heads * d, h))
        w.add_tensor(p + "attn_k.weight", f16(kv * d, h))
        w.add_tensor(p + "attn_v.weight", f16(kv * d, h))
        w.add_tensor(p + "attn_output.weight", f16(h, heads * d))
        if experts:
            w.add_tensor(p + "ffn_gate_inp.weight", np.ones((experts, h), dtype=np.float32))
            for name, shape in (("gate", (experts, inter, h)), ("up", (experts, inter, h)), ("down", (experts, h, inter))):
                w.add_tensor(p + f"ffn_{name}_exps.weight", f16(*shape))
        else:
            w.add_tensor(p + "ffn_gate.weight", f16(inter, h))
            w.add_tensor(p + "ffn_up.weight", f16(inter, h))
            w.add_tensor(p + "ffn_down.weight", f16(h, inter))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def measure(path: Path, **cfg) -> dict:
    """llama.cpp's buffer lines (MiB as printed) for a context made with `cfg` (llama_context_params fields)."""
    r = subprocess.run([sys.executable, "-c", LOAD, str(path), json.dumps(cfg)], capture_output=True, text=True, check=False)
    out: dict = {}
    for line in r.stderr.splitlines():
        for key, pattern in PATTERNS.items():
            if m := re.search(pattern, line):
                name = key if key == "output" else f"{key}_{m.group(1)}"
                out[name] = out.get(name, 0.0) + float(m.group(2))
        if m := re.search(r"n_ctx\s+= (\d+)", line):
            out["n_ctx"] = int(m.group(1))
        if m := re.search(r"n_ubatch\s+= (\d+)", line):
            out["n_ubatch"] = int(m.group(1))
    if "CTX_OK" not in r.stderr:
        out["error"] = r.stderr.strip().splitlines()[-1:]
    return out


SHAPES = [
    dict(h=256, heads=8, kv=2, inter=512, vocab=1000), dict(h=256, heads=8, kv=2, inter=512, vocab=32000),
    dict(h=256, heads=8, kv=2, inter=4096, vocab=1000), dict(h=512, heads=8, kv=2, inter=512, vocab=1000),
    dict(h=512, heads=16, kv=4, inter=1024, vocab=1000), dict(h=256, heads=8, kv=8, inter=512, vocab=1000),
    dict(h=1024, heads=16, kv=4, inter=2816, vocab=32000),
    dict(h=2048, heads=32, kv=8, inter=8192, vocab=32000, layers=1),
    dict(h=4096, heads=32, kv=8, inter=14336, vocab=32000, layers=1),
    dict(h=3072, heads=24, kv=8, inter=8192, vocab=128256, layers=1),
    dict(h=2048, heads=16, kv=16, inter=5632, vocab=32000, layers=1),
]
MOE = dict(h=2048, heads=16, kv=4, inter=1024, vocab=32000, layers=1, experts=8, topk=2)


def cases():
    small = ((512, 512), (2048, 512), (2048, 256))
    large = ((4096, 512), (8192, 512), (4096, 128))
    for shape in SHAPES:
        for fa in (0, 1):
            for n_ctx, ub in small if shape["h"] <= 1024 else large:
                yield shape, dict(n_ctx=n_ctx, n_ubatch=ub, n_batch=2048, flash_attn_type=fa)
    for fa in (0, 1):
        yield MOE, dict(n_ctx=4096, flash_attn_type=fa)
        for unified in (False, True):
            yield SHAPES[7], dict(n_ctx=8000, n_seq_max=4, kv_unified=unified, flash_attn_type=fa)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", help="store the cases as JSON (tests/data/llamacpp/cpu_buffers.json)")
    args = ap.parse_args()
    rows, files = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for shape, cfg in cases():
            key = json.dumps(shape, sort_keys=True)
            if key not in files:
                files[key] = Path(tmp) / f"m{len(files)}.gguf"
                write_gguf(files[key], **shape)
            row = {"layers": 2, **shape, "fa": cfg["flash_attn_type"], "n_ctx_req": cfg["n_ctx"], "ub": cfg.get("n_ubatch", 512),
                   "n_seq": cfg.get("n_seq_max", 1), "unified": cfg.get("kv_unified", False), "swa_full": False,
                   **measure(files[key], **cfg)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.write:
        doc = json.loads(Path(args.write).read_text()) if Path(args.write).exists() else {"source": ""}
        doc["cases"] = rows
        Path(args.write).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
