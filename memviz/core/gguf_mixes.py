"""GGUF file mixes (Q4_K_M, Q5_K_M, ...) as per-tensor type policies.

A GGUF "Q4_K_M" file is not 4.5 bits everywhere: llama.cpp's quantizer picks a
ggml type per tensor (`src/llama-quant.cpp`, `llama_tensor_get_type`). The rules
reproduced here are the ones that change sizes for the standard mixes:

- 1-D tensors (norms, biases) stay F32; MoE routers (`ffn_gate_inp`) and position
  embeddings are never quantized;
- the output matrix (or the token embedding when tied) becomes Q6_K unless the mix
  is Q8_0 (Q8_0 if its row length is not a multiple of 256, and for Falcon);
- attn_v and ffn_down get more bits in some layers (`use_more_bits`: the first and
  last eighth and every third layer between);
- 8-expert models (Mixtral) keep attn_k/attn_v at Q8_0; 70B models bump attn_v;
- a type whose block does not divide the row length falls back (Q4_K->Q5_0,
  Q5_K->Q5_1, Q6_K->Q8_0, Q2_K/Q3_K->IQ4_NL, then F16).

Rules that need an importance matrix or only concern IQ mixes are not modelled.
"""

from __future__ import annotations

from memviz.core.arch import Architecture
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
    "Q3_K_L": "GGUF Q3_K_L mix",
    "Q3_K_M": "GGUF Q3_K_M mix",
    "Q3_K_S": "GGUF Q3_K_S mix",
    "Q2_K": "GGUF Q2_K mix",
}

_BASE = {
    "F16": "F16", "BF16": "BF16", "Q8_0": "Q8_0", "Q6_K": "Q6_K", "Q5_K_M": "Q5_K", "Q5_K_S": "Q5_K", "Q5_1": "Q5_1",
    "Q5_0": "Q5_0", "Q4_K_M": "Q4_K", "Q4_K_S": "Q4_K", "Q4_1": "Q4_1", "Q4_0": "Q4_0", "Q3_K_L": "Q3_K",
    "Q3_K_M": "Q3_K", "Q3_K_S": "Q3_K", "Q2_K": "Q2_K",
}

_BLOCK = {"Q2_K": 256, "Q3_K": 256, "Q4_K": 256, "Q5_K": 256, "Q6_K": 256, "IQ4_NL": 32, "Q4_0": 32, "Q4_1": 32,
          "Q5_0": 32, "Q5_1": 32, "Q8_0": 32, "F16": 1, "BF16": 1, "F32": 1}
_FALLBACK = {"Q2_K": "IQ4_NL", "Q3_K": "IQ4_NL", "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp `use_more_bits`: first and last eighth of the layers, and every third between."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def _is_70b(a: Architecture) -> bool:
    """llama.cpp's LLM_TYPE_70B for Llama-family models is the 80-layer shape."""
    return a.model_type == "llama" and a.num_layers == 80


def _choose(mix: str, t: Tensor, a: Architecture) -> str:
    base = _BASE[mix]
    if mix in ("F16", "BF16"):
        return base
    falcon = a.model_type == "falcon"
    i, n = (t.layer or 0), a.num_layers
    is_output = t.role is Role.LM_HEAD or (t.role is Role.EMBEDDING and a.tie_word_embeddings)
    if is_output:
        if falcon or t.shape[-1] % 256:
            return "Q8_0"
        return base if base == "Q8_0" else "Q6_K"
    kind = t.kind.replace("_exps", "")
    eight_experts = a.num_experts == 8
    if kind == "v":
        new = base
        if mix == "Q2_K":
            new = "Q4_K" if a.num_heads // a.num_kv_heads >= 4 else "Q3_K"
        elif mix == "Q3_K_M":
            new = "Q5_K" if i < 2 else "Q4_K"
        elif mix == "Q3_K_L":
            new = "Q5_K"
        elif mix in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, n):
            new = "Q6_K"
        elif mix == "Q4_K_S" and i < 4:
            new = "Q5_K"
        if _is_70b(a) and new in ("Q3_K", "Q4_K"):
            new = "Q5_K"
        return "Q8_0" if eight_experts else new
    if kind == "k" and eight_experts:
        return "Q8_0"
    if kind == "down":
        if mix == "Q2_K":
            return "Q3_K"
        if mix == "Q3_K_M":
            return "Q5_K" if i < n // 16 else ("Q4_K" if not falcon or use_more_bits(i, n) else "Q3_K")
        if mix == "Q3_K_L":
            return "Q4_K" if falcon else "Q5_K"
        if mix == "Q4_K_M":
            if falcon:
                return "Q6_K" if i < n // 16 else ("Q5_K" if use_more_bits(i, n) else "Q4_K")
            return "Q6_K" if use_more_bits(i, n) else base
        if mix == "Q5_K_M" and use_more_bits(i, n):
            return "Q6_K"
        if mix == "Q4_K_S" and not falcon and i < n // 8:
            return "Q5_K"
        return base
    if kind == "o" and not falcon:
        if eight_experts:
            return "Q5_K" if mix in ("Q2_K", "Q3_K_S", "Q3_K_M", "Q4_K_S", "Q4_K_M") else base
        return {"Q2_K": "Q3_K", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K"}.get(mix, base)
    return base


def gguf_tensor_type(mix: str, t: Tensor, a: Architecture) -> str:
    """The ggml type llama.cpp's quantizer gives tensor `t` in a `mix` file."""
    if not t.is_matrix or t.role in (Role.NORM, Role.ROUTER):
        return "F32"
    if t.role is Role.POSITION:
        return "F16"
    new = _choose(mix, t, a)
    cols = t.shape[-1]
    if cols % _BLOCK[new]:
        new = _FALLBACK.get(new, new)
        if cols % _BLOCK[new]:
            new = "F16"
    return new
