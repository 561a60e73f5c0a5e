"""The tensors llama.cpp's own converter writes for tiny random-weight models of each architecture, kept to check
memviz's GGUF layout (`memviz.core.gguf_names.gguf_tensors`) name by name and size by size.

Each model type is built by transformers from a small config (random weights, saved with save_pretrained) and
converted by the converter of a llama.cpp source tree (`convert_hf_to_gguf.py --outtype f16`), its tokenizer left
out (no tokenizer is at hand: every model class's set_vocab is skipped; a tokenizer.json of vocab_size tokens is
written for the converters that size the embedding by it). What is kept per type: the config as
transformers wrote it and each tensor's name, shape (ggml order) and type.

    python benchmarks/llamacpp_converted_layouts.py LLAMA_CPP_SOURCE [--write tests/data/llamacpp/converted_layouts.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SMALL = dict(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=64, max_position_embeddings=4096, pad_token_id=0, bos_token_id=1,
             eos_token_id=2)
#: SMALL's fields that GPT-2's, BLOOM's and MPT's configs do not have (None: not passed)
NOT_THEIRS = dict(hidden_size=None, intermediate_size=None, num_hidden_layers=None, num_attention_heads=None,
                  num_key_value_heads=None, head_dim=None)
MOE = dict(num_experts=4, num_local_experts=4, num_experts_per_tok=2, moe_intermediate_size=128)
#: a vision tower of one small layer (SigLIP's fields) for the multimodal wrappers
SIGLIP = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2, image_size=28,
              patch_size=14)
#: model type (or a name with its model_type among the fields) -> fields beyond SMALL
TYPES = {
    "llama": {}, "llama-3.1-rope": dict(model_type="llama", rope_parameters=dict(
        rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
        original_max_position_embeddings=8192)),
    "mistral": {}, "qwen2": {}, "qwen3": {}, "gemma": {}, "gemma2": {}, "gemma3_text": {},
    "phi3": {}, "starcoder2": {}, "olmo2": {}, "granite": {}, "smollm3": {}, "exaone4": {}, "glm4": {},
    "cohere": {}, "stablelm": {}, "internlm3": {}, "seed_oss": {}, "ernie4_5": {}, "arcee": {},
    "qwen2_moe": dict(MOE, shared_expert_intermediate_size=256), "qwen3_moe": MOE, "mixtral": MOE, "olmoe": MOE,
    "granitemoe": MOE, "phimoe": dict(MOE, original_max_position_embeddings=4096),
    "deepseek_v3": dict(MOE, n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=64,
                        q_lora_rank=96, qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=32, n_group=1,
                        topk_group=1, head_dim=None, num_key_value_heads=4),
    "deepseek_v2": dict(MOE, n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=64,
                        q_lora_rank=None, qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=32, head_dim=None,
                        topk_method="greedy", num_key_value_heads=4),
    "glm4_moe": dict(MOE, n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=1, n_group=1, topk_group=1),
    "gpt_oss": dict(num_local_experts=4, num_experts_per_tok=2, sliding_window=128),
    # two shared experts: the converter writes their width as intermediate_size // num_key_value_heads (ERNIE-4.5-
    # 21B-A3B's 12,288 // 4 = 2 x 1,536; conversion/ernie.py), which llama.cpp loads them by
    "ernie4_5_moe": dict(MOE, moe_num_experts=4, moe_k=2, moe_num_shared_experts=2),
    "hunyuan_v1_dense": dict(), "dots1": dict(MOE, n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=1),
    "minimax_m2": dict(MOE, rotary_dim=32), "exaone_moe": dict(MOE, num_shared_experts=1), "apertus": {},
    "cohere2": dict(sliding_window=128, rotary_pct=1.0),
    "olmo3": dict(sliding_window=128), "nemotron": {},
    "gpt2": dict(NOT_THEIRS, n_embd=256, n_layer=2, n_head=4, n_positions=1024, n_ctx=1024,
                 max_position_embeddings=None),  # n_positions' alias: SMALL's would override it
    "falcon": dict(new_decoder_architecture=True, num_kv_heads=2, head_dim=None),
    "bloom": dict(NOT_THEIRS, n_embed=256, n_layer=2, n_head=4),
    "mpt": dict(NOT_THEIRS, d_model=256, n_layers=2, n_heads=4, expansion_ratio=4, max_seq_len=2048),
    "lfm2": dict(layer_types=["conv", "full_attention"]), "gemma4_text": dict(
        layer_types=["sliding_attention", "full_attention"], sliding_window=128, global_head_dim=128,
        hidden_size_per_layer_input=64, vocab_size_per_layer_input=1024, num_kv_shared_layers=0),
    "afmoe": dict(MOE, num_shared_experts=1, num_dense_layers=1, sliding_window=128, global_attn_every_n_layers=4,
                  num_hidden_layers=4),  # the released period (llama.cpp's afmoe assumes it: no pattern is written)
    "bitnet": dict(tie_word_embeddings=True),  # the converter maps no lm_head for BITNET: tied checkpoints only
    "gpt_neox": dict(num_key_value_heads=None, head_dim=None), "phi": dict(num_key_value_heads=None, head_dim=None,
                                                                     intermediate_size=1024),  # 4 x hidden, as
    # Phi-2's: the converter writes feed_forward_length = 4 x n_embd whatever the config says (conversion/phi.py)
    "olmo": dict(num_key_value_heads=None), "gpt_bigcode": dict(NOT_THEIRS, n_embd=256, n_layer=2, n_head=4),
    "qwen3_next": dict(MOE, shared_expert_intermediate_size=256, linear_num_value_heads=4, linear_num_key_heads=2,
                       linear_key_head_dim=32, linear_value_head_dim=32, full_attention_interval=2),
    "granitemoehybrid": dict(MOE, layer_types=["mamba", "attention"], mamba_n_heads=8, mamba_d_head=32,
                             mamba_d_state=16, mamba_n_groups=1, mamba_expand=1, shared_intermediate_size=256),
    "nemotron_h": dict(hybrid_override_pattern="M*E", mamba_num_heads=8, mamba_head_dim=32, ssm_state_size=16,
                       n_groups=1, expand=1, num_hidden_layers=3, n_routed_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=128, moe_shared_expert_intermediate_size=128),
    "lfm2_moe": dict(MOE, layer_types=["conv", "full_attention"], num_dense_layers=1),
    "falcon_h1": dict(mamba_n_heads=8, mamba_d_head=32, mamba_d_state=16, mamba_n_groups=1, mamba_expand=1,
                      mamba_d_ssm=256),
    "granite_swa": dict(sliding_window=128), "granitemoe_swa": dict(MOE, sliding_window=128, intermediate_size=128),
    "mellum": dict(MOE, num_experts=4),
    "glm4_moe_lite": dict(MOE, n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=1,
                                          kv_lora_rank=64, q_lora_rank=96, qk_rope_head_dim=16, qk_nope_head_dim=32,
                                          v_head_dim=32, n_group=1, topk_group=1, head_dim=None,
                                          num_key_value_heads=4),
    # per-layer lists, as Hunyuan-A13B's config.json gives them (the converter asserts they agree)
    "hunyuan_v1_moe": dict(num_experts=4, moe_topk=[2, 2], moe_intermediate_size=[512, 512],  # = intermediate_size,
                           num_shared_expert=[1, 1]),
    "hy_v3": MOE, "jais2": {}, "solar_open": MOE, "cohere2_moe": MOE,
    "minicpm3": dict(num_key_value_heads=4),  # as MiniCPM3-4B's: llama.cpp caches K and V for every head
    "granitemoeshared": dict(MOE, shared_intermediate_size=256),
    # multimodal wrappers, converted as llama.cpp converts their text model (the vision tower is --mmproj's)
    "llama4": dict(text_config=dict(
        SMALL, model_type="llama4_text", num_local_experts=4, num_experts_per_tok=1, intermediate_size=128,
        intermediate_size_mlp=512, interleave_moe_layer_step=2, num_hidden_layers=4,  # Llama 4's chunks and
        attention_chunk_size=8192, no_rope_layers=[1, 1, 1, 0]),  # NoPE layers (llama.cpp fixes both)
        vision_config=dict(hidden_size=64, num_hidden_layers=1, num_attention_heads=2, intermediate_size=128,
                           image_size=56, patch_size=14, vision_output_dim=64, projector_input_dim=64,
                           projector_output_dim=64)),
    # Gemma 3's layers slide but every sixth, as its releases and llama.cpp's gemma3 loader have them
    "gemma3": dict(text_config=dict(SMALL, model_type="gemma3_text", sliding_window=128,
                                    layer_types=["sliding_attention", "sliding_attention"]),
                   vision_config=dict(SIGLIP, model_type="siglip_vision_model"), mm_tokens_per_image=4),
    # Mistral Small 3.1 / 3.2's: no window, an LM head of its own
    "mistral3": dict(text_config=dict(SMALL, model_type="mistral", sliding_window=None), tie_word_embeddings=False,
                     vision_config=dict(model_type="pixtral", hidden_size=64, intermediate_size=128,
                                        num_hidden_layers=1, num_attention_heads=2, image_size=56, patch_size=14,
                                        head_dim=32)),
    "glm4v_moe": dict(text_config=dict(SMALL, **MOE, model_type="glm4v_moe_text", n_routed_experts=4, n_shared_experts=1,
                                       first_k_dense_replace=1, n_group=1, topk_group=1),
                      vision_config=dict(hidden_size=64, depth=1, num_heads=2, intermediate_size=128,
                                         out_hidden_size=256, patch_size=14)),
    "hunyuan_vl": dict(text_config=dict(SMALL, model_type="hunyuan_vl_text"), vision_config=dict(
        hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2, out_hidden_size=256)),
    "qwen2_5_vl": dict(text_config=dict(SMALL, model_type="qwen2_5_vl_text", rope_parameters=dict(
        rope_type="default", rope_theta=1000000.0, mrope_section=[16, 8, 8])),
        vision_config=dict(hidden_size=64, depth=2, num_heads=2, intermediate_size=128, out_hidden_size=256,
                           fullatt_block_indexes=[1], window_size=112, patch_size=14)),
    "qwen3_vl": dict(text_config=dict(SMALL, model_type="qwen3_vl_text", rope_parameters=dict(
        rope_type="default", rope_theta=10000.0, mrope_section=[8, 12, 12], mrope_interleaved=True)),
        vision_config=dict(hidden_size=64, depth=2, num_heads=2, intermediate_size=128, out_hidden_size=256,
                           deepstack_visual_indexes=[0], patch_size=16)),
}
#: what released checkpoints' config.json says where transformers 5.24's differs: Phi-3.5-MoE's and MPT's class names
#: as the converter registers them (conversion/__init__.py)
RELEASED_FIELDS = {"phimoe": {"architectures": ["PhiMoEForCausalLM"]}, "mpt": {"architectures": ["MPTForCausalLM"]},
                   # Granite-4.0-H's kinds as its config.json and the converter name them (conversion/granite.py
                   # `GraniteHybridModel`: "attention" layers), which transformers 5.25 saves as
                   # linear_attention / full_attention
                   "granitemoehybrid": {"layer_types": ["mamba", "attention"]},
                   "gpt_neox": {"rotary_pct": 0.25}}  # Pythia's and GPT-NeoX-20B's config.json
#: tensor names of released checkpoints where transformers 5.24 saves others: the converter maps BitNet's sub-norms
#: by 1bitLLM's bitnet_b1_58 names only (gguf-py tensor_mapping.py ATTN_SUB_NORM / FFN_SUB_NORM), and stops with
#: "Can not map tensor 'model.layers.0.mlp.ffn_sub_norm.weight'" on a transformers-saved one
RELEASED_NAMES = {"bitnet": {".self_attn.attn_sub_norm.": ".self_attn.inner_attn_ln.",
                             ".mlp.ffn_sub_norm.": ".mlp.ffn_layernorm."}}
#: types whose converter reads a field transformers 5 moves when it loads the config (GPT-NeoX's rotary_pct, now
#: rope_parameters' partial_rotary_factor): converted from config.json as written, the path the converter takes when
#: AutoConfig fails, and what it read under transformers 4
RAW_CONFIG = frozenset({"gpt_neox"})
#: converter options by type: Qwen3-Next's converter wants the MTP layer a released checkpoint carries and a
#: transformers-saved one does not, unless told to leave it out (which llama.cpp does not load by default anyway)
CONVERT_ARGS = {"qwen3_next": ["--no-mtp"]}
CONVERT = """
import sys
sys.path[:0] = [{src!r} + "/gguf-py", {src!r}]
import conversion
from conversion.base import ModelBase
for name in conversion.TEXT_MODEL_MAP.values() if hasattr(conversion, "TEXT_MODEL_MAP") else []:
    __import__("conversion." + name)
