"""llama.cpp's compute buffer for Kimi Linear (Kimi delta attention beside MLA layers), measured with a real
llama.cpp: each shape is built by memviz's GGUF builder (F16, random weights), run by `memviz probe --engine llamacpp`
over micro-batches, flash attention on / off and one / two sequences, and the buffers llama.cpp printed are kept.
`--write PATH` stores them as tests/data/llamacpp/kimi_linear_buffers.json does; the table beside memviz's figures
goes to docs/llamacpp-accuracy.md.

    python benchmarks/llamacpp_kimi_linear_sweep.py [--write tests/data/llamacpp/kimi_linear_buffers.json]
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llamacpp_mla_sweep import probe_buffers, sweep_cli  # noqa: E402

_KIMI = {"model_type": "kimi_linear", "vocab_size": 512, "num_hidden_layers": 3, "intermediate_size": 256,
         "moe_intermediate_size": 64, "num_experts": 4, "num_experts_per_token": 2, "num_shared_experts": 1,
         "first_k_dense_replace": 1, "q_lora_rank": None, "max_position_embeddings": 8192,
         "tie_word_embeddings": False}


def _kimi(hidden: int, heads: int, width: int, rank: int = 256, nope: int = 64, rope: int = 32, **changes) -> dict:
    """Three layers: a delta layer with the dense MLP, a delta layer with experts, then an MLA layer with experts
    (a delta layer after another layer holds more than the first: ggml-alloc's holes differ)."""
    return {**_KIMI, "hidden_size": hidden, "num_attention_heads": heads, "num_key_value_heads": heads,
            "kv_lora_rank": rank, "qk_nope_head_dim": nope, "qk_rope_head_dim": rope, "v_head_dim": nope,
            "linear_attn_config": {"full_attn_layers": [3], "kda_layers": [1, 2], "head_dim": width, "num_heads": heads,
                                   "short_conv_kernel_size": 4}, **changes}


SHAPES = {
    "h1024-8x128": _kimi(1024, 8, 128), "h1024-16x128": _kimi(1024, 16, 128), "h1024-32x64": _kimi(1024, 32, 64),
    "h2048-16x128": _kimi(2048, 16, 128), "h2048-8x64": _kimi(2048, 8, 64), "h512-32x128": _kimi(512, 32, 128),
    "h1024-16x128-rank512": _kimi(1024, 16, 128, rank=512, nope=128, rope=64),
}
SETTINGS = list(itertools.product((128, 512), ("on", "off"), (1, 2, 4)))
#: more micro-batches and sequences with flash attention for three shapes: the two prompt graphs llama.cpp reserves
#: (n_seq_max sequences, then one) change places as sequences grow
MANY = list(itertools.product((64, 256, 1024), ("on",), (3, 8, 16)))
MANY_SHAPES = ("h1024-16x128", "h512-32x128", "h2048-8x64")


def measure(config: dict, ubatch: int, flash: str, sequences: int, data: str) -> dict:
    return {"context": 4096, "ubatch": ubatch, "flash_attn": flash, "sequences": sequences, **probe_buffers(config, [
        "--weights", "F16", "--context", "4096", "--ubatch", str(ubatch), "--flash-attn", flash,
        "--parallel", str(sequences), "--prompt", "8", "--new", "1"], data)}


def settings_of(name: str) -> list[tuple]:
    return SETTINGS + (MANY if name in MANY_SHAPES else [])


def main() -> None:
    sweep_cli("tests/data/llamacpp/kimi_linear_buffers.json", "n_ubatch | flash attention | sequences", SHAPES,
              settings_of, measure, "benchmarks/llamacpp_kimi_linear_sweep.py: shapes built by "
              "memviz.probe.gguf_build (F16, random weights)")


if __name__ == "__main__":
    main()
