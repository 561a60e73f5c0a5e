"""Per-tensor inventory of a model: every weight with its name, shape and role.

Weights are counted by summing this inventory, not by a closed formula, so a
format can treat each tensor as the engines do (embeddings and LM head kept at
16 bit, norms and routers never quantized, GGUF mixes choosing a type per
tensor). Names follow the Hugging Face checkpoints; shapes follow
`torch.nn.Linear` ([out_features, in_features]). Experts are stacked into one
3-D tensor [experts, out, in] per projection, as transformers >= 5 and vLLM
hold them, which keeps the inventory small for 256-expert models.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from math import prod

from memviz.core.arch import CROSS, KIMI_DELTA, LINEAR, MAMBA, MAMBA2, NO_MIXER, SHORTCONV, SLIDING, Architecture


class Role(str, Enum):
    EMBEDDING = "embedding"
    POSITION = "position_embedding"
    ATTENTION = "attention"
    MLP = "mlp"
    EXPERT = "expert"
    ROUTER = "router"
    NORM = "norm"
    LM_HEAD = "lm_head"
    OTHER = "other"  # a stored tensor memviz cannot place (counted, never quantized)


@dataclass(frozen=True)
class Tensor:
    """One weight tensor. `layer` is None for tensors outside the decoder blocks."""

    name: str
    shape: tuple[int, ...]
    role: Role
    layer: int | None = None
    kind: str = ""  # short projection kind: q, k, v, o, gate, up, down, ... (used by GGUF mixes)

    @property
    def numel(self) -> int:
        return prod(self.shape)

    @property
    def is_matrix(self) -> bool:
        """Quantizers only touch weight matrices (>= 2-D), never vectors nor biases: a stacked expert bias
        (experts x rows, gpt-oss's `gate_up_proj_bias`) is 2-D but stays 16-bit in the checkpoint (BF16 in
        openai/gpt-oss-20b's safetensors) and F32 in llama.cpp's files."""
        return len(self.shape) >= 2 and not self.kind.endswith("bias")


def _linear(out: list[Tensor], name: str, n_out: int, n_in: int, role: Role, layer: int | None, kind: str,
            bias: bool = False) -> None:
    out.append(Tensor(f"{name}.weight", (n_out, n_in), role, layer, kind))
    if bias:
        out.append(Tensor(f"{name}.bias", (n_out,), role, layer, kind + "_bias"))


def _norm(out: list[Tensor], a: Architecture, name: str, size: int, layer: int | None) -> None:
    if a.weightless_norms:
        return
    out.append(Tensor(f"{name}.weight", (size,), Role.NORM, layer, "norm"))
    if a.norm_bias:
        out.append(Tensor(f"{name}.bias", (size,), Role.NORM, layer, "norm_bias"))


def _attention(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    h, role = a.hidden_size, Role.ATTENTION
    if a.layer_types[i] == LINEAR:
        _linear_mixer(out, a, p, i)
        return
    if a.compress_ratios:
        _v4_attention(out, a, p, i)
        return
    if a.is_mla:
        # DeepseekV3Attention: q via a low-rank pair (or one q_proj when q_lora_rank is null),
        # kv_a_proj_with_mqa -> [kv_lora_rank + rope], kv_b_proj -> heads * (nope + v); Mistral Large 4's NoPE
        # layers without a rope part, dots3's sliding layers with heads, a latent and a nope width of their own
        heads, rope, nope, rank = a.layer_num_heads(i), a.layer_rope_dim(i), a.layer_nope_dim(i), a.layer_kv_lora(i)
        if a.q_lora_rank:
            _linear(out, f"{p}.q_a_proj", a.q_lora_rank, h, role, i, "q_a")
            _norm(out, a, f"{p}.q_a_layernorm", a.q_lora_rank, i)
            if a.mla_query_gate:  # AXK2Attention.q_gate_proj (stored as q_b_proj): queries and output gate
                _linear(out, f"{p}.q_b_proj", heads * (nope + rope + a.v_head_dim), 2 * a.q_lora_rank, role,
                        i, "q_b")
            else:
                _linear(out, f"{p}.q_b_proj", heads * (nope + rope), a.q_lora_rank, role, i, "q_b")
        else:
            _linear(out, f"{p}.q_proj", heads * (nope + rope), h, role, i, "q")
        if a.layer_caches_kv(i):  # Mistral Large 4's KV-sharing layers project no latent of their own
            _linear(out, f"{p}.kv_a_proj_with_mqa", rank + rope, h, role, i, "kv_a")
            _norm(out, a, f"{p}.kv_a_layernorm", rank, i)
        _linear(out, f"{p}.kv_b_proj", heads * (nope + a.v_head_dim), rank, role, i, "kv_b")
        _linear(out, f"{p}.o_proj", h, heads * a.v_head_dim, role, i, "o")
        if a.rope_key_norm:  # Dots3NoteTextAttention.k_rope_only_layernorm
            _norm(out, a, f"{p}.k_norm", rope, i)  # llama.cpp: attn_k_norm {rope}
        if a.head_gate:  # Dots3NoteTextAttention.g_proj: a sigmoid gate per head
            _linear(out, f"{p}.g_proj", heads * a.head_gate, h, role, i, "attn_gate")
        if a.softmax_scaling:  # MistralLarge4TextSoftmaxScaling: a scale and a bias per head
            out.append(Tensor(f"{p}.softmax_scaling.scale", (2 * a.num_heads,), Role.NORM, i, "softmax_scaling"))
        if a.layer_indexer(i):
            _indexer(out, a, f"{p}.indexer", i)
        if a.attn_output_gate:  # HYV4Attention.gate_proj: a gate per head and value channel
            _linear(out, f"{p}.gate_proj", a.num_heads * a.v_head_dim, h, role, i, "attn_gate")
        if a.attention_sinks:
            out.append(Tensor(f"{p}.sinks", (a.num_heads,), Role.ATTENTION, i, "sinks"))
        return
    d, dv, kv_heads, own_kv = a.layer_head_dim(i), a.layer_v_head_dim(i), a.layer_kv_heads(i), a.layer_caches_kv(i)
    heads = a.layer_num_heads(i)
    gate = 2 if a.attn_output_gate else 1  # Qwen3_5Attention: the query and the output gate in one projection
    _linear(out, f"{p}.q_proj", gate * heads * d, h, role, i, "q", a.qkv_bias)
    if own_kv:  # Gemma 4's KV-sharing layers hold no K/V projections; its full layers may take V from K
        _linear(out, f"{p}.k_proj", kv_heads * d, h, role, i, "k", a.qkv_bias)
        if not a.layer_v_from_k(i):
            _linear(out, f"{p}.v_proj", kv_heads * dv, h, role, i, "v", a.qkv_bias)
    _linear(out, f"{p}.o_proj", h, heads * dv, role, i, "o", a.out_bias)
    if a.sub_norms:  # BitNetAttention.attn_sub_norm (its output is o_proj's input: hidden wide in BitNet)
        out.append(Tensor(f"{p}.attn_sub_norm.weight", (heads * dv,), Role.NORM, i, "attn_sub_norm"))
    if a.differential_lambdas:  # DiffLlamaAttention.lambda_q1 / lambda_k1 / lambda_q2 / lambda_k2
        for name in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            out.append(Tensor(f"{p}.{name}", (d,), Role.NORM, i, "diff_lambda"))
    if a.attn_gate_bias:  # BeamAttention.gate_bias
        out.append(Tensor(f"{p}.gate_bias", (heads,), Role.ATTENTION, i, "attn_gate_bias"))
    if a.head_gate:  # LagunaAttention.g_proj
        _linear(out, f"{p}.g_proj", heads * a.head_gate, h, role, i, "attn_gate")
    if a.qk_norm and a.qk_norm_full:  # a weight per head channel (Olmo2Attention, CohereLayerNorm), and a bias
        for name, n in (("q_norm", heads), ("k_norm", kv_heads if own_kv else 0)):  # with qk_norm_bias (Chameleon)
            if n:
                out.append(Tensor(f"{p}.{name}.weight", (n * d,), Role.NORM, i, "norm"))
            if n and a.qk_norm_bias:
                out.append(Tensor(f"{p}.{name}.bias", (n * d,), Role.NORM, i, "norm_bias"))
    elif a.qk_norm:
        _norm(out, a, f"{p}.q_norm", d, i)
        if own_kv:
            _norm(out, a, f"{p}.k_norm", d, i)
    if a.layer_indexer(i):  # MiniMax-M3's block-sparse layers (`block_indexer`)
        _block_indexer(out, a, f"{p}.indexer", i)
    if a.attention_sinks and (a.layer_types[i] == SLIDING or not a.sliding_sinks_only):
        out.append(Tensor(f"{p}.sinks", (heads,), Role.ATTENTION, i, "sinks"))
    if a.parallel_mamba:  # Falcon-H1: a Mamba2 mixer beside the attention
        _mamba2(out, a, p.replace("self_attn", "mamba"), i)


def _cross_attention(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """MllamaCrossAttentionDecoderLayer (transformers 5.24 modeling_mllama.py): MllamaTextCrossAttention's q / k / v / o
    without biases and its q / k RMS norms over head_dim, and two scalar tanh gates (cross_attn_attn_gate,
    cross_attn_mlp_gate) on the attention's and the MLP's outputs."""
    h, d, role = a.hidden_size, a.head_dim, Role.ATTENTION
    _linear(out, f"{p}.cross_attn.q_proj", a.num_heads * d, h, role, i, "q")
    _linear(out, f"{p}.cross_attn.k_proj", a.num_kv_heads * d, h, role, i, "k")
    _linear(out, f"{p}.cross_attn.v_proj", a.num_kv_heads * d, h, role, i, "v")
    _linear(out, f"{p}.cross_attn.o_proj", h, a.num_heads * d, role, i, "o")
    _norm(out, a, f"{p}.cross_attn.q_norm", d, i)
    _norm(out, a, f"{p}.cross_attn.k_norm", d, i)
    for gate in ("cross_attn_attn_gate", "cross_attn_mlp_gate"):
        out.append(Tensor(f"{p}.{gate}", (1,), Role.NORM, i, "cross_gate"))


def _linear_mixer(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """A linear layer's mixer under its class's module name."""
    if a.linear_mixer == MAMBA2:
        _mamba2(out, a, p.replace("self_attn", "mamba"), i)
    elif a.linear_mixer == SHORTCONV:
        _short_conv(out, a, p.replace("self_attn", "conv"), i)
    elif a.linear_mixer == KIMI_DELTA:  # KimiLinearDecoderLayer.self_attn
        _kimi_delta(out, a, p, i)
    elif a.linear_mixer == MAMBA:
        _mamba(out, a, p.replace("self_attn", "mixer"), i)
    else:
        _gated_deltanet(out, a, p.replace("self_attn", "linear_attn"), i)


def _kimi_delta(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """KimiLinearDeltaAttention (transformers 5.25 modeling_kimi_linear.py): q, k and v projections of heads x head
    width each, their depthwise convolution, the forget gate (KimiLinearForgetGate: f_a_proj to one head's width,
    f_b_proj back, a dt_bias per channel, an A_log per head), the beta projection (one value a head), the output
    gate's low-rank pair (g_a_proj, g_b_proj), the gated norm of one head's width, the output projection."""
    h, role, width = a.hidden_size, Role.ATTENTION, a.linear_v_heads * a.linear_v_head_dim
    for name, kind in (("q_proj", "kda_q"), ("k_proj", "kda_k"), ("v_proj", "kda_v")):
        _linear(out, f"{p}.{name}", width, h, role, i, kind)
    out.append(Tensor(f"{p}.conv1d.weight", (a.linear_conv_dim, 1, a.linear_conv_kernel), Role.ATTENTION, i,
                      "ssm_conv1d"))
    _linear(out, f"{p}.forget_gate.f_a_proj", a.linear_k_head_dim, h, role, i, "kda_f_a")
    _linear(out, f"{p}.forget_gate.f_b_proj", width, a.linear_k_head_dim, role, i, "kda_f_b")
    out.append(Tensor(f"{p}.forget_gate.dt_bias", (width,), Role.NORM, i, "ssm_dt_bias"))
    out.append(Tensor(f"{p}.forget_gate.A_log", (a.linear_v_heads,), Role.NORM, i, "ssm_a"))
    _linear(out, f"{p}.b_proj", a.linear_v_heads, h, role, i, "ssm_beta")
    _linear(out, f"{p}.g_a_proj", a.linear_v_head_dim, h, role, i, "kda_g_a")
    _linear(out, f"{p}.g_b_proj", width, a.linear_v_head_dim, role, i, "kda_g_b")
    out.append(Tensor(f"{p}.o_norm.weight", (a.linear_v_head_dim,), Role.NORM, i, "ssm_norm"))
    _linear(out, f"{p}.o_proj", h, width, role, i, "ssm_out")


def _gated_deltanet(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """Qwen3_5GatedDeltaNet (transformers 5.24): q, k, v in one projection, the output gate z, the b and a
    projections (one value a head), the depthwise convolution over q, k and v, dt_bias and A_log, the gated norm of
    one head's width, the output projection."""
    h, role, value = a.hidden_size, Role.ATTENTION, a.linear_v_heads * a.linear_v_head_dim
    _linear(out, f"{p}.in_proj_qkv", a.linear_conv_dim, h, role, i, "ssm_in_qkv")
    _linear(out, f"{p}.in_proj_z", value, h, role, i, "ssm_in_z")
    _linear(out, f"{p}.in_proj_b", a.linear_v_heads, h, role, i, "ssm_beta")
    _linear(out, f"{p}.in_proj_a", a.linear_v_heads, h, role, i, "ssm_alpha")
    out.append(Tensor(f"{p}.conv1d.weight", (a.linear_conv_dim, 1, a.linear_conv_kernel), Role.ATTENTION, i,
                      "ssm_conv1d"))
    out.append(Tensor(f"{p}.dt_bias", (a.linear_v_heads,), Role.NORM, i, "ssm_dt_bias"))
    out.append(Tensor(f"{p}.A_log", (a.linear_v_heads,), Role.NORM, i, "ssm_a"))
    out.append(Tensor(f"{p}.norm.weight", (a.linear_v_head_dim,), Role.NORM, i, "ssm_norm"))
    _linear(out, f"{p}.out_proj", h, value, role, i, "ssm_out")


def _mamba2(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """GraniteMoeHybridMambaLayer (transformers 5.24): one in_proj to z (d_inner), x, B, C (the convolution's
    channels) and dt (a value a head), the depthwise convolution and its bias, dt_bias, A_log and D (one a head), the
    gated norm over d_inner, out_proj; in_proj and out_proj biased with mamba_proj_bias."""
    h, role, inner, heads = a.hidden_size, Role.ATTENTION, a.linear_v_heads * a.linear_v_head_dim, a.linear_v_heads
    _linear(out, f"{p}.in_proj", inner + a.linear_conv_dim + heads, h, role, i, "ssm_in", a.linear_proj_bias)
    out.append(Tensor(f"{p}.conv1d.weight", (a.linear_conv_dim, 1, a.linear_conv_kernel), role, i, "ssm_conv1d"))
    if a.linear_conv_bias:
        out.append(Tensor(f"{p}.conv1d.bias", (a.linear_conv_dim,), role, i, "ssm_conv1d_bias"))
    out.append(Tensor(f"{p}.dt_bias", (heads,), Role.NORM, i, "ssm_dt_bias"))
    out.append(Tensor(f"{p}.A_log", (heads,), Role.NORM, i, "ssm_a"))
    out.append(Tensor(f"{p}.D", (heads,), Role.NORM, i, "ssm_d"))
    if a.linear_norm:
        out.append(Tensor(f"{p}.norm.weight", (inner,), Role.NORM, i, "ssm_norm"))
    out_bias = a.linear_proj_bias if a.linear_out_bias is None else a.linear_out_bias
    _linear(out, f"{p}.out_proj", h, inner, role, i, "ssm_out", out_bias)


def _mamba(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """MambaMixer (transformers 5.25 modeling_mamba.py; FalconMambaMixer alike): in_proj to x and z, the depthwise
    convolution over x and its bias (use_conv_bias), x_proj to dt, B and C, dt_proj from dt's rank (always biased),
    A_log (a state_size row per channel), D, out_proj; in_proj and out_proj biased with use_bias; Jamba's norms on dt,
    B and C."""
    h, role, inner, state = a.hidden_size, Role.ATTENTION, a.linear_conv_dim, a.linear_k_head_dim
    _linear(out, f"{p}.in_proj", 2 * inner, h, role, i, "ssm_in", a.linear_proj_bias)
    out.append(Tensor(f"{p}.conv1d.weight", (inner, 1, a.linear_conv_kernel), role, i, "ssm_conv1d"))
    if a.linear_conv_bias:
        out.append(Tensor(f"{p}.conv1d.bias", (inner,), role, i, "ssm_conv1d_bias"))
    _linear(out, f"{p}.x_proj", a.linear_dt_rank + 2 * state, inner, role, i, "ssm_x")
    if a.mamba_norm_weights:  # JambaMambaMixer.dt_layernorm / b_layernorm / c_layernorm
        for name, kind, size in (("dt_layernorm", "ssm_dt_norm", a.linear_dt_rank), ("b_layernorm", "ssm_b_norm", state),
                                 ("c_layernorm", "ssm_c_norm", state)):
            out.append(Tensor(f"{p}.{name}.weight", (size,), Role.NORM, i, kind))
    _linear(out, f"{p}.dt_proj", inner, a.linear_dt_rank, role, i, "ssm_dt", bias=True)
    out.append(Tensor(f"{p}.A_log", (inner, state), Role.NORM, i, "ssm_a"))
    out.append(Tensor(f"{p}.D", (inner,), Role.NORM, i, "ssm_d"))
    _linear(out, f"{p}.out_proj", h, inner, role, i, "ssm_out", a.linear_proj_bias)


def _short_conv(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """Lfm2ShortConv (transformers 5.24): in_proj to B, C and x, the depthwise convolution over hidden channels,
    out_proj; each biased with conv_bias."""
    h, role, bias = a.hidden_size, Role.ATTENTION, a.linear_conv_bias
    _linear(out, f"{p}.in_proj", 3 * h, h, role, i, "shortconv_in", bias)
    out.append(Tensor(f"{p}.conv.weight", (h, 1, a.linear_conv_kernel), role, i, "shortconv_conv"))
    if bias:
        out.append(Tensor(f"{p}.conv.bias", (h,), role, i, "shortconv_conv_bias"))
    _linear(out, f"{p}.out_proj", h, h, role, i, "shortconv_out", bias)


def _indexer(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """DeepSeek sparse attention's lightning indexer (DeepseekV32Indexer): queries from the q latent, one key head,
    its LayerNorm (weight and bias), per-head weights."""
    h, role, d = a.hidden_size, Role.ATTENTION, a.indexer_head_dim
    _linear(out, f"{p}.wq_b", a.indexer_heads * d, a.q_lora_rank or h, role, i, "indexer_q_b")
    _linear(out, f"{p}.wk", d, h, role, i, "indexer_k")
    out.append(Tensor(f"{p}.k_norm.weight", (d,), Role.NORM, i, "indexer_k_norm"))
    out.append(Tensor(f"{p}.k_norm.bias", (d,), Role.NORM, i, "indexer_k_norm_bias"))
    _linear(out, f"{p}.weights_proj", a.indexer_heads, h, role, i, "indexer_proj")
    if a.softmax_scaling:  # MistralLarge4TextIndexer: a LayerNorm on its input, its own softmax scale and bias
        out.append(Tensor(f"{p}.q_input_norm.weight", (h,), Role.NORM, i, "indexer_q_input_norm"))
        out.append(Tensor(f"{p}.q_input_norm.bias", (h,), Role.NORM, i, "indexer_q_input_norm_bias"))
        out.append(Tensor(f"{p}.softmax_scaling.scale", (2 * a.indexer_heads,), Role.NORM, i, "softmax_scaling"))


def _block_indexer(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """MiniMax-M3's indexer (MiniMaxM3VLIndexer, transformers 5.24): queries of indexer_heads and one key head
    projected from the hidden state, each with an RMS norm of indexer_head_dim."""
    h, role, d = a.hidden_size, Role.ATTENTION, a.indexer_head_dim
    _linear(out, f"{p}.q_proj", a.indexer_heads * d, h, role, i, "indexer_q")
    _linear(out, f"{p}.k_proj", d, h, role, i, "indexer_k_proj")
    out.append(Tensor(f"{p}.q_norm.weight", (d,), Role.NORM, i, "indexer_q_norm"))
    out.append(Tensor(f"{p}.k_norm.weight", (d,), Role.NORM, i, "indexer_k_norm"))


def _v4_attention(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """DeepseekV4Attention (transformers 5.24): the query through a low-rank pair, one K=V head and its norm, the
    grouped output projection (o_a: each group's heads to out_lora_rank, o_b: the groups to hidden), a sink per head;
    a compressing layer's compressors (`Architecture.layer_compressors`), and where the lightning indexer runs its
    query projection and head weights."""
    h, role, d, heads = a.hidden_size, Role.ATTENTION, a.head_dim, a.num_heads
    _linear(out, f"{p}.q_a_proj", a.q_lora_rank, h, role, i, "q_a")
    _norm(out, a, f"{p}.q_a_norm", a.q_lora_rank, i)
    _linear(out, f"{p}.q_b_proj", heads * d, a.q_lora_rank, role, i, "q_b")
    _linear(out, f"{p}.kv_proj", d, h, role, i, "kv")
    _norm(out, a, f"{p}.kv_norm", d, i)
    _linear(out, f"{p}.o_a_proj", a.out_groups * a.out_lora_rank, heads * d // a.out_groups, role, i, "o_a")
    _linear(out, f"{p}.o_b_proj", h, a.out_groups * a.out_lora_rank, role, i, "o_b")
    out.append(Tensor(f"{p}.sinks", (heads,), role, i, "sinks"))
    compressors = a.layer_compressors(i)
    names = ((f"{p}.compressor", ""), (f"{p}.compressor.indexer", "indexer_"))  # the entries', the indexer's
    for (width, overlap), (name, kind) in zip(compressors, names[:len(compressors)], strict=True):
        _v4_compressor(out, a, name, i, width, overlap, kind)
    if len(compressors) == 2:
        q = names[1][0]
        _linear(out, f"{q}.q_b_proj", a.indexer_heads * a.indexer_head_dim, a.q_lora_rank, role, i, "indexer_q_b")
        _linear(out, f"{q}.scorer.weights_proj", a.indexer_heads, h, role, i, "indexer_proj")


def _v4_compressor(out: list[Tensor], a: Architecture, p: str, i: int, d: int, overlap: int, kind: str = "") -> None:
    """DeepseekV4CSACompressor / DeepseekV4HCACompressor / the indexer's: kv and gate projections to overlap x d, a
    learned bias per window position (compress_rate x overlap x d, float32), the norm of one entry."""
    _linear(out, f"{p}.kv_proj", overlap * d, a.hidden_size, Role.ATTENTION, i, f"{kind}comp_kv")
    _linear(out, f"{p}.gate_proj", overlap * d, a.hidden_size, Role.ATTENTION, i, f"{kind}comp_gate")
    out.append(Tensor(f"{p}.position_bias", (a.layer_compress(i), overlap * d), Role.NORM, i, f"{kind}comp_ape"))
    _norm(out, a, f"{p}.kv_norm", d, i)


def _hyper_connection(out: list[Tensor], a: Architecture, p: str, i: int | None, mixes: int, scales: int) -> None:
    """DeepseekV4HyperConnection / DeepseekV4HyperHead: a projection of the n streams (n x hidden) to `mixes`
    weights, their bias and `scales` scales (float32 in transformers)."""
    n = a.hyper_streams
    out.append(Tensor(f"{p}.fn", (mixes, n * a.hidden_size), Role.NORM, i, "hc_fn"))
    out.append(Tensor(f"{p}.base", (mixes,), Role.NORM, i, "hc_base"))
    out.append(Tensor(f"{p}.scale", (scales,), Role.NORM, i, "hc_scale"))


def _dense_mlp(out: list[Tensor], a: Architecture, p: str, i: int, inter: int, role: Role = Role.MLP) -> None:
    h = a.hidden_size
    if a.mlp_gated:
        _linear(out, f"{p}.gate_proj", inter, h, role, i, "gate", a.mlp_bias)
        _linear(out, f"{p}.up_proj", inter, h, role, i, "up", a.mlp_bias)
    else:
        _linear(out, f"{p}.up_proj", inter, h, role, i, "up", a.mlp_bias)
    if a.sub_norms:  # BitNetMLP.ffn_sub_norm over down_proj's input
        out.append(Tensor(f"{p}.ffn_sub_norm.weight", (inter,), Role.NORM, i, "ffn_sub_norm"))
    _linear(out, f"{p}.down_proj", h, inter, role, i, "down", a.mlp_bias)


def _moe(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    h, e, inter = a.hidden_size, a.num_experts, a.moe_intermediate_size
    routes = e + a.zero_experts  # LongcatFlashTopkRouter scores the zero experts too
    out.append(Tensor(f"{p}.router.weight", (routes, h), Role.ROUTER, i, "router"))
    if a.router_scales:  # Gemma4TextRouter.scale and .per_expert_scale
        out.append(Tensor(f"{p}.router.scale", (h,), Role.ROUTER, i, "router_scale"))
        out.append(Tensor(f"{p}.router.per_expert_scale", (e,), Role.ROUTER, i, "router_expert_scale"))
    if a.router_bias:
        out.append(Tensor(f"{p}.router.bias", (routes,), Role.ROUTER, i, "router_bias"))
    if a.hash_layers and a.hash_layers[i]:  # DeepseekV4HashRouter: a token-id -> experts table, no score bias
        out.append(Tensor(f"{p}.gate.tid2eid", (a.vocab_size, a.experts_per_token), Role.EMBEDDING, i, "tid2eid"))
    elif a.router_score_bias:
        out.append(Tensor(f"{p}.router.e_score_correction_bias", (routes,), Role.ROUTER, i, "router_bias"))
    eh = a.moe_hidden_size or h  # the experts' width
    if a.moe_hidden_size:  # MuseSparkMoE: into the experts' space and its norm, a norm after them, back out
        _linear(out, f"{p}.pre_expert_proj", eh, h, Role.MLP, i, "pre_expert")
        _norm(out, a, f"{p}.pre_expert_norm", eh, i)
        _norm(out, a, f"{p}.experts.post_expert_norm", eh, i)
        _linear(out, f"{p}.post_expert_proj", h, eh, Role.MLP, i, "post_expert")
    if a.mlp_gated:  # Nemotron-H's experts are up / down only (NemotronHExperts)
        out.append(Tensor(f"{p}.experts.gate_proj", (e, inter, eh), Role.EXPERT, i, "gate_exps"))
    out.append(Tensor(f"{p}.experts.up_proj", (e, inter, eh), Role.EXPERT, i, "up_exps"))
    out.append(Tensor(f"{p}.experts.down_proj", (e, eh, inter), Role.EXPERT, i, "down_exps"))
    if a.expert_bias:
        out.append(Tensor(f"{p}.experts.gate_up_proj_bias", (e, 2 * inter), Role.EXPERT, i, "exps_bias"))
        out.append(Tensor(f"{p}.experts.down_proj_bias", (e, eh), Role.EXPERT, i, "exps_bias"))
    if a.expert_output_norms:  # ErgoExperts.post_expert_norm: a weight per expert and channel
        out.append(Tensor(f"{p}.experts.post_expert_norm.weight", (e, eh), Role.EXPERT, i, "exps_norm"))
    if a.shared_expert_intermediate_size:
        _dense_mlp(out, a, f"{p}.shared_expert", i, a.shared_expert_intermediate_size)
        if a.expert_output_norms:  # ErgoSharedExpert.norm
            _norm(out, a, f"{p}.shared_expert.norm", h, i)
    if a.shared_expert_gate:
        out.append(Tensor(f"{p}.shared_expert_gate.weight", (1, h), Role.ROUTER, i, "router"))


def _altup_laurel(out: list[Tensor], a: Architecture, p: str, i: int) -> None:
    """Gemma3nTextAltUp's coefficients, scale and router (its norm is one of the layer's norms) and
    Gemma3nTextLaurelBlock's two low-rank projections (its post norm too)."""
    n, h = a.altup_inputs, a.hidden_size
    out.append(Tensor(f"{p}.altup.correct_output_scale", (h,), Role.NORM, i, "altup_correct_scale"))
    _linear(out, f"{p}.altup.correction_coefs", n, n, Role.MLP, i, "altup_correct_coef")
    _linear(out, f"{p}.altup.prediction_coefs", n * n, n, Role.MLP, i, "altup_predict_coef")
    _linear(out, f"{p}.altup.modality_router", n, h, Role.MLP, i, "altup_router")
    _linear(out, f"{p}.laurel.linear_left", a.laurel_rank, h, Role.MLP, i, "laurel_l")
    _linear(out, f"{p}.laurel.linear_right", h, a.laurel_rank, Role.MLP, i, "laurel_r")


def _per_layer_embedding(out: list[Tensor], a: Architecture) -> None:
    """Gemma 3n / 4 per-layer embeddings (Gemma4TextModel): a second token table holding every layer's slice,
    the projection of the hidden state onto those slices, and their norm."""
    width = a.num_layers * a.per_layer_input_size
    out.append(Tensor("model.embed_tokens_per_layer.weight", (a.per_layer_vocab_size, width), Role.EMBEDDING, None,
                      "per_layer_token_embd"))
    _linear(out, "model.per_layer_model_projection", width, a.hidden_size, Role.MLP, None, "per_layer_model_proj")
    _norm(out, a, "model.per_layer_projection_norm", a.per_layer_input_size, None)


@lru_cache(maxsize=256)
def build_inventory(a: Architecture) -> tuple[Tensor, ...]:
    """All weight tensors of `a`. Tied embeddings appear once (as the embedding)."""
    out: list[Tensor] = []
    out.append(Tensor("model.embed_tokens.weight", (a.vocab_size, a.hidden_size), Role.EMBEDDING, None, "token_embd"))
    if a.learned_positions:
        out.append(Tensor("model.embed_positions.weight", (a.learned_positions, a.hidden_size), Role.POSITION, None, "pos_embd"))
    if a.embedding_norm:
        _norm(out, a, "model.word_embeddings_layernorm", a.hidden_size, None)
    if a.per_layer_input_size:
        _per_layer_embedding(out, a)
    if a.ngram_embedders:
        _ngram_embedding(out, a)
    for i in range(a.num_layers):
        p = f"model.layers.{i}"
        for n in range(0 if a.first_attn_norm or i else 1, a.norms_per_layer):
            _norm(out, a, f"{p}.norm{n}", a.hidden_size, i)
        if a.gated_norm_rank:  # AXK2GatedRMSNorm's gate MLP (stored as W_down / W_up)
            for norm in ("input_layernorm",) + (("post_attention_layernorm",) if a.moe_layers and a.moe_layers[i] else ()):
                _linear(out, f"{p}.{norm}.mlp.fc1", a.gated_norm_rank, a.hidden_size, Role.NORM, i, "norm_gate_down")
                _linear(out, f"{p}.{norm}.mlp.fc2", a.hidden_size, a.gated_norm_rank, Role.NORM, i, "norm_gate_up")
        if a.residual_gates:  # MuseSparkResidualGate after the attention and after the feed-forward, float32
            for name in ("post_attention_residual_gate", "post_feedforward_residual_gate"):
                out.append(Tensor(f"{p}.{name}.gate", (a.hidden_size,), Role.NORM, i, "residual_gate"))
        if a.layer_types[i] == CROSS:
            _cross_attention(out, a, p, i)
        elif a.layer_types[i] != NO_MIXER:
            _attention(out, a, f"{p}.self_attn", i)
        if not a.layer_has_ffn(i):
            pass
        elif a.moe_layers and a.moe_layers[i]:
            _moe(out, a, f"{p}.mlp", i)
            if a.moe_output_norm:  # AXK1MoE.post_mlp_layernorm
                _norm(out, a, f"{p}.post_mlp_layernorm", a.hidden_size, i)
        else:
            wide = 2 if a.double_wide_shared_mlp and not a.layer_caches_kv(i) else 1
            _dense_mlp(out, a, f"{p}.mlp", i, wide * a.layer_intermediate_size(i))
        if a.per_layer_input_size:  # Gemma4TextDecoderLayer: gate to, and projection from, the layer's slice
            _linear(out, f"{p}.per_layer_input_gate", a.per_layer_input_size, a.hidden_size, Role.MLP, i, "inp_gate")
            _linear(out, f"{p}.per_layer_projection", a.hidden_size, a.per_layer_input_size, Role.MLP, i, "proj")
        if a.layer_scalars:
            out.append(Tensor(f"{p}.layer_scalar", (1,), Role.NORM, i, "layer_output_scale"))
        if a.altup_inputs:
            _altup_laurel(out, a, p, i)
        if a.hyper_streams:  # DeepseekV4DecoderLayer: attn_hc and ffn_hc, pre / post / comb mixes of n streams
            n = a.hyper_streams  # (HYV4HyperConnection: pre and post only)
            mixes, scales = ((2 + n) * n, 3) if a.hyper_comb else (2 * n, 2)
            _hyper_connection(out, a, f"{p}.attn_hc", i, mixes, scales)
            _hyper_connection(out, a, f"{p}.ffn_hc", i, mixes, scales)
    if a.hyper_streams:  # DeepseekV4HyperHead: the final collapse of the streams
        _hyper_connection(out, a, "model.hc_head", None, a.hyper_streams, 1)
    if a.altup_inputs:  # Gemma3nTextModel: the streams made from, and merged into, one
        for name in ("altup_projections", "altup_unembed_projections"):
            for k in range(a.altup_inputs - 1):
                _linear(out, f"model.{name}.{k}", a.hidden_size, a.hidden_size, Role.MLP, None, name)
    _norm(out, a, "model.norm", a.hidden_size, None)
    if a.softmax_scaling:  # MistralLarge4TextRotaryEmbedding.alpha: a learned value per rotary frequency
        out.append(Tensor("model.rotary_emb.alpha", (a.qk_rope_head_dim // 2,), Role.NORM, None, "rope_alpha"))
    if a.head_transform:  # ModernBertDecoderPredictionHead: dense, activation, norm
        _linear(out, "lm_head.dense", a.hidden_size, a.hidden_size, Role.MLP, None, "head_dense",
                bias=a.head_transform_bias)
        _norm(out, a, "lm_head.norm", a.hidden_size, None)
    if not a.tie_word_embeddings:
        out.append(Tensor("lm_head.weight", (a.output_rows, a.hidden_size), Role.LM_HEAD, None, "output"))
    if a.lm_head_bias:
        out.append(Tensor("lm_head.bias", (a.output_rows,), Role.LM_HEAD, None, "output_bias"))
    return tuple(out)


def _ngram_embedding(out: list[Tensor], a: Architecture) -> None:
    """LongCat-Flash-Lite's n-gram tables and their projections to the hidden size, in the checkpoint's names
    (vLLM 0.34 longcat_flash_ngram.py `NgramEmbedding.load_weight`: embedders.i of ngram_rows + 2i + 1 rows,
    post_projs.i a bias-free hidden x width linear); both stay in the model's dtype, the projections read whole by
    every token."""
    width = a.hidden_size // a.ngram_embedders
    for i in range(a.ngram_embedders):
        out.append(Tensor(f"model.ngram_embeddings.embedders.{i}.weight", (a.ngram_rows + 2 * i + 1, width),
                          Role.EMBEDDING, None, "ngram_embd"))
        out.append(Tensor(f"model.ngram_embeddings.post_projs.{i}.weight", (a.hidden_size, width), Role.EMBEDDING,
                          None, "ngram_proj"))


@lru_cache(maxsize=256)
def parameter_count(a: Architecture) -> int:
    """Total parameters (all experts counted; tied embeddings once)."""
    return sum(t.numel for t in build_inventory(a))


def active_fraction(t: Tensor, a: Architecture) -> float:
    """Share of a tensor read from memory per decoded token.

    Routed experts: top-k of E. The input embedding of an untied model: only the
    looked-up rows, counted as 0 (a tied embedding is read in full as the LM head; Gemma 4's per-layer table is
    only looked up; LongCat-Flash-Lite's n-gram projections are read whole).
    Everything else: all of it.
    """
    if t.role is Role.EXPERT and a.num_experts:
        return a.experts_per_token / a.num_experts
    if t.role in (Role.EMBEDDING, Role.POSITION) and not (t.kind == "token_embd" and a.tie_word_embeddings
                                                         or t.kind == "ngram_proj"):
        return 0.0
    return 1.0


@lru_cache(maxsize=256)
def active_parameter_count(a: Architecture) -> int:
    """Parameters read per decoded token (see `active_fraction`).

    This matches how DeepSeek (36.6B for V3) and OpenAI (3.6B for gpt-oss-20b)
    count active parameters; Mistral's 12.9B for Mixtral-8x7B and Qwen's 3.3B for
    Qwen3-30B-A3B also count the input embedding matrix.
    """
    return round(sum(t.numel * active_fraction(t, a) for t in build_inventory(a)))
