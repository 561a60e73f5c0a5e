"""GGUF tensor names of memviz's inventory tensors, as llama.cpp's converter names them
(`gguf-py/gguf/constants.py` TENSOR_NAMES: `token_embd`, `blk.N.attn_q`, `ffn_gate_exps`, ...).

Used to write GGUF files offline (memviz.probe.gguf_build) and to apply llama.cpp's
`--override-tensor` patterns, which match these names.
"""

from __future__ import annotations

from dataclasses import replace

from memviz.core.arch import KIMI_DELTA, MAMBA2, SLIDING, Architecture
from memviz.core.inventory import Role, Tensor, build_inventory

#: model types whose checkpoints hold Q, K and V as one matrix (query_key_value, qkv_proj, c_attn), which llama.cpp's
#: converter keeps as one `attn_qkv` tensor (convert_hf_to_gguf.py; src/llama-model.cpp `create_tensor_qkv`)
FUSED_QKV = frozenset({"gpt_neox", "phi3", "falcon", "gpt2", "dbrx", "bloom", "mpt", "gpt_bigcode",
                       "bailing_moe_v2"})  # conversion/bailingmoe.py `BailingMoeV2Model` keeps query_key_value
#: types whose converters write the KV heads per layer, 0 in a recurrent layer (conversion/granite.py
#: `GraniteHybridModel`, nemotron.py, lfm2.py, kimi_linear.py, jamba.py); Qwen3.5's and Falcon-H1's write one count
PER_LAYER_KV = frozenset({"granitemoehybrid", "bamba", "nemotron_h", "lfm2", "lfm2_moe", "kimi_linear", "jamba"})
#: model types whose GGUF files hold the feed-forward gate and up projections as one `ffn_up` tensor of 2 x n_ff rows
#: (llama.cpp src/models/glm4.cpp: `ffn_up` {n_embd, n_ff * 2}, no `ffn_gate`)
FUSED_GATE_UP = frozenset({"glm4", "phi3"})
#: types whose q_proj carries the attention's output gate, which the converter writes apart as attn_gate
#: (conversion/muse_glimmer.py, afmoe.py; src/models/muse-glimmer.cpp loads wqkv_gate {n_embd, n_embd_head_k x n_head})
SPLIT_GATE = frozenset({"muse_glimmer_text", "afmoe"})
_LAYER_NORMS = {"gemma2": ("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"),
                # Qwen3.5 / Qwen3-Next: input and post-attention norms (src/models/qwen35.cpp attn_post_norm)
                "qwen3_5_text": ("attn_norm", "post_attention_norm"),
                "qwen3_5_moe_text": ("attn_norm", "post_attention_norm"),
                "qwen3_next": ("attn_norm", "post_attention_norm"),
                "glm4": ("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"),
                "gemma3_text": ("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"),
                "gpt_oss": ("attn_norm", "post_attention_norm"),
                # Gemma 3n's seven (src/models/gemma3n.cpp): the four, the per-layer input's, AltUp's router's, Laurel's
                "gemma3n_text": ("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm", "post_norm",
                                 "altup_router_norm", "laurel_post_norm"),
                "dbrx": ("attn_norm", "attn_output_norm"),  # src/models/dbrx.cpp: norm_2 is attn_out_norm
                "muse_glimmer_text": ("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"),
                # norms after attention and MLP only (conversion/olmo.py, exaone.py); Seed-OSS's second is the
                # post-attention norm (conversion/seed_oss.py)
                "olmo2": ("post_attention_norm", "post_ffw_norm"), "olmo3": ("post_attention_norm", "post_ffw_norm"),
                "exaone4": ("post_attention_norm", "post_ffw_norm"),
                "seed_oss": ("attn_norm", "post_attention_norm"), "glm4_moe": ("attn_norm", "post_attention_norm"),
                "solar_open": ("attn_norm", "post_attention_norm"),  # converted as glm4moe (conversion/glm.py)
                "afmoe": ("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"),
                "falcon": ("attn_norm", "attn_norm_2"),  # the new decoder's ln_attn and ln_mlp (conversion/falcon.py)
                "nemotron_h": ("attn_norm",)}  # one norm a block (src/models/nemotron-h.cpp)
