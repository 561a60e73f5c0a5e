"""GGUF file mixes (Q4_K_M, IQ4_XS, ...) as per-tensor type policies.

A GGUF "Q4_K_M" file is not 4.5 bits everywhere: llama.cpp's quantizer picks a
ggml type per tensor. This follows llama.cpp 0c1e570 (the revision llama-cpp-python
0.3.36 vendors), `src/llama-quant.cpp`: `llama_ftype_get_default_type` (each mix's
base type), `llama_tensor_get_type_impl` (the per-category rules) and
`tensor_type_fallback` (a type whose block does not divide the row length):

- 1-D tensors (norms, biases) stay F32; MoE routers and position embeddings are
  not quantized, nor a delta-net's convolution (`ssm_conv1d`, F32 from the converter);
  a delta-net's fused `attn_qkv` counts among the attn_v tensors (`category_is_attn_v`);
- the output matrix (or the tied token embedding) becomes Q6_K (Q5_K for the IQ1 /
  IQ2 / IQ3_XXS mixes, Q8_0 for Falcon, a Q8_0 mix or a row length the base block
  does not divide); an untied token embedding keeps the base type except in the
  IQ1 / IQ2 / IQ3_XXS mixes;
- attn_v, ffn_down, attn_output, attn_q/k and ffn_gate/up (by GGUF name,
  `tensor_get_category`) get other types by mix, GQA ratio (`n_gqa()`: layer 0's as
  the file gives it, 0 where it lists KV heads per layer and layer 0 is recurrent),
  expert count and layer (`use_more_bits`: the first and last eighth and every
  third layer between), counted over the file's tensors in the order the quantizer
  visits them (by layer, then by name);
- a type whose block does not divide the row falls back (IQ types -> IQ4_NL,
  Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, then F16).

Mixes whose tensors llama.cpp refuses to make without an importance matrix (IQ1_*,
IQ2_*, IQ3_XXS, IQ3_XS, Q2_K_S) are modelled as made with one (`IMATRIX_MIXES`);
the others as made without one, llama-quantize's default. The four whose rules an
importance matrix changes also exist as made with one (`IQ4_XS+imatrix`, ...): most
published IQ4 files are.
A fused `attn_qkv` tensor (GPT-NeoX, Phi-3, Falcon, GPT-2 files) is one tensor of the
attn_v category (`category_is_attn_v`: the quantizer's own ATTENTION_QKV branch comes
after it and is never reached): memviz gives q, k and v that one type and counts one
attn_v tensor per layer. Files of older quantizers, which reached that branch, are the
mix's `QKV_BRANCH_SUFFIX` variant.
MLA's kv_b is the file's two per-head tensors attn_k_b / attn_v_b (`gguf_names.gguf_parts`):
both fall in no category, so the base type, but k_b's rows are qk_nope (128) wide, so a
K-quant base falls back there (Q4_K -> Q5_0).
Not modelled: `--tensor-type` / `--output-tensor-type` overrides and `--pure`.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from memviz.core.arch import LINEAR, Architecture
from memviz.core.gguf_names import CONV_KINDS, FUSED_QKV, PER_LAYER_KV, gguf_name, gguf_tensors, kv_b_split
from memviz.core.inventory import Role, Tensor

#: mix name -> description; the base type of each mix is in `_BASE`.
GGUF_MIXES: dict[str, str] = {
    "F16": "GGUF F16 file (1-D tensors F32)",
    "BF16": "GGUF BF16 file (1-D tensors F32)",
    "Q8_0": "GGUF Q8_0 file",
    "Q6_K": "GGUF Q6_K file",
    "Q5_K_M": "GGUF Q5_K_M mix (Q5_K, Q6_K for parts of attn_v/ffn_down, output Q6_K)",
    "Q5_K_S": "GGUF Q5_K_S mix",
    "Q5_1": "GGUF Q5_1 file (legacy)",
    "Q5_0": "GGUF Q5_0 file (legacy)",
    "Q4_K_M": "GGUF Q4_K_M mix (Q4_K, Q6_K for parts of attn_v/ffn_down, output Q6_K)",
    "Q4_K_S": "GGUF Q4_K_S mix",
    "Q4_1": "GGUF Q4_1 file (legacy)",
    "Q4_0": "GGUF Q4_0 file (legacy)",
    "IQ4_NL": "GGUF IQ4_NL mix (non-linear 4-bit, blocks of 32)",
    "IQ4_XS": "GGUF IQ4_XS mix (non-linear 4.25 bpw)",
    "IQ4_XS+imatrix": "GGUF IQ4_XS mix made with an importance matrix (early ffn_down not raised to Q5_K)",
    "IQ4_NL+imatrix": "GGUF IQ4_NL mix made with an importance matrix (early ffn_down not raised to Q5_K)",
    "Q4_0+imatrix": "GGUF Q4_0 file made with an importance matrix (early ffn_down Q4_1)",
    "Q5_0+imatrix": "GGUF Q5_0 file made with an importance matrix (early ffn_down Q5_1)",
    "Q3_K_L": "GGUF Q3_K_L mix",
    "Q3_K_M": "GGUF Q3_K_M mix",
    "Q3_K_S": "GGUF Q3_K_S mix",
    "IQ3_M": "GGUF IQ3_M mix (IQ3_S, Q4_K for attn_v/attn_output and early ffn_down)",
    "IQ3_S": "GGUF IQ3_S mix (3.44 bpw)",
    "IQ3_XS": "GGUF IQ3_XS mix (needs an importance matrix)",
    "IQ3_XXS": "GGUF IQ3_XXS mix (needs an importance matrix)",
    "Q2_K": "GGUF Q2_K mix",
    "Q2_K_S": "GGUF Q2_K_S mix (needs an importance matrix)",
    "IQ2_M": "GGUF IQ2_M mix (needs an importance matrix)",
    "IQ2_S": "GGUF IQ2_S mix (needs an importance matrix)",
    "IQ2_XS": "GGUF IQ2_XS mix (needs an importance matrix)",
    "IQ2_XXS": "GGUF IQ2_XXS mix (needs an importance matrix)",
    "IQ1_M": "GGUF IQ1_M mix (needs an importance matrix)",
    "IQ1_S": "GGUF IQ1_S mix (needs an importance matrix)",
    "MXFP4_MOE": "GGUF MXFP4_MOE mix (MXFP4 experts, Q8_0 elsewhere; gpt-oss)",
    # ternary types for BitNet b1.58 models (llama-quant.cpp: the token table Q4_K, the output Q6_K)
    "TQ2_0": "GGUF TQ2_0 file (ternary, 2.06 bits; BitNet models)",
    "TQ1_0": "GGUF TQ1_0 file (ternary, 1.69 bits; BitNet models)",
}

_BASE = {
    "F16": "F16", "BF16": "BF16", "Q8_0": "Q8_0", "Q6_K": "Q6_K", "Q5_K_M": "Q5_K", "Q5_K_S": "Q5_K", "Q5_1": "Q5_1",
    "Q5_0": "Q5_0", "Q4_K_M": "Q4_K", "Q4_K_S": "Q4_K", "Q4_1": "Q4_1", "Q4_0": "Q4_0", "IQ4_NL": "IQ4_NL",
    "IQ4_XS": "IQ4_XS", "Q3_K_L": "Q3_K", "Q3_K_M": "Q3_K", "Q3_K_S": "Q3_K", "IQ3_M": "IQ3_S", "IQ3_S": "IQ3_S",
    "IQ3_XS": "IQ3_S", "IQ3_XXS": "IQ3_XXS", "Q2_K": "Q2_K", "Q2_K_S": "Q2_K", "IQ2_M": "IQ2_S", "IQ2_S": "IQ2_XS",
    "IQ2_XS": "IQ2_XS", "IQ2_XXS": "IQ2_XXS", "IQ1_M": "IQ1_M", "IQ1_S": "IQ1_S", "MXFP4_MOE": "MXFP4",
    "TQ2_0": "TQ2_0", "TQ1_0": "TQ1_0",
}
#: a mix whose rules change when llama-quantize is given an importance matrix (`qs.has_imatrix`: the first
#: eighth of ffn_down), named with this suffix; the mixes in IMATRIX_MIXES are always made with one
IMATRIX_SUFFIX = "+imatrix"
#: a mix as older llama.cpp quantizers made it for fused attn_qkv tensors (GPT-NeoX, Phi-3, Falcon, GPT-2): the
#: quantizer's own attn_qkv branch (Q3_K_M / Q3_K_L / IQ3_M -> Q4_K, Q4_K_M -> Q5_K, Q5_K_M -> Q6_K, else the base
#: type), which 0c1e570 still holds in llama-quant.cpp but no longer reaches; the files of llama.cpp's own CI of
#: build 4343 (December 2024, tests/data/published) are typed so. Not listed among the formats: a llama.cpp log
#: whose tensors per type match it is read with it (`importers.llamacpp_log.scenario_of`)
QKV_BRANCH_SUFFIX = "+qkv-branch"
IMATRIX_MIXES = frozenset({"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS", "Q2_K_S"})
_LOW_BIT = frozenset({"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})  # one branch of the rules

_BLOCK = {"Q2_K": 256, "Q3_K": 256, "Q4_K": 256, "Q5_K": 256, "Q6_K": 256, "IQ1_S": 256, "IQ1_M": 256, "IQ2_XXS": 256,
          "IQ2_XS": 256, "IQ2_S": 256, "IQ3_XXS": 256, "IQ3_S": 256, "IQ4_XS": 256, "IQ4_NL": 32, "Q4_0": 32,
          "Q4_1": 32, "Q5_0": 32, "Q5_1": 32, "Q8_0": 32, "MXFP4": 32, "F16": 1, "BF16": 1, "F32": 1,
          "TQ1_0": 256, "TQ2_0": 256}
_FALLBACK = {"IQ1_S": "IQ4_NL", "IQ1_M": "IQ4_NL", "IQ2_XXS": "IQ4_NL", "IQ2_XS": "IQ4_NL", "IQ2_S": "IQ4_NL",
             "IQ3_XXS": "IQ4_NL", "IQ3_S": "IQ4_NL", "IQ4_XS": "IQ4_NL", "Q2_K": "Q4_0", "Q3_K": "Q4_0",
             "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0", "TQ1_0": "Q4_0", "TQ2_0": "Q4_0"}

# tensor categories (llama-quant.cpp `tensor_get_category`)
OUTPUT, TOKEN_EMBD, ATTN_V, ATTN_K, ATTN_Q, ATTN_OUT, FFN_DOWN, FFN_GATE, FFN_UP, OTHER = range(10)
#: llama-quant.cpp `tensor_get_category`: the first of these fragments a tensor's GGUF name holds; attn_qkv and
#: attn_kv_b count among the attn_v tensors there (`category_is_attn_v`), and so here
_NAME_CATEGORY = (("attn_qkv.weight", ATTN_V), ("attn_kv_b.weight", ATTN_V), ("attn_v.weight", ATTN_V),
                  ("attn_k.weight", ATTN_K), ("attn_q.weight", ATTN_Q), ("attn_output.weight", ATTN_OUT),
                  ("ffn_up", FFN_UP), ("ffn_gate", FFN_GATE), ("ffn_down", FFN_DOWN))


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp `use_more_bits`: first and last eighth of the layers, and every third between."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def _is_70b(a: Architecture) -> bool:
    """llama.cpp's LLM_TYPE_70B for Llama-family models is the 80-layer shape."""
    return a.model_type == "llama" and a.num_layers == 80


