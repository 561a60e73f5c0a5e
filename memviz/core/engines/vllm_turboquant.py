"""TurboQuant KV caches in vLLM 0.34 (vllm-project/vllm 0.34.0, read from its PyPI wheel).

`--kv-cache-dtype turboquant_k8v4 | turboquant_4bit_nc | turboquant_k3v4_nc | turboquant_3bit_nc`
(model_executor/layers/quantization/turboquant/config.py `TQ_PRESETS`, `TurboQuantConfig`):

- each KV head's K and V of a token share one slot (`TurboQuantAttentionBackend.customize_spec`:
  `state_content_bytes = slot_size_aligned`): FP8 keys (head bytes) or Lloyd-Max indices of 3 / 4 bits and an fp16
  norm, then uniform 4- / 3-bit values with an fp16 scale and zero, rounded up to an even size (`KVFormat.packed_kv`);
- a dense model keeps its first and last two layers in the model's dtype (`get_boundary_skip_layers`, n = 2, at most
  half the layers; engine/arg_utils.py adds them to `kv_cache_dtype_skip_layers`, attention.py caches those layers
  "auto"); a hybrid model (Mamba / delta-net layers) compresses every attention layer. All layers being full
  attention, the pool stays one group whose page sums each layer's own (`UniformTypeKVCacheSpecs`);
- the compressed layers run the TURBOQUANT backend, the boundary layers the default one with FlashAttention 2
  (arg_utils.py: "TurboQuant requires FlashAttention 2", so no FlashAttention 3 split buffers);
- the metadata builder reserves from the WorkspaceManager (`TurboQuantMetadataBuilder._reserve_workspace`): per
  request slot and query head on the rank, `tq_max_kv_splits_for_cuda_graph` (32) split partials of head + 1 fp32
  values, an output row in the model's dtype and an fp32 log-sum-exp; and, with chunked prefill over more than 128
  batched tokens, fp16 K and V buffers of one request's whole context on the rank's KV heads. The manager keeps one
  buffer, grown to the largest request (shared with the fused-MoE experts' workspace, `vllm_moe_workspace`).

Not modelled: sliding-window layers (their pages are padded to the largest), MLA, the per-layer Hadamard matrices
(head x head fp32) and centroid tables (a few KiB).
"""

from __future__ import annotations

from memviz.core.arch import CROSS, FULL, SLIDING, Architecture
from memviz.core.engines.vllm_kv import mla_attention
from memviz.core.engines.vllm_moe_workspace import ALIGN_BYTES
from memviz.core.errors import InputError

#: --kv-cache-dtype names (`TQ_PRESETS`), as memviz's KV formats name them too
PRESETS = ("turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc")
#: layers kept in the model's dtype at each end of a dense model (`get_boundary_skip_layers` n)
BOUNDARY_LAYERS = 2
#: `AttentionConfig.tq_max_kv_splits_for_cuda_graph`
KV_SPLITS = 32
#: turboquant_attn.py `_CONTINUATION_DECODE_THRESHOLD`: chunked prefill over more tokens reserves the prefill buffers
CONTINUATION_THRESHOLD_TOKENS = 128


#: the workspace in words, for the Breakdown and the CLI
DESCRIPTION = ("in the workspace manager's buffer beside the experts' workspace: 32 split partials of head + 1 fp32 "
               "values for each request slot and query head, or with chunked prefill fp16 K and V of one request's "
               "context, the larger")


def is_turboquant(kv_format: str) -> bool:
    return kv_format in PRESETS


def hybrid(a: Architecture) -> bool:
    """vLLM's `is_hybrid`: attention beside Mamba / delta-net / convolution layers."""
    return bool(a.state_layers)


def boundary_layers(a: Architecture) -> frozenset[int]:
    """The layers a dense model caches in its own dtype: the first and last two (none in a hybrid model)."""
    if hybrid(a):
        return frozenset()
    n = min(BOUNDARY_LAYERS, a.num_layers // 2)
    return frozenset((*range(n), *range(a.num_layers - n, a.num_layers)))


def check(a: Architecture, backend: str, act_bytes: int) -> None:
    """What memviz does not model or vLLM refuses, in one line each (the TURBOQUANT backend's `supported_dtypes`:
    float16 and bfloat16)."""
    if mla_attention(a):
        raise InputError("vLLM's TurboQuant cache is not modelled for MLA models (their backends cache a latent)")
    if any(kind in (SLIDING, CROSS) for kind in a.layer_types):
        raise InputError("memviz does not model vLLM's TurboQuant cache beside sliding-window layers (vLLM pads "
                         "their pages to the largest); choose another cache for this model")
    if any(a.layer_head_dim(i) != a.layer_v_head_dim(i) for i in range(a.num_layers) if a.layer_caches_kv(i)):
        raise InputError("vLLM's TurboQuant slot packs K and V of one head size; this model's K and V widths differ")
    if backend != "auto":
        raise InputError(f"vLLM runs a TurboQuant cache on its TURBOQUANT backend, not {backend} "
                         "(attention_backend auto)")
    if act_bytes != 2:
        raise InputError("vLLM's TURBOQUANT backend takes float16 and bfloat16 activations only; the scenario "
                         "computes in float32")


def workspace_bytes(a: Architecture, tp: int, max_num_seqs: int, max_num_batched_tokens: int, max_model_len: int,
                    block_tokens: int, act_bytes: int, chunked_prefill: bool) -> float:
    """The WorkspaceManager buffer the TurboQuant builder asks for on one rank: the larger of its decode request and,
    with chunked prefill over more than 128 tokens, its prefill request (module docstring)."""
    heads = max(a.num_heads // tp, 1)
    d = max(a.layer_head_dim(i) for i in range(a.num_layers) if a.layer_types[i] == FULL)
    decode = sum(_aligned(n) for n in (max_num_seqs * heads * KV_SPLITS * (d + 1) * 4,
                                       max_num_seqs * heads * d * act_bytes, max_num_seqs * heads * 4))
    if not chunked_prefill or max_num_batched_tokens <= CONTINUATION_THRESHOLD_TOKENS:
        return decode
    kv_heads = max(a.num_kv_heads // tp, 1)
    context = -(-max(0, max_model_len - 1) // block_tokens) * block_tokens
    return max(decode, 2 * _aligned(kv_heads * context * d * 2))


def _aligned(n_bytes: float) -> float:
    return -(-n_bytes // ALIGN_BYTES) * ALIGN_BYTES