_PROJ = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output", "q_a": "attn_q_a", "q_b": "attn_q_b",
         "kv_a": "attn_kv_a_mqa", "kv_b": "attn_kv_b", "gate_exps": "ffn_gate_exps", "up_exps": "ffn_up_exps",
         "down_exps": "ffn_down_exps", "sinks": "attn_sinks", "k_b": "attn_k_b", "v_b": "attn_v_b",
         "layer_output_scale": "layer_output_scale", "inp_gate": "inp_gate", "proj": "proj",
         # DeepSeek sparse attention's indexer (src/llama-arch.cpp LLM_TENSOR_INDEXER_*)
         "indexer_q_b": "indexer.attn_q_b", "indexer_k": "indexer.attn_k", "indexer_k_norm": "indexer.k_norm",
         "indexer_proj": "indexer.proj",
         # MiniMax-M3's block-sparse indexer (LLM_TENSOR_INDEXER_Q_PROJ / _K_PROJ / _Q_NORM)
         "indexer_q": "indexer.q_proj", "indexer_k_proj": "indexer.k_proj", "indexer_q_norm": "indexer.q_norm",
         "attn_gate": "attn_gate",  # HY-V4's and Muse Glimmer's gate on the attention's output (LLM_TENSOR_ATTN_GATE)
         # BitNet's norms before o_proj and down_proj (LLM_TENSOR_ATTN_SUB_NORM / LLM_TENSOR_FFN_SUB_NORM)
         "attn_sub_norm": "attn_sub_norm", "ffn_sub_norm": "ffn_sub_norm",
         # Gemma 3n's AltUp and Laurel tensors (src/llama-arch.cpp LLM_TENSOR_ALTUP_* / LLM_TENSOR_LAUREL_*)
         "altup_correct_scale": "altup_correct_scale", "altup_correct_coef": "altup_correct_coef",
         "altup_predict_coef": "altup_predict_coef", "altup_router": "altup_router", "laurel_l": "laurel_l",
         "laurel_r": "laurel_r"}
#: Gemma 4's tensors outside the layers and its router's scales (llama.cpp conversion/gemma.py `Gemma4Model`,
#: src/models/gemma4.cpp: ffn_gate_inp.scale, the per-expert scale as ffn_down_exps.scale)
_GLOBAL = {"per_layer_token_embd": "per_layer_token_embd.weight", "per_layer_model_proj": "per_layer_model_proj.weight",
           "rope_freqs": "rope_freqs.weight", "altup_proj": "altup_proj.weight",
           "altup_unembd_proj": "altup_unembd_proj.weight"}
_SCALES = {"router_scale": "ffn_gate_inp.scale", "router_expert_scale": "ffn_down_exps.scale"}
#: a gated delta-net layer's tensors (Qwen3.5 / Qwen3-Next: src/models/qwen35.cpp `load_block_trunk`, names from
#: src/llama-arch.cpp): q, k and v in attn_qkv, the output gate z in attn_gate, A without a suffix
_DELTANET = {"ssm_in_qkv": "attn_qkv.weight", "ssm_in_z": "attn_gate.weight", "ssm_beta": "ssm_beta.weight",
             "ssm_alpha": "ssm_alpha.weight", "ssm_conv1d": "ssm_conv1d.weight", "ssm_dt_bias": "ssm_dt.bias",
             "ssm_a": "ssm_a", "ssm_norm": "ssm_norm.weight", "ssm_out": "ssm_out.weight"}
#: a Mamba2 layer's further tensors (Granite-4.0-H: src/models/granite-hybrid.cpp `load_arch_tensors`): the fused
#: in_proj, the convolution's bias, D without a suffix
_MAMBA2 = {"ssm_in": "ssm_in.weight", "ssm_in_bias": "ssm_in.bias", "ssm_conv1d_bias": "ssm_conv1d.bias",
           "ssm_d": "ssm_d", "ssm_out_bias": "ssm_out.bias"}