def _category(t: Tensor, a: Architecture) -> int:
    """The quantizer's category of `t`: the output and token tables by role (with tied embeddings llama-quant.cpp
    types every token table as the output, Gemma 4's per-layer one too), the rest by GGUF name."""
    if t.role is Role.LM_HEAD:
        return OUTPUT
    if t.role is Role.EMBEDDING:
        return OUTPUT if a.tie_word_embeddings else TOKEN_EMBD
    name = gguf_name(t, a)
    return next((cat for fragment, cat in _NAME_CATEGORY if fragment in name), OTHER)


@lru_cache(maxsize=64)
def _counters(a: Architecture) -> tuple[dict[str, int], dict[str, int], int]:
    """(attn_v index, ffn_down index, number of attn_v tensors) as llama.cpp counts them: over the file's tensors
    (an MLA layer's attn_k_b / attn_v_b, not kv_b) sorted by layer, then by GGUF name
    (`llama_model_loader::weight_name_comparer`)."""
    ordered = sorted((t for t in gguf_tensors(a) if t.layer is not None and t.is_matrix),
                     key=lambda t: (t.layer, gguf_name(t, a)))
    i_v, i_down, fused = {}, {}, {}
    for t in ordered:
        cat = _category(t, a)
        if cat == ATTN_V and a.model_type in FUSED_QKV:  # one attn_qkv tensor per layer
            i_v[t.name] = fused.setdefault(t.layer, len(fused))
        elif cat == ATTN_V:
            i_v[t.name] = len(i_v)
        elif cat == FFN_DOWN:
            i_down[t.name] = len(i_down)
    return i_v, i_down, len(fused) if a.model_type in FUSED_QKV else len(i_v)


