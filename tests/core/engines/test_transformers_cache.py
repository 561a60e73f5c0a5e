"""transformers' caches (`engines/transformers_cache.py`): the compute dtype's DynamicCache or a QuantizedCache (quanto
4 / 2 bits, fp8), against the bytes transformers 5.25 and optimum-quanto 0.2.7 stored on this project's CPU
(tests/data/probe/transformers_quantized_cache.json, scripts/transformers_quantized_cache.py) and a real fp8
QuantizedCache built here."""

import json
from pathlib import Path

import pytest

from memviz.core.arch import Architecture, from_hf_config
from memviz.core.engines import get_engine
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate, inputs
from memviz.core.formats import get_kv_format
from memviz.core.kv import KVLayout, kv_cache_bytes
from memviz.core.presets import get_preset

MEASURED = json.loads((Path(__file__).parents[2] / "data" / "probe" / "transformers_quantized_cache.json").read_text())
LLAMA8 = get_preset("llama-3.1-8b").architecture()
FORMATS = {("quanto", 4): "int4", ("quanto", 2): "int2", ("fp8", 8): "fp8"}


def run(kv="bf16", a=LLAMA8, weights="bf16", context=8192, **kw):
    return estimate(a, Scenario(engine="transformers", kv_format=kv, weight_format=weights, context_tokens=context,
                                **kw))


def llama(kv_heads: int, head_dim: int, layers: int = 1) -> Architecture:
    return from_hf_config({"model_type": "llama", "hidden_size": 2 * kv_heads * head_dim, "num_hidden_layers": layers,
                           "num_attention_heads": 2 * kv_heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
                           "intermediate_size": 64, "vocab_size": 128}, "llama")


def one_layer(case) -> Architecture:
    return llama(case["kv_heads"], case["head_dim"])


def layer_bytes(case, kv: str, tokens: int) -> float:
    return case["batch"] * kv_cache_bytes(one_layer(case), get_kv_format(kv), tokens, KVLayout())


@pytest.mark.parametrize("case", MEASURED["stored"], ids=lambda c: f"{c['backend']}{c['nbits']}-d{c['head_dim']}")
def test_the_stored_bytes_are_transformers_own(case):
    """After a 1,000-token prompt and 130 steps quanto has quantized 1,128 tokens (the 128th step flushed the residual)
    and holds 2 unquantized; at its longest the residual holds 127 beside the prompt's 1,000. fp8 holds all 1,130
    (its two fp32 scales, 8 bytes, left out)."""
    kv = FORMATS[(case["backend"], case["nbits"])]
    if case["backend"] == "quanto":
        assert case["end"]["quantized_bytes"] == layer_bytes(case, kv, 1128)
        assert case["end"]["residual_bytes"] == layer_bytes(case, "bf16", 2)
        assert case["longest_residual"]["quantized_bytes"] == layer_bytes(case, kv, 1000)
        assert case["longest_residual"]["residual_bytes"] == layer_bytes(case, "bf16", 127)
    else:
        assert case["end"]["quantized_bytes"] - 8 == layer_bytes(case, kv, 1130)
        assert case["end"]["quantized_bytes"] == get_engine("transformers").kv_bytes(
            inputs(one_layer(case), Scenario(engine="transformers", kv_format=kv), 1130, case["batch"]), range(1))


def test_the_cache_counts_the_residual_at_its_longest():
    """Llama-3.1-8B at 8,192 tokens: 36,864 bytes a token quantized to 4 bits (0.5 byte a value and 4 bytes a group
    of 64: 32 layers x 8 heads x 2 x (64 + 8)), 20,480 at 2 bits, 65,536 in fp8; quanto's 127 newest tokens in
    bf16 (131,072 bytes a token)."""
    assert run("int4").component("kv_cache").bytes == 8192 * 36864 + 127 * (131072 - 36864)
    assert run("int2").component("kv_cache").bytes == 8192 * 20480 + 127 * (131072 - 20480)
    assert run("fp8").component("kv_cache").bytes == 8192 * 65536 + 32 * 8  # and two fp32 scales a layer
    assert "up to 127 newest tokens a sequence" in run("int4").component("kv_cache").formula
    assert run("int4", context=100).component("kv_cache").bytes == 100 * 36864 + 99 * (131072 - 36864)
    seqs = run("int4", sequence_tokens=(4096, 50), batch=2).component("kv_cache").bytes
    assert seqs == 4146 * 36864 + (127 + 49) * (131072 - 36864)


