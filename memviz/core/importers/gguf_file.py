"""Architecture and exact tensor sizes from a GGUF file, with the `gguf` package's reader.

`gguf.GGUFReader` (maintained with llama.cpp) memory-maps the file and parses
the header, the metadata key/values and the tensor infos; tensor data is never
touched. Metadata keys follow llama.cpp's `gguf-py/gguf/constants.py`:
`{arch}.block_count`, `{arch}.embedding_length`, `{arch}.feed_forward_length`,
`{arch}.attention.head_count[_kv]` (scalars or per-layer arrays),
`{arch}.attention.key_length` / `value_length`, `{arch}.attention.sliding_window`,
`{arch}.expert_count` / `expert_used_count` / `expert_feed_forward_length`,
`{arch}.attention.kv_lora_rank`, `{arch}.context_length`. Each tensor's stored
bytes are the reader's `n_bytes` (ggml type traits x shape).
"""

from __future__ import annotations

from math import prod
from pathlib import Path
from typing import Any

from memviz.core.arch import Architecture, StoredTensor, from_hf_config
from memviz.core.errors import InputError
from memviz.core.importers.classify import layer_of, role_of
from memviz.core.towers import AUDIO, Encoder

#: GGUF general.architecture -> transformers model_type
ARCH_TO_MODEL_TYPE = {
    "llama": "llama", "mistral": "mistral", "qwen2": "qwen2", "qwen2moe": "qwen2_moe", "qwen3": "qwen3",
    "qwen3moe": "qwen3_moe", "gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3_text", "phi3": "phi3",
    "gpt2": "gpt2", "gptneox": "gpt_neox", "falcon": "falcon", "deepseek2": "deepseek_v3", "gpt-oss": "gpt_oss",
    # llama.cpp's names (src/llama-arch.cpp LLM_ARCH_NAMES) of the further types memviz reads
    "glm4": "glm4", "glm4moe": "glm4_moe", "starcoder2": "starcoder2", "phi2": "phi", "arcee": "arcee", "apertus": "apertus",
    "gemma4": "gemma4_text", "gemma3n": "gemma3n_text", "deepseek32": "deepseek_v32", "glm-dsa": "glm_moe_dsa",
    "qwen35": "qwen3_5_text", "qwen35moe": "qwen3_5_moe_text", "qwen3next": "qwen3_next",
    "granitehybrid": "granitemoehybrid", "nemotron_h": "nemotron_h", "nemotron_h_moe": "nemotron_h", "lfm2": "lfm2",
    "lfm2moe": "lfm2_moe", "falcon-h1": "falcon_h1", "deepseek4": "deepseek_v4", "minimax-m3": "minimax_m3_vl_text",
    "hy_v4": "hy_v4", "laguna": "laguna", "command-r": "cohere", "hunyuan-dense": "hunyuan_v1_dense",
    "hunyuan-moe": "hunyuan_v1_moe", "cohere2moe": "cohere2_moe",
    "minimax-m2": "minimax_m2", "dots1": "dots1", "mistral4": "mistral4",  # DeepSeek-V2's layout (conversion/mistral3.py)
    # DeepSeek-OCR, OCR 2 and Unlimited-OCR: DeepSeek-V2's experts under plain multi-head attention (conversion/deepseek.py
    # `DeepseekV2Model` with is_ocr; src/models/deepseek2ocr.cpp), their window metadata only ("the decoder ignores it")
    "deepseek2-ocr": "deepseek_v2",
    "muse-glimmer": "muse_glimmer_text",
    "bailingmoe2": "bailing_moe_v2",  # Ling / Ring 2.0 (conversion/bailingmoe.py `BailingMoeV2Model`)
    "bailingmoe": "bailing_moe",  # Ling-lite / -plus (`BailingMoeModel`: q/k/v apart)
    # Llama's layout under names of their own (src/llama-arch.cpp): GraniteMoeShared's files are granitemoe's with a
    # shared MLP (conversion/granite.py), Ministral 3's are mistral3
    "granite": "granite", "granitemoe": "granitemoeshared", "smollm3": "smollm3", "exaone": "exaone",
    "minicpm3": "minicpm3", "mistral3": "ministral3", "dbrx": "dbrx", "mpt": "mpt",
    "bitnet": "bitnet",  # with attn_sub_norm and ffn_sub_norm a layer (src/models/bitnet.cpp)
    "chameleon": "chameleon",  # q / k norms with biases, {head_dim, heads} (src/models/chameleon.cpp)
    "dots3note": "dots3_note_text",  # per-layer MLA geometry, DSA in the full layers (src/models/dots3note.cpp)
    # with attention sinks (conversion/granite.py `GraniteSWAModel`, experts read from the file where it has them);
    # with q/k norms and experts (conversion/mellum.py)
    "granite_swa": "granite_swa", "mellum": "mellum",
    # Ollama's Llama 3.2 Vision files (ollama convert/convert_mllama.go `mllamaModel.KV`): llama.cpp has no mllama
    "mllama": "mllama_text_model",
    "kimi-linear": "kimi_linear",  # Kimi delta attention beside MLA layers (src/models/kimi-linear.cpp)
    "mamba": "mamba",  # Falcon-Mamba too, by ssm.dt_b_c_rms (`_mamba_config`)
    "mamba2": "mamba2",
    "jamba": "jamba",  # Mamba layers beside attention layers, experts every other layer (src/models/jamba.cpp)
    # read by their own keys below (`_llama4_config`, `_falcon_config`, ...) or by the generic
    # ones, each checked against the files llama.cpp's converter writes (tests/data/llamacpp/converted_layouts.json)
    "llama4": "llama4_text", "qwen2vl": "qwen2", "qwen3vl": "qwen3", "qwen3vlmoe": "qwen3_moe", "ernie4_5": "ernie4_5",
    "ernie4_5-moe": "ernie4_5_moe", "exaone4": "exaone4", "exaone-moe": "exaone_moe", "starcoder": "gpt_bigcode",
    "olmo": "olmo", "olmo2": "olmo2", "olmoe": "olmoe", "cohere2": "cohere2", "stablelm": "stablelm",
    "seed_oss": "seed_oss", "phimoe": "phimoe", "nemotron": "nemotron", "bloom": "bloom", "afmoe": "afmoe",
    "hy_v3": "hy_v3", "jais2": "jais2", "hunyuan_vl": "hunyuan_v1_dense",  # HunYuan-VL's: the dense decoder
}
#: llama.cpp's hybrid architectures whose gated delta-net layers memviz models (src/models/qwen35.cpp, ...)
DELTANET_ARCHS = frozenset({"qwen35", "qwen35moe", "qwen3next"})
MAMBA2_ARCHS = frozenset({"granitehybrid", "nemotron_h", "nemotron_h_moe", "falcon-h1"})
SHORTCONV_ARCHS = frozenset({"lfm2", "lfm2moe"})  # LFM2's short convolutions (src/models/lfm2.cpp, lfm2moe.cpp)
KDA_ARCHS = frozenset({"kimi-linear"})  # Kimi delta attention beside MLA layers (src/models/kimi-linear.cpp)
MAMBA_ARCHS = frozenset({"mamba", "mamba2", "jamba"})  # Mamba / Falcon-Mamba and Mamba2 blocks; Jamba's hybrid
RECURRENT_ARCHS = DELTANET_ARCHS | MAMBA2_ARCHS | SHORTCONV_ARCHS | KDA_ARCHS | MAMBA_ARCHS  # the ones memviz models
MAX_TENSORS = 1_000_000
MAX_KEYS = 100_000
MAX_STRING_ARRAY = 8_000_000  # vocabularies and merge lists are a few 100 k entries
#: GGUF value types (gguf-py `GGUFValueType`) -> bytes of one element; 8 STRING and 9 ARRAY are read apart
_SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


