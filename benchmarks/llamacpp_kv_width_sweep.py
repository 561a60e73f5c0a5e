"""llama.cpp's compute buffer without flash attention over the KV width: two Llama layers of Llama-2-7B's widths
(hidden 4,096, MLP 11,008, 32 heads of 128, a 32,000-token vocabulary) with 4, 8, 16 and 32 KV heads, built by
memviz's GGUF builder (Q8_0), run by `memviz probe --engine llamacpp` with flash attention off and on. The micro-batch's
K and V rows stay beside the score matrix, so the buffer grows by 2 x the KV width a token (`LlamaCpp._kv_rows`).
`--write PATH` stores the buffers as tests/data/llamacpp/kv_width_buffers.json does.

    python benchmarks/llamacpp_kv_width_sweep.py [--write tests/data/llamacpp/kv_width_buffers.json]
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llamacpp_mla_sweep import probe_buffers, sweep_cli  # noqa: E402


def _llama(kv_heads: int) -> dict:
    return {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 2,
            "num_attention_heads": 32, "num_key_value_heads": kv_heads, "vocab_size": 32000,
            "max_position_embeddings": 4096, "tie_word_embeddings": False}


SHAPES = {f"llama2-7b-widths-{kv}kv": _llama(kv) for kv in (4, 8, 16, 32)}
SETTINGS = list(itertools.product((256, 512), ("off", "on")))


def measure(config: dict, ubatch: int, flash: str, data: str) -> dict:
    return {"context": 4096, "ubatch": ubatch, "flash_attn": flash, **probe_buffers(config, [
        "--weights", "Q8_0", "--context", "4096", "--ubatch", str(ubatch), "--flash-attn", flash, "--prompt", "8",
        "--new", "1"], data)}


def main() -> None:
    sweep_cli("tests/data/llamacpp/kv_width_buffers.json", "n_ubatch | flash attention", SHAPES, lambda name: SETTINGS,
              measure, "benchmarks/llamacpp_kv_width_sweep.py: Llama shapes built by memviz.probe.gguf_build (Q8_0)")


if __name__ == "__main__":
    main()