@pytest.mark.parametrize("case", [c for c in MEASURED["update"] if c["backend"] != "dynamic"],
                         ids=lambda c: f"{c['backend']}{c['nbits']}-{c['dtype']}")
def test_a_decode_update_holds_what_was_measured(case):
    """The peak a decode step's update added over the cache it held (8 KV heads of 128, 131,072 tokens): 8 / 16
    bytes a K value with quanto in bf16 / fp32 (the dequantized and the returned K and V), 12 / 14 with fp8 (the
    returned K, V in float32 twice, the replaced FP8 K and V); memviz's decode term for that layer, to 0.1 %."""
    sc = Scenario(engine="transformers", kv_format=FORMATS[(case["backend"], case["nbits"])], device="cpu",
                  weight_format="fp32" if case["dtype"] == "float32" else "bf16", context_tokens=case["tokens"])
    x = inputs(llama(8, 128), sc, sc.context_tokens, 1)
    held = get_engine("transformers").decode_update_bytes(x)
    assert float(held) == pytest.approx(case["peak_over_held_bytes"], rel=1e-3)


@pytest.mark.parametrize(("kv", "weights", "preset", "message"), [
    ("q8_0", "bf16", "llama-3.1-8b", "has no q8_0 cache"),
    ("nvfp4", "bf16", "llama-3.1-8b", "has no nvfp4 cache"),
    ("fp32", "bf16", "llama-3.1-8b", r"compute dtype \(bf16/fp16\)"),
    ("bf16", "fp32", "llama-3.1-8b", r"compute dtype \(fp32\)"),
    ("int4", "bf16", "gemma-2-9b", "full-attention layers only; Gemma-2-9B has sliding"),
    ("fp8", "bf16", "deepseek-v2-lite", "MLA latent"),
])
def test_what_transformers_has_no_cache_for(kv, weights, preset, message):
    with pytest.raises(InputError, match=message):
        run(kv, get_preset(preset).architecture(), weights)


def test_the_launch_command_asks_for_the_quantized_cache():
    sc = Scenario(engine="transformers", kv_format="int2", context_tokens=8192)
    line = 'cache_implementation="quantized", cache_config={"backend": "quanto", "nbits": 2}'
    assert line in run("int2").launch_command("meta-llama/Llama-3.1-8B")
    assert "pip install optimum-quanto" in estimate(LLAMA8, sc).launch_command("m")
    assert 'cache_config={"backend": "fp8"})' in run("fp8").launch_command("m")
    assert "cache_implementation" not in run().launch_command("m")


def test_an_fp32_model_caches_in_fp32_by_default():
    """DynamicCache keeps the compute dtype: the default cache of fp32 weights is fp32 (vLLM's "auto" too)."""
    assert [get_engine(e).default_kv("fp32") for e in ("transformers", "vllm", "llamacpp")] == ["fp32", "fp32", "fp16"]
    assert get_engine("transformers").default_kv("awq-int4") == "bf16"
    assert run("fp32", weights="fp32").component("kv_cache").bytes == 8192 * 262144


def test_a_real_fp8_quantized_cache_holds_what_memviz_counts():
    """transformers' own QuantizedCache(backend="fp8") for a Llama-3.1-8B layer shape (8 KV heads of 128) over a
    300-token prompt and 20 steps, 2 sequences: float8 values and two fp32 scales. A transformers without the fp8
    backend (4.56, the lowest version memviz takes) refuses it, as the probe then says."""
    torch = pytest.importorskip("torch")  # the lowest-deps run installs neither torch nor transformers
    cache_utils = pytest.importorskip("transformers.cache_utils")
    from transformers import LlamaConfig

    config = LlamaConfig(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                         num_hidden_layers=2, vocab_size=128)
    if not hasattr(cache_utils, "Fp8QuantizedLayer"):  # transformers before 5.25 (the lowest-deps run: 4.56)
        with pytest.raises(ValueError, match="Unknown quantization backend `fp8`"):
            cache_utils.QuantizedCache(backend="fp8", config=config)
        return
    cache = cache_utils.QuantizedCache(backend="fp8", config=config)
    for tokens in (300, *[1] * 20):
        for layer in range(2):
            k = torch.randn(2, 8, tokens, 128, dtype=torch.bfloat16)
            cache.update(k, torch.randn_like(k), layer)
    held = sum(t.numel() * t.element_size() for layer in cache.layers
               for t in (*layer._quantized_keys, *layer._quantized_values))
    assert held - 2 * 8 == 2 * kv_cache_bytes(llama(8, 128, layers=2), get_kv_format("fp8"), 320, KVLayout())
