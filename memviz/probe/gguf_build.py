"""GGUF files of a model's real shapes with random weights, at any llama.cpp mix, built offline.

The tensors are memviz's inventory of the architecture (the shapes llama.cpp's
converter writes, `convert_hf_to_gguf.py`), named as `gguf-py/gguf/constants.py`
names them (`blk.N.attn_q.weight`, `ffn_gate_exps`, ...), written one at a time
with gguf's `GGUFWriter` as F16 matrices and F32 vectors and routers (N(0, 0.02) values, seed
0), with a byte-level SentencePiece vocabulary (`<unk>`, `<s>`, `</s>`, the 256
byte tokens) padded to vocab_size — nothing to download. llama.cpp's own quantizer
(`llama_model_quantize`, `src/llama-quant.cpp`) then makes the chosen mix, so the
per-tensor types are llama.cpp's, not memviz's. Files are cached in the data
folder under `gguf/`, oldest dropped past `MEMVIZ_GGUF_CACHE_GB` (default 20 GB).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from memviz.core.arch import FULL, LINEAR, SLIDING, Architecture
from memviz.core.errors import InputError
from memviz.core.formats import get_weight_format, weight_bytes
from memviz.core.gguf_mixes import KEPT_F32_KINDS, QUANTIZED_F32_KINDS
from memviz.core.gguf_names import CONV_KINDS, gguf_name, gguf_tensors
from memviz.core.inventory import Role
from memviz.core.units import GB

#: transformers model_type -> GGUF general.architecture this builder writes
GGUF_ARCH = {"llama": "llama", "mistral": "llama", "mixtral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
             "gemma2": "gemma2", "qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe", "deepseek_v2": "deepseek2",
             "gpt_oss": "gpt-oss", "gemma4_text": "gemma4", "gemma3n_text": "gemma3n", "qwen3_5_text": "qwen35",
             "qwen3_5_moe_text": "qwen35moe",
             "granitemoehybrid": "granitehybrid", "nemotron_h": "nemotron_h",
             "bamba": "granitehybrid",  # conversion/granite.py `GraniteHybridModel` converts Bamba too
             "lfm2": "lfm2", "lfm2_moe": "lfm2moe", "falcon_h1": "falcon-h1", "deepseek_v4": "deepseek4",
             "minimax_m3_vl_text": "minimax-m3", "hy_v4": "hy_v4", "laguna": "laguna", "dbrx": "dbrx",
             "mpt": "mpt", "bitnet": "bitnet",
             # conversion/granite.py `GraniteSWAModel` converts Granite SWA and Granite MoE SWA alike
             "granite_swa": "granite_swa", "granitemoe_swa": "granite_swa", "mellum": "mellum",
             "dots3_note_text": "dots3note", "bailing_moe_v2": "bailingmoe2", "bailing_moe": "bailingmoe",
             "kimi_linear": "kimi-linear",
             "mamba": "mamba", "falcon_mamba": "mamba",  # conversion/mamba.py `MambaModel` converts both
             "mamba2": "mamba2", "jamba": "jamba", "minicpm3": "minicpm3"}
DEFAULT_CACHE_BYTES = 20 * GB
SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")


def check_supported(a: Architecture) -> str:
    """The GGUF architecture written for `a`, or InputError."""
    if a.model_type not in GGUF_ARCH:
        raise InputError(f"building a GGUF file for model_type '{a.model_type}' is not supported "
                         f"(supported: {', '.join(sorted(GGUF_ARCH))}); give an existing file with --gguf")
    if a.model_type == "bailing_moe" and a.shared_expert_intermediate_size % a.moe_intermediate_size:
        raise InputError("llama.cpp's bailingmoe sizes the shared MLP as a count of the experts' width "
                         "(src/models/bailingmoe.cpp); this config's is not a multiple of it")
    if a.model_type == "falcon_h1" and (a.linear_proj_bias or a.linear_out_bias):
        raise InputError("llama.cpp's Falcon-H1 loads no in_proj / out_proj bias for its Mamba2 mixer "
                         "(src/models/falcon-h1.cpp); mamba_proj_bias / projectors_bias are not built")
    if a.model_type == "deepseek_v4" and set(a.compress_ratios) - {0, 4, 128}:
        raise InputError("llama.cpp's DeepSeek-V4 loads compress ratios 0, 4 and 128 only (src/models/deepseek4.cpp)")
    if a.model_type == "laguna" and SLIDING in a.layer_types and a.layer_types != tuple(
            FULL if i % 4 == 0 else SLIDING for i in range(a.num_layers)):
        raise InputError("llama.cpp's Laguna slides every layer but each fourth from layer 0 (src/models/laguna.cpp)")
    if a.model_type == "minimax_m3_vl_text" and a.indexer_layers != a.moe_layers:
        raise InputError("llama.cpp's MiniMax-M3 runs the indexer in exactly the layers after the leading dense ones "
                         "(src/models/minimax-m3.cpp); the config's sparse layers must be its expert layers")
    if a.model_type in ("lfm2", "lfm2_moe") and a.linear_conv_bias:
        raise InputError("llama.cpp's LFM2 loads no convolution biases (src/models/lfm2.cpp); conv_bias is not built")
    if a.model_type == "nemotron_h" and a.is_moe:
        return "nemotron_h_moe"  # conversion/nemotron.py `NemotronHModel`: its own architecture with experts
    if a.model_type in ("qwen3", "qwen3_moe") and a.deepstack_layers:  # Qwen3-VL's language model
        return "qwen3vl" if a.model_type == "qwen3" else "qwen3vlmoe"  # (conversion/qwen.py `Qwen3VLTextModel`)
    if a.model_type == "deepseek_v2" and not a.is_mla:  # DeepSeek-OCR / OCR 2 / Unlimited-OCR (conversion/deepseek.py
        return "deepseek2-ocr"  # `DeepseekV2Model`: their plain multi-head attention, src/models/deepseek2ocr.cpp)
    return GGUF_ARCH[a.model_type]


def _metadata(w, a: Architecture, arch: str) -> None:
    if arch in ("mamba", "mamba2"):
        _mamba_metadata(w, a, arch)
        _vocabulary(w, a)
        return
    w.add_block_count(a.num_layers)
    w.add_context_length(a.max_position_embeddings or 8192)
    w.add_embedding_length(a.hidden_size)
    if arch not in ("gemma4", "nemotron_h", "nemotron_h_moe"):  # these write it per layer
        w.add_feed_forward_length(a.intermediate_size)
    w.add_head_count(list(a.layer_heads) if a.layer_heads else a.num_heads)  # Laguna's per layer (conversion/laguna.py)
    if arch == "gemma4":
        _gemma4_metadata(w, a)
    elif arch == "gemma3n":
        _gemma3n_metadata(w, a)
    elif arch in ("nemotron_h", "nemotron_h_moe"):
        _nemotron_h_metadata(w, a, arch)
    elif arch in ("granitehybrid", "lfm2", "lfm2moe", "jamba"):  # a recurrent layer is one with no KV heads
        # (src/models/granite-hybrid.cpp, lfm2.cpp, jamba.cpp; the converters write them so)
        w.add_array(f"{arch}.attention.head_count_kv", [0 if kind == LINEAR else a.num_kv_heads for kind in a.layer_types])
        w.add_key_length(a.head_dim)
        w.add_value_length(a.v_head_dim)
    elif arch not in ("deepseek2", "hy_v4", "dots3note", "kimi-linear"):  # MLA writes its own
        w.add_head_count_kv(a.num_kv_heads)
        w.add_key_length(a.head_dim)
        w.add_value_length(a.v_head_dim)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    if arch in ("qwen35", "qwen35moe"):
        _deltanet_metadata(w, a, arch)
    if arch in ("granitehybrid", "falcon-h1"):  # conversion/granite.py, conversion/mamba.py `Mamba2Model`
        _ssm_metadata(w, a, arch)
    if arch == "jamba":  # conversion/jamba.py `JambaModel.set_gguf_parameters`: Mamba's keys
        w.add_ssm_conv_kernel(a.linear_conv_kernel)
        w.add_ssm_inner_size(a.linear_conv_dim)
        w.add_ssm_state_size(a.linear_k_head_dim)
        w.add_ssm_time_step_rank(a.linear_dt_rank)
    if arch in ("lfm2", "lfm2moe"):  # conversion/lfm2.py `LFM2Model` / `LFM2MoeModel.set_gguf_parameters`
        w.add_uint32(f"{arch}.shortconv.l_cache", a.linear_conv_kernel)
    if arch == "lfm2moe":  # the dense layers before the experts, sigmoid routing (gguf ExpertGatingFuncType 2)
        w.add_uint32("lfm2moe.leading_dense_block_count", _leading_dense(a))
        w.add_uint32("lfm2moe.expert_gating_func", 2)
    w.add_file_type(1)  # MOSTLY_F16
    if a.num_experts:
        w.add_expert_count(a.num_experts)
        w.add_expert_used_count(a.experts_per_token)
        w.add_expert_feed_forward_length(a.moe_intermediate_size)
        # Gemma 4's dense MLP is feed_forward_length; bailingmoe's converter writes a count of experts' widths only
        if a.shared_expert_intermediate_size and arch not in ("gemma4", "bailingmoe"):
            w.add_expert_shared_feed_forward_length(a.shared_expert_intermediate_size)
    if arch == "deepseek2":
        _deepseek2_metadata(w, a)
    if arch == "deepseek2-ocr":  # `DeepseekV2Model.set_gguf_parameters` with is_ocr: no latent, the rope width the
        w.add_leading_dense_block_count(_leading_dense(a))  # config's qk_rope_head_dim (0: the graph ropes the head)
        w.add_expert_shared_count(a.shared_expert_intermediate_size // a.moe_intermediate_size if a.is_moe else 0)
        w.add_rope_dimension_count(a.qk_rope_head_dim)
    if arch == "hy_v4":
        _deepseek2_metadata(w, a, gating=2)  # sigmoid (conversion/hy_v4.py `HYV4Model.set_gguf_parameters`)
        _hy_v4_metadata(w, a)
    if arch == "kimi-linear":
        _kimi_linear_metadata(w, a)
    if arch == "deepseek4":
        _deepseek4_metadata(w, a)
    if arch == "dots3note":
        _deepseek2_metadata(w, a, gating=2)  # sigmoid (conversion/dots3.py requires noaux_tc / sigmoid)
        _dots3_metadata(w, a)
    if arch == "minimax-m3":
        _minimax_m3_metadata(w, a)
    if arch == "laguna":  # conversion/laguna.py `set_gguf_parameters`: sigmoid routing, the leading dense layers
        w.add_uint32("laguna.leading_dense_block_count", _leading_dense(a))
        w.add_uint32("laguna.expert_gating_func", 2)
        w.add_bool("laguna.expert_weights_norm", True)
        w.add_float32("laguna.expert_weights_scale", 1.0)
    if arch == "bailingmoe2":  # conversion/bailingmoe.py `BailingMoeV2Model.set_gguf_parameters`: the leading dense
        # layers, the shared MLP's whole width as one shared expert (llama.cpp multiplies n_ff_shexp by the count),
        # sigmoid routing with its score bias, half the head roped
        w.add_uint32("bailingmoe2.leading_dense_block_count", _leading_dense(a))
        w.add_uint32("bailingmoe2.expert_shared_count", 1 if a.shared_expert_intermediate_size else 0)
        w.add_uint32("bailingmoe2.expert_gating_func", 2)
        w.add_bool("bailingmoe2.expert_weights_norm", True)
        w.add_float32("bailingmoe2.expert_weights_scale", 1.0)
        w.add_rope_dimension_count(a.head_dim // 2)
    if arch == "bailingmoe":  # conversion/bailingmoe.py `BailingMoeModel.set_gguf_parameters`: the whole head roped,
        # the shared MLP as count x the experts' width (src/models/bailingmoe.cpp: n_ff_exp x n_expert_shared)
        w.add_uint32("bailingmoe.leading_dense_block_count", _leading_dense(a))
        w.add_uint32("bailingmoe.expert_shared_count", a.shared_expert_intermediate_size // a.moe_intermediate_size)
        w.add_float32("bailingmoe.expert_weights_scale", 1.0)
        w.add_bool("bailingmoe.expert_weights_norm", True)
        w.add_rope_dimension_count(a.head_dim)
    if arch in ("qwen3vl", "qwen3vlmoe"):  # conversion/qwen.py `Qwen3VLTextModel.set_gguf_parameters`: the deepstack
        # layers and M-RoPE's sections, which src/models/qwen3vl.cpp requires (Qwen3-VL's [24, 20, 20] for a head of
        # 128: a time section and two of 5/32 of the head)
        w.add_uint32(f"{arch}.n_deepstack_layers", a.deepstack_layers)
        spatial = a.head_dim * 5 // 32
        w.add_rope_dimension_sections([a.head_dim // 2 - 2 * spatial, spatial, spatial, 0])
    if arch == "minicpm3":  # conversion/minicpm.py `MiniCPM3Model.set_gguf_parameters`: the latent ranks, the
        w.add_q_lora_rank(a.q_lora_rank)  # roped part of the key (key_length is nope + rope, written above)
        w.add_kv_lora_rank(a.kv_lora_rank)
        w.add_rope_dimension_count(a.qk_rope_head_dim)
    if arch == "dbrx":  # conversion/dbrx.py `DbrxModel.set_gguf_parameters`: LayerNorm's epsilon, the q/k/v clamp
        w.add_layer_norm_eps(1e-5)
        w.add_clamp_kqv(8.0)
    if arch == "mpt":  # conversion/mpt.py `MPTModel.set_gguf_parameters`: LayerNorm's epsilon, ALiBi's bias
        w.add_layer_norm_eps(1e-5)
        w.add_max_alibi_bias(8.0)
    if arch in ("gemma2", "gpt-oss") or (arch in ("laguna", "granite_swa", "mellum") and a.sliding_window):
        w.add_sliding_window(a.sliding_window)
    if arch in ("granite_swa", "mellum") and a.sliding_window:  # conversion/granite.py, mellum.py: a flag a layer
        w.add_sliding_window_pattern([kind == SLIDING for kind in a.layer_types])
    if arch == "granite_swa":  # GraniteModel.set_gguf_parameters: the multipliers (1: none; memory is the same)
        w.add_logit_scale(1.0)
    if arch == "gemma2":
        w.add_attn_logit_softcapping(50.0)
        w.add_final_logit_softcapping(30.0)
    _vocabulary(w, a)


def _vocabulary(w, a: Architecture) -> None:
    """A llama (SentencePiece) vocabulary of vocab_size tokens: three specials, the 256 bytes, placeholders."""
    tokens = [*SPECIAL_TOKENS, *(f"<0x{i:02X}>" for i in range(256))]
    if a.vocab_size < len(tokens):
        raise InputError(f"vocab_size {a.vocab_size} is smaller than the {len(tokens)} byte-level tokens")
    tokens += [f"tok{i}" for i in range(a.vocab_size - len(tokens))]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * a.vocab_size)
    w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (a.vocab_size - 259))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def _gemma4_metadata(w, a: Architecture) -> None:
    """Gemma 4 as llama.cpp's converter writes it (conversion/gemma.py `Gemma4Model.set_gguf_parameters`): the
    full layers' head width as key/value length, the sliding layers' as the `_swa` lengths, KV heads and
    feed-forward widths per layer, which layers slide, how many reuse K/V, the per-layer embedding width. Keys
    by name (src/llama-arch.cpp LLM_KV_NAMES), so gguf releases without Gemma 4's writer methods write them too."""
    full = next(i for i, kind in enumerate(a.layer_types) if kind != SLIDING)
    width = a.shared_expert_intermediate_size or a.intermediate_size
    w.add_sliding_window(a.sliding_window)
    w.add_final_logit_softcapping(30.0)
    for key, value in (("attention.key_length", a.layer_head_dim(full)), ("attention.value_length", a.layer_head_dim(full)),
                       ("attention.key_length_swa", a.head_dim), ("attention.value_length_swa", a.head_dim),
                       ("attention.shared_kv_layers", a.kv_shared_layers),
                       ("embedding_length_per_layer_input", a.per_layer_input_size),
                       ("rope.dimension_count", a.layer_head_dim(full)), ("rope.dimension_count_swa", a.head_dim)):
        w.add_uint32(f"gemma4.{key}", value)
    w.add_float32("gemma4.rope.freq_base_swa", 10000.0)
    w.add_array("gemma4.attention.sliding_window_pattern", [kind == SLIDING for kind in a.layer_types])
    w.add_array("gemma4.attention.head_count_kv", [a.layer_kv_heads(i) for i in range(a.num_layers)])
    w.add_array("gemma4.feed_forward_length", [(2 if a.double_wide_shared_mlp and not a.layer_caches_kv(i) else 1)
                                               * width for i in range(a.num_layers)])


