"""Measure libmtmd's start-up compute buffer for vision towers and compare it with memviz's llamacpp_mtmd rule.

Needs the `llamacpp` extra (llama-cpp-python, whose libmtmd is measured), torch and transformers, and a llama.cpp
checkout's converter (`--convert path/to/convert_hf_to_gguf.py`; the one in llama-cpp-python's sdist under
vendor/llama.cpp matches its libmtmd). For each case it builds the model from a config with random weights (the
language model cut to one narrow layer; the tower at the case's widths, a few blocks deep, as the peak does not
depend on depth, but for Qwen3-VL's deepstack mergers at their released layers, whose places move it), writes it
with transformers, converts its mmproj (`--mmproj --outtype f16`), optionally rewrites
clip.vision.spatial_merge_size to move the warm-up image's patch count (the Qwen graphs still merge 2 x 2), loads
it in a child process through libmtmd on the CPU with warm-up on and flash attention on, then off, and reads
"compute buffer size". Prints one JSON line per case; `--write PATH` stores them as
tests/data/llamacpp/mmproj_buffers.json does.

    python benchmarks/llamacpp_mmproj.py --convert vendor/llama.cpp/convert_hf_to_gguf.py [--write PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np

from memviz.core.engines.llamacpp_mtmd import (
    DEFAULT_MERGE,
    GEMMA3,
    GEMMA4,
    QWEN2,
    QWEN3,
    QWEN25,
    compute_bytes,
    warmup_side_patches,
)
from memviz.core.towers import VisionShape
from memviz.core.units import MiB

LOAD = r"""
import sys, llama_cpp.mtmd_cpp as m, llama_cpp as l
l.llama_backend_init()
p = m.mtmd_context_params_default()
p.use_gpu, p.warmup, p.flash_attn_type, p.n_threads = False, True, int(sys.argv[2]), 2
print("CTX_OK" if m.mtmd_init_from_file(sys.argv[1].encode(), None, p) else "CTX_FAIL", file=sys.stderr)
"""
MEAN = [0.5, 0.5, 0.5]
#: (name, projector, hidden, ff, out, deepstack mergers, merge side of the warm-up, heads) -- the released towers'
#: widths (Qwen3.5-2B, Qwen3.6-27B, Qwen3-VL 2B / 4B / 8B / 30B-A3B / 32B, Qwen2.5-VL-7B, Qwen2-VL-7B, Gemma 3 4B-27B,
#: Gemma 4 E2B / E4B and 26B-A4B / 31B) and others that move one width at a time
CASES = [
    ("qwen3.5-2b", QWEN3, 1024, 4096, 2048, 0, 2, 16), ("qwen3.6-27b", QWEN3, 1152, 4304, 5120, 0, 2, 16),
    ("qwen3.6-27b-merge1", QWEN3, 1152, 4304, 5120, 0, 1, 16), ("qwen3.6-27b-merge3", QWEN3, 1152, 4304, 5120, 0, 3, 16),
    ("qwen3-ff8192", QWEN3, 1152, 8192, 5120, 0, 2, 16), ("qwen3-h1536", QWEN3, 1536, 4304, 4096, 0, 2, 16),
    ("qwen3-vl-2b", QWEN3, 1024, 4096, 2048, 3, 2, 16), ("qwen3-vl-4b", QWEN3, 1024, 4096, 2560, 3, 2, 16),
    ("qwen3-vl-8b", QWEN3, 1152, 4304, 4096, 3, 2, 16), ("qwen3-vl-30b-a3b", QWEN3, 1152, 4304, 2048, 3, 2, 16),
    ("qwen3-vl-32b", QWEN3, 1152, 4304, 5120, 3, 2, 16), ("qwen3-vl-deepstack1", QWEN3, 1152, 4304, 4096, 1, 2, 16),
    ("qwen3-vl-h1536", QWEN3, 1536, 4304, 2048, 3, 2, 16), ("qwen3-vl-out8192", QWEN3, 1152, 4304, 8192, 3, 2, 16),
    ("qwen2.5-vl-7b", QWEN25, 1280, 3420, 3584, 0, 2, 16), ("qwen2.5-vl-h1536", QWEN25, 1536, 3420, 2048, 0, 2, 16),
    ("qwen2.5-vl-ff3900", QWEN25, 1280, 3900, 3584, 0, 2, 16), ("qwen2.5-vl-ff4300", QWEN25, 1280, 4300, 3584, 0, 2, 16),
    ("qwen2.5-vl-ff6144", QWEN25, 1280, 6144, 3584, 0, 2, 16),
    ("qwen2.5-vl-h1536-ff4400", QWEN25, 1536, 4400, 2048, 0, 2, 16),
    ("qwen2-vl-7b", QWEN2, 1280, 5120, 3584, 0, 2, 16), ("qwen2-vl-h1536", QWEN2, 1536, 6144, 2048, 0, 2, 16),
    ("qwen2-vl-7b-merge1", QWEN2, 1280, 5120, 3584, 0, 1, 16), ("qwen2-vl-7b-merge3", QWEN2, 1280, 5120, 3584, 0, 3, 16),
    ("gemma-3-27b", GEMMA3, 1152, 4304, 5376, 0, 0, 16), ("gemma3-ff8192", GEMMA3, 1152, 8192, 2560, 0, 0, 16),
    ("gemma3-h1536", GEMMA3, 1536, 4304, 2560, 0, 0, 16), ("gemma3-h1024", GEMMA3, 1024, 4304, 2560, 0, 0, 16),
    ("gemma-4-e4b", GEMMA4, 768, 3072, 2560, 0, 0, 12), ("gemma-4-31b", GEMMA4, 1152, 4304, 5376, 0, 0, 16),
    ("gemma-4-31b-merge4", GEMMA4, 1152, 4304, 5376, 0, 4, 16), ("gemma-4-31b-merge6", GEMMA4, 1152, 4304, 5376, 0, 6, 16),
    ("gemma-4-e4b-merge5", GEMMA4, 768, 3072, 2560, 0, 5, 12), ("gemma4-ff6144", GEMMA4, 768, 6144, 2560, 0, 0, 12),
    ("gemma4-h768-heads16", GEMMA4, 768, 3072, 2560, 0, 0, 16), ("gemma4-h1152-ff3072", GEMMA4, 1152, 3072, 2560, 0, 0, 12),
    ("gemma4-h1024", GEMMA4, 1024, 4096, 2560, 0, 0, 16), ("gemma4-h1536", GEMMA4, 1536, 3072, 2560, 0, 0, 12),
    ("gemma4-h640", GEMMA4, 640, 2560, 2560, 0, 0, 10), ("gemma4-h512", GEMMA4, 512, 2048, 2560, 0, 0, 8),
]
#: cases outside the rule's range, measured to show where it stops (no release has them)
OUTSIDE = {"qwen3-vl-out8192"}


def hf_config(kind: str, h: int, ff: int, out: int, deepstack: int, heads: int) -> tuple[dict, dict, str]:
    """(config, preprocessor config, transformers class) of a model with this tower and a one-layer LM."""
    lm = dict(hidden_size=out, intermediate_size=64, num_hidden_layers=1, num_attention_heads=8,
              num_key_value_heads=2, vocab_size=1024)
    if kind == GEMMA4:  # libmtmd splits n_embd into n_head heads: head_dim is hidden / heads
        vision = dict(hidden_size=h, intermediate_size=ff, num_attention_heads=heads, num_key_value_heads=heads,
                      head_dim=h // heads, num_hidden_layers=4)
        text = dict(model_type="gemma4_text", head_dim=64, layer_types=["full_attention"],
                    hidden_size_per_layer_input=0, **{**lm, "vocab_size": 262144})
        return (dict(model_type="gemma4", vision_config=vision, text_config=text, audio_config=None),
                dict(image_mean=MEAN, image_std=MEAN), "Gemma4ForConditionalGeneration")
    if kind == QWEN3:
        pre = dict(image_mean=MEAN, image_std=MEAN, patch_size=16, merge_size=2, temporal_patch_size=2,
                   size={"shortest_edge": 65536, "longest_edge": 16777216})
        vision = dict(patch_size=16, num_position_embeddings=2304, depth=4, hidden_size=h, intermediate_size=ff,
                      num_heads=16, out_hidden_size=out)
        if deepstack:  # the released layouts: the peak depends on where the mergers sit
            depth, layers = (24, [5, 11, 17]) if h == 1024 else (27, [8, 16, 24])
            vision = dict(model_type="qwen3_vl", **{**vision, "depth": depth},
                          deepstack_visual_indexes=layers[:deepstack])
            return (dict(model_type="qwen3_vl", vision_config=vision,
                         text_config=dict(model_type="qwen3_vl_text", head_dim=64, **lm)),
                    pre, "Qwen3VLForConditionalGeneration")
        text = dict(model_type="qwen3_5_text", head_dim=64, layer_types=["full_attention"], linear_num_key_heads=2,
                    linear_num_value_heads=4, **lm)
        return (dict(model_type="qwen3_5", vision_config=dict(model_type="qwen3_5", **vision), text_config=text),
                pre, "Qwen3_5ForConditionalGeneration")
    if kind in (QWEN25, QWEN2):
        pre = dict(image_mean=MEAN, image_std=MEAN, patch_size=14, merge_size=2, temporal_patch_size=2,
                   min_pixels=3136, max_pixels=12845056)
        name = "qwen2_5_vl" if kind == QWEN25 else "qwen2_vl"
        vision = (dict(depth=8, hidden_size=h, intermediate_size=ff, num_heads=16, out_hidden_size=out,
                       fullatt_block_indexes=[7]) if kind == QWEN25 else
                  dict(depth=4, embed_dim=h, mlp_ratio=ff // h, num_heads=heads, hidden_size=out))
        cls = "Qwen2_5_VLForConditionalGeneration" if kind == QWEN25 else "Qwen2VLForConditionalGeneration"
        return (dict(model_type=name, vision_config=dict(model_type=name, **vision),
                     text_config=dict(model_type=f"{name}_text", **lm)), pre, cls)
    vision = dict(model_type="siglip_vision_model", hidden_size=h, intermediate_size=ff, num_hidden_layers=4,
                  num_attention_heads=16, image_size=896, patch_size=14, vision_use_head=False)
    text = dict(model_type="gemma3_text", head_dim=64, **{**lm, "vocab_size": 262208})
    return (dict(model_type="gemma3", vision_config=vision, text_config=text, mm_tokens_per_image=256),
            dict(image_mean=MEAN, image_std=MEAN, size={"height": 896, "width": 896}),
            "Gemma3ForConditionalGeneration")


def write_mmproj(folder: Path, convert: Path, kind: str, h: int, ff: int, out: int, deepstack: int, heads: int
                 ) -> Path:
    import torch
    import transformers
    from safetensors.torch import load_file, save_file

    cfg, pre, cls = hf_config(kind, h, ff, out, deepstack, heads)
    torch.manual_seed(0)
    model = getattr(transformers, cls)(transformers.AutoConfig.for_model(**cfg)).to(torch.bfloat16)
    model.save_pretrained(folder)
    (folder / "preprocessor_config.json").write_text(json.dumps(pre))
    if kind == GEMMA3:  # the converter maps the released checkpoints' names (vision_tower.vision_model.*)
        path = folder / "model.safetensors"
        tensors = load_file(path)
        save_file({re.sub(r"^vision_tower\.(?!vision_model\.)", "vision_tower.vision_model.", k): v
                   for k, v in tensors.items()}, path, metadata={"format": "pt"})
    target = folder / "mmproj.gguf"
    subprocess.run([sys.executable, str(convert), str(folder), "--mmproj", "--outtype", "f16", "--outfile",
                    str(target)], check=True, capture_output=True)
    return target


def with_merge(src: Path, merge: int, key: str) -> Path:
    """A copy of `src` whose merge `key` is `merge`: clip.vision.spatial_merge_size for the Qwen towers (the
    warm-up's side is 46 x merge patches), clip.vision.projector.scale_factor for Gemma 4 (16 x merge)."""
    r = gguf.GGUFReader(src)
    dst = src.with_name(f"merge{merge}.gguf")
    w = gguf.GGUFWriter(str(dst), arch="clip", use_temp_file=False)
    for name, field in r.fields.items():
        if name.startswith("GGUF.") or name in ("general.architecture", key):
            continue
        kind = field.types[0]
        if kind == gguf.GGUFValueType.STRING:
            w.add_string(name, bytes(field.parts[-1]).decode())
        elif kind == gguf.GGUFValueType.ARRAY:
            values = [field.parts[i].tolist()[0] for i in field.data]
            w.add_array(name, [bool(v) for v in values] if field.types[1] == gguf.GGUFValueType.BOOL else values)
        else:
            w.add_key_value(name, field.parts[-1].tolist()[0], kind)
    w.add_uint32(key, merge)
    for t in r.tensors:
        w.add_tensor(t.name, np.asarray(t.data), raw_shape=[int(x) for x in reversed(t.shape)], raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return dst


def measure(path: Path, flash: bool) -> float:
    """libmtmd's CPU compute buffer in MiB, as it prints it."""
    err = subprocess.run([sys.executable, "-c", LOAD, str(path), str(int(flash))], capture_output=True,
                         text=True).stderr
    found = re.findall(r"compute buffer size =\s+([\d.]+) MiB", err)
    if "CTX_OK" not in err or not found:
        raise RuntimeError(f"libmtmd did not load {path}: {err[-2000:]}")
    return float(found[-1])


def merge_of(kind: str, merge: int) -> int:
    """The case's merge (0: the projector's default)."""
    return DEFAULT_MERGE.get(kind, 2) if kind == GEMMA3 or not merge else merge


def warmup_side(kind: str, merge: int) -> int:
    """Patches a side of the warm-up image (merge 0: the projector's default; Gemma 3's 896-pixel image)."""
    return warmup_side_patches(kind, merge_of(kind, merge), 896 // 14)


def memviz_mib(kind: str, h: int, ff: int, out: int, deepstack: int, merge: int, flash: bool, heads: int) -> float:
    patch_px = 16 if kind in (QWEN3, GEMMA4) else 14
    side = warmup_side(kind, merge)
    merge = merge_of(kind, merge)
    shape = VisionShape(side * side, side * side // merge ** 2, h, ff, out, deepstack, 3 * patch_px ** 2, 0, 0, 0, 0, 0,
                        heads, side)
    return compute_bytes(kind, shape, side * side, patch_px, flash)[0] / MiB


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--convert", type=Path, required=True, help="llama.cpp's convert_hf_to_gguf.py")
    p.add_argument("--write", type=Path, help="store the cases as JSON")
    p.add_argument("--only", default="", help="comma-separated case names")
    args = p.parse_args()
    only = set(filter(None, args.only.split(",")))
    rows = []
    for name, kind, h, ff, out, deepstack, merge, heads in CASES:
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory() as tmp:  # one case's files at a time: a few GB each
            path = write_mmproj(Path(tmp), args.convert, kind, h, ff, out, deepstack, heads)
            if merge and warmup_side(kind, merge) != warmup_side(kind, 0):  # not the file's own merge
                key = "clip.vision.projector.scale_factor" if kind == GEMMA4 else "clip.vision.spatial_merge_size"
                path = with_merge(path, merge, key)
            row = dict(name=name, projector=kind, hidden=h, ff=ff, out=out, deepstack=deepstack, merge=merge,
                       heads=heads, outside_rule=name in OUTSIDE)
            for flash in (True, False):
                key = "flash" if flash else "no_flash"
                row[f"{key}_mib"] = measure(path, flash)
                row[f"{key}_memviz_mib"] = round(memviz_mib(kind, h, ff, out, deepstack, merge, flash, heads), 2)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.write:
        if only and args.write.exists():  # the other cases as they were measured before
            kept = {r["name"]: r for r in json.loads(args.write.read_text())["cases"]} | {r["name"]: r for r in rows}
            rows = [kept[c[0]] for c in CASES if c[0] in kept]
        args.write.write_text(json.dumps({
            "source": "libmtmd of llama-cpp-python 0.3.36 (llama.cpp 0c1e570), CPU, warm-up on; random-weight "
                      "mmproj files converted by its convert_hf_to_gguf.py; benchmarks/llamacpp_mmproj.py",
            "cases": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
