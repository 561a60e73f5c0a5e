"""Real model files for the importer tests, written with the libraries' own writers."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
from gguf.quants import quantize
from safetensors.numpy import save_file

TINY_CONFIG = {
    "model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "tie_word_embeddings": False,
    "max_position_embeddings": 2048,
}


def _hf_tensors(dtype) -> dict[str, np.ndarray]:
    h, kv, inter, vocab = 256, 128, 512, 1000
    t = {"model.embed_tokens.weight": np.zeros((vocab, h), dtype), "model.norm.weight": np.ones(h, np.float32),
         "lm_head.weight": np.zeros((vocab, h), dtype)}
    for i in range(2):
        p = f"model.layers.{i}"
        t.update({f"{p}.input_layernorm.weight": np.ones(h, np.float32),
                  f"{p}.post_attention_layernorm.weight": np.ones(h, np.float32),
                  f"{p}.self_attn.q_proj.weight": np.zeros((h, h), dtype),
                  f"{p}.self_attn.k_proj.weight": np.zeros((kv, h), dtype),
                  f"{p}.self_attn.v_proj.weight": np.zeros((kv, h), dtype),
                  f"{p}.self_attn.o_proj.weight": np.zeros((h, h), dtype),
                  f"{p}.mlp.gate_proj.weight": np.zeros((inter, h), dtype),
                  f"{p}.mlp.up_proj.weight": np.zeros((inter, h), dtype),
                  f"{p}.mlp.down_proj.weight": np.zeros((h, inter), dtype)})
    return t


def gptq_layer(prefix: str, k: int, n: int, group: int = 128, bits: int = 4,
               g_idx: bool = True) -> dict[str, np.ndarray]:
    """AutoGPTQ layout of one Linear(k -> n), w = 32 / bits values an int32: qweight int32[k/w, n], qzeros
    int32[k/g, n/w], scales f16[k/g, n], g_idx int32[k] (AutoRound's GPTQ packing writes none)."""
    w = 32 // bits
    out = {f"{prefix}.qweight": np.zeros((k // w, n), np.int32), f"{prefix}.qzeros": np.zeros((k // group, n // w), np.int32),
           f"{prefix}.scales": np.zeros((k // group, n), np.float16)}
    return out | ({f"{prefix}.g_idx": np.zeros(k, np.int32)} if g_idx else {})


def write_safetensors_model(folder: Path, sharded: bool = False, gptq: bool = False, gptq_bits: int = 4,
                            g_idx: bool = True) -> dict[str, np.ndarray]:
    """A tiny Llama checkpoint (fp16 matrices, fp32 norms; optionally GPTQ MLPs of `gptq_bits`) with its
    config.json."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = _hf_tensors(np.float16)
    if gptq:
        for i in range(2):
            for proj, (k, n) in {"gate_proj": (256, 512), "up_proj": (256, 512), "down_proj": (512, 256)}.items():
                del tensors[f"model.layers.{i}.mlp.{proj}.weight"]
                tensors.update(gptq_layer(f"model.layers.{i}.mlp.{proj}", k, n, bits=gptq_bits, g_idx=g_idx))
    (folder / "config.json").write_text(json.dumps(TINY_CONFIG))
    if not sharded:
        save_file(tensors, str(folder / "model.safetensors"))
        return tensors
    names = sorted(tensors)
    half = len(names) // 2
    shards = {"model-00001-of-00002.safetensors": names[:half], "model-00002-of-00002.safetensors": names[half:]}
    weight_map = {}
    for fname, keys in shards.items():
        save_file({k: tensors[k] for k in keys}, str(folder / fname))
        weight_map.update(dict.fromkeys(keys, fname))
    total = sum(a.nbytes for a in tensors.values())
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    return tensors


def write_gguf_model(path: Path) -> dict[str, tuple[str, int]]:
    """A tiny llama-architecture GGUF with Q8_0, Q4_0, Q4_K (raw blocks) and F16/F32 tensors.

    Returns {tensor name: (ggml type, stored bytes)} computed from the ggml block sizes."""
    h, kv, inter, vocab, layers = 256, 128, 512, 1000, 2
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-llama-test")
    w.add_block_count(layers)
    w.add_context_length(4096)
    w.add_embedding_length(h)
    w.add_feed_forward_length(inter)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_key_length(64)
    w.add_value_length(64)
    w.add_vocab_size(vocab)
    expected: dict[str, tuple[str, int]] = {}
    rng = np.random.default_rng(0)

    def add(name: str, rows: int, cols: int, qtype: str) -> None:
        t = gguf.GGMLQuantizationType[qtype]
        block, size = gguf.GGML_QUANT_SIZES[t]
        if qtype == "F32":
            data = rng.random((rows, cols), dtype=np.float32) if rows > 1 else rng.random(cols, dtype=np.float32)
            w.add_tensor(name, data)
        elif qtype == "F16":
            w.add_tensor(name, rng.random((rows, cols), dtype=np.float32).astype(np.float16))
        elif qtype == "Q4_K":  # no Python quantizer: write raw blocks of the right size
            raw = rng.integers(0, 255, (rows, cols // block * size), dtype=np.uint8)
            w.add_tensor(name, raw, raw_shape=(rows, cols // block * size), raw_dtype=t)
        else:
            q = quantize(rng.random((rows, cols), dtype=np.float32), t)
            w.add_tensor(name, q, raw_shape=q.shape, raw_dtype=t)
        expected[name] = (qtype, rows * cols // block * size)

    add("token_embd.weight", vocab, h, "Q8_0")
    add("output_norm.weight", 1, h, "F32")
    add("output.weight", vocab, h, "Q4_K")
    for i in range(layers):
        add(f"blk.{i}.attn_norm.weight", 1, h, "F32")
        add(f"blk.{i}.ffn_norm.weight", 1, h, "F32")
        add(f"blk.{i}.attn_q.weight", h, h, "Q4_0")
        add(f"blk.{i}.attn_k.weight", kv, h, "Q4_0")
        add(f"blk.{i}.attn_v.weight", kv, h, "Q8_0")
        add(f"blk.{i}.attn_output.weight", h, h, "Q4_K")
        add(f"blk.{i}.ffn_gate.weight", inter, h, "Q4_K")
        add(f"blk.{i}.ffn_up.weight", inter, h, "Q4_K")
        add(f"blk.{i}.ffn_down.weight", h, inter, "F16")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return expected


def cuda_padding(path) -> int:
    """What ggml-cuda's allocation adds to the GPU tensors of a GGUF file (all but token_embd, which llama.cpp keeps
    in host memory): the file's bytes plus this are the weights memviz places."""
    from memviz.core.engines.llamacpp import cuda_alloc_bytes
    from memviz.core.importers.gguf_file import read_gguf

    return sum(cuda_alloc_bytes(t.storage, t.shape, t.nbytes) - t.nbytes for t in read_gguf(path).stored
               if t.name != "token_embd.weight")


def write_mmproj(path: Path, projector: str, hidden: int, ff: int, heads: int, out: int, patch: int,
                 image: int = 0, deepstack: tuple[bool, ...] = (), audio: bool = False) -> tuple[int, int]:
    """A small mmproj GGUF as convert_hf_to_gguf.py --mmproj writes one (general.architecture "clip", the
    clip.vision.* keys libmtmd reads, a few v.* / mm.* tensors, F16 matrices and F32 vectors, and a.* tensors with
    `audio`). Returns (vision elements, vision stored bytes)."""
    w = gguf.GGUFWriter(str(path), "clip")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_bool("clip.has_audio_encoder", audio)
    w.add_string("clip.projector_type", projector)
    for key, value in (("embedding_length", hidden), ("feed_forward_length", ff), ("attention.head_count", heads),
                       ("projection_dim", out), ("patch_size", patch), ("image_size", image), ("block_count", 1)):
        w.add_uint32(f"clip.vision.{key}", value)
    if deepstack:
        w.add_array("clip.vision.is_deepstack_layers", list(deepstack))
    elements = nbytes = 0
    for name, shape, dtype in (("v.patch_embd.weight", (hidden, 3 * patch * patch), np.float16),
                               ("v.blk.0.ln1.weight", (hidden,), np.float32),
                               ("v.blk.0.ffn_up.weight", (ff, hidden), np.float16),
                               ("mm.0.weight", (out, 4 * hidden), np.float16)):
        w.add_tensor(name, np.zeros(shape, dtype=dtype))
        elements, nbytes = elements + int(np.prod(shape)), nbytes + int(np.prod(shape)) * np.dtype(dtype).itemsize
    if audio:
        w.add_string("clip.audio.projector_type", "whisper")
        w.add_tensor("a.blk.0.ffn_up.weight", np.zeros((64, 32), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return elements, nbytes
