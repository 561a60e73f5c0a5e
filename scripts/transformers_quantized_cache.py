"""Measure transformers' QuantizedCache on this machine's CPU and write tests/data/probe/transformers_quantized_cache.json.

Needs optimum-quanto (pip install optimum-quanto; not a memviz dependency). For each backend (quanto 4 and 2 bits,
fp8) it drives one layer's cache as `generate` does (a prompt, then one token a step) and records:
- `stored`: the bytes of the tensors the layer keeps (quanto's packed data, scales and shifts; the unquantized
  residual; fp8's values and scales), after a 1,000-token prompt and 130 steps and at the step with the longest
  residual, for 2 sequences x 2 KV heads of 64 and 128 values;
- `update`: the peak resident memory one decode step's `update` adds over what the process holds before it
  (/proc/self/status VmHWM after resetting it through /proc/self/clear_refs), 8 KV heads of 128 x 131,072 tokens in
  bfloat16 and in float32, in bytes per value of the layer's K.

Run: python scripts/transformers_quantized_cache.py
"""

from __future__ import annotations

import gc
import json
import platform
from pathlib import Path

import torch
import transformers
from transformers import LlamaConfig
from transformers.cache_utils import DynamicCache, QuantizedCache

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "probe" / "transformers_quantized_cache.json"
BACKENDS = (("quanto", 4), ("quanto", 2), ("fp8", 8))


def _config(kv_heads: int, head_dim: int) -> LlamaConfig:
    return LlamaConfig(hidden_size=2 * kv_heads * head_dim, num_attention_heads=2 * kv_heads,
                       num_key_value_heads=kv_heads, head_dim=head_dim, num_hidden_layers=1, vocab_size=128)


def _cache(backend: str, nbits: int, config: LlamaConfig):
    if backend == "dynamic":
        return DynamicCache(config=config)
    return QuantizedCache(backend=backend, config=config, **({} if backend == "fp8" else {"nbits": nbits}))


def _bytes(obj) -> int:
    """Bytes of the tensors in `obj`, a quanto tensor counted by its inner tensors."""
    if isinstance(obj, torch.Tensor):
        if type(obj) is not torch.Tensor and hasattr(obj, "__tensor_flatten__"):
            names, _ = obj.__tensor_flatten__()
            return sum(_bytes(getattr(obj, n)) for n in names)
        return obj.numel() * obj.element_size()
    if isinstance(obj, (tuple, list)):
        return sum(_bytes(o) for o in obj)
    return 0


def stored(backend: str, nbits: int, head_dim: int, kv_heads: int = 2, batch: int = 2, prompt: int = 1000,
           steps: int = 130) -> dict:
    cache = _cache(backend, nbits, _config(kv_heads, head_dim))
    g = torch.Generator().manual_seed(0)

    def states(n: int):
        return [torch.randn(batch, kv_heads, n, head_dim, generator=g).to(torch.bfloat16) for _ in range(2)]

    cache.update(*states(prompt), 0)
    trace = []
    for _ in range(steps):
        cache.update(*states(1), 0)
        layer = cache.layers[0]
        trace.append((_bytes([layer._quantized_keys, layer._quantized_values]), _bytes([layer.keys, layer.values])))
    longest = max(trace, key=lambda t: t[1])
    return {"backend": backend, "nbits": nbits, "head_dim": head_dim, "kv_heads": kv_heads, "batch": batch,
            "prompt_tokens": prompt, "decode_steps": steps,
            "end": {"quantized_bytes": trace[-1][0], "residual_bytes": trace[-1][1]},
            "longest_residual": {"quantized_bytes": longest[0], "residual_bytes": longest[1]}}


def _status(key: str) -> int:
    return next(int(line.split()[1]) * 1024 for line in Path("/proc/self/status").read_text().splitlines()
                if line.startswith(key))


def update_peak(backend: str, nbits: int, dtype: torch.dtype, kv_heads: int = 8, head_dim: int = 128,
                prompt: int = 131072) -> dict:
    cache = _cache(backend, nbits, _config(kv_heads, head_dim))
    k = torch.randn(1, kv_heads, prompt, head_dim, dtype=dtype)
    cache.update(k, torch.randn_like(k), 0)
    del k
    for _ in range(4):
        cache.update(*[torch.randn(1, kv_heads, 1, head_dim, dtype=dtype) for _ in range(2)], 0)
    new = [torch.randn(1, kv_heads, 1, head_dim, dtype=dtype) for _ in range(2)]
    gc.collect()
    before = _status("VmRSS:")
    Path("/proc/self/clear_refs").write_text("5")
    cache.update(*new, 0)
    peak = _status("VmHWM:")
    return {"backend": backend, "nbits": nbits, "dtype": str(dtype).removeprefix("torch."), "kv_heads": kv_heads,
            "head_dim": head_dim, "tokens": prompt,
            "peak_over_held_bytes": peak - before,
            "bytes_per_k_value": round((peak - before) / (kv_heads * head_dim * prompt), 3)}


def main() -> None:
    torch.set_num_threads(2)
    import optimum.quanto

    data = {
        "_source": (f"scripts/transformers_quantized_cache.py on {platform.machine()} {platform.system()}: "
                    f"transformers {transformers.__version__}, optimum-quanto {optimum.quanto.__version__}, "
                    f"torch {torch.__version__}, CPU"),
        "stored": [stored(b, n, d) for b, n in BACKENDS for d in (64, 128)],
        "update": [update_peak(b, n, dtype) for dtype in (torch.bfloat16, torch.float32)
                   for b, n in (("dynamic", 0), *BACKENDS)],
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data["update"], indent=1))


if __name__ == "__main__":
    main()
