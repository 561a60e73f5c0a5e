"""What transformers holds for a compressed-tensors checkpoint: the file, after loading, after one forward.

Needs compressed-tensors (pip install compressed-tensors; not a memviz dependency). Builds a tiny random Llama in
bf16, quantizes its linear layers to five of llm-compressor's schemes (W4A16: INT4 in groups of 128, "pack-quantized";
FP8 per channel, "float-quantized"; INT8 per channel, "int-quantized"; NVFP4A16, "nvfp4-pack-quantized"; MXFP4A16; scales from
the weights' absolute maxima as a min-max observer sets them), saves each, loads it back with transformers and runs
one forward. Prints the figures as JSON lines; `--write PATH` stores them as tests/data/probe/compressed_tensors.json does.

    python benchmarks/compressed_tensors_load.py [--write tests/data/probe/compressed_tensors.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import torch

CONFIG = dict(vocab_size=1024, hidden_size=512, intermediate_size=1536, num_hidden_layers=2, num_attention_heads=8,
              num_key_value_heads=2, tie_word_embeddings=False)
GROUP = 128
#: scheme -> (weight arguments or llm-compressor's preset name, compressed format, the largest quantized value)
SCHEMES = {
    "w4a16": (dict(num_bits=4, type="int", strategy="group", group_size=GROUP), "pack-quantized", 7),
    "fp8-channel": (dict(num_bits=8, type="float", strategy="channel"), "float-quantized", 448),
    "int8": (dict(num_bits=8, type="int", strategy="channel"), "int-quantized", 127),
    "nvfp4": ("NVFP4A16", "nvfp4-pack-quantized", 0),
    "mxfp4": ("MXFP4A16", "mxfp4-pack-quantized", 0),
}


def set_scales(module: torch.nn.Module, arguments: dict | str, top: float) -> None:
    """The scales a min-max observer sets: absolute maxima over top (per group or row); NVFP4's global scale and
    FP8 group scales from compressed-tensors' own helpers."""
    from compressed_tensors.quantization.utils.helpers import compute_dynamic_scales_and_zp, generate_gparam

    w = module.weight.data
    if isinstance(arguments, str):  # NVFP4 has a global scale, MXFP4 none
        global_scale = None
        if hasattr(module, "weight_global_scale"):
            global_scale = generate_gparam(w.float().min(), w.float().max())
            module.weight_global_scale.data = global_scale.to(module.weight_global_scale.dtype)
        scale, _ = compute_dynamic_scales_and_zp(w, module.quantization_scheme.weights, module, global_scale=global_scale)
    else:
        w = w.float()
        rows = w.view(w.shape[0], -1, GROUP) if arguments["strategy"] == "group" else w.unsqueeze(1)
        scale = (rows.abs().amax(-1) / top).clamp_min(1e-8)
    module.weight_scale.data = scale.reshape(module.weight_scale.shape).to(module.weight_scale.dtype)


def write_checkpoint(folder: Path, scheme: str) -> dict:
    """The checkpoint quantized to `scheme` in `folder`; its config.json."""
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import (
        QuantizationArgs,
        QuantizationConfig,
        QuantizationScheme,
        apply_quantization_config,
        preset_name_to_scheme,
    )
    from transformers import LlamaConfig, LlamaForCausalLM

    arguments, fmt, top = SCHEMES[scheme]
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**CONFIG)).to(torch.bfloat16)
    group = preset_name_to_scheme(arguments, ["Linear"]) if isinstance(arguments, str) else \
        QuantizationScheme(targets=["Linear"], weights=QuantizationArgs(symmetric=True, **arguments))
    apply_quantization_config(model, QuantizationConfig(config_groups={"group_0": group}, ignore=["lm_head"]))
    for module in model.modules():
        if hasattr(module, "quantization_scheme") and hasattr(module, "weight_scale"):
            set_scales(module, arguments, top)
    compressor = ModelCompressor.from_pretrained_model(model, quantization_format=fmt)
    compressor.compress_model(model)
    model.save_pretrained(folder)
    compressor.update_config(str(folder))
    return json.loads((folder / "config.json").read_text())


def parameter_bytes(model: torch.nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


def measure(scheme: str) -> dict:
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_checkpoint(folder, scheme)
        with safe_open(str(folder / "model.safetensors"), "pt") as f:
            names = sorted(f.keys())
            tensors = [(name, f.get_tensor(name)) for name in names]
        file_bytes = sum(t.numel() * t.element_size() for _, t in tensors)
        header = [[name, str(t.dtype).removeprefix("torch."), list(t.shape)] for name, t in tensors]
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16)
        loaded = parameter_bytes(model)
        with torch.no_grad():
            model(torch.randint(0, CONFIG["vocab_size"], (1, 16)))
        after = parameter_bytes(model)
    return {"scheme": scheme, "config": config, "tensors": header, "file_bytes": file_bytes,
            "parameter_bytes_loaded": loaded, "parameter_bytes_after_forward": after}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", help="store the figures as JSON (tests/data/probe/compressed_tensors.json)")
    args = ap.parse_args()
    runs = [measure(scheme) for scheme in SCHEMES]
    for run in runs:
        print(json.dumps({k: v for k, v in run.items() if k not in ("config", "tensors")}))
    if args.write:
        source = (f"benchmarks/compressed_tensors_load.py, compressed-tensors {version('compressed-tensors')}, "
                  f"transformers {version('transformers')}, torch {torch.__version__}, CPU")
        Path(args.write).write_text(json.dumps({"source": source, "runs": runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