#: a Kimi delta attention layer's tensors (Kimi Linear: ggml-org/llama.cpp 0c1e570 src/models/kimi-linear.cpp
#: `load_arch_tensors`, names from src/llama-arch.cpp): q, k and v as attention's, the forget and output gates'
#: low-rank pairs, the output projection as attn_output; the convolution is three tensors (`gguf_parts`)
_KIMI_DELTA = {"kda_q": "attn_q.weight", "kda_k": "attn_k.weight", "kda_v": "attn_v.weight",
               "kda_f_a": "ssm_f_a.weight", "kda_f_b": "ssm_f_b.weight", "kda_g_a": "ssm_g_a.weight",
               "kda_g_b": "ssm_g_b.weight", "ssm_out": "attn_output.weight"}
#: Jamba's norms on a Mamba layer's dt, B and C (src/models/jamba.cpp `load_arch_tensors`, src/llama-arch.cpp
#: LLM_TENSOR_SSM_DT_NORM / _B_NORM / _C_NORM)
_MAMBA_NORMS = {"ssm_dt_norm": "ssm_dt_norm.weight", "ssm_b_norm": "ssm_b_norm.weight",
                "ssm_c_norm": "ssm_c_norm.weight"}
#: an LFM2 short convolution's tensors (src/llama-arch.cpp LLM_TENSOR_SHORTCONV_*; src/models/lfm2.cpp loads no
#: biases)
_SHORTCONV = {"shortconv_in": "shortconv.in_proj.weight", "shortconv_conv": "shortconv.conv.weight",
              "shortconv_out": "shortconv.out_proj.weight"}
#: DeepSeek-V4's tensors by the end of their inventory name (src/llama-arch.cpp: attn_kv, attn_output_a / _b, the
#: compressors', the indexer's, the hyper-connections' and the final hyper-connection head's; HY-V4's
#: hyper-connections take the same names, src/models/hy-v4.cpp)
_DEEPSEEK4 = {"self_attn.kv_proj.weight": "attn_kv.weight", "self_attn.kv_norm.weight": "attn_kv_a_norm.weight",
              "self_attn.q_a_norm.weight": "attn_q_a_norm.weight", "o_a_proj.weight": "attn_output_a.weight",
              "o_b_proj.weight": "attn_output_b.weight", "compressor.kv_proj.weight": "attn_compressor_kv.weight",
              "compressor.gate_proj.weight": "attn_compressor_gate.weight",
              "compressor.position_bias": "attn_compressor_ape.weight",
              "compressor.kv_norm.weight": "attn_compressor_norm.weight",
              "indexer.kv_proj.weight": "indexer_compressor_kv.weight",
              "indexer.gate_proj.weight": "indexer_compressor_gate.weight",
              "indexer.position_bias": "indexer_compressor_ape.weight",
              "indexer.kv_norm.weight": "indexer_compressor_norm.weight", "indexer.q_b_proj.weight": "indexer.attn_q_b.weight",
              "scorer.weights_proj.weight": "indexer.proj.weight", "attn_hc.fn": "hc_attn_fn.weight",
              "attn_hc.base": "hc_attn_base.weight", "attn_hc.scale": "hc_attn_scale.weight", "ffn_hc.fn": "hc_ffn_fn.weight",
              "ffn_hc.base": "hc_ffn_base.weight", "ffn_hc.scale": "hc_ffn_scale.weight",
              "model.hc_head.fn": "output_hc_fn.weight", "model.hc_head.base": "output_hc_base.weight",
              "model.hc_head.scale": "output_hc_scale.weight", "gate.tid2eid": "ffn_gate_tid2eid.weight"}
#: the depthwise convolutions the converter writes in F32 and the quantizer skips (conversion/base.py
#: `prepare_tensors`: SSM_CONV1D, SHORTCONV_CONV; src/llama-quant.cpp)
CONV_KINDS = frozenset({"ssm_conv1d", "shortconv_conv"})


