"""memviz's GGUF layout of a config (`gguf_tensors`: what llama.cpp's converter writes, and so what memviz sizes and
types for llama.cpp) against the files llama.cpp's own converter (0c1e570) wrote for tiny random-weight models of 60
types and Llama 3's rope (tests/data/llamacpp/converted_layouts.json, benchmarks/llamacpp_converted_layouts.py):
every tensor's name and element count."""

from __future__ import annotations

import json
from math import prod
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.probe.gguf_build import GGUF_ARCH, check_supported

DATA = json.loads((Path(__file__).parents[1] / "data" / "llamacpp" / "converted_layouts.json").read_text())
LAYOUTS = DATA["layouts"]


def memviz_layout(config: dict, written: dict[str, int]) -> dict[str, int]:
    """Elements per GGUF name in memviz's layout of `config`, the experts' gate and up summed where the `written`
    file fuses them."""
    a = from_hf_config(config)
    mine: dict[str, int] = {}
    for t in gguf_tensors(a):
        mine[gguf_name(t, a)] = mine.get(gguf_name(t, a), 0) + t.numel
    if any(name.endswith("ffn_gate_up_exps.weight") for name in written):  # transformers 5 saves the experts' gate
        for name in [n for n in mine if n.endswith(("ffn_gate_exps.weight", "ffn_up_exps.weight"))]:  # and up fused,
            fused = name.replace("ffn_gate_exps", "ffn_gate_up_exps").replace("ffn_up_exps", "ffn_gate_up_exps")
            mine[fused] = mine.get(fused, 0) + mine.pop(name)  # which the converter keeps (conversion/base.py)
    return mine


def test_the_data_covers_dense_and_moe_architectures():
    assert len(LAYOUTS) >= 25 and sum("num_experts_per_tok" in v["config"] for v in LAYOUTS.values()) >= 5


@pytest.mark.parametrize("model_type", sorted(LAYOUTS))
def test_memviz_names_and_sizes_every_tensor_the_converter_wrote(model_type):
    layout = LAYOUTS[model_type]
    written = {name: prod(shape) for name, shape, _ in layout["tensors"]}
    assert memviz_layout(layout["config"], written) == written


@pytest.mark.parametrize("model_type", sorted(set(LAYOUTS) & set(GGUF_ARCH)))  # the plain types' layouts
def test_the_builder_writes_the_converters_architecture(model_type):
    """memviz's own files (memviz.probe.gguf_build) carry the architecture the converter wrote (Nemotron-H's with
    experts its own); a Mistral config with a sliding window is built as "llama" only without it (llama.cpp runs the
    window as full attention, so memviz builds no such file)."""
    a = from_hf_config(LAYOUTS[model_type]["config"])
    arch = GGUF_ARCH[model_type] if model_type == "mistral" else check_supported(a)
    assert arch == LAYOUTS[model_type]["architecture"]
