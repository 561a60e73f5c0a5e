"""Activation and workspace memory.

Inference: buffers are reused from layer to layer, so the workspace is the peak
transient of the largest layer, not a sum over layers (llm-analysis takes
max(attention, mlp, layernorm) per layer; llama.cpp and gguf-parser size the
compute buffer from the largest layer's graph). The pieces:

- hidden: the residual stream in and out of a layer plus the Q/K/V projections;
- attention, eager: the B x heads x n x T score matrix in the compute dtype plus
  its fp32 softmax copy (transformers' `eager_attention_forward` upcasts the
  softmax to fp32), plus K/V repeated to all heads (`repeat_kv`);
  SDPA/flash: tiled, no score matrix and native GQA (transformers' `use_gqa_in_sdpa`
  when no mask is needed, flash kernels, ggml) — only the output remains;
- MLP: gated MLPs hold act(gate), up and their product (3 x n x I); plain MLPs 2 x n x I;
  MoE layers route each token to top-k experts and keep fp32 router logits;
- logits: rows x vocab in the compute dtype plus an fp32 copy (transformers'
  generate keeps only the last position; a plain forward computes all).

Training, for comparison with the seed's example only: Korthikanti et al. 2022,
"Reducing Activation Recomputation in Large Transformer Models", eq. 1-2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memviz.core.arch import Architecture
from memviz.core.kv import ArrayLike


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
) -> Workspace:
    """Workspace of a forward step that processes `step_tokens` new tokens per
    sequence for `batch` sequences attending to `kv_tokens` cached tokens.

    `logits_rows` is the number of logit rows materialised (B for generate,
    B x n for a full forward), `logits_bytes` the bytes per logit held at the
    peak (compute dtype + fp32 copy for PyTorch engines, 4 for ggml's F32 graph).
    Under tensor parallelism heads, intermediate size and vocabulary are split
    over `tp` ranks (Megatron-LM layout).
    """
    n, t, b = step_tokens, kv_tokens, batch
    heads = a.num_heads / tp
    kv_heads = max(a.num_kv_heads / tp, 1)
    qkv = heads * a.head_dim + kv_heads * (a.head_dim + a.v_head_dim)
    hidden = b * n * (2 * a.hidden_size + qkv) * act_bytes
    gqa = a.num_kv_heads < a.num_heads
    repeated_kv = b * t * heads * (a.head_dim + a.v_head_dim) * act_bytes if gqa and attention == "eager" else 0
    out = b * n * heads * a.v_head_dim * act_bytes
    scores = b * heads * n * t * (act_bytes + 4) if attention == "eager" else 0
    attn = scores + repeated_kv + out
    mult = 3 if a.mlp_gated else 2
    dense = b * n * mult * (a.intermediate_size / tp) * act_bytes
    if a.is_moe:
        routed = b * n * a.experts_per_token * mult * (a.moe_intermediate_size / tp) * act_bytes
        shared = b * n * mult * (a.shared_expert_intermediate_size / tp) * act_bytes
        router = b * n * a.num_experts * 4
        moe = routed + shared + router
        mlp = np.maximum(dense, moe) if not all(a.moe_layers) else moe
    else:
        mlp = dense
    logits = logits_rows * (a.vocab_size / tp) * logits_bytes
    return Workspace(hidden=hidden, attention=attn, mlp=mlp, logits=logits)


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
