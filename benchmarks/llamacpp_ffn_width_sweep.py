"""llama.cpp's compute buffer with flash attention over the feed-forward's width: Llama layers of hidden 1,024 and
2,048 (a 4,096-token vocabulary, so that the feed-forward stage decides) with gated MLPs of 0.5-3 hidden widths and
3-32 layers, built by memviz's GGUF builder (Q8_0), run by `memviz probe --engine llamacpp` at two micro-batches.
Beside gate, up and their GLU, ggml-alloc keeps 4 hidden rows a token where the MLP is wider than 2 hidden widths,
3 where it is one to two, 2 where it is one (`LlamaCpp._ffn_hidden_rows`); with vocabularies of 16-64 hidden widths
(`OUTPUT_SHAPES`) the logits' stage decides. `--write PATH` stores the buffers as
tests/data/llamacpp/ffn_width_buffers.json does.

    python benchmarks/llamacpp_ffn_width_sweep.py [--write tests/data/llamacpp/ffn_width_buffers.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llamacpp_mla_sweep import probe_buffers, sweep_cli  # noqa: E402


def _llama(hidden: int, mlp: int, layers: int, vocab: int = 4096, kv_heads: int = 2) -> dict:
    return {"model_type": "llama", "hidden_size": hidden, "intermediate_size": mlp, "num_hidden_layers": layers,
            "num_attention_heads": hidden // 128, "num_key_value_heads": kv_heads, "vocab_size": vocab,
            "max_position_embeddings": 8192, "tie_word_embeddings": False}


SHAPES = {f"h{h}-mlp{i}-{n}l": _llama(h, i, n) for h, i, n in (
    (1024, 512, 4), (1024, 1024, 4), (1024, 1280, 4), (1024, 1536, 4), (1024, 1792, 4), (1024, 2048, 4),
    (1024, 2176, 4), (1024, 2560, 4), (1024, 3072, 4), (1024, 1536, 3), (1024, 2048, 3), (1024, 1024, 32),
    (1024, 2048, 32), (1024, 3072, 32), (2048, 2048, 8), (2048, 4096, 8), (2048, 6144, 8))}
#: vocabularies of 16-64 hidden widths, where the logits' stage decides (n_ubatch 512 only), and Llama-3-8B's widths
OUTPUT_SHAPES = {f"out-h{h}-mlp{i}-v{v}-{n}l": _llama(h, i, n, v, h // 512) for h, i, v, n in (
    (1024, 1024, 32000, 4), (1024, 1536, 32000, 4), (1024, 1792, 32000, 4), (1024, 2048, 32000, 4),
    (1024, 2048, 32000, 8), (1024, 2560, 32000, 4), (1024, 3584, 32000, 2), (1024, 3584, 32000, 8),
    (1024, 3584, 16384, 4), (1024, 3584, 65536, 4), (2048, 7168, 64000, 4), (4096, 14336, 128256, 2))}
UBATCHES = (256, 512)


def measure(config: dict, ubatch: int, data: str) -> dict:
    return {"context": 4096, "ubatch": ubatch, "flash_attn": "on", **probe_buffers(config, [
        "--weights", "Q8_0", "--context", "4096", "--ubatch", str(ubatch), "--flash-attn", "on", "--prompt", "8",
        "--new", "1"], data)}


def main() -> None:
    sweep_cli("tests/data/llamacpp/ffn_width_buffers.json", "n_ubatch", {**SHAPES, **OUTPUT_SHAPES},
              lambda name: [(512,)] if name in OUTPUT_SHAPES else [(u,) for u in UBATCHES],
              measure, "benchmarks/llamacpp_ffn_width_sweep.py: Llama shapes built by memviz.probe.gguf_build (Q8_0)")


if __name__ == "__main__":
    main()