def _output(mix: str, t: Tensor, a: Architecture, base: str) -> str:
    if mix == "MXFP4_MOE" or a.model_type == "falcon" or t.shape[-1] % _BLOCK[base]:
        return "Q8_0"
    if mix in _LOW_BIT or mix == "IQ3_XXS":
        return "Q5_K"
    return base if base == "Q8_0" else "Q6_K"


def _low_bit(mix: str, cat: int, a: Architecture, base: str, i_down_raw: int) -> str:
    """The IQ1 / IQ2 mixes' own branch."""
    iq3 = mix in ("IQ2_S", "IQ2_M")
    if cat == ATTN_V:
        return "Q4_K" if _gqa(a) >= 4 or a.num_experts >= 4 else ("IQ3_S" if iq3 else "Q2_K")
    if a.num_experts == 8 and cat == ATTN_K:
        return "Q4_K"
    if cat == FFN_DOWN:
        return ("IQ3_S" if iq3 else "Q2_K") if i_down_raw < a.num_layers // 8 else base
    if cat == ATTN_OUT:
        if a.num_experts == 8:
            return "Q5_K"
        return "IQ2_XXS" if mix in ("IQ1_S", "IQ1_M") else "IQ3_S" if iq3 else base
    return base


def _gqa(a: Architecture) -> int:
    """llama.cpp's `n_gqa()` as the quantizer calls it (ggml-org/llama.cpp 0c1e570 src/llama-quant.cpp
    `llama_tensor_get_type_impl`, src/llama-hparams.cpp `n_gqa`, layer 0 of the file's metadata): layer
    0's heads over its KV heads; 0 where the file lists KV heads per layer and layer 0 is recurrent (`PER_LAYER_KV`);
    an MLA file's one latent KV head (conversion/deepseek.py writes head_count_kv 1)."""
    if a.layer_types[0] == LINEAR and a.model_type in PER_LAYER_KV:
        return 0
    if kv_b_split(a):
        return a.layer_num_heads(0)
    return a.layer_num_heads(0) // a.layer_kv_heads(0)