def check_declared_sizes(path: Path) -> None:
    """Walk the header as the GGUF spec lays it out (magic, version, tensor count, key count, then each key and
    value) and refuse, before gguf's reader walks them, counts and lengths larger than the file: a 174-byte
    file declaring a 2**40-element array would otherwise be read element by element for ever."""
    import struct

    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(24)
        if len(head) < 24:
            raise InputError(f"{path}: truncated GGUF header ({len(head)} bytes)")
        version, tensors, keys = struct.unpack("<IQQ", head[4:24])
        if tensors > MAX_TENSORS or keys > MAX_KEYS:
            raise InputError(f"{path}: declares {tensors:,d} tensors and {keys:,d} metadata keys, more than a "
                             "model file holds")

        def need(n: int, what: str) -> None:
            if n < 0 or fh.tell() + n > size:
                raise InputError(f"{path}: {what} runs past the end of the file ({size:,d} bytes)")

        def u64() -> int:
            need(8, "a length")
            return struct.unpack("<Q", fh.read(8))[0]

        def skip_string(what: str) -> None:
            n = u64()
            need(n, what)
            fh.seek(n, 1)

        for _ in range(keys):
            skip_string("a metadata key")
            need(4, "a value type")
            kind = struct.unpack("<I", fh.read(4))[0]
            _skip_value(fh, kind, need, u64, skip_string, path)


def _skip_value(fh, kind: int, need, u64, skip_string, path: Path) -> None:
    import struct

    if kind in _SCALAR_BYTES:
        need(_SCALAR_BYTES[kind], "a value")
        fh.seek(_SCALAR_BYTES[kind], 1)
    elif kind == _STRING:
        skip_string("a string value")
    elif kind == _ARRAY:
        need(4, "an array type")
        item = struct.unpack("<I", fh.read(4))[0]
        count = u64()
        if item in _SCALAR_BYTES:
            need(count * _SCALAR_BYTES[item], f"an array of {count:,d} values")
            fh.seek(count * _SCALAR_BYTES[item], 1)
        elif item == _STRING:
            if count > MAX_STRING_ARRAY:
                raise InputError(f"{path}: a string array of {count:,d} entries is more than any model has")
            need(count * 8, f"an array of {count:,d} strings")
            for _ in range(count):
                skip_string("a string in an array")
        else:
            raise InputError(f"{path}: unsupported array element type {item}")
    else:
        raise InputError(f"{path}: unknown GGUF value type {kind}")


def _fields(reader, warnings: list[str]) -> dict[str, Any]:
    """Metadata values (the token list as its length); a value the reader cannot decode is skipped with a
    warning naming it, and is an error later only if memory depends on it."""
    out = {}
    for key, field in reader.fields.items():
        if key.startswith("tokenizer.ggml.") and key not in ("tokenizer.ggml.tokens",):
            continue
        try:
            out[key] = field.contents() if key != "tokenizer.ggml.tokens" else len(field.data)
        except (ValueError, TypeError, IndexError, UnicodeDecodeError, OverflowError) as exc:
            warnings.append(f"GGUF field {key} could not be read ({type(exc).__name__}); ignored")
    return out


def _scalar(values: Any, key: str, warnings: list[str]) -> int | None:
    """A metadata value that may be a per-layer array: its maximum (with a note if layers differ)."""
    if values is None:
        return None
    try:
        if isinstance(values, (list, tuple)):
            nums = [int(v) for v in values]
            if not nums:
                return None
            if len(set(nums)) > 1:
                warnings.append(f"{key} differs per layer ({min(nums)}..{max(nums)}); memviz uses the largest")
            return max(nums)
        return int(values)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"GGUF metadata {key} is not a whole number ({values!r:.40})") from None


def _vocab_size(meta: dict[str, Any], arch: str, shapes: dict[str, tuple[int, ...]], warnings: list[str]) -> int | None:
    """The vocabulary as llama.cpp takes it (`llama-vocab.cpp`: the length of tokenizer.ggml.tokens), else the
    `{arch}.vocab_size` key, else the rows of token_embd / output; a source other than the token list is noted."""
    tokens = meta.get("tokenizer.ggml.tokens")
    if isinstance(tokens, int) and tokens > 0:
        return tokens
    key = _scalar(meta.get(f"{arch}.vocab_size"), "vocab_size", warnings)
    if key:
        warnings.append(f"vocabulary size {key:,d} from {arch}.vocab_size (the file has no token list)")
        return key
    for name in ("token_embd.weight", "output.weight"):
        if len(shapes.get(name, ())) == 2:
            warnings.append(f"vocabulary size {shapes[name][0]:,d} from the rows of {name} (no token list, "
                            f"no {arch}.vocab_size)")
            return shapes[name][0]
    return None


