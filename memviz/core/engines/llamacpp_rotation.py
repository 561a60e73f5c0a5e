"""llama.cpp's attention rotation beside a quantized KV cache: Hadamard matrices as graph inputs.

ggml-org/llama.cpp 0c1e570 (PR #21038), src/llama-kv-cache.cpp: a cache rotates q and k by a Hadamard matrix
(`attn_rot_k`) when its K type is quantized, every layer it holds has one key head width (`n_embd_head_k_all`) and
that width is a multiple of 64 (the source tests layer 0's width, memviz the cache's); v and the attention output
likewise by a 64 x 64 one (`attn_rot_v`, `build_input_v_rot`) for a quantized V type. `build_input_k_rot` sizes the
K matrix by the largest power of two, 64 or more, dividing the head width. Each is an F32 graph input
(`ggml_set_input`: "attn_inp_k_rot", "attn_inp_v_rot"), one set per cache: an iSWA model's full and sliding caches
each have theirs (src/llama-graph.cpp `build_attn_inp_kv_iswa`). An MLA latent cache is K only, and its attention
(`build_attn_inp_k`) takes no rotation. DeepSeek sparse attention's lightning-indexer cache rotates its keys
whatever the cache type (`attn_rot_k` forced where `n_embd_head_k_full == indexer_head_size`, which
src/llama-kv-cache-dsa.cpp sets for that cache). LLAMA_ATTN_ROT_DISABLE=1 turns the quantized caches' rotation off.
The rotation's nodes also move ggml-alloc's placement (`LlamaCpp._ffn_hidden_rows`, `_graph_peak`'s output stage;
measured: tests/data/llamacpp/rotation_buffers.json)."""

from __future__ import annotations

from memviz.core.arch import FULL, SLIDING, Architecture

ROT_MIN = 64  # build_input_k_rot's smallest matrix, and build_input_v_rot's only one
F32_BYTES = 4


def k_rotation_width(head_dim: int) -> int:
    """`build_input_k_rot`'s nrot: the largest power of two from 64 on that divides the key head width."""
    width = ROT_MIN
    while head_dim % (2 * width) == 0:
        width *= 2
    return width


def _cache_layers(a: Architecture) -> list[list[int]]:
    """The attention layers of each KV cache: one, or an iSWA model's full and sliding caches."""
    groups = ((FULL,), (SLIDING,)) if SLIDING in a.layer_types else ((FULL, SLIDING),)
    return [layers for kinds in groups if (layers := [i for i, t in enumerate(a.layer_types) if t in kinds])]


def _one_width(widths: set[int]) -> int:
    """`n_embd_head_k_all` / `n_embd_head_v_all`: the layers' one head width, or 0 where they differ."""
    return widths.pop() if len(widths) == 1 else 0


def _cache_rotations(a: Architecture, latent: bool, quantized: bool) -> list[int]:
    """Widths of the Hadamard matrices that rotate q, k and v, one K and one V matrix per cache that qualifies, for a
    K and V cache of one type, `quantized` or not (module docstring); `latent`: an MLA model caching its latent,
    whose K-only attention (src/llama-graph.cpp `build_attn_inp_k`) builds no rotation."""
    if not quantized or latent:
        return []
    widths = []
    for layers in _cache_layers(a):
        k_width = _one_width({a.layer_head_dim(i) for i in layers})
        if k_width and k_width % ROT_MIN == 0:
            widths.append(k_rotation_width(k_width))
        v_width = _one_width({a.layer_v_head_dim(i) for i in layers})
        if v_width and v_width % ROT_MIN == 0:
            widths.append(ROT_MIN)
    return widths


def rotation(a: Architecture, latent: bool, quantized: bool) -> tuple[bool, int]:
    """(whether q, k and v are rotated, the F32 bytes of the Hadamard matrices the worst-case graph holds as inputs:
    the caches' and, for DeepSeek sparse attention, the lightning indexer's; module docstring)."""
    widths = _cache_rotations(a, latent, quantized)
    rotated = bool(widths)
    if a.indexer_heads and a.is_mla and a.indexer_head_dim:
        widths.append(k_rotation_width(a.indexer_head_dim))
    return rotated, F32_BYTES * sum(w * w for w in widths)
