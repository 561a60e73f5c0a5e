"""KV cache size, layer by layer.

The seed formula, KV bytes = 2 x L x Hkv x D x T x B x S (document 000: 131,072
bytes per token for L=32, Hkv=8, D=128, S=2), generalised the way real caches differ:

- per layer: a sliding-window layer keeps at most its window of tokens (Mistral,
  Gemma-2/3, gpt-oss), a full layer keeps all T;
- K and V head dims may differ (MLA's expanded cache: K = nope + rope, V = v_head_dim);
- MLA latent cache (DeepSeek-V2 paper, sec. 2.1): one vector of
  kv_lora_rank + qk_rope_head_dim per token per layer, shared by all heads, instead of K and V;
- per-sequence lengths are summed, not max x B;
- a cross-attention layer (Llama 3.2 Vision) caches an image's vision tokens, not the text's (`cross_attention_bytes`);
- paged allocation (vLLM, PagedAttention paper) rounds each sequence up to whole blocks;
- quantized formats add their scales (`KVFormat.bytes_per_vector`);
- DeepSeek-V4 (transformers 5.24 `DeepseekV4HCACache` / `DeepseekV4CSACache`): one K=V vector a token over each
  layer's window, and in a layer of compress ratio m one compressed entry per m tokens (plus, in the compressed
  sparse layers, the lightning indexer's compressed key of indexer_head_dim).

Functions accept numpy arrays of token counts so sweeps are vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from memviz.core.arch import CROSS, SLIDING, Architecture
from memviz.core.formats import KVFormat, get_kv_format

ArrayLike = int | np.ndarray


@dataclass(frozen=True)
class KVLayout:
    """How an engine lays out the cache.

    `latent_mla`: store MLA's compressed latent (vLLM, llama.cpp) rather than the
    per-head K/V that transformers' DeepseekV3Attention caches.
    `block_tokens`: page size; each sequence is rounded up to whole pages (0 = none).
    `kv_heads_divisor`: tensor-parallel degree; each device keeps max(Hkv/TP, 1)
    heads (MLA latents are replicated on every rank).
    `v_rows_widest`: llama.cpp without flash attention stores V transposed and pads every layer's V rows to the
    widest layer's (ggml-org/llama.cpp 0c1e570 src/llama-kv-cache.cpp [TAG_V_CACHE_VARIABLE],
    `llama_hparams::n_embd_v_gqa_max`): Gemma 4, whose full layers have other V widths than its sliding ones.
    `indexer_fp8`: a DeepSeek sparse-attention layer also caches one indexer key a token: in the cache's own
    format in transformers (`DynamicIndexedLayer`) and llama.cpp (`llama_kv_cache_dsa`, K only), as 128 FP8
    values and one fp32 scale per 128 in vLLM (`DeepseekV32IndexerCache`: 132 bytes for DeepSeek-V3.2).
    `indexer_value`: llama.cpp 0c1e570 keeps MiniMax-M3's indexer keys in a second `llama_kv_cache` of one head
    (src/llama-kv-cache-msa.cpp `llama_kv_cache_msa`); the model is not MLA, so that cache allocates a V row of the
    attention's value width beside each key, unused (DeepSeek sparse attention's `llama_kv_cache_dsa` is MLA: K only).
    `indexer_bf16`: vLLM 0.33 keeps MiniMax-M3's indexer keys in bfloat16 unless `--attention-config
    indexer_kv_dtype` says otherwise (vllm/models/minimax_m3/nvidia/model.py `resolve_indexer_kv_dtype("bf16")`,
    common/indexer.py `MLAAttentionSpec` of one head).
    `latent_row_bytes`: an MLA latent packed in a row of its own size whatever the format says (vLLM's fp8_ds_mla:
    656 bytes, 0 = none).
    `native_layers`: layers caching in the model's dtype (`native_bits` wide) whatever the format: vLLM's TurboQuant
    boundary layers (`engines/vllm_turboquant.py`).
    """

    latent_mla: bool = False
    block_tokens: int = 0
    kv_heads_divisor: int = 1
    v_rows_widest: bool = False  # every layer's V row as wide as the widest layer's (llama.cpp's transposed V)
    v_as_wide_as_k: bool = False  # V padded to K's head width (vLLM's MiniCPM3: models/minicpm3.py pads v)
    indexer_fp8: bool = False  # sparse-attention indexer keys in FP8 with an fp32 scale per 128 values (vLLM)
    indexer_value: bool = False  # a V row beside each indexer key (llama.cpp's cache of a non-MLA model)
    indexer_bf16: bool = False  # indexer keys in bfloat16 whatever the cache's format (vLLM's MiniMax-M3)
    # DeepSeek-V4's K=V vector: transformers' DynamicSlidingWindowLayer (its window-only layers) stores it as keys and
    # as values, two tensors; its compressing layers' caches, llama.cpp and vLLM keep one
    k_is_v_twice: bool = False
    # DeepSeek-V4's compressed entries: 0 = floor(tokens / ratio) (transformers emits one per closed window);
    # n = ceil(tokens / ratio) padded to n cells (llama.cpp 0c1e570 `llama_kv_cache_dsv4`: 256)
    compressed_pad: int = 0
    # every MLA layer's cache row as wide as the widest layer's latent + rope: vLLM 0.33 pads dots3's full layers to
    # its sliding layers' (models/dots3_note/nvidia/model.py `Dots3NotePaddedMLAAttention.get_kv_cache_spec`)
    latent_widest: bool = False
    latent_row_bytes: int = 0
    # layers that cache in the model's own dtype whatever the format (vLLM's TurboQuant boundary layers) and its bits
    native_layers: frozenset[int] = frozenset()
    native_bits: int = 16


def per_token_layer_bytes(a: Architecture, fmt: KVFormat, layout: KVLayout, layer: int = 0) -> float:
    """Bytes one token occupies in layer `layer`'s cache on one device (for a layer that reuses another's K/V, 0 or
    its indexer's key; Gemma 4's full-attention layers have their own head width and KV heads)."""
    if layer in layout.native_layers:
        fmt = get_kv_format("fp32" if layout.native_bits == 32 else "bf16")
    if not a.layer_caches_kv(layer):  # Mistral Large 4's KV-sharing layers still cache their own indexer's keys
        return _indexer_key_bytes(a, fmt, layout) if a.is_mla and a.layer_indexer(layer) else 0.0
    if a.compress_ratios:  # DeepSeek-V4's window: one K=V head (its compressed entries: `compressed_cache_bytes`)
        one = fmt.bytes_per_vector(a.head_dim)
        return 2 * one if layout.k_is_v_twice and not a.layer_compress(layer) else one
    indexer = _indexer_key_bytes(a, fmt, layout) if a.layer_indexer(layer) else 0
    if a.is_mla and layout.latent_mla and layout.latent_row_bytes:
        return layout.latent_row_bytes + indexer
    if a.is_mla and layout.latent_mla:
        return fmt.bytes_per_vector(latent_width(a, layout, layer)) + indexer
    heads = max(a.layer_kv_heads(layer) // layout.kv_heads_divisor, 1)
    if layout.v_rows_widest:
        k = heads * fmt.bytes_per_vector(a.layer_head_dim(layer)) + indexer
        return k + fmt.bytes_per_vector(max(a.layer_kv_heads(i) * a.layer_v_head_dim(i) for i in range(a.num_layers)))
    v_width = a.layer_head_dim(layer) if layout.v_as_wide_as_k else a.layer_v_head_dim(layer)
    return heads * fmt.head_bytes(a.layer_head_dim(layer), v_width) + indexer


def latent_width(a: Architecture, layout: KVLayout, layer: int) -> int:
    """The values of layer `layer`'s MLA latent row: kv_lora_rank + its rope part, or the widest layer's where the
    engine pads every row to it (`KVLayout.latent_widest`)."""
    rows = range(a.num_layers) if layout.latent_widest else (layer,)
    return max(a.layer_kv_lora(i) + a.layer_rope_dim(i) for i in rows)


def _indexer_key_bytes(a: Architecture, fmt: KVFormat, layout: KVLayout) -> float:
    d = a.indexer_head_dim
    if layout.indexer_fp8:
        return d + -(-d // 128) * 4
    if layout.indexer_bf16:
        return 2 * d
    return fmt.bytes_per_vector(d) + (fmt.bytes_per_vector(a.v_head_dim) if layout.indexer_value else 0)


def kv_bytes_per_token(a: Architecture, fmt: KVFormat, layout: KVLayout = KVLayout()) -> float:
    """Bytes per token of one sequence with every layer keeping it (no window cut); DeepSeek-V4's compressed entries
    at their rate (one per `ratio` tokens)."""
    window = sum(per_token_layer_bytes(a, fmt, layout, i) for i in range(a.num_layers))
    if not a.compress_ratios:
        return window
    return window + sum(_compressed_entry_bytes(a, fmt, layout, i) / a.layer_compress(i)
                        for i in range(a.num_layers) if a.layer_compress(i))


@lru_cache(maxsize=1024)
def layer_bytes_by_kind(a: Architecture, fmt: KVFormat, layout: KVLayout, layers: range | None = None
                        ) -> tuple[float, float]:
    """(full, sliding): bytes one token takes in all of `layers` of each attention kind together."""
    full = slide = 0.0
    for i in range(a.num_layers) if layers is None else layers:
        b = per_token_layer_bytes(a, fmt, layout, i)
        full, slide = (full, slide + b) if a.layer_types[i] == SLIDING else (full + b, slide)
    return full, slide


def cross_attention_bytes(a: Architecture, fmt: KVFormat, layout: KVLayout = KVLayout(),
                          layers: range | None = None) -> float:
    """Bytes one image's K/V takes in the cross-attention layers among `layers` for one sequence (Llama 3.2 Vision:
    transformers 5.24 MllamaTextCrossAttention.forward caches k_proj / v_proj of the image's
    `cross_attention_tokens` vision states in its layer of the cache, once, whatever the text's length)."""
    heads = max(a.num_kv_heads // layout.kv_heads_divisor, 1)
    n = sum(1 for i in (range(a.num_layers) if layers is None else layers) if a.layer_types[i] == CROSS)
    return n * a.cross_attention_tokens * 2 * heads * fmt.bytes_per_vector(a.head_dim)


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
    lengths = np.asarray(sequence_tokens, dtype=np.int64)
    # group layers by kind: only two distinct token counts exist (full, sliding)
    full_bytes, slide_bytes = layer_bytes_by_kind(a, fmt, layout, layers)
    total = full_bytes * paged(lengths, layout.block_tokens)
    if slide_bytes:
        kept = np.minimum(lengths, a.sliding_window) if sliding_tokens is None else sliding_tokens
        total = total + slide_bytes * paged(kept, layout.block_tokens)
    if a.compress_ratios:
        total = total + compressed_cache_bytes(a, fmt, lengths, layout, layers)
    if isinstance(sequence_tokens, list):
        return int(np.ceil(np.sum(total)))
    return np.ceil(total) if np.ndim(total) else int(np.ceil(total))


def compressed_entries(tokens: ArrayLike, ratio: int, pad: int = 0) -> ArrayLike:
    """Compressed entries a layer of `ratio` holds for `tokens` (`KVLayout.compressed_pad`)."""
    tokens = np.asarray(tokens)
    if not pad:
        return tokens // ratio
    return -(-np.maximum(-(-tokens // ratio), 1) // pad) * pad


def compressed_cache_bytes(a: Architecture, fmt: KVFormat, tokens: ArrayLike, layout: KVLayout = KVLayout(),
                           layers: range | None = None) -> ArrayLike:
    """DeepSeek-V4's compressed entries for one sequence of `tokens` (element-wise over an array) in `layers`: a
    vector of head_dim per entry, and in the lightning indexer's layers one of indexer_head_dim more (transformers
    5.24 `DeepseekV4CSACache.compressed_kv` "compressor" / "indexer"; llama.cpp 0c1e570 `llama_kv_cache_dsv4`'s
    CSA, HCA and lightning-indexer caches, K only)."""
    total = np.zeros_like(np.asarray(tokens), dtype=np.float64)
    for i in range(a.num_layers) if layers is None else layers:
        ratio = a.layer_compress(i)
        if ratio:
            entries = compressed_entries(tokens, ratio, layout.compressed_pad)
            total = total + _compressed_entry_bytes(a, fmt, layout, i) * entries
    return total if np.ndim(total) else float(total)


def _compressed_entry_bytes(a: Architecture, fmt: KVFormat, layout: KVLayout, i: int) -> float:
    """One compressed entry of layer i: a head_dim vector, and the lightning indexer's key where it has one."""
    return fmt.bytes_per_vector(a.head_dim) + (_indexer_key_bytes(a, fmt, layout) if a.layer_indexer(i) else 0)