def _gemma3n_metadata(w, a: Architecture) -> None:
    """Gemma 3n as llama.cpp's converter writes it (conversion/gemma.py `Gemma3Model` / `Gemma3NModel
    .set_gguf_parameters`): one head width, KV heads, the window and which layers slide, the final soft-cap, AltUp's
    active stream and stream count, the per-layer embedding width, the layers reusing K/V and the activation
    sparsity's per-layer scales (icdf(0.95) for the first ten layers, icdf(0) after, as for the released configs'
    activation_sparsity_pattern; llama.cpp's graph fixes both, src/models/models.h). Keys by name
    (gguf-py constants.py), so gguf releases without these writer methods write them too."""
    w.add_head_count_kv(a.num_kv_heads)
    w.add_key_length(a.head_dim)
    w.add_value_length(a.head_dim)
    w.add_sliding_window(a.sliding_window)
    w.add_final_logit_softcapping(30.0)
    for key, value in (("altup.active_idx", 0), ("altup.num_inputs", a.altup_inputs),
                       ("embedding_length_per_layer_input", a.per_layer_input_size),
                       ("attention.shared_kv_layers", a.kv_shared_layers)):
        w.add_uint32(f"gemma3n.{key}", value)
    w.add_array("gemma3n.activation_sparsity_scale", [1.6448533535003662 if i < 10 else float("-inf")
                                                      for i in range(a.num_layers)])
    w.add_array("gemma3n.attention.sliding_window_pattern", [kind == SLIDING for kind in a.layer_types])