def kv_b_split(a: Architecture) -> bool:
    """Whether llama.cpp holds an MLA model's kv_b_proj as per-head attn_k_b / attn_v_b and caches the latent
    (ggml-org/llama.cpp 0c1e570 src/models/deepseek2.cpp and the others of DeepSeek's attention; the converter splits
    it since PR #12801): not in a legacy file (`mla_kv_b_unsplit`), nor ever for MiniCPM3, whose converter keeps
    attn_kv_b whole and whose graph runs every head (conversion/minicpm.py `MiniCPM3Model`, src/models/minicpm3.cpp)."""
    return a.is_mla and not a.mla_kv_b_unsplit and a.model_type != "minicpm3"


def _gemma4_norms(a: Architecture) -> tuple[str, ...]:
    """Gemma4TextDecoderLayer's norms in memviz's order: four, the per-layer input's, the MoE block's three."""
    return (("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm")
            + (("post_norm",) if a.per_layer_input_size else ())
            + (("pre_ffw_norm_2", "post_ffw_norm_1", "post_ffw_norm_2") if a.is_moe else ()))


def gguf_name(t: Tensor, a: Architecture) -> str:
    """The GGUF name of an inventory tensor (biases end in `.bias`)."""
    if t.kind in _GLOBAL:
        return _GLOBAL[t.kind]
    if (a.compress_ratios or a.hyper_streams) and (v4 := next((n for end, n in _DEEPSEEK4.items()
                                                                if t.name.endswith(end)), None)):
        return v4 if t.layer is None else f"blk.{t.layer}.{v4}"
    if t.role is Role.EMBEDDING:
        return "token_embd.weight"
    if t.role is Role.LM_HEAD:
        return "output" + (".bias" if t.kind.endswith("_bias") else ".weight")
    if t.role is Role.POSITION:
        return "position_embd.weight"
    if "word_embeddings_layernorm" in t.name:  # BLOOM's norm after the token embedding
        return "token_embd_norm" + (".bias" if t.kind.endswith("_bias") else ".weight")
    if t.layer is None:  # the final norm: weight, and bias where it has one (GPT-NeoX, Falcon, GPT-2)
        if "per_layer_projection_norm" in t.name:
            return "per_layer_proj_norm.weight"
        if a.model_type in ("lfm2", "lfm2_moe"):  # LFM2's embedding_norm (src/llama-arch.cpp OUTPUT_NORM_LFM2)
            return "token_embd_norm.weight"
        return "output_norm" + (".bias" if t.kind.endswith("_bias") else ".weight")
    p = f"blk.{t.layer}."
    if t.kind in ("ssm_beta", "ssm_alpha") and a.model_type == "qwen3_next":  # one tensor, LLM_TENSOR_SSM_BETA_ALPHA
        return p + "ssm_ba.weight"  # "blk.%d.ssm_ba" (src/llama-arch.cpp; conversion/qwen.py keeps in_proj_ba whole)
    if t.kind in ("ssm_in_qkv", "ssm_in_z") and a.deltanet_ssm_in:  # a legacy Qwen3-Next file: q, k, v and z in
        return p + "ssm_in.weight"  # one tensor (src/models/qwen3next.cpp loads `ssm_in` when attn_qkv is absent)
    if a.linear_mixer == KIMI_DELTA and t.kind in _KIMI_DELTA:
        return p + _KIMI_DELTA[t.kind]
    if a.linear_mixer == KIMI_DELTA and t.kind == "ssm_conv1d" and "#" in t.name:  # q, k and v's own (`gguf_parts`)
        return p + f"ssm_conv1d_{t.name.rsplit('#', 1)[1]}.weight"
    if t.kind in _DELTANET:
        return p + _DELTANET[t.kind]
    if t.kind in _MAMBA2:
        return p + _MAMBA2[t.kind]
    if t.kind in _MAMBA_NORMS:
        return p + _MAMBA_NORMS[t.kind]
    if t.kind in _SHORTCONV:
        return p + _SHORTCONV[t.kind]
    leaf = t.name.rsplit(".", 2)[-2]
    kind, suffix = (t.kind.removesuffix("_bias"), ".bias") if t.kind.endswith("_bias") else (t.kind, ".weight")
    if kind in ("q", "k", "v") and a.model_type in FUSED_QKV:
        return p + "attn_qkv" + suffix
    if kind in _PROJ:
        return p + _PROJ[kind] + suffix
    if kind in _SCALES:
        return p + _SCALES[kind]
    if t.role is Role.NORM:
        if leaf == "post_mlp_layernorm":  # A.X-K1's, which no llama.cpp architecture loads: a name of its own
            return p + "post_mlp_norm" + suffix
        if leaf in ("q_norm", "k_norm", "kv_a_layernorm", "q_a_layernorm"):
            return p + {"kv_a_layernorm": "attn_kv_a_norm", "q_a_layernorm": "attn_q_a_norm"}.get(
                leaf, f"attn_{leaf}") + suffix
        names = _gemma4_norms(a) if a.model_type == "gemma4_text" else _LAYER_NORMS.get(a.model_type,
                                                                                         ("attn_norm", "ffn_norm"))
        name = names[int(leaf.removeprefix("norm")) % len(names)]
        if a.model_type == "falcon_h1" and name == "ffn_norm":  # src/models/falcon-h1.cpp loads it without a suffix
            return p + name
        return p + name + suffix
    if t.role is Role.ROUTER:
        if "e_score_correction" in t.name:  # DeepSeek-V3's routing bias (constants.py FFN_EXP_PROBS_B); HY-V3's
            return p + ("exp_probs_b" if a.model_type == "hy_v3" else "exp_probs_b.bias")  # without the suffix
            # (conversion/hunyuan.py `HYV3Model`; src/models/hy-v3.cpp: tn(LLM_TENSOR_FFN_EXP_PROBS_B, i))
        return p + ("ffn_gate_inp_shexp" if "shared_expert_gate" in t.name else "ffn_gate_inp") + suffix
    if t.role in (Role.MLP, Role.EXPERT):
        # Gemma 4's dense MLP beside the experts keeps the plain ffn_gate / ffn_up / ffn_down names
        shared = "_shexp" if "shared_expert" in t.name and a.model_type != "gemma4_text" else ""
        if kind == "gate" and a.model_type in FUSED_GATE_UP:
            kind = "up"
        return p + f"ffn_{kind}{shared}{suffix}"
    return p + kind + suffix


