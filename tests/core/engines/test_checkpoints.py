"""What a launch command loads: the checkpoint as stored, a 16-bit one the engine quantizes while loading, or a
checkpoint stored in the scenario's format (named as a placeholder), so the command runs what the chart shows."""

import pytest

from memviz.core.arch import native_format
from memviz.core.estimate import Scenario, estimate
from memviz.core.gpus import get_gpu
from memviz.core.planner import Hardware, Requirements, plan
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()
GPT_OSS = get_preset("gpt-oss-20b").architecture()


@pytest.mark.parametrize(("quantization_config", "fmt"), [
    ({"quant_method": "mxfp4"}, "mxfp4-moe"),  # openai/gpt-oss-*
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "fp8-block"),  # deepseek-ai/DeepSeek-V3
    ({"quant_method": "fbgemm_fp8"}, "fp8-channel"),  # meta-llama/Llama-3.1-405B-Instruct-FP8
    ({"quant_method": "awq", "bits": 4}, "awq-int4"),
    ({"quant_method": "gptq", "bits": 4}, "gptq-int4"),
    ({"quant_method": "gptq", "bits": 8}, ""),  # no memviz format for 8-bit GPTQ
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "bnb-nf4"),
    ({"quant_method": "compressed-tensors"}, ""),
])
def test_the_checkpoints_own_format_is_read_from_its_quantization_config(quantization_config, fmt):
    assert native_format({"quantization_config": quantization_config}) == fmt
    assert native_format({}) == ""


def test_vllm_quantizes_a_16_bit_checkpoint_to_fp8_while_loading_but_needs_a_gptq_one():
    fp8 = estimate(LLAMA8, Scenario(engine="vllm", weight_format="fp8")).launch_command()
    assert fp8.startswith("vllm serve meta-llama/Llama-3.1-8B ") and "--quantization fp8" in fp8
    gptq = estimate(LLAMA8, Scenario(engine="vllm", weight_format="gptq-int4")).launch_command()
    assert gptq.startswith("vllm serve <meta-llama/Llama-3.1-8B as a gptq-int4 checkpoint> ")
    assert "--quantization" not in gptq  # vLLM reads the method from the checkpoint's config


def test_a_released_mxfp4_checkpoint_is_loaded_as_it_is_and_bf16_needs_another():
    native = estimate(GPT_OSS, Scenario(engine="vllm", weight_format="mxfp4-moe")).launch_command()
    assert native.startswith("vllm serve openai/gpt-oss-20b ") and "--quantization" not in native
    bf16 = estimate(GPT_OSS, Scenario(engine="vllm", weight_format="bf16")).launch_command()
    assert "<openai/gpt-oss-20b as a bf16 checkpoint>" in bf16


def test_transformers_loads_bitsandbytes_formats_as_the_probe_does():
    cmd = estimate(LLAMA8, Scenario(engine="transformers", weight_format="bnb-nf4")).launch_command()
    assert 'BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4"' in cmd
    assert '"meta-llama/Llama-3.1-8B"' in cmd
    plain = estimate(LLAMA8, Scenario(engine="transformers")).launch_command()
    assert "BitsAndBytesConfig" not in plain


def test_the_planner_offers_the_released_format_as_the_reference():
    p = plan(get_preset("gpt-oss-120b").architecture(), [Hardware(get_gpu("a100-80g"), gpus_per_node=4)],
             Requirements(context_tokens=16384, concurrency=8), engines=("vllm",))
    best = p.ranked[0]
    assert best.scenario.weight_format == "mxfp4-moe" and best.quality.weights.closeness == "reference"
    assert best.launch_command().startswith("vllm serve openai/gpt-oss-120b ")


def test_transformers_dequantizes_mxfp4_experts_without_the_kernels_package():
    """quantizer_mxfp4.py: no `kernels` package, so the MXFP4 release loads as bf16 (the option keeps it packed)."""
    plain = estimate(GPT_OSS, Scenario(engine="transformers", weight_format="mxfp4-moe"))
    packed = estimate(GPT_OSS, Scenario(engine="transformers", weight_format="mxfp4-moe",
                                        options=(("mxfp4_kernels", True),)))
    bf16 = estimate(GPT_OSS, Scenario(engine="transformers", weight_format="bf16"))
    assert plain.bytes["weights"] == bf16.bytes["weights"] > 3 * packed.bytes["weights"]
    assert "dequantizes the MXFP4 experts" in plain.launch_command()
    assert "pip install kernels" in packed.launch_command()


@pytest.mark.parametrize("changes, device_map", [({}, '"cuda"'), ({"gpu_layers": 10}, '"auto"'),
                                                 ({"pp": 2}, '"auto"'), ({"device": "cpu"}, '"cpu"')])
def test_transformers_launch_places_the_model_as_estimated(changes, device_map):
    """One GPU holding everything is device_map="cuda", as the probe loads it: "auto" would spill what does not fit
    to the CPU where the estimate says it does not fit; offload and several GPUs are accelerate's to place."""
    a = get_preset("llama-3.1-8b").architecture()
    cmd = estimate(a, Scenario(engine="transformers", **changes)).launch_command()
    assert f"device_map={device_map}," in cmd
    assert ("layers 0-9 on the GPU" in cmd) is ("gpu_layers" in changes)