def _leading_dense(a: Architecture) -> int:
    """The dense layers before the first with experts (the converters' leading_dense_block_count)."""
    return a.moe_layers.index(True) if True in a.moe_layers else a.num_layers


def _deepseek2_metadata(w, a: Architecture, gating: int = 1, kv_heads: int | list[int] = 1) -> None:
    """MLA as llama.cpp's converter writes it (`DeepseekV2Model.set_gguf_parameters`): one KV head of the latent
    (key kv_lora_rank + rope, value kv_lora_rank; `kv_heads` per layer where some layers have none), the per-head
    sizes as the `_mla` lengths, softmax gating; a legacy file (`mla_kv_b_unsplit`) as converters wrote it before:
    every head a KV head of the per-head sizes."""
    import gguf

    if a.mla_kv_b_unsplit:  # a file converted before llama.cpp PR #12801: per-head lengths, attn_kv_b whole
        w.add_head_count_kv(a.num_heads)
        w.add_key_length(a.qk_nope_head_dim + a.qk_rope_head_dim)
        w.add_value_length(a.v_head_dim)
    else:
        w.add_head_count_kv(kv_heads)
        w.add_key_length(a.kv_lora_rank + a.qk_rope_head_dim)
        w.add_value_length(a.kv_lora_rank)
        w.add_key_length_mla(a.qk_nope_head_dim + a.qk_rope_head_dim)
        w.add_value_length_mla(a.v_head_dim)
    w.add_q_lora_rank(a.q_lora_rank or 0)
    w.add_kv_lora_rank(a.kv_lora_rank)
    w.add_rope_dimension_count(a.qk_rope_head_dim)
    w.add_leading_dense_block_count(_leading_dense(a))
    w.add_expert_shared_count(a.shared_expert_intermediate_size // a.moe_intermediate_size)
    w.add_expert_weights_scale(1.0)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType(gating))  # 1 softmax, 2 sigmoid


