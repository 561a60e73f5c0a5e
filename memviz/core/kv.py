"""KV cache size, layer by layer.

The seed formula, KV bytes = 2 x L x Hkv x D x T x B x S (document 000: 131,072
bytes per token for L=32, Hkv=8, D=128, S=2), generalised the way real caches differ:

- per layer: a sliding-window layer keeps at most its window of tokens (Mistral,
  Gemma-2/3, gpt-oss), a full layer keeps all T;
- K and V head dims may differ (MLA's expanded cache: K = nope + rope, V = v_head_dim);
- MLA latent cache (DeepSeek-V2 paper, sec. 2.1): one vector of
  kv_lora_rank + qk_rope_head_dim per token per layer, shared by all heads, instead of K and V;
- per-sequence lengths are summed, not max x B;
- paged allocation (vLLM, PagedAttention paper) rounds each sequence up to whole blocks;
- quantized formats add their scales (`KVFormat.bytes_per_vector`).

Functions accept numpy arrays of token counts so sweeps are vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memviz.core.arch import SLIDING, Architecture
from memviz.core.formats import KVFormat

ArrayLike = int | np.ndarray


@dataclass(frozen=True)
class KVLayout:
    """How an engine lays out the cache.

    `latent_mla`: store MLA's compressed latent (vLLM, llama.cpp) rather than the
    per-head K/V that transformers' DeepseekV3Attention caches.
    `block_tokens`: page size; each sequence is rounded up to whole pages (0 = none).
    `kv_heads_divisor`: tensor-parallel degree; each device keeps max(Hkv/TP, 1)
    heads (MLA latents are replicated on every rank).
    """

    latent_mla: bool = False
    block_tokens: int = 0
    kv_heads_divisor: int = 1


def per_token_layer_bytes(a: Architecture, fmt: KVFormat, layout: KVLayout) -> float:
    """Bytes one token occupies in one layer's cache on one device."""
    if a.is_mla and layout.latent_mla:
        return fmt.bytes_per_vector(a.kv_lora_rank + a.qk_rope_head_dim)
    heads = max(a.num_kv_heads // layout.kv_heads_divisor, 1)
    return heads * (fmt.bytes_per_vector(a.head_dim) + fmt.bytes_per_vector(a.v_head_dim))


def kv_bytes_per_token(a: Architecture, fmt: KVFormat, layout: KVLayout = KVLayout()) -> float:
    """Bytes per token of one sequence with every layer keeping it (no window cut)."""
    return a.num_layers * per_token_layer_bytes(a, fmt, layout)


def paged(tokens: ArrayLike, block_tokens: int) -> ArrayLike:
    """Round a token count up to whole blocks of `block_tokens` (identity when 0)."""
    if not block_tokens:
        return tokens
    return -(-np.asarray(tokens) // block_tokens) * block_tokens


def kv_cache_bytes(
    a: Architecture,
    fmt: KVFormat,
    sequence_tokens: ArrayLike | list[int],
    layout: KVLayout = KVLayout(),
    layers: range | None = None,
    sliding_tokens: ArrayLike | None = None,
) -> ArrayLike:
    """KV bytes for sequences of the given lengths, summed over sequences and `layers`.

    `sequence_tokens` is a list of per-sequence lengths (summed), or an array of
    lengths for one sequence each when sweeping (returned element-wise).
    `sliding_tokens` overrides the cells a sliding layer keeps (llama.cpp's iSWA
    cache sizes them from the window, the sequences and the micro-batch).
    """
    per_layer = per_token_layer_bytes(a, fmt, layout)
    layer_ids = range(a.num_layers) if layers is None else layers
    lengths = np.asarray(sequence_tokens, dtype=np.int64)
    # group layers by kind: only two distinct token counts exist (full, sliding)
    n_full = sum(1 for i in layer_ids if a.layer_types[i] != SLIDING)
    n_slide = len(layer_ids) - n_full
    full = paged(lengths, layout.block_tokens)
    total = n_full * per_layer * full
    if n_slide:
        kept = np.minimum(lengths, a.sliding_window) if sliding_tokens is None else sliding_tokens
        slide = paged(kept, layout.block_tokens)
        total = total + n_slide * per_layer * slide
    if isinstance(sequence_tokens, list):
        return int(np.ceil(np.sum(total)))
    return np.ceil(total) if np.ndim(total) else int(np.ceil(total))
