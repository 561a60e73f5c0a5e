"""Activation and workspace memory.

Inference: buffers are reused from layer to layer, so the workspace is the peak
transient of the largest layer, not a sum over layers (llm-analysis takes
max(attention, mlp, layernorm) per layer; llama.cpp and gguf-parser size the
compute buffer from the largest layer's graph). The pieces:

- hidden: the residual stream in and out of a layer plus the Q/K/V projections;
- attention, eager: the B x heads x n x T scores as each family's `eager_attention_forward` holds them at its
  peak (`eager_score_bytes`), the B x n x T masks in the compute dtype (`eager_mask_bytes`: two where sliding and
  full layers meet), plus K/V repeated to all heads (`repeat_kv`);
  SDPA/flash: tiled, no score matrix and native GQA (transformers' `use_gqa_in_sdpa`
  when no mask is needed, flash kernels, ggml) — only the output remains, beside the bool masks transformers builds
  once the keys reach a sliding window (`sdpa_mask_bytes`);
- MLP: gated MLPs hold act(gate), up and their product (3 x n x I); plain MLPs
  their input and output (2 x n x I). Activations written as Python expressions
  in transformers (`activations.py`: NewGELU `gelu_new`, FastGELU, QuickGELU, the
  `*_python` variants) keep 1-3 more n x I temporaries alive in PyTorch's eager
  mode (GPT-2: 4 x n x I at `0.5 * input * (...)`, counted by the probe's live-
  tensor tests); fused kernels (F.gelu, F.silu; vLLM's and ggml's activations)
  keep none;
- MoE: each token goes to top-k experts, S = n x k rows and fp32 router logits.
  vLLM's `fused_moe` holds S x (2I + I + H) (intermediate_cache1..3), ggml the
  same (gate and up, their GLU, the down output); transformers' grouped experts
  (`integrations/moe.py`, `grouped_mm_experts_forward`, 5.17-5.24) hold the gathered
  input S x H, the fused gate_up output S x 2I, act(gate) and the product:
  S x (H + 4I); then, with the gathered input still referenced, the down output,
  its weighted copy and that copy put back in token order: S x 4H, the larger for
  fine-grained experts (I < H: Qwen3-30B-A3B's measured prefill peak on an H200
  is 290 MiB, S x (H + 4I) says 198; docs/accuracy-cuda.md);
- logits: rows x vocab in the compute dtype plus an fp32 copy (transformers'
  generate keeps only the last position; a plain forward computes all);
- gated delta-net layers (Qwen3.5 / Qwen3-Next) in transformers' reference path
  (`gated_deltanet_workspace`), in place of attention on those layers.

Training, for comparison with the seed's example only: Korthikanti et al. 2022,
"Reducing Activation Recomputation in Large Transformer Models", eq. 1-2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memviz.core.arch import FULL, KIMI_DELTA, MAMBA, MAMBA2, SHORTCONV, SLIDING, Architecture
from memviz.core.kv import ArrayLike

# n x I temporaries beyond input and output that transformers' Python-written activations hold at their peak
# (transformers/activations.py; e.g. gelu_new: input, 0.5*input, pow(input, 3), 0.044715*pow live together).
COMPOSED_ACT_TEMPORARIES = {"gelu_new": 2, "gelu_python_tanh": 2, "gelu_python": 2, "gelu_fast": 3, "quick_gelu": 1}

#: score matrices transformers 5.25's eager attention holds at once, as (float32, compute-dtype, compute-dtype only
#: when that is 16-bit). The common `eager_attention_forward` (Llama and most families): the scaled scores (or their
#: masked copy) beside their float32 softmax and its cast back, a no-op in float32. Families of their own:
#: GPT-2 (softmax in the compute dtype: scores and probabilities); GPT-Neo (float32 scores, their `torch.where`
#: copy, their masked copy, the cast); GPT-J and CodeGen (float32 scores and softmax, the cast); BLOOM (the baddbmm
#: scores and their masked copy in the compute dtype, then a float32 softmax and its float32 input); Falcon (5.25
#: runs it through the common one, and FalconDecoderLayer returns the probabilities, which FalconModel's loop holds
#: in `outputs` through the next layer's attention: one more copy in the compute dtype); gpt-oss and MiMo-V2-Flash
#: (scores, their concatenation with the sinks, the softmax, all in the compute dtype); Flint (float32 scores, their
#: concatenation with the sinks and the softmax); Ergo (the scores plus its float32 mask, their softmax, the cast);
#: HY-V4 (masked scores, then float32 through its float32 sinks: their
#: concatenation, less its maximum, the softmax, and the cast back). Measured as live tensors of real prefills in
#: float32 and bfloat16 (tests/probe/test_eager_live.py).
EAGER_SCORE_COPIES: dict[str, tuple[int, int, int]] = {
    "gpt2": (0, 2, 0), "gpt_neo": (2, 1, 0), "gptj": (2, 0, 1), "codegen": (2, 0, 1), "bloom": (2, 2, 0),
    "falcon": (1, 2, 1), "ergo": (2, 0, 1), "gpt_oss": (0, 3, 0), "mimo_v2_flash": (0, 3, 0), "flint": (3, 0, 0),
    "hy_v4": (2, 1, 1),
}
DEFAULT_EAGER_SCORE_COPIES = (1, 1, 1)
#: B x n x T masks in the compute dtype alive with the scores: the causal mask; HY-V4's sparse attention adds its
#: top-k mask filled into a copy of it and the copies its attention makes (measured: 5)
EAGER_MASK_COPIES = {"hy_v4": 5}
#: families whose model builds the causal mask even for SDPA (`create_causal_mask(..., allow_is_causal_skip=False)`,
#: transformers 5.25 FalconModel.forward: "Always materialize the mask so alibi can be added"; Kolibri1_1Model for
#: its indexed layers, whose indexers overlay their selection on it)
SDPA_BOOL_MASK_TYPES = frozenset({"falcon", "kolibri1_1"})


def sdpa_mask_bytes(a: Architecture, n: ArrayLike, t: ArrayLike) -> ArrayLike:
    """Bytes of the n x T bool masks a model builds before its layers for SDPA, alive through the forward (one for
    every sequence, expanded over the batch when none is padded; transformers 5.25 masking_utils.py
    `_ignore_causal_mask_sdpa`): none where SDPA's `is_causal` serves (no padding, one query or as many queries as
    keys), one for the sliding layers once the keys reach the window ("we need to add special patterns to the
    mask"), and a full one always in `SDPA_BOOL_MASK_TYPES`. Measured: a Mistral of 64-token windows at 2 x 2,048
    tokens held 4 MiB of mask that memviz left out."""
    always = 1 if a.model_type in SDPA_BOOL_MASK_TYPES and not a.alibi_mask else 0
    sliding = np.where(t >= a.sliding_window, 1, 0) if SLIDING in a.layer_types and a.sliding_window else 0
    return n * t * (always + sliding)


#: the most scores Kolibri 1.1's indexer makes at once (Kolibri1_1Indexer.max_scores: rows are chunked to it)
TOKEN_INDEX_CHUNK_SCORES = 2**26


def token_indexer_workspace(a: Architecture, n: ArrayLike, t: ArrayLike, b: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
    """(held through the forward, peak in an indexed layer) of Kolibri 1.1's indexer in transformers 5.25
    (Kolibri1_1Indexer): its pool, a bool a query and key of every sequence kept from layer to layer; in the layer
    its selection (another), and for the rows that see more keys than the budget, at most `TOKEN_INDEX_CHUNK_SCORES`
    at a time, the float32 scores, their masked copy, the int32 tie ranks and seven bool masks of a row and key
    (`select_tokens`, `top_k_mask`: 19 bytes)."""
    rows = np.clip(np.minimum(n, t - a.token_index_budget), 0, None)
    chunk = np.minimum(rows, np.maximum(1, TOKEN_INDEX_CHUNK_SCORES // np.maximum(t, 1)))
    return b * n * t, b * n * t + chunk * t * 19


def eager_mask_bytes(a: Architecture, act_bytes: float) -> float:
    """Bytes per query and key of the masks eager attention adds to its scores, alive through the forward: the
    causal mask, and a sliding-window one beside it in models with both kinds of layer (their `causal_mask_mapping`,
    transformers 5.25), or `EAGER_MASK_COPIES`; in the dtype of the input embeddings (float32 in Ergo's). None with
    an ALiBi mask, which replaces the causal one and is counted per head (`Architecture.alibi_mask`)."""
    if a.alibi_mask:
        return 0
    kinds = 2 if SLIDING in a.layer_types and FULL in a.layer_types else 1
    return EAGER_MASK_COPIES.get(a.model_type, kinds) * (4 if a.float32_residual else act_bytes)


def eager_score_bytes(a: Architecture, act_bytes: float) -> float:
    """Bytes per score (query x key x head) transformers' eager attention holds at its peak (`EAGER_SCORE_COPIES`)."""
    fp32, same, cast = EAGER_SCORE_COPIES.get(a.model_type, DEFAULT_EAGER_SCORE_COPIES)
    return 4 * fp32 + act_bytes * (same + (cast if act_bytes < 4 else 0))


def lightning_indexer_workspace(a: Architecture, n: ArrayLike, t: ArrayLike, b: ArrayLike) -> ArrayLike:
    """DeepSeek sparse attention's indexer in transformers 5.24 (HYV4Indexer, DeepseekV32Indexer): float32 scores of
    every indexer head over every key and their ReLU, then the head-weighted sum and its masked copy."""
    return b * n * t * 4 * (2 * a.indexer_heads + 2)


@dataclass(frozen=True)
class Workspace:
    """Peak transient bytes of one forward step, by part; `peak` is what the device needs."""

    hidden: ArrayLike
    attention: ArrayLike
    mlp: ArrayLike
    logits: ArrayLike

    @property
    def peak(self) -> ArrayLike:
        return self.hidden + np.maximum(np.maximum(self.attention, self.mlp), self.logits)


def inference_workspace(
    a: Architecture,
    step_tokens: ArrayLike,
    kv_tokens: ArrayLike,
    batch: ArrayLike,
    attention: str,
    act_bytes: float,
    logits_rows: ArrayLike,
    logits_bytes: float,
    tp: int = 1,
    eager_modules: bool = False,
    mamba_kernels: bool = False,
    recurrent_cores: bool = True,
    moe_gather: int = 1,
    moe_tp: int | None = None,
    moe_gather_bytes: float | None = None,
    routing_weight_bytes: float | None = None,
    routed_bytes: float | None = None,
) -> Workspace:
    """Workspace of a forward step that processes `step_tokens` new tokens per
    sequence for `batch` sequences attending to `kv_tokens` cached tokens.

    `logits_rows` is the number of logit rows materialised (B for generate,
    B x n for a full forward), `logits_bytes` the bytes per logit held at the
    peak (compute dtype + fp32 copy for PyTorch engines, 4 for ggml's F32 graph).
    Under tensor parallelism heads, intermediate size and vocabulary are split
    over `tp` ranks (Megatron-LM layout). `eager_modules` is transformers'
    PyTorch eager mode: Python-written activations and its grouped experts layout; there Mamba2 layers run the
    PyTorch reference scan unless `mamba_kernels` (mamba_ssm installed) gives them the fused kernels.
    `recurrent_cores` False is vLLM's profile run, where delta-net and Mamba2 mixers skip their scan
    (`skipped_core_workspace`). `moe_gather` > 1: the routed experts run on the tokens of that many data-parallel
    ranks, gathered beside them (vLLM's all-gather dispatch) at `moe_gather_bytes` a value (default `act_bytes`),
    their intermediate split over `moe_tp` ranks (default `tp`). `routing_weight_bytes`: a routing weight as the
    experts multiply by it (default `act_bytes`; float32 routers' weights make the weighted outputs float32).
    `routed_bytes`: the routed experts' workspace as the engine sizes it (vLLM's fused-MoE kernels), in place of
    rows x (the gated units x the intermediate size + the output).
    """
    n, t, b = step_tokens, kv_tokens, batch
    heads = a.num_heads / tp
    kv_heads = max(a.num_kv_heads / tp, 1)
    qkv = heads * a.head_dim + kv_heads * (a.head_dim + a.v_head_dim) if a.attends else 0
    if a.is_mla and eager_modules:  # transformers' expand_kv: kv_b's per-head output beside the keys it builds
        qkv += heads * (a.qk_nope_head_dim + a.v_head_dim)
    # the residual and the block's normed input (DeepSeek-V4: the residual's streams, their collapse and its norm;
    # Gemma 3n: `altup_residual`), and the per-layer inputs Gemma 3n and 4 make before the first layer
    residual = (a.hyper_streams + 2 if a.hyper_streams else 2) * a.hidden_size
    if a.altup_inputs:
        residual = altup_residual(a, eager_modules)
    residual_bytes = 4 if a.float32_residual and eager_modules else act_bytes
    hidden = b * n * (residual * residual_bytes + (qkv + a.num_layers * a.per_layer_input_size) * act_bytes)
    if attention == "sdpa":  # the masks alive beside every layer's peak
        hidden = hidden + sdpa_mask_bytes(a, n, t)
    if a.alibi_mask and attention in ("eager", "sdpa"):  # Falcon-RW's: a mask per head, the causal one replaced
        hidden = hidden + b * heads * n * t * act_bytes
    gqa = a.num_kv_heads < a.num_heads
    repeated_kv = b * t * heads * (a.head_dim + a.v_head_dim) * act_bytes if gqa and attention == "eager" else 0
    out = b * n * heads * a.v_head_dim * act_bytes
    # the scores and the B x n x T masks eager attention adds to them
    masks = eager_mask_bytes(a, act_bytes)
    scores = b * n * t * (heads * eager_score_bytes(a, act_bytes) + masks) if attention == "eager" else 0
    if a.compress_ratios and attention == "eager":  # DeepSeek-V4 (`deepseek_v4_eager_attention`)
        scores, repeated_kv = deepseek_v4_eager_attention(a, n, t, b, heads, act_bytes)
    attn = scores + repeated_kv + out if a.attends else 0
    if a.block_indexer and attention in ("eager", "sdpa"):  # MiniMax-M3's sparse layers: the mask held, or built
        attn = np.maximum(attn + b * heads * n * t * act_bytes, block_sparse_mask_workspace(a, n, t, b, act_bytes))
    elif a.indexer_heads and not a.compress_ratios and attention in ("eager", "sdpa"):
        attn = np.maximum(attn, lightning_indexer_workspace(a, n, t, b))
    if a.token_index_budget and attention in ("eager", "sdpa"):  # Kolibri 1.1: the pool held, the selection made
        pool, selecting = token_indexer_workspace(a, n, t, b)
        hidden, attn = hidden + pool, np.maximum(attn, selecting)
    if a.hyper_streams and eager_modules:
        attn = np.maximum(attn, hyper_connection_workspace(a, n, b, act_bytes))
    extra = COMPOSED_ACT_TEMPORARIES.get(a.hidden_act, 0) if eager_modules else 0
    # widths in units of the intermediate size: gated = max(gate + act(gate) + temporaries, act(gate) + up + product)
    dense_units = max(2 + extra, 3) if a.mlp_gated else 2 + extra
    if a.altup_inputs and eager_modules:  # Gemma3nTextMLP keeps gate, act(gate), up and their product as locals
        dense_units = 4
    dense = b * n * dense_units * (a.intermediate_size / tp) * act_bytes if a.has_ffn else 0
    if a.is_moe:
        # gated experts: the fused gate_up output (2) stays alive under act(gate) and the product in transformers
        routed_units = (max(3 + extra, 4) if eager_modules else 3) if a.mlp_gated else 2 + extra
        rows = b * n * moe_gather * a.experts_per_token
        width = a.moe_hidden_size or a.hidden_size  # the experts' space (Muse Spark's narrower one)
        routed = rows * (routed_units * (a.moe_intermediate_size / (moe_tp or tp)) + width) * act_bytes \
            if routed_bytes is None else routed_bytes
        if moe_gather > 1:
            routed = routed + b * n * moe_gather * width * (moe_gather_bytes or act_bytes)
        if eager_modules:  # the down output and the gathered input, the weighted copy and its reordering (integrations/
            # moe.py `grouped_mm_experts_forward`: `proj_out * sample_weights_g`, promoted to the weights' dtype)
            weighted = routing_weight_bytes or act_bytes
            routed = np.maximum(routed, rows * width * 2 * (act_bytes + max(weighted, act_bytes)))
        if eager_modules and a.expert_output_norms:  # ErgoExpertNorm beside the repeated input and the experts'
            routed = np.maximum(routed, rows * width * (2 * act_bytes + 12))  # output: three float32 copies
        shared = b * n * dense_units * (a.shared_expert_intermediate_size / tp) * act_bytes
        router = b * n * a.num_experts * 4
        moe = routed + shared + router
        if eager_modules and a.shared_expert_intermediate_size:  # one runs, its output kept, then the other
            first, second = (shared, routed) if a.model_type in SHARED_EXPERT_FIRST else (routed, shared)
            moe = np.maximum(first, second + b * n * width * act_bytes) + router
        mlp = np.maximum(dense, moe) if not all(a.moe_layers) else moe
    else:
        mlp = dense
    logits = logits_rows * (a.output_rows / tp) * logits_bytes
    if a.state_layers:
        if a.linear_mixer == SHORTCONV:  # `hidden` charges every stage the attention's q, k and v rows
            linear = short_conv_workspace(a, n, b, act_bytes, tp) - b * n * qkv * act_bytes
        elif not recurrent_cores:
            linear = skipped_core_workspace(a, n, b, act_bytes, tp)
        elif a.linear_mixer == KIMI_DELTA:
            linear = kimi_delta_workspace(a, n, b, act_bytes)
        elif a.linear_mixer == MAMBA:
            linear = mamba_workspace(a, n, b, act_bytes, eager_modules and not mamba_kernels)
        elif a.linear_mixer != MAMBA2:
            linear = gated_deltanet_workspace(a, n, b, act_bytes)
        elif eager_modules and not mamba_kernels:
            linear = mamba2_workspace(a, n, b, act_bytes)
        else:
            linear = mamba2_kernel_workspace(a, n, b, act_bytes, tp)
        attn = np.maximum(attn, linear)
    return Workspace(hidden=hidden, attention=attn, mlp=mlp, logits=logits)


#: model types whose transformers MoE block runs its shared expert before the routed ones (Qwen2MoeSparseMoeBlock:
#: `shared_expert_output = self.shared_expert(...)`, then `self.experts(...)`, transformers 5.25); the others with a
#: shared expert run it after them (DeepseekV3MoE.forward: `self.experts(...)`, then `+ self.shared_experts(residuals)`;
#: GLM-4.5, Ergo, MiniCPM5-MoE, Llama 4, ...). Either way the first one's output is kept while the second runs.
SHARED_EXPERT_FIRST = frozenset({"afmoe", "ernie4_5_moe", "laguna", "minimax_m3_vl", "qwen2_moe", "qwen3_5_moe",
                                 "qwen3_5_moe_text", "qwen3_next", "qwen3_omni_moe", "qwen3_omni_moe_text", "qwen4_exp",
                                 "step3p7"})


def deepseek_v4_eager_attention(a: Architecture, n: ArrayLike, t: ArrayLike, b: ArrayLike, heads: float,
                                 act_bytes: float) -> tuple[ArrayLike, ArrayLike]:
    """(scores, repeated K=V) of DeepSeek-V4's eager attention (transformers 5.24 modeling_deepseek_v4.py
    `eager_attention_forward`), in its widest layer: the keys are the window's (every cached token at prefill) and the
    layer's compressed entries appended; the masked scores (compute dtype), their concatenation with the float32
    sinks (so float32), the softmax of that less its maximum (float32) and its copy in the compute dtype live together,
    beside the mask with the compressed entries' block bias, and the K=V head repeated to every head twice (as keys
    and as values). Checked against the live tensors of real runs (tests/probe/test_workspace_live.py)."""
    ratio = min((r for r in a.compress_ratios if r), default=0)
    keys = t + (t // ratio if ratio else 0)
    per_score = act_bytes + 4 + 4 + (act_bytes if act_bytes < 4 else 0)
    scores = b * n * (heads * (keys + 1) * per_score + 2 * keys * act_bytes)
    return scores, 2 * b * keys * heads * a.head_dim * act_bytes


def block_sparse_mask_workspace(a: Architecture, n: ArrayLike, t: ArrayLike, b: ArrayLike,
                                 act_bytes: float) -> ArrayLike:
    """MiniMax-M3's block-sparse layers in transformers 5.24 under eager and SDPA attention (modeling_minimax_m3_vl.py
    `MiniMaxM3VLIndexer.build_block_mask`): the selected key blocks become a mask over every query head and key; at
    its last line the kept keys repeated to every head, their conjunction with the causal mask, its negation (bool
    each), the zeros it fills and the filled mask (compute dtype each) live together; the indexer before it holds its
    float32 scores over its heads, their masked and padded copies. The mask then stays alive through the attention.
    Checked against the live tensors of real prefills (tests/probe/test_workspace_live.py)."""
    pairs = b * n * t
    return np.maximum(pairs * a.num_heads * (3 + 2 * act_bytes), pairs * a.indexer_heads * 3 * 4)


def altup_residual(a: Architecture, eager_modules: bool) -> int:
    """Values a token holds on Gemma 3n's residual path at a layer's MLP: the layer's input streams and AltUp's
    predictions, `altup_inputs` x hidden each (Gemma3nTextAltUp.predict). transformers 5.24 (`eager_modules`) also
    keeps the streams' first copies (Gemma3nTextModel.forward's `temp_hidden_states`, alive to its end) and eight
    hidden-wide tensors of Gemma3nTextDecoderLayer.forward (normed input, Laurel's output, the attention's, its sums
    and norms), measured op by op (tests/probe/test_workspace_live.py); elsewhere the block's normed input and one
    sum, as for one stream."""
    streams = a.altup_inputs * a.hidden_size
    return 3 * streams + 8 * a.hidden_size if eager_modules else 2 * streams + 2 * a.hidden_size


def hyper_connection_workspace(a: Architecture, n: ArrayLike, b: ArrayLike, act_bytes: float) -> ArrayLike:
    """DeepSeek-V4's residual of `hyper_streams` streams in transformers 5.24 (`DeepseekV4DecoderLayer.forward`,
    `DeepseekV4HyperConnection`): mixing a block's output back, the old streams, post x output, comb x streams and
    the new streams live together beside the output (4 n + 1 hidden widths); computing the mixes, the streams,
    their float32 copy and its norm (the copy is the streams themselves in an fp32 model)."""
    streams = a.hyper_streams * a.hidden_size
    mixing = (4 * streams + a.hidden_size) * act_bytes
    norming = streams * (act_bytes + (4 if act_bytes == 4 else 8))
    return b * n * max(mixing, norming)


DELTA_RULE_CHUNK_TOKENS = 64  # torch_chunk_gated_delta_rule's chunk_size default (transformers 5.24)


def gated_deltanet_workspace(a: Architecture, step_tokens: ArrayLike, batch: ArrayLike, act_bytes: float) -> ArrayLike:
    """Peak transient bytes of a gated delta-net layer's prefill in transformers' reference path.

    transformers 5.24 models/qwen3_5/modeling_qwen3_5.py: `Qwen3_5GatedDeltaNet.forward` holds the convolved
    q/k/v (conv_dim channels) and the gate z (value width) in the compute dtype while `torch_chunk_gated_delta_rule`
    runs; that function works in fp32 on every value head (keys repeated to them) over the tokens padded to whole
    64-token chunks, and at its last line still references five key-wide tensors (query, key, k_beta, their decayed
    copy, k_cumdecay) plus the one a rescale creates beside its input, four value-wide ones (value, v_beta,
    new_values, core_attn_out) and three chunk x chunk matrices per token (pairwise decay, UT system, intra-chunk
    attention); it returns a compute-dtype copy of the output. flash-linear-attention's kernels, which transformers
    uses instead when that package is installed, are not modelled.
    """
    chunk = DELTA_RULE_CHUNK_TOKENS
    padded = np.ceil(np.asarray(step_tokens) / chunk) * chunk
    fp32 = batch * padded * a.linear_v_heads * 4 * (6 * a.linear_k_head_dim + 4 * a.linear_v_head_dim + 3 * chunk)
    value_width = a.linear_v_heads * a.linear_v_head_dim
    compute = batch * step_tokens * (a.linear_conv_dim + 2 * value_width) * act_bytes
    return fp32 + compute


def kimi_delta_workspace(a: Architecture, step_tokens: ArrayLike, batch: ArrayLike, act_bytes: float) -> ArrayLike:
    """Peak transient bytes of a Kimi delta attention layer's prefill in transformers' reference path.

    transformers 5.25 models/kimi_linear/modeling_kimi_linear.py: `KimiLinearDeltaAttention.forward` holds the
    convolved q/k/v in the compute dtype, the forget gate's per-channel decay in fp32 (`KimiLinearForgetGate`) and
    beta while `chunk_kimi_delta_attention` runs in fp32 over the tokens padded to whole 64-token chunks. Its decay
    mask is chunk x head width a token and head (the decay is per channel, where a gated delta-net's is per head),
    and the intra-chunk product `k_beta * key * decay_mask` makes two more of that size before summing: three beside
    query, key, value, the cumulated decay, k_beta, v_beta and beta. flash-linear-attention's kernels, which
    transformers uses instead when the `kernels` hub provides them, are not modelled. Live tensors of real prefills
    (tests/probe/test_workspace_live.py): +1.3 ... +2.6 %.
    """
    chunk = DELTA_RULE_CHUNK_TOKENS
    padded = np.ceil(np.asarray(step_tokens) / chunk) * chunk
    heads, key, value = a.linear_v_heads, a.linear_k_head_dim, a.linear_v_head_dim
    fp32 = batch * padded * heads * 4 * (3 * chunk * key + 4 * key + 2 * value + 1)
    compute = batch * np.asarray(step_tokens) * (a.linear_conv_dim * act_bytes + heads * (4 * key + act_bytes))
    return fp32 + compute


def short_conv_workspace(a: Architecture, step_tokens: ArrayLike, batch: ArrayLike, act_bytes: float,
                         tp: int = 1) -> ArrayLike:
    """Transient bytes of an LFM2 short-convolution layer's prefill beside its input and normed rows (transformers
    5.24 models/lfm2/modeling_lfm2.py `Lfm2ShortConv.forward`): in_proj's B, C and x (3 hidden widths), B x x, the
    convolution's output, C times it and its contiguous copy for out_proj: 7 hidden widths a token in the compute
    dtype (live tensors of a real prefill: tests/probe/test_workspace_live.py)."""
    return batch * np.asarray(step_tokens) * 7 * (a.hidden_size / tp) * act_bytes


def mamba_workspace(a: Architecture, step_tokens: ArrayLike, batch: ArrayLike, act_bytes: float,
                    reference: bool) -> ArrayLike:
    """Peak transient bytes of a Mamba layer's prefill in transformers (5.25 models/mamba/modeling_mamba.py,
    falcon_mamba alike), per token and channel of the mixer. The reference path (`mamba_selective_scan` when mamba_ssm
    is not installed, the CPU's) discretises the whole prompt at once: exp(A dt), dt B and dt B x, three float32
    tensors of state_size values, all locals alive until the scan returns; beside them in_proj's x and z, the
    convolved x and dt_proj's output (compute dtype), dt after its bias and softplus (float32), the per-step outputs and
    their stack (compute dtype), then the D skip's product and sum (float32, D is passed as float32) and the gated
    output. Measured by tests/probe/test_workspace_live.py (live tensors of real prefills). With mamba_ssm's fused
    `selective_scan_fn` only in_proj's output, the convolved x, dt and the scan's two outputs (compute dtype) remain:
    from mamba_ssm's selective_scan_interface.py, not measured."""
    tokens = batch * np.asarray(step_tokens) * a.linear_conv_dim
    if not reference:
        return tokens * 6 * act_bytes
    return tokens * (3 * a.linear_k_head_dim * 4 + 6 * act_bytes + 3 * 4)


def mamba2_workspace(a: Architecture, step_tokens: ArrayLike, batch: ArrayLike, act_bytes: float) -> ArrayLike:
    """Peak transient bytes of a Mamba2 layer's prefill in transformers' reference path.

    transformers 5.24 models/granitemoehybrid/modeling_granitemoehybrid.py: `GraniteMoeHybridMambaLayer.forward`
    holds in_proj's output (z, x, B, C and dt) and the convolved x, B and C in the compute dtype while
    `mamba2_chunk_scan` (the fallback when mamba_ssm is not installed) runs in fp32 over the tokens padded to whole
    `mamba_chunk_size` chunks; where it makes its output contiguous it still references three chunk x chunk
    matrices per head and token (L, G and M), seven head-width tensors (x, its D residual, x x dt, Y_diag,
    C x states, Y_off and the output), three state-width ones per head (B and C repeated to every head, B's decayed
    copy) and the chunk states (chunks + 1 of heads x head width x state): measured op by op in
    tests/probe/test_workspace_live.py. The mamba_ssm kernels are not modelled.
    """
    chunk, heads = a.linear_chunk, a.linear_v_heads
    padded = np.ceil(np.asarray(step_tokens) / chunk) * chunk
    per_token = heads * (3 * chunk + 7 * a.linear_v_head_dim + 3 * a.linear_k_head_dim)
    states = (padded / chunk + 1) * a.linear_state_values
    fp32 = batch * 4 * (padded * per_token + states)
    in_proj = heads * a.linear_v_head_dim + a.linear_conv_dim + heads  # z, x B C, dt
    compute = batch * step_tokens * (in_proj + a.linear_conv_dim) * act_bytes
    return fp32 + compute


def mamba2_kernel_workspace(a: Architecture, step_tokens: ArrayLike, batch: ArrayLike, act_bytes: float,
                            tp: int = 1) -> ArrayLike:
    """Transient bytes of a Mamba2 layer's prefill through the fused Triton kernels (vLLM 0.33
    vllm/model_executor/layers/mamba/ops/ssd_combined.py `_mamba_chunk_scan_combined_fwd`, called by MambaMixer2):
    in_proj's output, the convolved x, B and C and the output in the compute dtype (`_mamba2_projections`); dt and
    its cumulative decay (fp32, heads x chunk per chunk), the chunk states twice (fp32 from `_chunk_state_fwd`, then
    in the compute dtype from `_state_passing_fwd`) and C^T B per group (fp32, chunk x chunk per chunk), on this
    rank's heads. From the source; not measured (no CUDA run here)."""
    chunk, heads = a.linear_chunk, a.linear_v_heads / tp
    tokens = batch * np.asarray(step_tokens)
    chunks = np.ceil(tokens / chunk)
    states = chunks * heads * a.linear_v_head_dim * a.linear_k_head_dim * (4 + act_bytes)
    fp32 = chunks * chunk * 4 * (2 * heads + max(a.linear_k_heads / tp, 1) * chunk)
    return _mamba2_projections(a, tokens, act_bytes, tp) + states + fp32


def _mamba2_projections(a: Architecture, tokens: ArrayLike, act_bytes: float, tp: int) -> ArrayLike:
    """A Mamba2 layer's compute-dtype tensors around its scan on one rank: in_proj's z, x B C and dt, the convolved
    (vLLM's profile run: cloned) x B C, and the output."""
    heads = a.linear_v_heads / tp
    value = heads * a.linear_v_head_dim
    conv = value + 2 * max(a.linear_k_heads / tp, 1) * a.linear_k_head_dim
    return tokens * (value + conv + heads + conv + value) * act_bytes


def skipped_core_workspace(a: Architecture, step_tokens: ArrayLike, batch: ArrayLike, act_bytes: float,
                           tp: int = 1) -> ArrayLike:
    """A recurrent mixer's transient bytes in vLLM 0.33's profile run, where its scan does not run: `profile_run`'s
    dummy batch has no attention metadata, so `GatedDeltaNetAttention._forward_core`
    (vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py) returns after warming its kernels up on 64
    tokens, and MambaMixer2 (mamba_mixer2.py) after cloning x B C. A delta-net layer then holds in_proj_qkvz's q, k,
    v and z and in_proj_ba's b and a, their contiguous copies, the zeroed core output and the gated norm's output
    (2 key widths + 4 value widths + 4 head counts); a Mamba2 layer its projections (`_mamba2_projections`). The
    chunked kernels' fp32 work (`gated_deltanet_workspace`, `mamba2_kernel_workspace`) is what prefills take after
    start-up, which the profile does not see (vllm-project/vllm#52872). A Mamba layer (Jamba) keeps in_proj's x and z
    and x's contiguous copy (vLLM 0.34 mamba_mixer.py)."""
    tokens = batch * np.asarray(step_tokens)
    if a.linear_mixer == MAMBA2:
        return _mamba2_projections(a, tokens, act_bytes, tp)
    if a.linear_mixer == MAMBA:  # mamba_mixer.py `MambaMixer.forward`'s "V1 profile run": in_proj's x and z, x's
        return tokens * 3 * (a.linear_conv_dim / tp) * act_bytes  # contiguous copy, then out_proj
    key = a.linear_k_heads * a.linear_k_head_dim / tp
    value = a.linear_v_heads * a.linear_v_head_dim / tp
    return tokens * (2 * key + 4 * value + 4 * a.linear_v_heads / tp) * act_bytes


TRAINING_VARIANTS = ("none", "flash", "selective", "full")


def training_activation_bytes_per_layer(a: Architecture, seq: int, batch: int, variant: str = "none") -> int:
    """Korthikanti et al. (2022) stored activations per transformer layer, 16-bit, no TP:

    - "none" (no recomputation):         s*b*h*(34 + 5*a*s/h)
    - "flash" / "selective" (no s^2 terms): 34*s*b*h — FlashAttention does not store
      the score/softmax/dropout tensors, which is what selective recomputation drops
    - "full" (full recomputation):       2*s*b*h — only each layer's input is kept

    The formula assumes GPT's layout (MHA, 4h MLP); for GQA/SwiGLU models such as
    LLaMA it is the paper's approximation, not an exact count.
    """
    s, b, h, heads = seq, batch, a.hidden_size, a.num_heads
    if variant == "none":
        return round(s * b * h * (34 + 5 * heads * s / h))
    if variant in ("flash", "selective"):
        return 34 * s * b * h
    if variant == "full":
        return 2 * s * b * h
    raise ValueError(f"unknown training variant {variant!r}; known: {', '.join(TRAINING_VARIANTS)}")


def training_activation_bytes(a: Architecture, seq: int, batch: int, variant: str = "none") -> int:
    """All layers: L x the per-layer figure (activations saved for the backward pass)."""
    return a.num_layers * training_activation_bytes_per_layer(a, seq, batch, variant)
