"""The dtype vLLM 0.34 runs and caches in (`engines/vllm_dtype.py`: config/model.py `_resolve_auto_dtype`,
`_FLOAT16_NOT_SUPPORTED_MODELS`; platforms/cuda.py `supported_dtypes`; config/cache.py `CacheDType`)."""

import pytest

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()


def run(a=LLAMA8, weights="bf16", kv="bf16", gpu="a100-80g"):
    return estimate(a, Scenario(engine="vllm", gpu=gpu, weight_format=weights, kv_format=kv, context_tokens=4096))


def test_an_fp32_or_fp16_scenario_names_its_dtype():
    """"auto" gives a bf16 or fp32 checkpoint bfloat16 on an A100: float32 and float16 are asked for by name."""
    assert run().launch_command("m").count("--dtype") == 0
    assert "--dtype float32" in run(weights="fp32", kv="fp32").launch_command("m")
    assert "--dtype float16" in run(weights="fp16").launch_command("m")


def test_a_16_bit_cache_beside_fp32_weights_is_named():
    """--kv-cache-dtype auto would cache an fp32 model in float32: 262,144 bytes a token for Llama-3.1-8B, where a
    named bfloat16 cache takes 131,072."""
    fp32, bf16 = run(weights="fp32", kv="fp32"), run(weights="fp32", kv="bf16")
    assert "--kv-cache-dtype" not in fp32.launch_command("m")
    assert "--kv-cache-dtype bfloat16 --dtype float32" in bf16.launch_command("m")
    assert fp32.engine_facts["kv_block_bytes"] == 2 * bf16.engine_facts["kv_block_bytes"] == 64 * 262144


@pytest.mark.parametrize(("preset", "weights", "kv", "gpu", "message"), [
    ("llama-3.1-8b", "bf16", "fp32", "a100-80g", "CacheDType has no float32"),
    ("gemma-3-4b", "fp16", "bf16", "h100-80g", r"refuses Gemma-3-4B \(gemma3_text\) in float16"),
    ("gemma-2-9b", "fp16", "bf16", "a100-80g", "in float16"),
    ("gemma-3-4b", "bf16", "bf16", "t4", "in float32 on compute capability 7.5"),
    ("gemma-2-9b", "bf16", "bf16", "v100-32g", "in float32 on compute capability 7.0"),
])
def test_what_vllm_refuses_or_runs_otherwise(preset, weights, kv, gpu, message):
    with pytest.raises(InputError, match=message):
        run(get_preset(preset).architecture(), weights, kv, gpu)


def test_gemma_runs_in_float32_below_ampere_and_bf16_elsewhere():
    """The fp32 scenario is the one vLLM runs on a V100; Llama in bf16 there runs as float16 (same bytes)."""
    gemma2 = get_preset("gemma-2-9b").architecture()
    fp32, bf16 = run(gemma2, "fp32", "fp32", "v100-32g"), run(gemma2, gpu="a100-80g")
    assert fp32.component("weights").bytes == pytest.approx(2 * bf16.component("weights").bytes, rel=1e-6)
    assert run(gpu="v100-32g").launch_command("m").count("--dtype") == 0
