"""The CUDA-graph memory vLLM 0.33 takes from the KV budget, as `profile_cudagraph_memory` estimates it.

vllm/v1/worker/gpu_model_runner.py `profile_cudagraph_memory` (on by default since v0.21; off with
VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) captures the two largest graphs of each mode into a fresh pool and
estimates: the largest mode's first capture + for each mode (its graphs - 1) x max(second capture, 1 MiB).
The V2 model runner 0.33 runs by default (vllm/v1/worker/gpu/cudagraph_utils.py `profile_cudagraph_memory`)
captures every PIECEWISE graph into a throwaway pool and measures them whole, extrapolating only the FULL decode
graphs from their two largest: its estimate is what the captures take, which is what this rule models.

- Capture sizes (vllm/config/vllm.py `VllmConfig._set_cudagraph_sizes`): up to
  min(2 x max_num_seqs x q, 512 (1024 on SM100), max_num_batched_tokens) tokens: 1, 2, 4, every 8 below 256, every
  16 from 256, plus max_num_batched_tokens and max_num_seqs where they fit; with speculative decoding (q = 1 + the
  draft tokens a request decodes in a step) the uniform decode batches of 1, 2, 4, 8, ... requests x q instead of
  max_num_seqs. PIECEWISE graphs are captured for every size; with the default FULL_AND_PIECEWISE mode, FULL decode
  graphs for the sizes of whole requests (multiples of q) up to max_num_seqs x q
  (vllm/v1/cudagraph_dispatcher.py `initialize_cudagraph_keys`). The MTP drafter's own graphs are not modelled.
- First capture, modelled as the tensors the pieces (split at attention) hand on, kept in the pool for every
  layer: the q/k/v projection (q heads x head_dim + the K and V heads' width, or an MLA model's latent and rope
  key), the attention output and the residual, in the activation dtype, for the largest size's tokens. This is
  the structure the published captures fit (a pool of one piece's working set, or of piece graphs alone, leaves
  QwQ-32B 24 % short); which allocations vLLM's shared pool keeps is not traced here.
- Every captured size adds its piece graphs (layers + 1) and, with tensor parallelism, its all-reduces (one after
  each mixer, one after each feed-forward block); the estimate's floor is 1 MiB per further graph, the FULL decode
  graphs' cost here. A layer here is one that splits the graph: attention, or a Mamba2 / delta-net mixer
  (vllm/config/compilation.py `_attention_ops`), not a Nemotron-H block of only an MLP or experts.

The two per-graph constants are fitted to published captures ("Graph capturing finished ..., took X GiB",
tests/data/published/vllm_logs.json): 100 KiB per piece graph to Qwen2-7B on one A100 (0.50 GiB, 67 sizes,
vLLM 0.10.1), 72 KiB per captured all-reduce to the same model at TP 2 in one node without custom all-reduce
(0.65 GiB). QwQ-32B on one A800 (vLLM 0.11.0, 67 sizes in both modes) is the check: 1.43 GiB printed,
1.48 GiB from this rule. Not modelled: all-reduce across nodes (Ray over two nodes printed 1.00 and 1.88 GiB
where this rule gives 0.65 and 1.06), and the pool a MoE kernel's workspace may add. A vLLM 0.22 log of Qwen2.5-7B
(no repository to cite) printed an estimate of 0.37 GiB and a capture of 0.31 GiB where this rule gives 0.27:
newer releases may keep more per capture.
"""

from __future__ import annotations

from math import ceil

from memviz.core.arch import NO_MIXER, Architecture
from memviz.core.units import KiB, MiB

PIECE_GRAPH_BYTES = 100 * KiB
ALL_REDUCE_BYTES = 72 * KiB
MIN_GRAPH_BYTES = MiB  # `profile_cudagraph_memory`: "at least 1 MiB per graph for driver overhead"


def _grid(largest: int) -> set[int]:
    """1, 2, 4, every 8 below 256, every 16 from 256, up to `largest`."""
    sizes = {s for s in (1, 2, 4) if s <= largest}
    return sizes | set(range(8, min(largest + 1, 256), 8)) | set(range(256, largest + 1, 16))


def capture_sizes(max_num_seqs: int, max_num_batched_tokens: int, sm100: bool = False, query_len: int = 1) -> list[int]:
    """Token counts vLLM 0.33 captures graphs for (`VllmConfig._set_cudagraph_sizes`); `query_len`: tokens a request
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


def retained_bytes_per_token(a: Architecture, tp: int, act_bytes: int) -> float:
    """Bytes one token of a captured batch keeps in one layer's piece outputs on one tensor-parallel rank."""
    heads = max(a.num_heads // tp, 1)
    if a.is_mla:  # the widest layer's where layers differ (dots3)
        q = max(max(a.layer_num_heads(i) // tp, 1) * (a.layer_nope_dim(i) + a.layer_rope_dim(i))
                for i in range(a.num_layers))
        kv = max(a.layer_kv_lora(i) + a.layer_rope_dim(i) for i in range(a.num_layers))
    else:
        q, kv = heads * a.head_dim, 2 * max(a.num_kv_heads // tp, 1) * a.head_dim
    return act_bytes * (q + kv + heads * a.v_head_dim + a.hidden_size)


def cudagraph_bytes(a: Architecture, tp: int, pp: int, largest: int, piecewise_graphs: int, full_graphs: int,
                    act_bytes: int = 2) -> float:
    """The estimate for one rank holding `num_layers / pp` layers: the largest capture's retained outputs, then
    every piecewise size's graphs and all-reduces, then the FULL decode graphs at the estimate's floor."""
    mixers = sum(1 for kind in a.layer_types if kind != NO_MIXER)  # the split points (`_attention_ops`, with
    layers = ceil(mixers / pp)  # mamba_mixer2 and the delta-net's core); Nemotron-H's MLP blocks are none
    reduces = layers + ceil(sum(1 for i in range(a.num_layers) if a.layer_has_ffn(i)) / pp)  # one a mixer, one an FFN
    pool = layers * largest * retained_bytes_per_token(a, tp, act_bytes)
    per_size = (layers + 1) * PIECE_GRAPH_BYTES + (reduces * ALL_REDUCE_BYTES if tp > 1 else 0)
    return pool + piecewise_graphs * max(per_size, MIN_GRAPH_BYTES) + max(full_graphs - 1, 0) * MIN_GRAPH_BYTES