def _attn_v(mix: str, a: Architecture, base: str, i_v: int, n_v: int) -> str:
    gqa4 = _gqa(a) >= 4
    new = base
    if mix == "Q2_K":
        new = "Q4_K" if gqa4 else "Q3_K"
    elif mix == "Q2_K_S" and gqa4:
        new = "Q4_K"
    elif mix == "IQ3_XXS":
        new = "Q4_K" if gqa4 else "IQ3_XXS"  # made with an importance matrix (IQ3_S without)
    elif mix in ("IQ3_XS", "IQ3_S") and gqa4 or mix == "IQ3_M":
        new = "Q4_K"
    elif mix == "Q3_K_M":
        new = "Q5_K" if i_v < 2 else "Q4_K"
    elif mix == "Q3_K_L" or mix in ("IQ4_NL", "IQ4_XS") and gqa4:
        new = "Q5_K"
    elif mix in ("Q4_K_M", "Q5_K_M") and use_more_bits(i_v, n_v):
        new = "Q6_K"
    elif mix == "Q4_K_S" and i_v < 4:
        new = "Q5_K"
    if _is_70b(a) and new in ("Q3_K", "Q4_K"):
        new = "Q5_K"
    return "Q8_0" if a.num_experts == 8 else new


def _ffn_down(mix: str, a: Architecture, base: str, i: int, n: int, imatrix: bool) -> str:
    falcon = a.model_type == "falcon"
    if mix == "Q2_K":
        return "Q3_K"
    if mix == "Q2_K_S":
        return "Q4_K" if i < n // 8 else base
    if mix == "Q3_K_M":
        return "Q5_K" if i < n // 16 else "Q4_K" if not falcon or use_more_bits(i, n) else "Q3_K"
    if mix == "IQ3_M" and (i < n // 8 or (a.num_experts == 8 and use_more_bits(i, n))):
        return "Q4_K"
    if mix == "Q3_K_L":
        return "Q4_K" if falcon else "Q5_K"
    if mix == "Q4_K_M":
        if falcon:
            return "Q6_K" if i < n // 16 else "Q5_K" if use_more_bits(i, n) else "Q4_K"
        return "Q6_K" if use_more_bits(i, n) else base
    if i < n // 8 and mix in ("IQ4_NL", "IQ4_XS") and not imatrix:
        return "Q5_K"
    if mix == "Q5_K_M" and use_more_bits(i, n):
        return "Q6_K"
    if mix == "Q4_K_S" and not falcon and i < n // 8:
        return "Q5_K"
    if mix in ("Q4_0", "Q5_0") and imatrix and i < n // 8:
        return "Q4_1" if mix == "Q4_0" else "Q5_1"
    return base


def _attn_output(mix: str, a: Architecture, base: str) -> str:
    if a.model_type == "falcon":
        return "Q4_K" if mix == "Q3_K_L" else base
    if a.num_experts == 8:
        bumped = ("Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS")
        return "Q5_K" if mix in bumped else base
    return {"Q2_K": "Q3_K", "IQ3_XXS": "IQ3_S", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K", "IQ3_M": "Q4_K"}.get(mix, base)


def _choose(mix: str, t: Tensor, a: Architecture, imatrix: bool, qkv_branch: bool = False) -> str:
    """`llama_tensor_get_type_impl` for one tensor of a quantized mix."""
    base = _BASE[mix]
    cat = _category(t, a)
    if cat == OUTPUT:
        return _output(mix, t, a, base)
    if mix == "MXFP4_MOE":  # llama_tensor_get_type_impl: any 3-D tensor of ne[2] > 1, MLA's k_b / v_b as experts
        return "MXFP4" if len(t.shape) == 3 and t.shape[0] > 1 else "Q8_0"
    if cat == TOKEN_EMBD:
        if mix in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
            return "Q2_K"
        if mix in ("TQ1_0", "TQ2_0"):
            return "Q4_K"
        return "IQ3_S" if mix in ("IQ2_S", "IQ2_M", "IQ3_XXS") else base
    if qkv_branch and t.kind in ("q", "k", "v") and a.model_type in FUSED_QKV:
        return {"Q3_K_M": "Q4_K", "Q3_K_L": "Q4_K", "IQ3_M": "Q4_K", "Q4_K_M": "Q5_K", "Q5_K_M": "Q6_K"}.get(mix, base)
    i_v_all, i_down_all, n_v = _counters(a)
    if mix in _LOW_BIT:
        return _low_bit(mix, cat, a, base, i_down_all.get(t.name, 0))
    layer = t.layer or 0
    i_down = layer if a.num_experts > 1 else i_down_all.get(t.name, 0)  # `layer_info`: by name with experts
    if cat == ATTN_V:
        return _attn_v(mix, a, base, i_v_all.get(t.name, 0), n_v)
    if cat in (ATTN_K, ATTN_Q):
        if cat == ATTN_K and a.num_experts == 8:
            return "Q8_0"
        return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(mix, base)
    if cat == FFN_DOWN:
        return _ffn_down(mix, a, base, i_down, a.num_layers, imatrix)
    if cat == ATTN_OUT:
        return _attn_output(mix, a, base)
    if cat in (FFN_GATE, FFN_UP) and mix == "IQ3_XS" and a.num_layers // 8 <= layer < 7 * a.num_layers // 8:
        return "IQ3_XXS"
    return base


#: two-dimensional tensors the converter writes in F32 that the quantizer still types as any other (src/llama-quant.cpp
#: `tensor_allows_quantization` spares them for GLM-5-Next only): DeepSeek-V4's and HY-V4's hyper-connection
#: projections (conversion/deepseek.py, conversion/hy_v4.py `tensor_force_quant`), DeepSeek-V4's compressors' position
#: biases, DeepSeek sparse attention's indexer head weights (conversion/base.py: "DSA indexer weights should be F32")
QUANTIZED_F32_KINDS = frozenset({"hc_fn", "comp_ape", "indexer_comp_ape", "indexer_proj"})
#: two-dimensional tensors F32 in every file: MiniMax-M3's indexer projections (conversion/minimax.py
#: `MiniMaxM3Model.tensor_force_quant` writes them F32; src/llama-quant.cpp: "do not quantize MiniMax's indexer
#: projection weights, they are tiny")
KEPT_F32_KINDS = frozenset({"indexer_q", "indexer_k_proj"})
#: matrices the quantizer leaves as the converter wrote them (F16): Gemma's per-layer model projection and Gemma 3n's
#: AltUp and Laurel tensors (src/llama-quant.cpp `tensor_allows_quantization`: names holding "altup" or "laurel")
CONVERTED_KINDS = frozenset({"per_layer_model_proj", "altup_proj", "altup_unembd_proj", "altup_correct_coef",
                             "altup_predict_coef", "altup_router", "laurel_l", "laurel_r"})


def gguf_tensor_type(mix: str, t: Tensor, a: Architecture) -> str:
    """The ggml type llama.cpp's quantizer gives tensor `t` in a `mix` file. Biases are F32 whatever their rank:
    the converter writes every tensor not named `.weight` in F32 (ggml-org/llama.cpp 0c1e570
    conversion/base.py `ModelBase.prepare_tensors`) and the quantizer touches only `.weight` tensors
    (src/llama-quant.cpp `tensor_allows_quantization`)."""
    if t.role is Role.ROUTER and "shared_expert_gate" in t.name:
        return a.shared_gate_gguf_type
    if t.kind == "tid2eid":  # DeepSeek-V4's token-id -> expert table: I32, never quantized (llama-quant.cpp)
        return "I32"
    if not t.is_matrix or (t.role in (Role.NORM, Role.ROUTER) and t.kind not in QUANTIZED_F32_KINDS) \
            or t.kind in CONV_KINDS or t.kind in KEPT_F32_KINDS:
        return "F32"  # a delta-net's or LFM2's convolution: F32 from the converter, skipped by the quantizer
    if t.role is Role.POSITION or t.kind in CONVERTED_KINDS:  # kept as converted (llama-quant.cpp
        return "BF16" if mix == "BF16" else "F16"  # `tensor_allows_quantization`: "not too big", "very small")
    if mix in ("F16", "BF16"):  # the converter keeps a checkpoint's F32 tensors F32 (conversion/deepseek.py
        return "F32" if t.kind in QUANTIZED_F32_KINDS else _BASE[mix]  # `DeepseekV4Model.tensor_force_quant`)
    mix, qkv_branch = mix.removesuffix(QKV_BRANCH_SUFFIX), mix.endswith(QKV_BRANCH_SUFFIX)
    mix, imatrix = mix.removesuffix(IMATRIX_SUFFIX), mix.endswith(IMATRIX_SUFFIX)
    new = _choose(mix, t, a, imatrix or mix in IMATRIX_MIXES, qkv_branch)
    cols = t.shape[-1]
    if cols % _BLOCK[new]:
        new = _FALLBACK.get(new, new)
        if cols % _BLOCK[new]:
            new = "F16"
    return new


def gguf_type_counts(mix: str, a: Architecture) -> dict[str, int]:
    """Tensors of each ggml type in a `mix` file, by GGUF name (a fused attn_qkv counts once), as llama.cpp's
    loader prints them (`llama_model_loader: - type q4_K: N tensors`); type names lower-case."""
    types = {gguf_name(t, a): gguf_tensor_type(mix, t, a) for t in gguf_tensors(a)}
    return dict(Counter(ggml_type.lower() for ggml_type in types.values()))


def mix_base(name: str) -> str:
    """The mix a format name is a variant of ("Q4_K_M+qkv-branch" -> "Q4_K_M"; "IQ4_XS+imatrix" -> "IQ4_XS")."""
    return name.removesuffix(QKV_BRANCH_SUFFIX).removesuffix(IMATRIX_SUFFIX)