def _kimi_linear_metadata(w, a: Architecture) -> None:
    """Kimi Linear as conversion/kimi_linear.py `KimiLinearModel.set_gguf_parameters` writes it: no KV head in a
    delta layer (src/models/kimi-linear.cpp `load_arch_hparams` marks those recurrent), the convolution's kernel
    and the delta attention's head width, then MLA's and the experts' keys as DeepSeek's, with sigmoid routing
    (KimiLinearConfig's moe_router_activation_func)."""
    w.add_uint32("kimi-linear.ssm.conv_kernel", a.linear_conv_kernel)
    w.add_uint32("kimi-linear.kda.head_dim", a.linear_k_head_dim)
    _deepseek2_metadata(w, a, gating=2, kv_heads=[0 if kind == LINEAR else 1 for kind in a.layer_types])


def _deepseek4_metadata(w, a: Architecture) -> None:
    """DeepSeek-V4 as llama.cpp's converter writes it (conversion/deepseek.py `DeepseekV4Model.set_gguf_parameters`),
    keys by name (src/llama-arch.cpp LLM_KV_NAMES): the rotary width, q_lora_rank, the window, the experts' width,
    shared count, scale and norm, the SwiGLU clamps per layer, the indexer, the grouped output, the compress ratios,
    the hyper-connections, the hash layers, sqrt-softplus routing (gguf ExpertGatingFuncType 4) and the width of the
    streams the last layer hands on."""
    n = a.num_layers
    for key, value in (("rope.dimension_count", a.qk_rope_head_dim), ("attention.q_lora_rank", a.q_lora_rank),
                       ("attention.sliding_window", a.sliding_window),
                       ("expert_shared_count", a.shared_expert_intermediate_size // a.moe_intermediate_size),
                       ("attention.indexer.head_count", a.indexer_heads),
                       ("attention.indexer.key_length", a.indexer_head_dim), ("attention.indexer.top_k", 8),
                       ("attention.output_group_count", a.out_groups), ("attention.output_lora_rank", a.out_lora_rank),
                       ("hyper_connection.count", a.hyper_streams), ("hyper_connection.sinkhorn_iterations", 20),
                       ("hash_layer_count", sum(a.hash_layers)), ("expert_gating_func", 4),
                       ("embedding_length_out", a.hidden_size * a.hyper_streams)):
        w.add_uint32(f"deepseek4.{key}", value)
    for key, value in (("expert_weights_scale", 1.5), ("attention.compress_rope_freq_base", 160000.0),
                       ("hyper_connection.epsilon", 1e-6)):
        w.add_float32(f"deepseek4.{key}", value)
    w.add_bool("deepseek4.expert_weights_norm", True)
    w.add_array("deepseek4.swiglu_clamp_exp", [10.0] * n)
    w.add_array("deepseek4.swiglu_clamp_shexp", [10.0] * n)
    w.add_array("deepseek4.attention.compress_ratios", list(a.compress_ratios))


def _hy_v4_metadata(w, a: Architecture) -> None:
    """HY-V4's keys beyond DeepSeek-V2's (conversion/hy_v4.py `HYV4Model.set_gguf_parameters`, read by
    src/models/hy-v4.cpp `load_arch_hparams`): the hyper-connections' count, epsilon and magnitude; the indexer's
    heads, key width, top-k and which layers own one."""
    w.add_uint32("hy_v4.hyper_connection.count", a.hyper_streams)
    w.add_float32("hy_v4.hyper_connection.epsilon", 1e-6)
    w.add_float32("hy_v4.hyper_connection.magnitude", 2.0)
    if a.indexer_head_dim:
        _indexer_metadata(w, a, "hy_v4")


def _indexer_metadata(w, a: Architecture, arch: str) -> None:
    """DeepSeek sparse attention's indexer keys (src/llama-arch.cpp LLM_KV_ATTENTION_INDEXER_*): heads, key width,
    top-k (the config's, else 64: llama.cpp sizes no buffer by it), which layers own one."""
    w.add_uint32(f"{arch}.attention.indexer.head_count", a.indexer_heads)
    w.add_uint32(f"{arch}.attention.indexer.key_length", a.indexer_head_dim)
    w.add_uint32(f"{arch}.attention.indexer.top_k", a.indexer_topk or 64)
    w.add_array(f"{arch}.attention.indexer.types", [bool(f) for f in a.indexer_layers])


def _dots3_metadata(w, a: Architecture) -> None:
    """dots3's keys beyond DeepSeek-V2's (conversion/dots3.py `Dots3NoteModel.set_gguf_parameters`, read by
    src/models/dots3note.cpp `load_arch_hparams`): the window and which layers slide, the sliding layers' MLA
    geometry (latent, its key / value lengths, the per-head lengths), their rope base, and the indexer of the full
    layers (heads, key width, top-k, which layers own one)."""
    arch, swa = "dots3note", a.layer_types.index(SLIDING) if SLIDING in a.layer_types else 0
    rank, rope = a.layer_kv_lora(swa), a.layer_rope_dim(swa)
    w.add_sliding_window(a.sliding_window or 0)
    w.add_array(f"{arch}.attention.sliding_window_pattern", [kind == SLIDING for kind in a.layer_types])
    for key, value in (("attention.kv_lora_rank_swa", rank), ("attention.key_length_swa", rank + rope),
                       ("attention.value_length_swa", rank),
                       ("attention.key_length_mla_swa", a.layer_nope_dim(swa) + rope),
                       ("attention.value_length_mla_swa", a.v_head_dim)):
        w.add_uint32(f"{arch}.{key}", value)
    w.add_float32(f"{arch}.rope.freq_base_swa", 10000.0)
    _indexer_metadata(w, a, arch)


def _minimax_m3_metadata(w, a: Architecture) -> None:
    """MiniMax-M3 as llama.cpp's converter writes it (conversion/minimax.py `MiniMaxM3Model.set_gguf_parameters`,
    keys read by src/models/minimax-m3.cpp `load_arch_hparams`): the leading dense blocks, the shared experts, the
    routed scale and norm, sigmoid gating (gguf ExpertGatingFuncType 2), the indexer (heads, key width, top-k blocks,
    block size, local blocks), half the head rotated."""
    arch = "minimax-m3"
    for key, value in (("leading_dense_block_count", _leading_dense(a)),
                       ("expert_shared_count", a.shared_expert_intermediate_size // a.moe_intermediate_size),
                       ("expert_gating_func", 2), ("attention.indexer.head_count", a.indexer_heads),
                       ("attention.indexer.key_length", a.indexer_head_dim), ("attention.indexer.top_k", 16),
                       ("attention.indexer.block_size", 128), ("attention.indexer.local_blocks", 1),
                       ("rope.dimension_count", a.head_dim // 2)):
        w.add_uint32(f"{arch}.{key}", value)
    w.add_float32(f"{arch}.expert_weights_scale", 2.0)
    w.add_bool(f"{arch}.expert_weights_norm", True)


def _deltanet_metadata(w, a: Architecture, arch: str) -> None:
    """Qwen3.5's keys by name (src/llama-arch.cpp LLM_KV_NAMES; conversion/qwen.py `Qwen3NextModel`): the
    delta-net's convolution, key width, key and value heads, value width, the full-attention interval, and the
    M-RoPE sections src/models/qwen35.cpp requires (a quarter of the head rotated, as Qwen3.5's config)."""
    _ssm_metadata(w, a, arch)
    w.add_uint32(f"{arch}.full_attention_interval", a.layer_types.index(FULL) + 1)
    rotary = a.head_dim // 4
    w.add_uint32(f"{arch}.rope.dimension_count", rotary)
    w.add_array(f"{arch}.rope.dimension_sections", [rotary // 2, 0, 0, 0])


def _nemotron_h_metadata(w, a: Architecture, arch: str) -> None:
    """Nemotron-H as conversion/nemotron.py `NemotronHModel.set_gguf_parameters` writes it: KV heads per layer (0
    but in attention blocks), feed-forward width per layer (0 but in MLP / expert blocks: the experts' width in an
    MoE file), a block with neither being Mamba2 (src/models/nemotron-h.cpp `load_arch_hparams`); the
    LayerNorm epsilon that loader requires; the experts' counts, widths and routing."""
    width = a.moe_intermediate_size if a.is_moe else a.intermediate_size
    w.add_array(f"{arch}.attention.head_count_kv", [a.num_kv_heads if kind == FULL else 0 for kind in a.layer_types])
    w.add_array(f"{arch}.feed_forward_length", [width if a.layer_has_ffn(i) else 0 for i in range(a.num_layers)])
    w.add_key_length(a.head_dim)
    w.add_value_length(a.v_head_dim)
    w.add_layer_norm_eps(1e-5)
    _ssm_metadata(w, a, arch)
    if a.is_moe:
        w.add_expert_shared_count(1)
        w.add_expert_weights_norm(True)
        w.add_expert_weights_scale(1.0)
        w.add_expert_group_count(1)


def _mamba_metadata(w, a: Architecture, arch: str) -> None:
    """conversion/mamba.py `MambaModel.set_gguf_parameters` / `Mamba2Model.set_gguf_parameters`: no heads and no
    feed-forward (0 each), the scan's sizes (d_inner, d_state, the convolution's taps; Mamba's dt rank and, for
    Falcon-Mamba, dt, B and C normalised; Mamba2's heads as time_step_rank and its groups)."""
    w.add_block_count(a.num_layers)
    w.add_context_length(2**20)
    w.add_embedding_length(a.hidden_size)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_ssm_conv_kernel(a.linear_conv_kernel)
    w.add_ssm_inner_size(a.linear_v_heads * a.linear_v_head_dim)
    w.add_ssm_state_size(a.linear_k_head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    if arch == "mamba2":
        w.add_ssm_time_step_rank(a.linear_v_heads)
        w.add_ssm_group_count(a.linear_k_heads)
    else:
        w.add_ssm_time_step_rank(a.linear_dt_rank)
        w.add_ssm_dt_b_c_rms(a.mamba_dt_b_c_rms)
    w.add_file_type(1)  # MOSTLY_F16


def _ssm_metadata(w, a: Architecture, arch: str) -> None:
    """The recurrent layers' keys (src/llama-arch.cpp LLM_KV_SSM_*), written the same way for a delta-net
    (conversion/qwen.py) and for Mamba2 (conversion/granite.py): the convolution, d_state / the key width, the
    groups / key heads, the heads / value heads, and heads x head width."""
    w.add_uint32(f"{arch}.ssm.conv_kernel", a.linear_conv_kernel)
    w.add_uint32(f"{arch}.ssm.state_size", a.linear_k_head_dim)
    w.add_uint32(f"{arch}.ssm.group_count", a.linear_k_heads)
    w.add_uint32(f"{arch}.ssm.time_step_rank", a.linear_v_heads)
    w.add_uint32(f"{arch}.ssm.inner_size", a.linear_v_heads * a.linear_v_head_dim)


def _tensors(a: Architecture) -> Iterator[tuple[str, tuple[int, ...], np.dtype]]:
    """(GGUF name, shape, dtype) of each tensor the file holds; the parts of a fused tensor (DBRX's and MPT's attn_qkv:
    q, k and v of one name) stacked along their rows, as the converters write them."""
    rows: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    for t in gguf_tensors(a):
        # routers stay F32, as llama.cpp's converter writes them (conversion/base.py, "always in float32"),
        # and so do biases, as every tensor not named .weight (conversion/base.py), and a delta-net's convolution
        # (a Mamba2 layer's grouped norm and its A and D are two-dimensional in ggml, F32 all the same)
        f16 = t.is_matrix and t.role not in (Role.ROUTER, Role.NORM) and t.kind not in (CONV_KINDS | KEPT_F32_KINDS
                                                                                         | QUANTIZED_F32_KINDS)
        # DeepSeek-V4's token-id -> experts table is I32 (conversion/deepseek.py)
        dtype = np.dtype(np.int32 if t.kind == "tid2eid" else np.float16 if f16 else np.float32)
        name = gguf_name(t, a)
        if name in rows:
            shape, dtype = rows[name]
            rows[name] = ((shape[0] + t.shape[0], *shape[1:]), dtype)
        else:
            rows[name] = (t.shape, dtype)
    for name, (shape, dtype) in rows.items():
        yield name, shape, dtype


def write_f16(a: Architecture, path: Path) -> Path:
    """`a` as an F16 GGUF file at `path` (written to a temporary name, then renamed)."""
    import gguf

    arch = check_supported(a)
    tmp = path.with_suffix(".part")
    w = gguf.GGUFWriter(str(tmp), arch)
    _metadata(w, a, arch)
    rows = list(_tensors(a))
    for name, shape, dtype in rows:
        w.add_tensor_info(name, shape, dtype, int(np.prod(shape)) * dtype.itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    rng = np.random.default_rng(0)
    for _, shape, dtype in rows:
        if dtype == np.int32:  # expert ids, each row distinct and below the expert count
            w.write_tensor_data(np.broadcast_to(np.arange(shape[-1], dtype=np.int32), shape).copy())
        elif dtype == np.float32:
            w.write_tensor_data(np.ones(shape, dtype=np.float32))
        else:
            w.write_tensor_data((rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float16))
    w.close()
    tmp.replace(path)
    return path


def quantize(src: Path, dst: Path, mix: str, threads: int = 0) -> Path:
    """llama.cpp's quantizer: `src` (F16) to `mix` at `dst`."""
    import llama_cpp

    ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{mix.upper()}", None)
    if ftype is None:
        raise InputError(f"llama.cpp has no file type {mix!r}")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = threads or os.cpu_count() or 1
    tmp = dst.with_suffix(".part")
    if llama_cpp.llama_model_quantize(str(src).encode(), str(tmp).encode(), ctypes.byref(params)) != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"llama.cpp could not quantize to {mix}")
    tmp.replace(dst)
    return dst


def cache_dir() -> Path:
    from memviz.core.calibration import data_dir

    return data_dir() / "gguf"


BUILDER_VERSION = 2  # 2: routers written as F32 (files of version 1 are rebuilt)


def _key(a: Architecture) -> str:
    shape = {k: v for k, v in a.to_dict().items() if k not in ("name", "stored")} | {"builder": BUILDER_VERSION}
    return hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _trim(folder: Path, limit_bytes: int) -> None:
    files = sorted(folder.glob("*.gguf"), key=lambda p: p.stat().st_mtime)
    total = sum(p.stat().st_size for p in files)
    while files and total > limit_bytes:
        old = files.pop(0)
        total -= old.stat().st_size
        old.unlink(missing_ok=True)


def _check_room(a: Architecture, mix: str, folder: Path) -> None:
    """Refuse before writing when the F16 source and the mix would not fit on disk or in memory."""
    f16 = weight_bytes(a, get_weight_format("F16"))
    try:
        model = weight_bytes(a, get_weight_format(mix.upper()))
    except InputError:  # a mix memviz does not size (TQ1_0, ...): at most the F16 size
        model = f16
    free = shutil.disk_usage(folder).free
    if f16 + model > free:
        raise InputError(f"building {mix} needs {(f16 + model) / GB:.1f} GB on disk ({folder}); "
                         f"{free / GB:.1f} GB are free")
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else None
    if ram and model > ram:
        raise InputError(f"the {mix} model ({model / GB:.1f} GB) would not fit in this machine's "
                         f"{ram / GB:.1f} GB of memory")


def build(a: Architecture, mix: str, folder: Path | None = None, limit_bytes: int | None = None) -> Path:
    """A cached GGUF file of `a` at `mix` (F16, Q8_0, Q4_K_M, IQ4_XS, ...), built when missing."""
    folder = folder or cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    check_supported(a)
    key = _key(a)
    target = folder / f"{key}-{mix.upper()}.gguf"
    if target.is_file():
        target.touch()
        return target
    _check_room(a, mix, folder)
    f16 = folder / f"{key}-F16.gguf"
    if f16.is_file():
        f16.touch()  # in use: the trim below removes the least recently used files first
    else:
        write_f16(a, f16)
    if mix.upper() != "F16":
        quantize(f16, target, mix)
    limit = limit_bytes if limit_bytes is not None else int(float(os.environ.get("MEMVIZ_GGUF_CACHE_GB", 20)) * GB)
    target.touch()
    _trim(folder, max(limit, target.stat().st_size))
    return target


def build_in_child(a: Architecture, mix: str) -> Path:
    """`build` in a child process, so that the measuring process holds nothing of the random weights."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memviz-gguf-") as tmp:
        spec = Path(tmp) / "architecture.json"
        spec.write_text(json.dumps(a.to_dict()), encoding="utf-8")
        r = subprocess.run([sys.executable, "-m", "memviz.probe.gguf_build", str(spec), mix], capture_output=True,
                           text=True)
    lines = r.stdout.strip().splitlines()
    if r.returncode == 2:
        raise InputError(lines[-1] if lines else "building the GGUF file failed")
    if r.returncode or not lines:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"building the {mix} GGUF file failed: {tail}")
    return Path(lines[-1])


def main(argv: list[str]) -> int:
    """`python -m memviz.probe.gguf_build ARCHITECTURE.json MIX`: prints the built file's path."""
    a = Architecture.from_dict(json.loads(Path(argv[0]).read_text(encoding="utf-8")))
    try:
        print(build(a, argv[1]))
    except InputError as exc:
        print(exc)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover - run by build_in_child
    import sys

    sys.exit(main(sys.argv[1:]))

