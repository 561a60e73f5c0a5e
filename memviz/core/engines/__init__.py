"""Inference engines, one module each; `get_engine` finds one by name."""

from __future__ import annotations

from typing import Any

from memviz.core.engines.base import Engine, Inputs, Option, Placement, parse_option_pairs
from memviz.core.engines.bitnet_linear import FORMAT as BITNET
from memviz.core.engines.llamacpp import LlamaCpp
from memviz.core.engines.ollama import Ollama
from memviz.core.engines.transformers import Transformers
from memviz.core.engines.vllm import VLLM
from memviz.core.errors import InputError
from memviz.core.gguf_mixes import GGUF_MIXES

ENGINES: dict[str, Engine] = {e.name: e for e in (Transformers(), VLLM(), LlamaCpp(), Ollama())}
_ALIASES = {"hf": "transformers", "llama": "llamacpp", "llamaserver": "llamacpp"}

__all__ = ["ENGINES", "Engine", "Inputs", "Option", "Placement", "default_engine", "get_engine", "parse_option_pairs"]


def get_engine(name: str) -> Engine:
    key = name.strip().lower().replace(".", "").replace("-", "").replace("_", "")
    key = _ALIASES.get(key, key)
    if key not in ENGINES:
        raise InputError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    return ENGINES[key]


#: ggml storage types of quantized tensors (Q4_K, IQ4_XS, TQ1_0, MXFP4, ...): a quantized GGUF file's
GGUF_TYPE_PREFIXES = ("Q", "IQ", "TQ", "MXFP")


def quantized_gguf(a: Any) -> bool:
    """Whether the architecture's stored tensors are a quantized GGUF file's."""
    return any(t.storage.startswith(GGUF_TYPE_PREFIXES) for t in a.stored)


def default_engine(weight_format: str, native_format: str = "", gguf_file: bool = False) -> str:
    """The engine that runs a format as stored: GGUF mixes, and a quantized GGUF file as stored (`gguf_file`), in
    llama.cpp, a pre-quantized release in its own format (`Architecture.native_format`: MXFP4, FP8, AWQ, GPTQ) in
    vLLM, the rest (BitNet's packed ternary weights, which vLLM does not load, included) in transformers.

    transformers would dequantize a GGUF file to 16 bits on load, and an MXFP4 release without the `kernels`
    package, so it is the default for neither."""
    fmt = weight_format.strip().upper()
    if (fmt in GGUF_MIXES and fmt not in ("F16", "BF16", "F32")) or (gguf_file and fmt == "STORED"):
        return "llamacpp"
    return "vllm" if native_format and weight_format == native_format and native_format != BITNET else "transformers"
