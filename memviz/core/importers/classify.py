"""Roles and layer indices of stored tensors, from their names.

Hugging Face names (`model.layers.3.self_attn.q_proj.weight`,
`model.layers.3.mlp.experts.7.down_proj.qweight`) and GGUF names
(`blk.3.attn_q.weight`, `blk.3.ffn_down_exps.weight`, `token_embd.weight`,
`output.weight`) as written by transformers and llama.cpp's converter.
"""

from __future__ import annotations

import re

from memviz.core.inventory import Role

_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blk|block|blocks|decoder\.layers)\.(\d+)\.")
_SUBLAYER = re.compile(r"\.(?:self_attn|mlps|input_layernorm|post_attention_layernorm)\.(\d+)\.")
_RULES: tuple[tuple[Role, re.Pattern], ...] = (
    (Role.POSITION, re.compile(r"(wpe|embed_positions|position_embd|pos_embd)")),
    (Role.NORM, re.compile(r"^token_embd_norm\.")),  # LFM2's output norm (src/llama-arch.cpp OUTPUT_NORM_LFM2)
    (Role.EMBEDDING, re.compile(r"(ngram_embeddings\.|embed_tokens|wte|word_embeddings|embed_in|tok_embeddings|token_embd)")),
    (Role.LM_HEAD, re.compile(r"(^|\.)(lm_head|embed_out)\.|^output\.weight$")),
    (Role.ROUTER, re.compile(r"(ffn_gate_inp|\.router\.|shared_expert_gate|\.mlp\.gate\.|block_sparse_moe\.gate\.|"
                             r"e_score_correction|exp_probs_b)")),
    (Role.EXPERT, re.compile(r"(\.experts\.|_exps\.|_exps$)")),
    # DeepSeek-V4's hyper-connection mixes and its compressors' position biases (GGUF: src/llama-arch.cpp
    # hc_attn_fn, output_hc_base, attn_compressor_ape; checkpoint: attn_hc.fn, compressor.ape / position_bias)
    (Role.NORM, re.compile(r"((^|\.)(output_hc_|hc_(attn|ffn)_)|_hc\.|hc_head|compressor_ape|compressor\.ape|"
                           r"position_bias)")),
    (Role.ATTENTION, re.compile(r"indexer_compressor_(kv|gate)\.")),
    (Role.NORM, re.compile(r"(norm|ln_\d|ln_f|layernorm)")),
    (Role.ATTENTION, re.compile(r"(self_attn|attention|\.attn\.|attn_|\.sinks|linear_attn|\.ssm_|\.shortconv\.|"
                                r"\.conv\.(in_proj|out_proj|conv)\.)")),  # LFM2's short convolution
    (Role.MLP, re.compile(r"(\.mlp\.|feed_forward|ffn_|shared_expert|dense_h_to_4h|dense_4h_to_h|\.fc\d\.)")),
    # Gemma 3n / 4 per-layer inputs: the projection onto every layer's slice, each layer's gate and projection back
    (Role.MLP, re.compile(r"(per_layer_model_proj|per_layer_input_gate|per_layer_projection\.|"
                          r"\.inp_gate\.|\.proj\.weight$)")),
    (Role.NORM, re.compile(r"(layer_output_scale|layer_scalar|rope_freqs)")),
)


def layer_of(name: str, block_layers: int = 1) -> int | None:
    """The layer a tensor belongs to; where a decoder layer holds `block_layers` sublayers (LongCat-Flash's
    `LongcatFlashDecoderLayer`: self_attn.k, mlps.k and its norms.k for k = 0, 1, the shortcut MoE beside the first),
    memviz's sublayer: block_layers x the layer + k."""
    m = _LAYER.search(name)
    if not m:
        return None
    sub = _SUBLAYER.search(name) if block_layers > 1 else None
    return int(m.group(1)) * block_layers + (int(sub.group(1)) if sub else 0)


def role_of(name: str) -> Role:
    for role, pattern in _RULES:
        if pattern.search(name):
            return role
    return Role.OTHER
