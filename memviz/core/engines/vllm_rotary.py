"""The rotary tables vLLM keeps on every rank from model load on (vllm-project/vllm 0.34.0, read from its PyPI wheel;
0.19.0's classes size them alike).

vLLM 0.34 builds each attention layer's rotary embedding through `get_rope`
(`model_executor/layers/rotary_embedding/__init__.py`), which caches one instance per distinct (head size, rotary
width, max_position, rope parameters, dtype): layers that rotate alike share a table, Gemma's sliding and full layers
hold one each. Each instance registers `cos_sin_cache`, cos and sin of every position it covers over the rotary width,
in the model's dtype (`base.py` `RotaryEmbedding.__init__`), so "Model loading took" includes them. The positions a
table covers depend on the scaling type:

- default, llama3, dynamic (alpha or factor), ntk, proportional: max_position_embeddings (`_compute_cos_sin_cache`;
  `dynamic_ntk_scaling_rope.py` scales the base, not the length);
- linear: max_position_embeddings x factor (`linear_scaling_rope.py`: "the maximum length after applying the rope
  scaling");
- yarn, deepseek_yarn, deepseek_llama_scaling: original_max_position_embeddings x factor
  (`yarn_scaling_rope.py`, `deepseek_scaling_rope.py`);
- longrope: original_max_position_embeddings + max_position_embeddings, the short and the long table
  (`phi3_long_rope_scaled_rope.py` `long_short_cos_sin_cache`);
- M-RoPE (multimodal sections): max_position_embeddings x positions_factor (`mrope.py` `cache_max_position_num`),
  4 but for Qwen3-VL and Qwen3.5, whose decoders pass 1 unless video pruning is on (`qwen3_vl.py`
  `mrope_positions_factor`); with yarn, that times its factor. memviz reads Qwen3-VL's text types as Qwen3's
  (`arch._ALIASES`), so an M-RoPE over a Qwen3 / Qwen3-MoE decoder takes 1 but in Qwen3-Omni's thinker (read as
  Qwen3-MoE too, its loader named), whose `Qwen3MoeLLMModel` keeps the decoder's default 4
  (`qwen3_omni_moe_thinker.py`).

The rotary width is head_size x partial_rotary_factor, Gemma 4's proportional rope the whole head
(`gemma4_rope.py` `Gemma4RotaryEmbedding`: "rotary_dim = head_size"), MLA the rope part of the head
(qk_rope_head_dim). Models without attention (Mamba, Mamba2) and Jamba, whose attention has no positional encoding
(`jamba.py` `JambaAttentionDecoderLayer` builds no rotary embedding), hold none. DeepSeek-V4's float32 tables
(`models/deepseek_v4/common/rope.py`) are not modelled: memviz's vLLM engine refuses that model.
"""

from __future__ import annotations

from math import ceil

from memviz.core.arch import FULL, Architecture, Rope

#: decoders that pass `mrope_positions_factor` 1 (vLLM 0.34 `qwen3_vl.py`, `qwen3_vl_moe.py`, `qwen3_5.py`), by the
#: types memviz reads them as
UNPADDED_MROPE_TYPES = frozenset({"qwen3", "qwen3_moe", "qwen3_5_text", "qwen3_5_moe_text"})
MROPE_POSITIONS_FACTOR = 4
SCALED_LENGTH_KINDS = frozenset({"yarn", "deepseek_yarn", "deepseek_llama_scaling"})
#: types whose attention layers rotate nothing (module docstring)
NO_ROPE_TYPES = frozenset({"jamba"})


def table_positions(rope: Rope, a: Architecture) -> int:
    """Rows of the table `get_rope` builds for `rope` (module docstring)."""
    positions = a.max_position_embeddings
    original = rope.original_positions or positions
    if rope.sections:
        unpadded = a.model_type in UNPADDED_MROPE_TYPES and "Omni" not in a.loader
        rows = positions * (1 if unpadded else MROPE_POSITIONS_FACTOR)
        return ceil(rows * rope.factor) if rope.kind == "yarn" else rows
    if rope.kind == "linear":
        return ceil(positions * rope.factor)
    if rope.kind in SCALED_LENGTH_KINDS:
        return ceil(original * rope.factor)
    if rope.kind == "longrope":
        return original + positions
    return positions


def rotary_width(rope: Rope, a: Architecture) -> int:
    """Columns of `rope`'s table: cos and sin of half the rotary width each."""
    if a.is_mla:
        return a.qk_rope_head_dim
    head = a.full_head_dim if rope.layers == "full_attention" and a.full_head_dim else a.head_dim
    return head if rope.kind == "proportional" else int(head * rope.rotary_fraction)


def rotary_tables(a: Architecture, act_bytes: float) -> list[tuple[int, int, float]]:
    """(positions, rotary width, bytes a value) of every table a rank holds, one per distinct rope (module
    docstring)."""
    if not a.attends or a.model_type in NO_ROPE_TYPES:
        return []
    classes = set(a.layer_types)
    tables: dict[tuple, tuple[int, int, float]] = {}
    for rope in a.ropes or (Rope(),):
        if rope.layers and not _used(rope.layers, classes):
            continue
        width = rotary_width(rope, a)
        key = (rope.kind, rope.factor, rope.original_positions, rope.theta, rope.sections, width)
        tables[key] = (table_positions(rope, a), width, act_bytes)
    return list(tables.values())


def rotary_table_bytes(a: Architecture, act_bytes: float) -> float:
    """Bytes of every rotary table a rank holds."""
    return float(sum(rows * width * value for rows, width, value in rotary_tables(a, act_bytes)))


def tables_label(tables: list[list[int]]) -> str:
    """"2 tables: 131,072 and 1,048,576 positions x 256" for the [positions, width] rows of the engine's facts."""
    widths = {width for _, width in tables}
    each = " and ".join(f"{rows:,d}" + ("" if len(widths) == 1 else f" x {width}") for rows, width in tables)
    count = f"{len(tables)} table{'s' if len(tables) > 1 else ''}"
    return f"{count}: {each} positions" + (f" x {widths.pop()}" if len(widths) == 1 else "")


def _used(layers: str, classes: set[str]) -> bool:
    """Whether a rope for one layer class has layers of that class ("full_attention": the full-attention layers;
    anything else: the others)."""
    return FULL in classes if layers == "full_attention" else bool(classes - {FULL})