for cls in list(ModelBase._model_classes.get(conversion.base.ModelType.TEXT, {{}}).values()):
    cls.set_vocab = lambda self: None
if {raw_config!r}:  # the converter's own fallback: config.json as written, not transformers 5's reading of it
    conversion.base.AutoConfig.from_pretrained = lambda *a, **k: (_ for _ in ()).throw(ValueError("raw config"))
sys.argv = ["convert_hf_to_gguf.py", {model!r}, "--outtype", "f16", "--outfile", {out!r}, *{extra!r}]
import runpy
runpy.run_path({src!r} + "/convert_hf_to_gguf.py", run_name="__main__")
"""


def _rename(path: Path, renames: dict[str, str]) -> None:
    """Rewrite a safetensors file with each tensor name's `renames` applied."""
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(path))
    for old, new in renames.items():
        tensors = {name.replace(old, new): t for name, t in tensors.items()}
    save_file(tensors, str(path), metadata={"format": "pt"})


def convert(model_type: str, fields: dict, src: str, tmp: Path) -> dict:
    import gguf
    import torch
    import transformers

    wrapper = "text_config" in fields  # SMALL given inside the text config
    fields = {k: v for k, v in {**({} if wrapper else SMALL), **fields}.items() if v is not None}  # None: the class's
    config = transformers.AutoConfig.for_model(fields.pop("model_type", model_type), **fields)
    torch.manual_seed(0)
    auto = transformers.AutoModelForImageTextToText if wrapper else transformers.AutoModelForCausalLM
    auto.from_config(config).save_pretrained(tmp / model_type)
    if model_type in RELEASED_NAMES:
        _rename(tmp / model_type / "model.safetensors", RELEASED_NAMES[model_type])
    if model_type in RELEASED_FIELDS:
        saved = json.loads((tmp / model_type / "config.json").read_text())
        (tmp / model_type / "config.json").write_text(json.dumps({**saved, **RELEASED_FIELDS[model_type]}))
    vocab = {"model": {"vocab": {f"t{i}": i for i in range(config.get_text_config().vocab_size)}}, "added_tokens": []}
    (tmp / model_type / "tokenizer.json").write_text(json.dumps(vocab))  # Gemma 3's converter sizes token_embd by it
    out = tmp / f"{model_type}.gguf"
    script = CONVERT.format(src=src, model=str(tmp / model_type), out=str(out), raw_config=model_type in RAW_CONFIG,
                            extra=CONVERT_ARGS.get(model_type, []))
    r = subprocess.run([sys.executable, "-c", script],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError((r.stderr.strip().splitlines() or ["no output"])[-1])
    reader = gguf.GGUFReader(str(out))
    return {"config": json.loads((tmp / model_type / "config.json").read_text()),
            "architecture": str(reader.fields["general.architecture"].contents()),
            "metadata": _metadata(reader),
            "tensors": [[t.name, [int(x) for x in t.shape], t.tensor_type.name] for t in reader.tensors]}


def _metadata(reader) -> dict:
    """The file's metadata as the converter wrote it, each key as [type, value] (an array's type as [9, element
    type]: gguf GGUFValueType), but the tokenizer's and the general.* descriptions, none of which carries a size."""
    return {key: [int(field.types[0]) if len(field.types) == 1 else [int(t) for t in field.types],
                  field.contents()] for key, field in reader.fields.items()
            if not key.startswith(("tokenizer.", "GGUF.", "general.")) or key == "general.architecture"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("source", help="a llama.cpp source tree (llama-cpp-python's sdist: vendor/llama.cpp)")
    ap.add_argument("--write", help="store the layouts as JSON (tests/data/llamacpp/converted_layouts.json)")
    ap.add_argument("--types", help="comma-separated model types (default: all)")
    args = ap.parse_args()
    layouts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model_type in (args.types.split(",") if args.types else TYPES):
            try:
                layouts[model_type] = convert(model_type, TYPES[model_type], args.source, Path(tmp))
                print(f"{model_type}: {layouts[model_type]['architecture']}, {len(layouts[model_type]['tensors'])} "
                      "tensors", flush=True)
            except Exception as exc:  # a type the converter or transformers cannot make: said, left out
                print(f"{model_type}: not converted ({exc})", flush=True)
    if args.write:
        import transformers

        source = ("convert_hf_to_gguf.py of llama.cpp 0c1e570 (llama-cpp-python 0.3.36 sdist), --outtype f16, over "
                  f"random-weight models saved by transformers {transformers.__version__} "
                  "(benchmarks/llamacpp_converted_layouts.py), tokenizers left out: each file's metadata (tokenizer and "
                  "general.* keys left out) and tensors (name, ggml shape, type)")
        Path(args.write).write_text(json.dumps({"source": source, "layouts": layouts}, indent=None) + "\n")


if __name__ == "__main__":
    main()
