"""The CUDA-graph memory vLLM 0.34 captures, and takes from the KV budget (`profile_cudagraph_memory`).

Source: vllm-project/vllm 0.34.0 (the PyPI wheel); the files below are the package's.

vllm/v1/worker/gpu_model_runner.py `profile_cudagraph_memory` (on by default since v0.20; off with
VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) captures the two largest graphs of each mode into a fresh pool and
estimates: the largest mode's first capture + for each mode (its graphs - 1) x max(second capture, 1 MiB); the V2
model runner (vllm/v1/worker/gpu/cudagraph_utils.py) measures its PIECEWISE graphs whole. With the extensible KV
cache the capture itself is measured before the pool. This rule models the capture; vLLM 0.19's estimates printed
beside 59 captures on H100s (llm-d-incubation/llm-d-planner, accuracy/results/v0.19.0/logs) were a median 10 %
under them (0.52-1.90x).

- Capture sizes (vllm/config/vllm.py `VllmConfig._set_cudagraph_sizes`): up to
  min(2 x max_num_seqs x q, 512 (1024 on SM100), max_num_batched_tokens) tokens: 1, 2, 4, every 8 below 256, every
  16 from 256, plus max_num_batched_tokens and max_num_seqs where they fit; with speculative decoding (q = 1 + the
  draft tokens a request decodes in a step) the uniform decode batches of 1, 2, 4, 8, ... requests x q instead of
  max_num_seqs. PIECEWISE graphs are captured for every size; with the default FULL_AND_PIECEWISE mode, FULL decode
  graphs for the sizes of whole requests (multiples of q) up to max_num_seqs x q
  (vllm/v1/cudagraph_dispatcher.py `initialize_cudagraph_keys`). The MTP drafter's own graphs are not modelled.
- FlashAttention 3's split-KV buffers (`split_kv_bytes`): with FULL graphs and FA3 (Hopper; AOT scheduling) the
  attention metadata builders cap the splits at `flash_attn_max_num_splits_for_cuda_graph` (32) "so that large
  enough intermediate buffers are pre-allocated during capture" (v1/attention/backends/flash_attn.py
  `FlashAttentionMetadataBuilder.__init__`, mla/flashattn_mla.py): float32 partial outputs and log-sum-exps of
  [splits, heads, tokens, v_head_dim] for the largest FULL graph. The 0.19 logs print them as the FULL mode's first
  capture: 260 MiB for Llama-3.1-8B (32 x 512 x 32 x 129 x 4 B = 258 MiB), 70 at TP 4, 134 for 8 heads of 256,
  522 for DeepSeek-V2-Lite's 16 latent heads of 512; 4 MiB where TRITON_ATTN ran (float32, Gemma 3's image
  prefix on 0.19) and 8 MiB for gpt-oss (its FA3 call with attention sinks allocated none).
- The rest, fitted to the 0.19 captures ("Graph capturing finished in N secs, took X GiB") of 28 dense
  start-ups (Llama, Qwen2/3, CodeLlama, Gemma 1/2/3, Granite, Phi-2/4, Mistral Small; TP 1-4, PP 1-4, bf16 / fp8 /
  int8 / fp32; 51 sizes in both modes): `BASE_BYTES` + the largest piece's feed-forward working set (gate/up
  projection and activation output: 3 x the rank's intermediate width for the largest size's tokens) +
  `LAYER_GRAPH_BYTES` per layer and captured graph size (the graphs' own memory, which grows with the kernels a
  layer launches). MoE layers launch more kernels (router, top-k, sort, two grouped GEMMs) and a shared expert more
  again (`MOE_LAYER_GRAPH_BYTES`, `SHARED_EXPERT_GRAPH_BYTES`, fitted to the MoE presets' captures: Qwen3-30B-A3B,
  Qwen1.5-MoE-A2.7B, DeepSeek-V2-Lite, Mixtral at TP 2). Checked in tests/data/published/vllm_logs.json (39 0.19
  cases: -10.4 ... +7.3 %, median 2.8 %) and vllm_captures.json (16 more 0.19 start-ups, 14 of models without a
  preset: median 5.0 %, worst 11.0 %), and on other
  boards and releases: QwQ-32B on an A800 (0.11, 67 sizes in both modes) +10.6 %, Qwen2-7B on an A100 (0.10, 67
  piecewise) -9.9 %. Not modelled: all-reduce buffers captured without vLLM's custom all-reduce (0.10 at TP 2 on
  A100s took 0.15 GiB more than one GPU; Ray over two nodes 1.00 and 1.88 GiB), gpt-oss's kernels (0.19 TP 2:
  1.55 GiB, 2.5 times the rule), hybrid models' mixers (every decoder layer counts as a dense one).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from memviz.core.arch import FULL, SLIDING, Architecture
from memviz.core.engines.vllm_kv import mla_attention
from memviz.core.units import KiB, MiB

FA3_SPLITS = 32  # AttentionConfig.flash_attn_max_num_splits_for_cuda_graph (vllm/config/attention.py)
BASE_BYTES = 89 * MiB
LAYER_GRAPH_BYTES = 173 * KiB
MOE_LAYER_GRAPH_BYTES = 50 * KiB
SHARED_EXPERT_GRAPH_BYTES = 130 * KiB


@dataclass(frozen=True)
class Captures:
    """The graphs vLLM captures on one rank: sizes per mode, the largest of each, whether FA3's split buffers
    are captured with the FULL graphs, and the bytes of an activation value."""

    piecewise: int
    full: int
    largest: int
    largest_full: int
    split_kv: bool
    act_bytes: int = 2


def _grid(largest: int) -> set[int]:
    """1, 2, 4, every 8 below 256, every 16 from 256, up to `largest`."""
    sizes = {s for s in (1, 2, 4) if s <= largest}
    return sizes | set(range(8, min(largest + 1, 256), 8)) | set(range(256, largest + 1, 16))


def capture_sizes(max_num_seqs: int, max_num_batched_tokens: int, sm100: bool = False, query_len: int = 1) -> list[int]:
    """Token counts vLLM 0.34 captures graphs for (`VllmConfig._set_cudagraph_sizes`); `query_len`: tokens a request
    takes in a decode step (`uniform_decode_query_len`, 1 + the speculative tokens), whose uniform decode batches of
    1, 2, 4, 8, ... requests are captured beside the token grid."""
    default = 1024 if sm100 else 512
    ceiling = min(2 * max_num_seqs * query_len, default)
    if query_len > 1:
        requests = min(max_num_seqs, default)
        uniform = {n * query_len for n in _grid(requests) | {requests} if n * query_len <= ceiling}
    else:
        uniform = {max_num_seqs} if max_num_seqs <= ceiling else set()
    largest = min(max_num_batched_tokens, ceiling)
    sizes = _grid(largest) | {n for n in uniform if n <= max_num_batched_tokens}
    if max_num_batched_tokens <= largest:
        sizes.add(max_num_batched_tokens)
    return sorted(sizes)


def fa3_split_kv(a: Architecture, compute_capability: tuple[int, int] | None, act_bytes: int, backend: str,
                 quantized_kv: bool = False) -> bool:
    """Whether the FULL graphs capture FA3's split buffers: FLASH_ATTN (FLASH_ATTN_MLA for MLA) runs FA3 on
    compute capability 9 (`get_flash_attn_version`) for 16-bit activations (`supported_dtypes`), head dims up to
    256 and no ALiBi; it leads the backends vLLM tries there (platforms/cuda.py `_get_backend_priorities`; Gemma 3's
    image prefix runs TRITON_FLASH_ATTN, whose causal part is FlashAttention's). FLASH_ATTN_MLA takes no quantized
    cache (`FlashAttnMLABackend.supported_kv_cache_dtypes`: FlashMLA runs then, its buffers not modelled); DeepSeek
    sparse attention runs other kernels; gpt-oss's sinks captured none in 0.19."""
    if compute_capability is None or compute_capability[0] != 9 or act_bytes != 2 or backend not in ("auto", "FLASH_ATTN"):
        return False
    if a.indexer_heads or a.attention_sinks or a.alibi_mask or (mla_attention(a) and quantized_kv):
        return False
    return mla_attention(a) or max((a.layer_head_dim(i) for i in range(a.num_layers)), default=0) <= 256


def split_kv_bytes(a: Architecture, tp: int, tokens: int) -> float:
    """FA3's float32 partial outputs and log-sum-exps for `tokens` query tokens, the widest attention layer's
    heads on one rank: [splits, heads, tokens, v_head_dim + 1] (an MLA layer's values are its latent)."""
    widths = [max(a.layer_num_heads(i) // tp, 1) * ((a.layer_kv_lora(i) if mla_attention(a) else a.layer_v_head_dim(i)) + 1)
              for i in range(a.num_layers) if a.layer_types[i] in (FULL, SLIDING)]
    return FA3_SPLITS * tokens * max(widths, default=0) * 4


def captured_split_kv_bytes(a: Architecture, tp: int, caps: Captures) -> float:
    """FA3's split buffers the FULL graphs of `caps` hold on one rank (none without FULL graphs or FA3)."""
    return split_kv_bytes(a, tp, caps.largest_full) if caps.split_kv and caps.full else 0.0


def ffn_working_bytes(a: Architecture, tp: int, tokens: int, act_bytes: int) -> float:
    """The largest piece's feed-forward working set: its gate/up output and activation (3 x the rank's width; 2 x
    for an ungated MLP) for `tokens` tokens; a MoE layer's experts run each token top-k times, beside its shared
    expert."""
    def width(i: int) -> float:
        if a.moe_layers and a.moe_layers[i]:
            return a.experts_per_token * a.moe_intermediate_size + a.shared_expert_intermediate_size
        return a.layer_intermediate_size(i)
    widest = max((width(i) for i in range(a.num_layers) if a.layer_has_ffn(i)), default=0)
    return tokens * act_bytes * (3 if a.mlp_gated else 2) * widest / tp


def cudagraph_bytes(a: Architecture, tp: int, pp: int, caps: Captures) -> float:
    """What one rank holding `num_layers / pp` layers captures: FA3's split buffers with FULL graphs, the fitted
    base and feed-forward working set, and every captured size's graphs per layer."""
    layers = ceil(a.num_layers / pp)
    moe_layers = ceil(sum(a.moe_layers) / pp) if a.moe_layers else 0
    shared = SHARED_EXPERT_GRAPH_BYTES if a.shared_expert_intermediate_size else 0
    graphs = caps.piecewise + caps.full
    per_size = layers * LAYER_GRAPH_BYTES + moe_layers * (MOE_LAYER_GRAPH_BYTES + shared)
    return (BASE_BYTES + ffn_working_bytes(a, tp, caps.largest, caps.act_bytes) + graphs * per_size
            + captured_split_kv_bytes(a, tp, caps))