def gguf_parts(t: Tensor, a: Architecture) -> tuple[Tensor, ...]:
    """The GGUF tensors an inventory tensor becomes: itself, except gpt-oss's fused expert gate/up bias (two
    tensors), a delta-net convolution's (conv_dim, 1, kernel) weight (two axes) and an MLA model's kv_b_proj,
    which llama.cpp's converter splits per head into attn_k_b
    {nope, kv_lora_rank, heads} and attn_v_b {kv_lora_rank, v_head, heads} (convert_hf_to_gguf.py
    `DeepseekV2Model`; src/models/deepseek2.cpp loads wk_b / wv_b, the unsplit attn_kv_b only from legacy
    files); Kimi Linear's convolution over q, k and v is three tensors {d_conv, 1, d_inner} and its A {1, heads}
    (conversion/kimi_linear.py `KimiLinearModel.modify_tensors`); shapes here outermost first, so a part's last
    entry is ggml's row length."""
    if t.kind == "exps_bias":  # gpt-oss: gate_up_proj_bias is split into gate and up (conversion/gpt_oss.py)
        if "gate_up" not in t.name:
            return (replace(t, kind="down_exps_bias"),)
        half = (*t.shape[:-1], t.shape[-1] // 2)
        return (replace(t, name=f"{t.name}#gate", shape=half, kind="gate_exps_bias"),
                replace(t, name=f"{t.name}#up", shape=half, kind="up_exps_bias"))
    if a.linear_mixer == KIMI_DELTA and t.kind == "ssm_conv1d":
        third = (t.shape[0] // 3, 1, t.shape[-1])
        return tuple(replace(t, name=f"{t.name}#{part}", shape=third) for part in "qkv")
    if t.kind in CONV_KINDS:  # the depthwise kernel without its middle axis: {d_conv, conv_dim} in ggml
        return (replace(t, shape=(t.shape[0], t.shape[-1])),)
    if a.linear_mixer in (MAMBA2, KIMI_DELTA) and t.kind in ("ssm_a", "ssm_d"):  # {1, n_head} in ggml
        return (replace(t, shape=(t.shape[0], 1)),)
    if a.linear_mixer == MAMBA2 and t.kind == "ssm_norm":  # grouped: {d_inner / n_group, n_group} in ggml
        return (replace(t, shape=(a.linear_k_heads, t.shape[0] // a.linear_k_heads)),)
    if t.kind == "q" and a.model_type in SPLIT_GATE:  # q_proj's second half is the output gate: attn_gate
        half = (t.shape[0] // 2, *t.shape[1:])
        return replace(t, shape=half), replace(t, name=f"{t.name}#gate", shape=half, kind="attn_gate")
    if t.kind != "kv_b" or not kv_b_split(a):  # a legacy file and MiniCPM3's keep attn_kv_b whole
        return (t,)
    i = t.layer or 0  # the layer's own heads, latent and nope width (dots3's sliding layers, a NoPE layer's)
    heads, rank, nope = a.layer_num_heads(i), a.layer_kv_lora(i), a.layer_nope_dim(i)
    return (replace(t, name=f"{t.name}#k_b", shape=(heads, rank, nope), kind="k_b"),
            replace(t, name=f"{t.name}#v_b", shape=(heads, a.v_head_dim, rank), kind="v_b"))


def gguf_tensors(a: Architecture) -> list[Tensor]:
    """The tensors a GGUF file of `a` holds, in inventory order (`gguf_parts` of each inventory tensor; a fused
    attn_qkv or ffn_up still shares one `gguf_name` among its inventory tensors)."""
    if a.model_type == "gemma3n_text":
        return _gemma3n_file(a)
    tensors = [part for t in build_inventory(a) for part in gguf_parts(t, a)]
    if a.model_type == "muse_glimmer_text":  # q/k norms synthesized for its scaleless ones (conversion/muse_glimmer.py)
        tensors += [Tensor(f"model.layers.{i}.self_attn.{kind}.weight", (a.head_dim,), Role.NORM, i, kind)
                    for i in range(a.num_layers) for kind in ("q_norm", "k_norm")]
    if a.llama3_rope:  # Llama 3's rope factors, F32 (conversion/llama.py `LlamaModel.generate_extra_tensors`)
        tensors.append(Tensor("rope_freqs.weight", (a.head_dim // 2,), Role.NORM, None, "rope_freqs"))
    if a.model_type == "gemma4_text":  # the full layers' rope frequency factors, F32 (conversion/gemma.py
        full = next(i for i, kind in enumerate(a.layer_types) if kind != SLIDING)  # `generate_extra_tensors`)
        tensors.append(Tensor("rope_freqs.weight", (a.layer_head_dim(full) // 2,), Role.NORM, None, "rope_freqs"))
    return tensors



def _gemma3n_file(a: Architecture) -> list[Tensor]:
    """A Gemma 3n GGUF's tensors (ggml-org/llama.cpp 0c1e570 conversion/gemma.py `Gemma3NModel`, src/models/gemma3n.cpp):
    every layer's K / V projections and k_norm, as the released checkpoint holds them (transformers and vLLM skip the
    KV-sharing layers', the converter keeps them and llama.cpp requires them): the inventory without KV sharing;
    AltUp's projections stacked into altup_proj and altup_unembd_proj {hidden, hidden, inputs - 1}; the per-layer
    token table padded to vocab_size rows."""
    h, streams = a.hidden_size, a.altup_inputs - 1
    out: list[Tensor] = []
    every_kv = build_inventory(a.with_changes(kv_shared_layers=0))
    for t in (part for whole in every_kv for part in gguf_parts(whole, a)):
        if t.kind in ("altup_projections", "altup_unembed_projections"):
            if t.name.endswith(".0.weight"):
                kind = "altup_proj" if t.kind == "altup_projections" else "altup_unembd_proj"
                out.append(Tensor(f"model.{t.kind}.weight", (streams, h, h), Role.MLP, None, kind))
            continue
        out.append(replace(t, shape=(a.vocab_size, t.shape[1])) if t.kind == "per_layer_token_embd" else t)
    return out
