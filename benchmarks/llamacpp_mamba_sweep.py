"""llama.cpp's compute buffer for Mamba, Falcon-Mamba and Mamba2 (their blocks only) and Jamba (Mamba layers beside
attention and experts), measured with a real llama.cpp: each shape is built by memviz's GGUF builder (F16, random
weights), run by `memviz probe --engine llamacpp` over micro-batches, sequences and (Jamba) flash attention on / off,
and the buffers llama.cpp printed are kept. `--write PATH` stores them as
tests/data/llamacpp/mamba_buffers.json does; the table beside memviz's figures goes to docs/llamacpp-accuracy.md.

    python benchmarks/llamacpp_mamba_sweep.py [--write tests/data/llamacpp/mamba_buffers.json]
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llamacpp_mla_sweep import probe_buffers, sweep_cli  # noqa: E402


def _mamba(hidden: int, state: int, rank: int, falcon: bool = False, layers: int = 3) -> dict:
    """A Mamba (or, with `falcon`, Falcon-Mamba) of `layers` blocks, its mixer twice the hidden size (llama.cpp
    runs no other expansion)."""
    return {"model_type": "falcon_mamba" if falcon else "mamba", "hidden_size": hidden, "intermediate_size": 2 * hidden,
            "num_hidden_layers": layers, "state_size": state, "time_step_rank": rank, "conv_kernel": 4,
            "use_bias": False, "use_conv_bias": True, "tie_word_embeddings": False, "vocab_size": 1024}


def _mamba2(hidden: int, heads: int, groups: int, state: int, layers: int = 3) -> dict:
    """A Mamba2 of `layers` blocks, heads of 64 twice the hidden size wide."""
    return {"model_type": "mamba2", "hidden_size": hidden, "num_heads": heads, "head_dim": 2 * hidden // heads,
            "expand": 2, "n_groups": groups, "state_size": state, "conv_kernel": 4, "chunk_size": 256,
            "num_hidden_layers": layers, "use_bias": False, "use_conv_bias": True, "tie_word_embeddings": False,
            "vocab_size": 1024}


def _jamba(hidden: int, heads: int, kv_heads: int, ffn: int, experts: int = 4, rank: int = 64, layers: int = 4,
           attn: tuple[int, int] = (4, 2)) -> dict:
    """A Jamba of `layers` layers: attention every attn[0]-th from attn[1], Mamba elsewhere; experts (2 a token) in
    every other layer from layer 1, the dense MLP between."""
    return {"model_type": "jamba", "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv_heads, "intermediate_size": ffn, "num_experts": experts, "num_experts_per_tok": 2,
            "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": attn[0],
            "attn_layer_offset": attn[1], "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
            "mamba_dt_rank": rank, "vocab_size": 1024, "tie_word_embeddings": False, "max_position_embeddings": 8192}


SHAPES = {
    "h512-s16-r32": _mamba(512, 16, 32), "h1024-s16-r64": _mamba(1024, 16, 64, falcon=True),
    "h2048-s16-r128": _mamba(2048, 16, 128), "h1024-s64-r64": _mamba(1024, 64, 64),
    "h768-s128-r48-falcon": _mamba(768, 128, 48, falcon=True), "h4096-s16-r256-falcon": _mamba(4096, 16, 256, falcon=True),
    "mamba2-h768-24h-g1-s128": _mamba2(768, 24, 1, 128), "mamba2-h1024-32h-g1-s128": _mamba2(1024, 32, 1, 128),
    "mamba2-h2048-64h-g8-s128": _mamba2(2048, 64, 8, 128), "mamba2-h1024-16h-g2-s64": _mamba2(1024, 16, 2, 64),
    "jamba-h1024-8h-ffn2048": _jamba(1024, 8, 2, 2048), "jamba-h2048-16h-ffn4096": _jamba(2048, 16, 4, 4096, rank=128),
    "jamba-h1024-16h-ffn1024-attn0": _jamba(1024, 16, 8, 1024, attn=(2, 0)),
}
SETTINGS = list(itertools.product((64, 256, 1024), (1, 4), ("on",)))
JAMBA_SETTINGS = list(itertools.product((128, 512), (1, 4), ("on", "off")))
#: released widths: state-spaces/mamba-130m-hf whole (its config.json), and two blocks of tiiuae/falcon-mamba-7b's and
#: of Mamba-Codestral-7B's widths and vocabularies, where the output's logits decide the buffer
RELEASES = {
    "mamba-130m": {**_mamba(768, 16, 48, layers=24), "tie_word_embeddings": True, "vocab_size": 50280},
    "falcon-mamba-7b-2-layers": {**_mamba(4096, 16, 256, falcon=True, layers=2), "vocab_size": 65024},
    # mistralai/Mamba-Codestral-7B-v0.1's widths and vocabulary (its config.json: 128 heads of 64, 8 groups)
    "mamba-codestral-7b-2-layers": {**_mamba2(4096, 128, 8, 128, layers=2), "vocab_size": 32768},
    # the output stages beside a released vocabulary (Jamba's 65,536 tokens)
    "mamba2-h1024-32h-vocab65536": {**_mamba2(1024, 32, 1, 128), "vocab_size": 65536},
    "jamba-h1024-vocab65536": {**_jamba(1024, 8, 2, 2048), "vocab_size": 65536},
    "jamba-h2048-vocab65536": {**_jamba(2048, 16, 4, 4096, rank=128), "vocab_size": 65536},
}
SHAPES.update(RELEASES)
RELEASE_SETTINGS = [(512, 1, "on"), (512, 4, "on")]


def measure(config: dict, ubatch: int, sequences: int, flash: str, data: str) -> dict:
    return {"context": 4096, "ubatch": ubatch, "sequences": sequences, "flash_attn": flash, **probe_buffers(config, [
        "--weights", "F16", "--context", "4096", "--ubatch", str(ubatch), "--parallel", str(sequences),
        "--flash-attn", flash, "--prompt", "8", "--new", "1"], data)}


def settings_of(name: str) -> list[tuple]:
    if name in RELEASES:
        return RELEASE_SETTINGS
    return JAMBA_SETTINGS if name.startswith("jamba") else SETTINGS


def main() -> None:
    sweep_cli("tests/data/llamacpp/mamba_buffers.json", "n_ubatch | sequences | flash attention", SHAPES, settings_of, measure,
              "benchmarks/llamacpp_mamba_sweep.py: shapes built by memviz.probe.gguf_build (F16, random weights)")


if __name__ == "__main__":
    main()
