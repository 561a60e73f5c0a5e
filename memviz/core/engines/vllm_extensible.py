"""vLLM 0.34's extensible KV cache: the pool sized from the memory measured after warm-up and CUDA-graph capture.

vLLM 0.34.0 turns it on by default on CUDA (`config/cache.py` `CacheConfig.enable_extensible_kv_cache`: "enabled on
CUDA and ROCm unless kv_cache_memory_bytes is set"; `--no-enable-extensible-kv-cache` restores the profile-based
sizing of every earlier release). `v1/worker/gpu_worker.py` reserves the pool's address range, warms up, captures
the CUDA graphs, then `v1/worker/extensible_kv_cache.py` `measure_kv_cache_blocks` / `measure_kv_cache_bytes`
commit

    available = min(requested - used, headroom - margin) - transient
              = min(requested, startup free - margin) - (used + transient)       the budget less the rest
    used      = what is resident after capture but the KV prefix (weights, buffers, non-torch memory, the graphs)
    headroom  = free memory at start-up (after the CUDA context and NCCL) - used
    margin    = max(1 GiB, 0.75 x transient)             KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION
    transient = the profile run's allocated peak over what it keeps (`peak_activation_memory`: the CUDA-graph
                estimate is 0 with this cache, `profile_cudagraph_memory`), or a sizing step's, the larger
    requested = ceil(gpu_memory_utilization x total), gpu_memory_utilization 1.0 unless set
                (`resolved_gpu_memory_utilization`), and no start-up refusal when less is free (`request_memory`)

in whole blocks whose pages are mapped in granules: every layer's segment rounded up to the 2 MiB commit granule
(`ExtensibleKVCache.blocks_within`, `physical_bytes_for`; `utils/extensible_tensor.py` `granule_size`: the
driver's granularity, floored at 2 MiB). The sizing steps (`v1/worker/gpu/warmup.py` `run_kv_cache_sizing_warmup`)
run max_num_batched_tokens through the model with attention and ask prompt logprobs (max_logprobs 20) of the
prefill: `v1/worker/gpu/sample/prompt_logprob.py` computes the logits of at most CHUNK_SIZE = 1,024 prompt rows at a
time, in the model's dtype, beside the step's hidden states. An MLA model also runs a step over a cached context
of the chunked-prefill workspace's tokens (`run_context_prefill_warmup`; layers/attention/mla_attention.py
`determine_chunked_prefill_workspace_size`: min(max(8 x max_model_len, 4 x max_num_seqs x block), 65,536), aligned to
the block), which a layer up-projects at once (`_compute_prefill_context`): kv_b_proj's K-nope and V of every head on
the rank, and K (nope and rope) concatenated beside them. Not modelled: the torch reservation growth a sizing step
measures (fragmentation), torch.topk's workspace for 20 logprobs, FP8 prefill queries.
"""

from __future__ import annotations

import numpy as np

from memviz.core.units import GiB, MiB

MARGIN_FLOOR_BYTES = 1 * GiB
MARGIN_FRACTION = 0.75
GRANULE_BYTES = 2 * MiB
#: gpu_memory_utilization when unset: with this cache, and without it (`CacheConfig.DEFAULT_GPU_MEMORY_UTILIZATION`)
UTILIZATION = 1.0
PROFILED_UTILIZATION = 0.92
#: prompt rows whose logits one chunk of the prompt-logprob step holds (`prompt_logprob.py` CHUNK_SIZE)
PROMPT_LOGPROB_ROWS = 1024
#: the MLA chunked-prefill workspace's cap, in tokens (`determine_chunked_prefill_workspace_size`)
MLA_CONTEXT_TOKENS = 64 * 1024


def margin_bytes(transient: np.ndarray) -> np.ndarray:
    """Memory kept free beyond the transient peak for what the measurement does not show."""
    return np.maximum(MARGIN_FLOOR_BYTES, np.floor(np.asarray(transient, dtype=float) * MARGIN_FRACTION))


def budget_bytes(requested: float, startup_free: float, transient: np.ndarray) -> np.ndarray:
    """What the pool and the rest (the transient peak with it) may take together: `measure_kv_cache_bytes`'s
    available bytes are this less the rest."""
    return np.minimum(requested, startup_free - margin_bytes(transient))


def prompt_logprob_chunk_bytes(tokens: int, vocab: int, act_bytes: float) -> float:
    """The logits of one chunk of prompt rows a sizing step's prompt logprobs hold."""
    return float(min(PROMPT_LOGPROB_ROWS, tokens) * vocab * act_bytes)


def mla_context_tokens(max_model_len: int, max_num_seqs: int, block_tokens: int) -> int:
    """Tokens of the MLA chunked-prefill workspace: what a context-prefill step up-projects at once."""
    tokens = min(max(8 * max_model_len, 4 * max_num_seqs * block_tokens), MLA_CONTEXT_TOKENS)
    return -(-max(tokens, block_tokens) // block_tokens) * block_tokens


def committed_bytes(blocks: np.ndarray, segment_pages: tuple[int, ...]) -> np.ndarray:
    """Bytes `blocks` blocks map: each segment's pages rounded up to whole granules (`physical_bytes_for`)."""
    pages = np.asarray(segment_pages, dtype=float)
    blocks = np.asarray(blocks, dtype=float)
    return (np.ceil(blocks[..., None] * pages / GRANULE_BYTES) * GRANULE_BYTES).sum(axis=-1)


def blocks_within(nbytes: np.ndarray, segment_pages: tuple[int, ...]) -> np.ndarray:
    """The most blocks whose mapped segments fit `nbytes` (`ExtensibleKVCache.blocks_within`), by bisection between
    the blocks of `nbytes` less a granule per segment and the blocks of `nbytes`."""
    nbytes = np.asarray(nbytes, dtype=float)
    unit = float(sum(segment_pages))
    hi = np.floor(np.maximum(nbytes, 0) / unit)
    lo = np.floor(np.maximum(nbytes - len(segment_pages) * GRANULE_BYTES, 0) / unit)
    while np.any(lo < hi):
        mid = np.ceil((lo + hi) / 2)
        fits = committed_bytes(mid, segment_pages) <= nbytes
        lo, hi = np.where(fits, mid, lo), np.where(fits, hi, mid - 1)
    return lo