def config_from_gguf(meta: dict[str, Any], tensor_names: set[str],
                     shapes: dict[str, tuple[int, ...]] | None = None) -> tuple[dict[str, Any], list[str]]:
    """An HF-style config dict built from GGUF metadata (and tensor shapes [out, in] where metadata is
    silent), and notes on what was assumed."""
    warnings: list[str] = []
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        raise InputError("GGUF metadata has no general.architecture")

    blocks = _scalar(meta.get(f"{arch}.block_count"), "block_count", warnings)
    nextn = _scalar(meta.get(f"{arch}.nextn_predict_layers"), "nextn_predict_layers", warnings) or 0
    if blocks is not None and not 0 <= nextn < blocks:
        raise InputError(f"GGUF metadata nextn_predict_layers ({nextn}) leaves no decoder layer of {blocks}")

    def get(suffix: str) -> Any:
        """A key of `arch`; a per-layer array that lists the multi-token-prediction blocks too cut to the decoder's
        layers (src/llama-hparams.cpp: n_layer() = n_layer_all - n_layer_nextn, the rest skipped unless loaded)."""
        value = meta.get(f"{arch}.{suffix}")
        if nextn and isinstance(value, (list, tuple)) and len(value) == blocks:
            return value[:blocks - nextn]
        return value

    recurrent = [k for k, v in meta.items() if k.startswith((f"{arch}.ssm.", f"{arch}.wkv", f"{arch}.shortconv"))
                 and v] + ([f"{arch}.full_attention_interval"] if get("full_attention_interval") else [])
    # llama.cpp's recurrent / hybrid architectures (Mamba, RWKV, LFM2, ...) but the delta-nets and Granite-4.0-H
    if recurrent and arch not in RECURRENT_ARCHS:
        raise InputError(f"GGUF architecture '{arch}' has recurrent layers ({recurrent[0]}); memviz does not model "
                         "recurrent / linear-attention layers, so its figures would be wrong")

    model_type = ARCH_TO_MODEL_TYPE.get(arch, arch)
    n_experts = _scalar(get("expert_count"), "expert_count", warnings) or 0
    if arch == "llama" and n_experts:
        model_type = "mixtral"
    if arch == "deepseek2" and get("expert_gating_func") != 2 and not any("exp_probs_b" in n for n in tensor_names):
        model_type = "deepseek_v2"  # softmax routing without V3's score-correction bias (gguf ExpertGatingFuncType)
    cfg: dict[str, Any] = {
        "model_type": model_type,
        "num_hidden_layers": blocks - nextn if blocks is not None else None,
        "hidden_size": _scalar(get("embedding_length"), "embedding_length", warnings),
        "num_attention_heads": _scalar(get("attention.head_count"), "head_count", warnings),
        "num_key_value_heads": _scalar(get("attention.head_count_kv"), "head_count_kv", warnings),
        "intermediate_size": _scalar(get("feed_forward_length"), "feed_forward_length", warnings),
        "max_position_embeddings": _scalar(get("context_length"), "context_length", warnings) or 0,
        "vocab_size": _vocab_size(meta, arch, shapes or {}, warnings),
        "tie_word_embeddings": "output.weight" not in tensor_names,
    }
    if nextn:
        cfg["num_nextn_predict_layers"] = nextn
    key_length = _scalar(get("attention.key_length"), "key_length", warnings)
    value_length = _scalar(get("attention.value_length"), "value_length", warnings)
    if key_length:
        cfg["head_dim"] = key_length
    window = _scalar(get("attention.sliding_window"), "sliding_window", warnings)
    if window:
        cfg["sliding_window"] = window
        if model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
            cfg["use_sliding_window"] = True
        cfg.update(_sliding_layers(get("attention.sliding_window_pattern"), cfg["num_hidden_layers"], arch))
    if n_experts:
        cfg["num_experts"] = n_experts
        cfg["num_experts_per_tok"] = _scalar(get("expert_used_count"), "expert_used_count", warnings)
        cfg["moe_intermediate_size"] = _scalar(get("expert_feed_forward_length"), "expert_feed_forward_length", warnings) \
            or cfg["intermediate_size"]
        shared = _scalar(get("expert_shared_feed_forward_length"), "expert_shared_feed_forward_length", warnings)
        if shared:
            cfg["shared_expert_intermediate_size"] = shared
        cfg["n_shared_experts"] = _scalar(get("expert_shared_count"), "expert_shared_count", warnings) or 0
        cfg["first_k_dense_replace"] = _leading_dense(get, tensor_names, cfg["num_hidden_layers"], warnings)
        if arch in SHARED_COUNT_NAMES:
            cfg[SHARED_COUNT_NAMES[arch]] = _shared_count(shapes or {}, cfg)
    if arch in ("bailingmoe", "bailingmoe2"):  # src/models/bailingmoe2.cpp: q/k norms, score bias where present
        cfg.update(use_qk_norm="blk.0.attn_q_norm.weight" in tensor_names,
                   moe_router_enable_expert_bias=any(n.endswith("exp_probs_b.bias") for n in tensor_names),
                   num_shared_experts=cfg.pop("n_shared_experts", 0))
        if arch == "bailingmoe":  # src/models/bailingmoe.cpp: the shared MLP is n_ff_exp x n_expert_shared wide
            cfg.pop("shared_expert_intermediate_size", None)
    if arch == "minicpm3" and not value_length:  # src/models/minicpm3.cpp: V heads n_embd_head_v wide, n_embd /
        value_length = (cfg["hidden_size"] or 0) // (cfg["num_attention_heads"] or 1)  # n_head without the key
    kv_lora = _scalar(get("attention.kv_lora_rank"), "kv_lora_rank", warnings)
    if kv_lora:
        rope = _scalar(get("rope.dimension_count"), "rope.dimension_count", warnings) or 64
        k_mla = _scalar(get("attention.key_length_mla"), "key_length_mla", warnings) or key_length
        v_mla = _scalar(get("attention.value_length_mla"), "value_length_mla", warnings) or value_length
        cfg.update(kv_lora_rank=kv_lora, qk_rope_head_dim=rope, qk_nope_head_dim=(k_mla or rope) - rope,
                   v_head_dim=v_mla, q_lora_rank=_scalar(get("attention.q_lora_rank"), "q_lora_rank", warnings))
        cfg.pop("head_dim", None)
        if get("attention.key_length_mla") is None and arch != "minicpm3":  # converted before llama.cpp split
            # attn_kv_b (PR #12801); MiniCPM3's is never split (`memviz.core.engines.llamacpp.latent_cache`)
            cfg["_mla_kv_b_unsplit"] = True
            warnings.append("this GGUF predates llama.cpp's MLA cache (no key_length_mla): llama.cpp runs it per "
                            "head and caches full K and V per head instead of the latent; a re-converted file caches far less")
    if arch == "qwen3next" and any(n.endswith(".ssm_in.weight") for n in tensor_names):
        cfg["_deltanet_ssm_in"] = True  # converted before llama.cpp split in_proj_qkvz into attn_qkv and attn_gate
    indexer = _scalar(get("attention.indexer.key_length"), "indexer.key_length", warnings)
    if indexer:  # DeepSeek sparse attention: which layers run an indexer ("full"), its heads, key width and top-k
        kinds = get("attention.indexer.types")
        cfg.update(index_head_dim=indexer, index_n_heads=_scalar(get("attention.indexer.head_count"),
                                                                  "indexer.head_count", warnings))
        if (top_k := get("attention.indexer.top_k")) is not None:
            cfg["index_topk"] = _scalar(top_k, "indexer.top_k", warnings)
        if isinstance(kinds, (list, tuple)):
            cfg["indexer_types"] = ["full" if str(k).lower() in ("full", "1", "true") else "shared" for k in kinds]
    if arch in DELTANET_ARCHS:
        cfg.update(_deltanet_config(get, tensor_names, cfg, warnings))
    if arch == "granitehybrid":
        cfg.update(_granite_hybrid_config(get, cfg, warnings))
    if arch in ("nemotron_h", "nemotron_h_moe"):
        cfg.update(_nemotron_h_config(get, cfg, warnings))
    if arch in SHORTCONV_ARCHS:
        cfg.update(_lfm2_config(get, cfg))
    if arch == "falcon-h1":
        cfg.update(_falcon_h1_config(get, tensor_names, warnings))
    if arch in KDA_ARCHS:
        cfg.update(_kimi_linear_config(get, cfg, warnings))
    if arch == "mamba":
        cfg.update(_mamba_config(get, warnings))
    if arch == "mamba2":
        cfg.update(_mamba2_only_config(get, cfg, warnings))
    if arch == "jamba":
        cfg.update(_jamba_config(get, tensor_names, cfg, warnings))
    if arch == "deepseek4":
        cfg.update(_deepseek4_config(get, cfg, warnings))
    if arch == "mllama":  # the cross-attention layers' indices (ollama convert/convert_mllama.go)
        layers = get("attention.cross_attention_layers")
        cfg["cross_attention_layers"] = [int(i) for i in layers] if isinstance(layers, list) else []
    if arch == "minimax-m3":
        cfg.update(_minimax_m3_config(cfg))
    if arch == "laguna":
        cfg.update(_laguna_config(get, shapes or {}, cfg))
        warnings[:] = [w for w in warnings if not w.startswith("head_count differs")]
    if arch == "dots3note":
        cfg.update(_dots3_config(get, cfg, warnings))
        warnings[:] = [w for w in warnings if not w.startswith("head_count differs")]
    if arch == "llama4":
        cfg.update(_llama4_config(get, cfg, warnings))
    if arch in ("qwen3vl", "qwen3vlmoe"):  # src/models/qwen3vl.cpp: deepstack layers widen the input embedding
        cfg["deepstack_layers"] = _scalar(get("n_deepstack_layers"), "n_deepstack_layers", warnings) or 0
    if arch == "falcon":
        cfg.update(_falcon_config(tensor_names, cfg))
    if arch == "olmo2" and window:  # src/models/olmo2.cpp: a window makes OLMo 3's sliding layers
        cfg["model_type"] = "olmo3"
    if arch in ("glm4", "glm4moe"):  # src/models/glm4.cpp, glm4-moe.cpp: q / k / v biases where the file holds
        # them (GLM-4-0414, GLM-4.5 and GLM-4.5V do)
        cfg["attention_bias"] = "blk.0.attn_q.bias" in tensor_names
    if arch == "ernie4_5-moe":  # src/models/ernie4-5.cpp: experts from the leading dense count, every step-th layer
        cfg.update(moe_layer_start_index=cfg.pop("first_k_dense_replace"), moe_num_experts=n_experts,
                   moe_layer_interval=_scalar(get("interleave_moe_layer_step"), "interleave_moe_layer_step",
                                              warnings) or 1)
    if arch == "cohere2moe":  # src/models/cohere2moe.cpp: experts n_ff_exp wide, the leading dense layers n_ff
        cfg.update(intermediate_size=cfg["moe_intermediate_size"], prefix_dense_intermediate_size=cfg["intermediate_size"])
    if "position_embd.weight" in (shapes or {}):  # GPT-2 / StarCoder: pos_embd is {n_embd, n_ctx_train}
        cfg["n_positions"] = shapes["position_embd.weight"][0]
    if arch == "hy_v4":  # src/models/hy-v4.cpp: the hyper-connections' streams; indexer_types read above
        cfg["hc_mult"] = _scalar(get("hyper_connection.count"), "hyper_connection.count", warnings)
    if arch in MAMBA2_ARCHS | SHORTCONV_ARCHS | KDA_ARCHS | MAMBA_ARCHS:  # KV heads per layer, 0 in a recurrent one
        warnings[:] = [w for w in warnings if not w.startswith(("head_count_kv differs", "feed_forward_length differs"))]
    if arch == "gemma4":  # per-layer values read layer by layer, value_length being the full layers' width
        cfg.update(_gemma4_config(get, tensor_names, shapes or {}, cfg))
        warnings[:] = [w for w in warnings if not w.startswith(("head_count_kv differs", "feed_forward_length differs"))]
        value_length = None
    if arch == "gemma3n":
        cfg.update(_gemma3n_config(get, shapes or {}, cfg))
        warnings[:] = [w for w in warnings if not w.startswith("feed_forward_length differs")]
    missing = [k for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size") if not cfg.get(k)]
    if missing:
        raise InputError(f"GGUF metadata for '{arch}' lacks {', '.join(missing)}")
    if arch not in ARCH_TO_MODEL_TYPE:
        warnings.append(f"GGUF architecture '{arch}' is read with the generic rules")
    cfg["_value_length"] = value_length
    return cfg, warnings


#: llama.cpp 0c1e570's `load_swa_pattern(ml, period, dense_first)` per architecture (src/models/afmoe.cpp,
#: cohere2.cpp, cohere2moe.cpp, exaone4.cpp, exaone-moe.cpp, llama4.cpp, mellum.cpp, muse-glimmer.cpp, olmo2.cpp):
#: the period a file without `attention.sliding_window_pattern` runs with, or that the key gives as one number
SWA_PERIODS = {"afmoe": (4, False), "cohere2": (4, False), "cohere2moe": (4, True), "exaone4": (4, False),
               "exaone-moe": (4, False), "llama4": (4, False), "mellum": (4, False), "muse-glimmer": (4, False),
               "olmo2": (4, False)}


def _sliding_layers(pattern: Any, n_layers: int | None, arch: str) -> dict[str, Any]:
    """Which layers slide, as llama.cpp reads it: one flag a layer in `attention.sliding_window_pattern` (llama.cpp
    0c1e570 conversion/exaone.py, command_r.py, mimo.py, olmo.py, granite.py, ...; gguf-py
    `add_sliding_window_pattern`); else, for the architectures of `SWA_PERIODS`, llama_hparams::set_swa_pattern's
    period (src/llama-hparams.cpp: layer il slides unless il % period == period - 1, or == 0 when dense first); {}
    for the others, whose type's own rule reads an older single period, and for the architectures whose layer kinds
    are read with their own fields."""
    if arch == "gemma4" or arch in RECURRENT_ARCHS:
        return {}
    if isinstance(pattern, (list, tuple)):
        if len(pattern) != n_layers:
            raise InputError(f"GGUF metadata sliding_window_pattern lists {len(pattern)} layers for {n_layers}")
        return {"layer_types": ["sliding_attention" if bool(v) else "full_attention" for v in pattern]}
    if arch not in SWA_PERIODS or not n_layers:
        return {}
    default, dense_first = SWA_PERIODS[arch]
    period = default if pattern is None else _scalar(pattern, "sliding_window_pattern", [])
    slides = [period == 0 or (i % period != 0 if dense_first else i % period < period - 1) for i in range(n_layers)]
    return {"layer_types": ["sliding_attention" if v else "full_attention" for v in slides]}


#: architectures whose model type counts its shared experts (each n_ff_exp wide) under a name of its own
#: (`memviz.core.arch._moe_fields`: ExaoneMoe / HYV3 / Afmoe num_shared_experts, ERNIE moe_num_shared_experts)
SHARED_COUNT_NAMES = {"exaone-moe": "num_shared_experts", "hy_v3": "num_shared_experts", "afmoe": "num_shared_experts",
                      "ernie4_5-moe": "moe_num_shared_experts"}
LLAMA4_CHUNK_TOKENS = 8192  # src/models/llama4.cpp `load_arch_hparams`: n_swa fixed, whatever the checkpoint says


def _leading_dense(get, tensor_names: set[str], n_layers: int | None, warnings: list[str]) -> int:
    """The dense layers before the first one with experts: `leading_dense_block_count`, else, in a file, the layers
    before the first router (llama.cpp's loaders make the experts optional where the key is absent, as
    src/models/hy-v3.cpp does), else none."""
    key = _scalar(get("leading_dense_block_count"), "leading_dense_block_count", warnings)
    if key is not None or not tensor_names:
        return key or 0
    routed = [i for i in range(n_layers or 0) if f"blk.{i}.ffn_gate_inp.weight" in tensor_names]
    return routed[0] if routed else 0


def _shared_count(shapes: dict[str, tuple[int, ...]], cfg: dict[str, Any]) -> int:
    """Shared experts as a count of routed experts' widths: the file's ffn_up_shexp where it has one (what
    llama.cpp loads), else expert_shared_feed_forward_length, else expert_shared_count."""
    width = next((shape[0] for name, shape in shapes.items() if name.endswith(".ffn_up_shexp.weight")), None)
    width = width or cfg.get("shared_expert_intermediate_size")
    expert = cfg.get("moe_intermediate_size") or 0
    if width and expert and width % expert == 0:
        return width // expert
    return cfg.get("n_shared_experts") or 0


def _llama4_config(get, cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Llama 4 as llama.cpp 0c1e570 reads it (src/models/llama4.cpp): experts in every interleave_moe_layer_step-th
    layer beside a shared expert as wide as one routed expert, the other layers feed_forward_length wide; chunked
    attention over 8,192 tokens in three layers of four (`load_swa_pattern(ml, 4)`, or the file's pattern), none
    where the file says sliding_window 0. Llama4TextConfig's names: chunked layers are those with RoPE
    (no_rope_layers 1), attention_chunk_size their chunk."""
    n = cfg["num_hidden_layers"] or 0
    step = _scalar(get("interleave_moe_layer_step"), "interleave_moe_layer_step", warnings)
    if not step:
        raise InputError("a llama4 GGUF needs interleave_moe_layer_step (llama.cpp requires it)")
    chunked = get("attention.sliding_window") != 0
    kinds = _sliding_layers(get("attention.sliding_window_pattern"), n, "llama4")["layer_types"] if chunked else []
    return {"intermediate_size": cfg.get("moe_intermediate_size"), "intermediate_size_mlp": cfg["intermediate_size"],
            "interleave_moe_layer_step": step, "first_k_dense_replace": 0, "sliding_window": None,
            "attention_chunk_size": LLAMA4_CHUNK_TOKENS if chunked else None,
            "no_rope_layers": [int(k == "sliding_attention") for k in kinds] if chunked else [0] * n}


def _falcon_config(tensor_names: set[str], cfg: dict[str, Any]) -> dict[str, Any]:
    """Falcon as llama.cpp reads it (src/models/falcon.cpp): a second norm a layer (attn_norm_2) marks the new
    decoder (Falcon-40B / 180B: its own KV heads, head_count_kv); without it, Falcon-7B's, whose KV heads are
    head_count_kv (one: multi-query); the MLP feed_forward_length wide."""
    new = "blk.0.attn_norm_2.weight" in tensor_names
    kv = cfg.get("num_key_value_heads") or 1
    return {"new_decoder_architecture": new, "num_kv_heads": kv, "multi_query": kv == 1,
            "ffn_hidden_size": cfg["intermediate_size"], "parallel_attn": True}


def _per_layer(values: Any, n_layers: int, key: str) -> list[int]:
    """A per-layer metadata value as one whole number per layer (a scalar repeated)."""
    if not isinstance(values, (list, tuple)):
        values = [values] * n_layers
    if len(values) != n_layers:
        raise InputError(f"GGUF metadata {key} lists {len(values)} values for {n_layers} layers")
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"GGUF metadata {key} is not a list of whole numbers") from None


def _gemma4_config(get, tensor_names: set[str], shapes: dict[str, tuple[int, ...]], cfg: dict[str, Any]
                   ) -> dict[str, Any]:
    """Gemma 4's fields as llama.cpp's converter writes them (conversion/gemma.py `Gemma4Model`): which layers
    slide (`attention.sliding_window_pattern`), the full layers' head width (`key_length`) and the sliding ones'
    (`key_length_swa`), KV heads and feed-forward widths per layer, the layers reusing K/V, the per-layer
    embedding width; a full layer without attn_v takes V from K."""
    n = cfg["num_hidden_layers"]
    if not n:
        return {}
    pattern = get("attention.sliding_window_pattern")
    swa = [bool(v) for v in pattern] if isinstance(pattern, (list, tuple)) else [True] * n
    if len(swa) != n:
        raise InputError(f"GGUF metadata sliding_window_pattern lists {len(swa)} layers for {n}")
    heads = _per_layer(get("attention.head_count_kv"), n, "head_count_kv")
    ff = _per_layer(get("feed_forward_length"), n, "feed_forward_length")
    full = [i for i in range(n) if not swa[i]]
    shared = int(get("attention.shared_kv_layers") or 0)
    per_layer = int(get("embedding_length_per_layer_input") or 0)
    out: dict[str, Any] = {
        "layer_types": ["sliding_attention" if s else "full_attention" for s in swa],
        "head_dim": int(get("attention.key_length_swa") or cfg.get("head_dim") or 0),
        "num_key_value_heads": next((heads[i] for i in range(n) if swa[i]), heads[0]),
        "per_layer_config": {str(i): {"head_dim": cfg.get("head_dim"), "num_key_value_heads": heads[i]} for i in full},
        "attention_k_eq_v": bool(full) and not any(f"blk.{i}.attn_v.weight" in tensor_names for i in full),
        "num_kv_shared_layers": shared, "intermediate_size": ff[0],
        "use_double_wide_mlp": shared > 0 and ff[-1] == 2 * ff[0],
        "hidden_size_per_layer_input": per_layer,
        "vocab_size_per_layer_input": shapes.get("per_layer_token_embd.weight", (cfg["vocab_size"],))[0] if per_layer
        else 0,
    }
    if cfg.get("num_experts"):
        out.update(enable_moe_block=True, top_k_experts=cfg["num_experts_per_tok"])
    return out


def _gemma3n_config(get, shapes: dict[str, tuple[int, ...]], cfg: dict[str, Any]) -> dict[str, Any]:
    """Gemma 3n's fields as llama.cpp's converter writes them (conversion/gemma.py `Gemma3NModel.set_gguf_parameters`):
    the MLP widths (one, or one a layer), the layers reusing K/V, AltUp's stream count, the per-layer embedding
    width; Laurel's rank from blk.0.laurel_l's rows, as no key holds it; the per-layer table's rows (padded to
    vocab_size by the converter)."""
    n = cfg["num_hidden_layers"]
    if not n:
        return {}
    widths = _per_layer(get("feed_forward_length"), n, "feed_forward_length")
    per_layer = int(get("embedding_length_per_layer_input") or 0)
    return {"intermediate_size": widths if len(set(widths)) > 1 else widths[0],
            "num_kv_shared_layers": int(get("attention.shared_kv_layers") or 0),
            "altup_num_inputs": int(get("altup.num_inputs") or 4),
            "laurel_rank": shapes.get("blk.0.laurel_l.weight", (64,))[0],
            "hidden_size_per_layer_input": per_layer,
            "vocab_size_per_layer_input": shapes.get("per_layer_token_embd.weight", (cfg["vocab_size"],))[0]}


def _deltanet_config(get, tensor_names: set[str], cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Qwen3.5 / Qwen3-Next's delta-net fields as llama.cpp's converter writes them (conversion/qwen.py
    `Qwen3NextModel.set_gguf_parameters`: ssm.conv_kernel, ssm.state_size = the key head width, ssm.group_count =
    key heads, ssm.time_step_rank = value heads, ssm.inner_size = value heads x value width). Which layers are
    delta-nets: the file's tensors say (a layer with ssm_conv1d); a log, which prints no tensor names, says it as
    llama.cpp reads it (src/models/qwen35.cpp `load_arch_hparams`: `attention.recurrent_layers`, else every
    `full_attention_interval`-th layer, 4 by default, is full attention). A multi-token-prediction block the
    converter appends (`nextn_predict_layers`) is left out by `config_from_gguf`."""
    n = cfg["num_hidden_layers"] or 0
    v_heads = _scalar(get("ssm.time_step_rank"), "ssm.time_step_rank", warnings)
    inner = _scalar(get("ssm.inner_size"), "ssm.inner_size", warnings)
    if not (v_heads and inner and n > 0):
        raise InputError("GGUF metadata lacks the delta-net's ssm.time_step_rank / ssm.inner_size")
    return {"num_hidden_layers": n, **_delta_net_layers(get, tensor_names, n, warnings),
            "linear_conv_kernel_dim": _scalar(get("ssm.conv_kernel"), "ssm.conv_kernel", warnings),
            "linear_key_head_dim": _scalar(get("ssm.state_size"), "ssm.state_size", warnings),
            "linear_num_key_heads": _scalar(get("ssm.group_count"), "ssm.group_count", warnings),
            "linear_num_value_heads": v_heads, "linear_value_head_dim": inner // v_heads}


def _mamba_config(get, warnings: list[str]) -> dict[str, Any]:
    """A mamba file as llama.cpp reads it (src/models/mamba.cpp `load_arch_hparams`; conversion/mamba.py
    `MambaModel` writes it): no heads and no feed-forward, the scan's d_inner, d_state, dt rank and convolution taps;
    dt, B and C normalised (ssm.dt_b_c_rms) make it Falcon-Mamba; in_proj and out_proj never biased."""
    keys = {"intermediate_size": "ssm.inner_size", "state_size": "ssm.state_size",
            "time_step_rank": "ssm.time_step_rank", "conv_kernel": "ssm.conv_kernel"}
    cfg = {field: _scalar(get(key), key, warnings) for field, key in keys.items()}
    if not all(cfg.values()):
        raise InputError("GGUF metadata lacks the Mamba layers' ssm.inner_size / state_size / time_step_rank / "
                         "conv_kernel")
    return {**cfg, "model_type": "falcon_mamba" if get("ssm.dt_b_c_rms") else "mamba", "use_bias": False,
            "use_conv_bias": True, "max_position_embeddings": 0, "num_attention_heads": 1, "num_key_value_heads": 1}


def _jamba_config(get, tensor_names: set[str], cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Jamba as llama.cpp reads it (src/models/jamba.cpp `load_arch_hparams`; conversion/jamba.py writes it): a layer
    is Mamba where its `attention.head_count_kv` entry is 0, its ssm.* keys Mamba's (d_inner, d_state, dt rank,
    taps); a layer holds experts where the file has its router (ffn_gate_inp), the dense MLP elsewhere."""
    kv = _kv_heads_per_layer(get, cfg, "jamba", "Mamba")
    mamba = _mamba_config(get, warnings)
    out = {"layer_types": ["mamba" if not v else "attention" for v in kv], "num_key_value_heads": max(kv, default=1),
           "mamba_expand": _expansion(mamba["intermediate_size"], cfg), "mamba_d_state": mamba["state_size"],
           "mamba_dt_rank": mamba["time_step_rank"], "mamba_d_conv": mamba["conv_kernel"], "mamba_proj_bias": False,
           "mamba_conv_bias": True}
    if cfg.get("num_experts"):
        out["mlp_layer_types"] = ["sparse" if f"blk.{i}.ffn_gate_inp.weight" in tensor_names else "dense"
                                  for i in range(len(kv))]
    return out


def _mamba2_only_config(get, cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """A mamba2 file as llama.cpp reads it (src/models/mamba2.cpp `load_arch_hparams`; conversion/mamba.py
    `Mamba2Model` writes it): no heads and no feed-forward, the Mamba2 keys (`_mamba2_keys`); the convolution always
    biased, in_proj and out_proj never."""
    ssm = _mamba2_keys(get, warnings)
    return {"num_heads": ssm["heads"], "head_dim": ssm["head_dim"], "expand": _expansion(ssm["inner"], cfg),
            "state_size": ssm["state"], "n_groups": ssm["groups"], "conv_kernel": ssm["conv"], "use_bias": False,
            "use_conv_bias": True, "max_position_embeddings": 0, "num_attention_heads": 1, "num_key_value_heads": 1}


def _kv_heads_per_layer(get, cfg: dict[str, Any], arch: str, recurrent: str) -> list[int]:
    """A hybrid file's `attention.head_count_kv`, one entry a layer, 0 marking a `recurrent` layer (the converters
    write it so: conversion/granite.py, jamba.py)."""
    kv = get("attention.head_count_kv")
    if not isinstance(kv, (list, tuple)) or len(kv) != (cfg["num_hidden_layers"] or 0):
        raise InputError(f"a {arch} GGUF needs attention.head_count_kv per layer (0 marks a {recurrent} layer)")
    return [int(v) for v in kv]


def _expansion(inner: int, cfg: dict[str, Any]) -> int:
    """A mixer's width (ssm.inner_size) as a multiple of the embedding length."""
    hidden = cfg["hidden_size"] or 0
    if not hidden or inner % hidden:
        raise InputError("GGUF metadata's ssm.inner_size is no multiple of the embedding length")
    return inner // hidden


def _mamba2_keys(get, warnings: list[str]) -> dict[str, int]:
    """A Mamba2 file's ssm.* keys as llama.cpp names them (src/llama-arch.cpp LLM_KV_SSM_*): heads (time_step_rank),
    heads x head width (inner_size), d_state, groups, convolution taps."""
    heads = _scalar(get("ssm.time_step_rank"), "ssm.time_step_rank", warnings)
    inner = _scalar(get("ssm.inner_size"), "ssm.inner_size", warnings)
    if not (heads and inner) or inner % heads:
        raise InputError("GGUF metadata lacks a consistent ssm.time_step_rank / ssm.inner_size for the Mamba2 layers")
    return {"heads": heads, "inner": inner, "head_dim": inner // heads,
            "state": _scalar(get("ssm.state_size"), "ssm.state_size", warnings),
            "groups": _scalar(get("ssm.group_count"), "ssm.group_count", warnings) or 1,
            "conv": _scalar(get("ssm.conv_kernel"), "ssm.conv_kernel", warnings)}


def _falcon_h1_config(get, tensor_names: set[str], warnings: list[str]) -> dict[str, Any]:
    """Falcon-H1 as llama.cpp reads it (src/models/falcon-h1.cpp `load_arch_hparams`; conversion/falcon_h1.py writes
    it): every layer attention and Mamba2 side by side, the mixer's ssm.* keys as Mamba2's; its gated norm and
    convolution bias where the file holds them (both optional to the loader)."""
    ssm = _mamba2_keys(get, warnings)
    return {"mamba_d_ssm": ssm["inner"], "mamba_n_heads": ssm["heads"], "mamba_d_head": ssm["head_dim"],
            "mamba_d_state": ssm["state"], "mamba_n_groups": ssm["groups"], "mamba_d_conv": ssm["conv"],
            "mamba_rms_norm": any(n.endswith(".ssm_norm.weight") for n in tensor_names),
            "mamba_conv_bias": any(n.endswith(".ssm_conv1d.bias") for n in tensor_names) if tensor_names else True}


def _deepseek4_config(get, cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """DeepSeek-V4's fields as llama.cpp 0c1e570 reads them (src/models/deepseek4.cpp `load_arch_hparams`):
    attention.compress_ratios (one a block, the MTP block's included), hyper_connection.count,
    attention.output_group_count / output_lora_rank, attention.q_lora_rank, hash_layer_count (the MTP block left
    out by `config_from_gguf`)."""
    n = cfg["num_hidden_layers"] or 0
    ratios = get("attention.compress_ratios")
    if not isinstance(ratios, (list, tuple)) or len(ratios) < n or n <= 0:
        raise InputError("DeepSeek-V4 GGUF metadata lacks attention.compress_ratios for every block")
    out = {"num_hidden_layers": n, "compress_ratios": [int(r) for r in ratios][:n],
           "hc_mult": _scalar(get("hyper_connection.count"), "hyper_connection.count", warnings),
           "o_groups": _scalar(get("attention.output_group_count"), "output_group_count", warnings),
           "o_lora_rank": _scalar(get("attention.output_lora_rank"), "output_lora_rank", warnings),
           "q_lora_rank": _scalar(get("attention.q_lora_rank"), "q_lora_rank", warnings),
           "num_hash_layers": _scalar(get("hash_layer_count"), "hash_layer_count", warnings) or 0,
           "n_shared_experts": cfg.get("n_shared_experts") or 1}
    if any(v is None for v in out.values()):
        raise InputError("DeepSeek-V4 GGUF metadata lacks hyper_connection.count, the output groups or q_lora_rank")
    return out


def _laguna_config(get, shapes: dict[str, tuple[int, ...]], cfg: dict[str, Any]) -> dict[str, Any]:
    """Laguna as llama.cpp 0c1e570 reads it (src/models/laguna.cpp; conversion/laguna.py writes it): head_count per
    layer, and the output gate's width from blk.0.attn_gate (one value a head, or one a head channel)."""
    heads = get("attention.head_count")
    out: dict[str, Any] = {}
    if isinstance(heads, (list, tuple)):
        out["num_attention_heads_per_layer"] = [int(h) for h in heads]
    gate = shapes.get("blk.0.attn_gate.weight")
    first = out.get("num_attention_heads_per_layer", [cfg["num_attention_heads"]])[0]
    if gate and cfg.get("head_dim"):
        out["gating"] = "per-head" if gate[0] == first else "per-element"
    if cfg.get("sliding_window") and "layer_types" not in cfg:  # `load_swa_pattern(ml, 4, dense_first)`: full at
        out["layer_types"] = ["full_attention" if i % 4 == 0 else "sliding_attention"  # every fourth from layer 0
                              for i in range(cfg["num_hidden_layers"])]
    return out


def _dots3_config(get, cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """dots3 as llama.cpp 0c1e570 reads it (src/models/dots3note.cpp `load_arch_hparams`; conversion/dots3.py writes
    it): head_count per layer, the sliding layers' latent (kv_lora_rank_swa) and per-head widths (key_length_mla_swa,
    value_length_mla_swa) as the release's swa_ fields, the shared experts as wide as a routed one."""
    heads = get("attention.head_count")
    kinds = cfg.get("layer_types") or []
    sliding = [int(h) for h, kind in zip(heads, kinds, strict=True) if kind == "sliding_attention"] if isinstance(
        heads, (list, tuple)) and len(heads) == len(kinds) else []
    rope = cfg.get("qk_rope_head_dim") or 0
    out: dict[str, Any] = {"num_attention_heads": max(int(h) for h in heads) if isinstance(heads, (list, tuple))
                           else cfg["num_attention_heads"], "swa_q_lora_rank": cfg.get("q_lora_rank"),
                           "moe_shared_expert_intermediate_size": cfg.get("moe_intermediate_size")}
    if sliding:
        out.update(swa_num_attention_heads=sliding[0], swa_num_key_value_heads=sliding[0])
    for field, key in (("swa_kv_lora_rank", "attention.kv_lora_rank_swa"), ("swa_v_head_dim", "attention.value_length_mla_swa")):
        value = _scalar(get(key), key, warnings)
        if value:
            out[field] = value
    k_mla = _scalar(get("attention.key_length_mla_swa"), "key_length_mla_swa", warnings)
    if k_mla:
        out.update(swa_qk_nope_head_dim=k_mla - rope, swa_qk_rope_head_dim=rope, swa_head_dim=k_mla)
    return out


def _minimax_m3_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """MiniMax-M3 as llama.cpp 0c1e570 builds it (src/models/minimax-m3.cpp `load_arch_hparams` / `load_tensors`):
    the leading_dense_block_count first blocks hold a dense MLP of feed_forward_length and full attention, every
    other block experts of expert_feed_forward_length, expert_shared_count shared experts as wide, and the block-sparse
    indexer (conversion/minimax.py `MiniMaxM3Model` writes the counts from moe_layer_freq)."""
    n, lead = cfg["num_hidden_layers"] or 0, cfg.get("first_k_dense_replace") or 0
    experts = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
    return {"dense_intermediate_size": cfg["intermediate_size"], "intermediate_size": experts,
            "shared_intermediate_size": experts * (cfg.get("n_shared_experts") or 0),
            "layer_types": ["full_attention"] * lead + ["minimax_m3_sparse"] * (n - lead),
            "mlp_layer_types": ["dense"] * lead + ["sparse"] * (n - lead)}


def _granite_hybrid_config(get, cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Granite-4.0-H as llama.cpp reads it (src/models/granite-hybrid.cpp `load_arch_hparams`; conversion/granite.py
    writes it): a layer is Mamba2 where its `attention.head_count_kv` entry is 0; ssm.inner_size = heads x head
    width, ssm.state_size = d_state, ssm.group_count = groups, ssm.time_step_rank = heads; the experts' width is
    feed_forward_length, the shared MLP's expert_shared_feed_forward_length (a model without experts has only
    the latter as its MLP)."""
    kv = _kv_heads_per_layer(get, cfg, "granitehybrid", "Mamba2")
    ssm = _mamba2_keys(get, warnings)
    out = {"layer_types": ["mamba" if not v else "attention" for v in kv],
           "mamba_n_heads": ssm["heads"], "mamba_d_head": ssm["head_dim"], "mamba_expand": _expansion(ssm["inner"], cfg),
           "mamba_d_state": ssm["state"], "mamba_n_groups": ssm["groups"], "mamba_d_conv": ssm["conv"],
           "shared_intermediate_size": cfg.get("shared_expert_intermediate_size") or cfg["intermediate_size"]}
    if cfg.get("num_experts"):
        out.update(num_local_experts=cfg["num_experts"], intermediate_size=cfg["intermediate_size"])
    return out


def _lfm2_config(get, cfg: dict[str, Any]) -> dict[str, Any]:
    """LFM2 as llama.cpp reads it (src/models/lfm2.cpp `load_arch_hparams`; conversion/lfm2.py writes it): a layer
    is a short convolution where its `attention.head_count_kv` entry is 0, of `shortconv.l_cache` taps; the
    feed-forward width is written already adjusted (`_add_feed_forward_length`)."""
    kv = get("attention.head_count_kv")
    n = cfg["num_hidden_layers"] or 0
    if not isinstance(kv, (list, tuple)) or len(kv) != n:
        raise InputError("an lfm2 GGUF needs attention.head_count_kv per layer (0 marks a convolution layer)")
    taps = get("shortconv.l_cache")
    if not isinstance(taps, int) or taps < 2:
        raise InputError(f"GGUF metadata lfm2.shortconv.l_cache must be a whole number of at least 2, got {taps!r:.40}")
    heads = [int(v) for v in kv if int(v)]
    return {"layer_types": ["conv" if not int(v) else "full_attention" for v in kv], "conv_L_cache": taps,
            "block_auto_adjust_ff_dim": False, "num_key_value_heads": max(heads, default=1),
            "num_dense_layers": cfg.get("first_k_dense_replace") or 0}  # LFM2-MoE's leading_dense_block_count


def _kimi_linear_config(get, cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Kimi Linear as llama.cpp reads it (src/models/kimi-linear.cpp `load_arch_hparams`; conversion/kimi_linear.py
    writes it): a layer is delta attention where its `attention.head_count_kv` entry is 0, of the model's heads
    (n_head) x `kda.head_dim`, with `ssm.conv_kernel` taps; the MLA layers' latent is read as DeepSeek's."""
    kv = get("attention.head_count_kv")
    n = cfg["num_hidden_layers"] or 0
    if not isinstance(kv, (list, tuple)) or len(kv) != n:
        raise InputError("a kimi-linear GGUF needs attention.head_count_kv per layer (0 marks a delta layer)")
    width = _scalar(get("kda.head_dim"), "kda.head_dim", warnings)
    if not width:
        raise InputError("GGUF metadata lacks kimi-linear.kda.head_dim, the delta attention's head width")
    heads = cfg["num_attention_heads"]
    return {"layer_types": ["linear_attention" if not int(v) else "full_attention" for v in kv],
            "num_key_value_heads": heads,
            "linear_attn_config": {"num_heads": heads, "head_dim": width,
                                   "short_conv_kernel_size": _scalar(get("ssm.conv_kernel"), "ssm.conv_kernel",
                                                                     warnings) or 4}}


def _nemotron_h_config(get, cfg: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Nemotron-H as llama.cpp reads it (src/models/nemotron-h.cpp `load_arch_hparams`): a block with KV heads is
    attention, one with a feed-forward width an MLP (experts in an MoE file), one with neither Mamba2; the Mamba2
    fields as for Granite-4.0-H; the feed-forward width per layer is the MLP's, or the experts' in an MoE file."""
    kv, ff = get("attention.head_count_kv"), get("feed_forward_length")
    n = cfg["num_hidden_layers"] or 0
    if not (isinstance(kv, (list, tuple)) and isinstance(ff, (list, tuple)) and len(kv) == len(ff) == n):
        raise InputError("a nemotron_h GGUF needs attention.head_count_kv and feed_forward_length per layer")
    ssm = _mamba2_keys(get, warnings)
    ffn = "E" if cfg.get("num_experts") else "-"
    out = {"hybrid_override_pattern": "".join("*" if int(h) else ffn if int(f) else "M" for h, f in zip(kv, ff, strict=True)),
           "mamba_num_heads": ssm["heads"], "mamba_head_dim": ssm["head_dim"], "ssm_state_size": ssm["state"],
           "n_groups": ssm["groups"], "conv_kernel": ssm["conv"]}
    if cfg.get("num_experts"):
        out["moe_shared_expert_intermediate_size"] = cfg.get("shared_expert_intermediate_size") or 0
    return out


def _delta_net_layers(get, tensor_names: set[str], n: int, warnings: list[str]) -> dict[str, Any]:
    """Which of the `n` decoder layers are delta-nets, as config fields: `layer_types` where the file's tensors or
    `attention.recurrent_layers` list them, else `full_attention_interval`, which `from_hf_config` expands."""
    if any(name.endswith("ssm_conv1d.weight") for name in tensor_names):
        linear = [f"blk.{i}.ssm_conv1d.weight" in tensor_names for i in range(n)]
    elif isinstance(listed := get("attention.recurrent_layers"), (list, tuple)):
        if len(listed) < n:
            raise InputError(f"GGUF metadata attention.recurrent_layers lists {len(listed)} layers for {n}")
        linear = [bool(v) for v in listed[:n]]
    else:
        return {"full_attention_interval": _scalar(get("full_attention_interval"), "full_attention_interval",
                                                   warnings) or 4}
    return {"layer_types": ["linear_attention" if is_linear else "full_attention" for is_linear in linear]}


def _read_file(path: str | Path) -> tuple[Path, dict[str, Any], list[StoredTensor], list[str]]:
    """A GGUF file's metadata, its tensors as stored and the warnings of reading them (memory-mapped; data never
    read); a file that is not GGUF, is cut short or does not parse is one InputError."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"no GGUF file at {p}")
    with p.open("rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise InputError(f"{p}: not a GGUF file (magic {magic!r}, expected b'GGUF')")
    try:
        import gguf
    except ImportError:  # pragma: no cover - a declared dependency
        raise InputError("reading GGUF files needs the 'gguf' package (pip install gguf)") from None
    check_declared_sizes(p)
    try:
        reader = gguf.GGUFReader(str(p), "r")
        read_warnings: list[str] = []
        meta = _fields(reader, read_warnings)
        tensors = reader.tensors
        if len(tensors) > MAX_TENSORS:
            raise InputError(f"{p}: {len(tensors):,d} tensors is more than a model file holds")
        stored = []
        for t in tensors:
            shape = tuple(int(x) for x in reversed(list(t.shape)))  # ggml ne0 first -> [out, in]
            stored.append(StoredTensor(t.name, shape, role_of(t.name).value, layer_of(t.name), t.tensor_type.name,
                                       int(t.n_bytes), int(t.data_offset)))
    except InputError:
        raise
    except Exception as exc:  # the reader raises ValueError, KeyError, IndexError... on corrupt files
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{p}: cannot read GGUF ({type(exc).__name__}: {msg})") from None
    return p, meta, stored, read_warnings


def read_gguf(path: str | Path) -> Architecture:
    """Architecture and stored tensors of a GGUF file (memory-mapped; data never read)."""
    p, meta, stored, read_warnings = _read_file(path)
    if meta.get("general.architecture") == "clip":
        raise InputError(f"{p}: an mmproj file (a multimodal model's encoders); give the language model's GGUF "
                         "and this one as its mmproj")
    shapes = {t.name: t.shape for t in stored}
    cfg, warnings = config_from_gguf(meta, set(shapes), shapes)
    skipped = [t for t in stored if t.layer is not None and t.layer >= cfg["num_hidden_layers"]]
    if skipped:  # a multi-token-prediction block (`nextn_predict_layers`): not loaded by default
        stored = [t for t in stored if t.layer is None or t.layer < cfg["num_hidden_layers"]]
        warnings.append(f"the file's multi-token-prediction block ({len(skipped)} tensors, "
                        f"{sum(t.nbytes for t in skipped) / 2**20:,.1f} MiB) is left out: llama.cpp loads it only "
                        "for speculative decoding with it")
    name = meta.get("general.name") if isinstance(meta.get("general.name"), str) else p.stem
    arch = architecture_from_gguf_config(cfg, read_warnings + warnings, name=name, source=str(p), ref=str(p))
    return arch.with_changes(stored=tuple(stored))


def architecture_from_gguf_config(cfg: dict[str, Any], warnings: list[str], **names: str) -> Architecture:
    """The Architecture of a `config_from_gguf` result: a value length of its own (`attention.value_length`), an MLA
    file's unsplit attn_kv_b and a Qwen3-Next file's fused ssm_in, which a Hugging Face config does not carry, are
    applied after it."""
    value_length = cfg.pop("_value_length")
    unsplit = cfg.pop("_mla_kv_b_unsplit", False)
    ssm_in = cfg.pop("_deltanet_ssm_in", False)
    arch = from_hf_config(cfg, **names)
    if value_length and not arch.is_mla and value_length != arch.head_dim:
        arch = arch.with_changes(v_head_dim=value_length)
    return arch.with_changes(mla_kv_b_unsplit=unsplit, deltanet_ssm_in=ssm_in, warnings=tuple([*arch.warnings, *warnings]))


def read_mmproj(path: str | Path) -> tuple[Encoder, ...]:
    """The encoders of a llama.cpp mmproj file (general.architecture "clip": convert_hf_to_gguf.py --mmproj), as
    libmtmd loads them (tools/mtmd/clip.cpp `load_hparams`): the vision tower with its projector (tensors v.* and
    mm.*) and an audio tower (a.*) where the file holds one, each with its tensors' elements and stored bytes; the
    vision tower sized (`llamacpp_mtmd.tower_encoder`) for the projectors memviz models."""
    from memviz.core.engines.llamacpp_mtmd import tower_encoder

    p, meta, stored, _ = _read_file(path)
    if meta.get("general.architecture") != "clip":
        raise InputError(f"{p}: not an mmproj file (general.architecture {meta.get('general.architecture')!r}, "
                         "expected 'clip')")
    audio = [t for t in stored if t.name.startswith("a.")]
    vision = [t for t in stored if not t.name.startswith("a.")]

    def count(tensors: list[StoredTensor]) -> tuple[int, int]:
        return sum(prod(t.shape) for t in tensors), sum(t.nbytes for t in tensors)

    out = []
    if meta.get("clip.has_vision_encoder") and vision:
        warnings: list[str] = []
        widths = {name: _scalar(meta.get(f"clip.vision.{key}"), f"clip.vision.{key}", warnings) or 0 for name, key in (
            ("n_embd", "embedding_length"), ("n_head", "attention.head_count"), ("n_ff", "feed_forward_length"),
            ("projection_dim", "projection_dim"), ("patch_size", "patch_size"), ("image_size", "image_size"))}
        merge = meta.get("clip.vision.spatial_merge_size", meta.get("clip.vision.projector.scale_factor"))
        widths["n_merge"] = _scalar(merge, "clip.vision.spatial_merge_size", warnings) or 0
        deepstack = meta.get("clip.vision.is_deepstack_layers")
        projector = meta.get("clip.vision.projector_type", meta.get("clip.projector_type"))
        out.append(tower_encoder(str(projector), widths, sum(map(bool, deepstack)) if isinstance(deepstack, list) else 0,
                                 *count(vision), str(p)))
    if meta.get("clip.has_audio_encoder") and audio:
        projector = meta.get("clip.audio.projector_type", meta.get("clip.projector_type"))
        parameters, nbytes = count(audio)
        out.append(Encoder(AUDIO, f"mmproj {projector}", parameters, (), nbytes, str(p)))
    if not out:
        raise InputError(f"{p}: the mmproj file holds no vision or audio encoder")
    return tuple(out)
