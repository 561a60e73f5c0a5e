"""Weights an engine cannot hold are refused in one line: llama.cpp and Ollama run GGUF files (their mixes, float
files, an imported file's tensors), vLLM 0.34 has no GGUF nor bitsandbytes quantization (QUANTIZATION_METHODS),
transformers dequantizes a GGUF file while loading it (gguf_file)."""

import pytest

from memviz.core.engines import ENGINES
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()


@pytest.mark.parametrize(("engine", "weights", "message"), [
    ("llamacpp", "awq-int4", "llama.cpp runs GGUF files"), ("llamacpp", "bnb-nf4", "bnb-nf4 is not one"),
    ("ollama", "fp8", "Ollama runs GGUF files"), ("vllm", "Q4_K_M", "no GGUF quantization.*with llama.cpp"),
    ("vllm", "bnb-nf4", "no bitsandbytes quantization.*with transformers"),
    ("transformers", "Q4_K_M", "dequantizes a GGUF file"),
])
def test_weights_an_engine_cannot_hold_are_refused(engine, weights, message):
    with pytest.raises(InputError, match=message):
        estimate(LLAMA8, Scenario(engine=engine, weight_format=weights, kv_format=ENGINES[engine].default_kv(weights),
                                  gpu="h100-80g", context_tokens=4096))
    assert not ENGINES[engine].accepts_weights(weights)


@pytest.mark.parametrize(("engine", "weights"), [
    ("llamacpp", "Q4_K_M"), ("llamacpp", "bf16"), ("llamacpp", "fp32"), ("ollama", "IQ4_XS"), ("vllm", "awq-int4"),
    ("vllm", "fp8"), ("transformers", "bnb-nf4"), ("transformers", "bf16"),
])
def test_weights_an_engine_holds(engine, weights):
    sc = Scenario(engine=engine, weight_format=weights, kv_format=ENGINES[engine].default_kv(weights),
                  gpu="h100-80g", context_tokens=4096)
    assert ENGINES[engine].accepts_weights(weights) and estimate(LLAMA8, sc).total > 0
