"""What a launch command loads: the checkpoint as stored, a 16-bit one the engine quantizes while loading, or a
checkpoint stored in the scenario's format (named as a placeholder), so the command runs what the chart shows."""

import pytest

from memviz.core.arch import from_hf_config, native_format
from memviz.core.estimate import Scenario, estimate
from memviz.core.gpus import get_gpu
from memviz.core.planner import Hardware, Requirements, plan
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()


def _ct(bits: int, kind: str, strategy: str, group: int | None = None, symmetric: bool = True,
        ignore: list[str] | None = None) -> dict:
    """A compressed-tensors quantization_config of one config group (compressed-tensors 0.20.1 quant_config.py)."""
    weights = {"num_bits": bits, "type": kind, "strategy": strategy, "group_size": group, "symmetric": symmetric}
    return {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"],
                                                                              "weights": weights}},
            "ignore": ignore or []}
GPT_OSS = get_preset("gpt-oss-20b").architecture()


@pytest.mark.parametrize(("quantization_config", "fmt"), [
    ({"quant_method": "mxfp4"}, "mxfp4-moe"),  # openai/gpt-oss-*
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "fp8-block"),  # deepseek-ai/DeepSeek-V3
    ({"quant_method": "fbgemm_fp8"}, "fp8-channel"),  # meta-llama/Llama-3.1-405B-Instruct-FP8
    ({"quant_method": "awq", "bits": 4}, "awq-int4"),
    ({"quant_method": "gptq", "bits": 4}, "gptq-int4"),
    ({"quant_method": "gptq", "bits": 8, "group_size": 128}, "gptq-int8"),  # Qwen/Qwen2.5-*-GPTQ-Int8
    ({"quant_method": "gptq", "bits": 3}, ""),  # no memviz format for 3-bit GPTQ
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "bnb-nf4"),
    ({"quant_method": "compressed-tensors"}, ""),
    # llm-compressor's schemes (compressed-tensors 0.20.1 quant_scheme.py): FP8_DYNAMIC, FP8, FP8_BLOCK, INT8 W8A8,
    # W4A16, NVFP4, MXFP4
    (_ct(8, "float", "channel"), "fp8-channel"), (_ct(8, "float", "tensor"), "fp8"),
    (_ct(8, "float", "block"), "fp8-block"), (_ct(8, "int", "channel"), "int8"),
    (_ct(4, "int", "group", 128), "w4a16"), (_ct(4, "float", "tensor_group", 16), "nvfp4"),
    (_ct(4, "float", "group", 32), "mxfp4"),
    ({"quant_method": "modelopt", "quant_algo": "FP8"}, "fp8"), ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "nvfp4"),
])
def test_the_checkpoints_own_format_is_read_from_its_quantization_config(quantization_config, fmt):
    found, notes = native_format({"quantization_config": quantization_config})
    assert found == fmt
    assert bool(notes) == (fmt == "")  # what memviz cannot read is said, what it reads is not
    assert native_format({}) == ("", [])


def test_an_autoround_checkpoint_is_read_as_vllm_reads_it():
    """intel/auto-round's integer export: GPTQ's layout by default (packing_format "auto_round:auto_gptq", vLLM 0.34
    INCConfig's default too) with no g_idx, said in a note; AWQ's for "auto_round:auto_awq"; widths and data types
    memviz has no format for are named; extra_config's 16-bit modules are named, but norms and towers, which the
    format keeps 16-bit anyway (a Qwen3.5 release's extra_config)."""
    def read(**kw):
        return native_format({"quantization_config": {"quant_method": "auto-round", "bits": 4, "group_size": 128,
                                                      "sym": True, **kw}})

    fmt, notes = read(packing_format="auto_round:auto_gptq", autoround_version="0.16.1")
    assert fmt == "gptq-int4" and len(notes) == 1 and "no g_idx" in notes[0]
    assert read()[0] == "gptq-int4" and read(bits=8)[0] == "gptq-int8"
    assert read(packing_format="auto_round:auto_awq") == ("awq-int4", [])
    for other in ({"bits": 2}, {"data_type": "mx_fp", "packing_format": "auto_round:llm_compressor"},
                  {"bits": 8, "packing_format": "auto_round:auto_awq"}):
        fmt, notes = read(**other)
        assert fmt == "" and "AutoRound" in notes[0] and "16 bit" in notes[0], other
    extra = {"model.layers.56.linear_attn.in_proj_b": {"bits": 16, "data_type": "float"},
             "mtp.layers.0.input_layernorm": {"bits": 16}, "model.visual.merger.linear_fc2": {"bits": 16},
             "model.layers.1.mlp.down_proj": {"bits": 4}}
    notes = read(extra_config=extra, group_size=64)[1]
    assert "group_size 64" in notes[0] and "no g_idx" in notes[1]
    assert "in_proj_b in 16 bit, which gptq-int4 quantizes" in notes[2] and "norm" not in notes[2] \
        and "visual" not in notes[2] and "down_proj" not in notes[2]


def test_an_asymmetric_gptq_packing_is_refused_by_vllm_and_run_by_transformers():
    """vLLM 0.34 takes GPTQ-packed values symmetric only (AutoGPTQConfig.TYPE_MAP; INC's `_build_gptq_method`);
    transformers runs the checkpoint where a kernel takes zero points (auto-round: gptqmodel's ExLlamaV2 at 4 bits,
    not Marlin)."""
    from memviz.core.errors import InputError
    for q in ({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": False},
              {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": False}):
        a = from_hf_config({**get_preset("llama-3.1-8b").config, "quantization_config": q})
        assert a.native_asymmetric
        with pytest.raises(InputError, match="zero points"):
            estimate(a, Scenario(engine="vllm", weight_format=a.native_format, gpu="a100-80g"))
        e = estimate(a, Scenario(engine="transformers", weight_format=a.native_format, gpu="a100-80g"))
        assert e.engine_facts["quant_kernel"] == "ExLlamaV2"


def test_what_a_compressed_tensors_format_leaves_out_is_named():
    """Another group size, asymmetric zero points and layers the checkpoint keeps 16-bit beside routers and heads."""
    _, notes = native_format({"quantization_config": _ct(4, "int", "group", 32, symmetric=False,
                                                         ignore=["lm_head", "re:.*mlp.gate$", "re:.*self_attn.*"])})
    assert [n.split(":")[0].split(" ")[0] for n in notes] == ["compressed-tensors", "asymmetric", "the"]
    assert "re:.*self_attn.*" in notes[2] and "mlp.gate" not in notes[2]
    assert native_format({"quantization_config": _ct(8, "int", "channel", ignore=["lm_head"])}) == ("int8", [])
    for hostile in ({"quant_method": "modelopt", "quantization": "FP8"}, {"quant_method": "compressed-tensors",
                    "config_groups": [1]}, {**_ct(8, "int", "channel"), "ignore": "lm_head"}, {"quant_method": 5}):
        fmt, notes = native_format({"quantization_config": hostile})  # a warning or a format, never a traceback
        assert fmt in ("", "int8") and all(isinstance(n, str) for n in notes)


def test_a_compressed_tensors_checkpoint_is_estimated_in_its_own_format():
    """RedHat-style FP8-dynamic and W4A16 configs: the default weights are the checkpoint's, not bf16 (before, a
    Llama-3.1-8B FP8 config came out at 14.96 GiB of weights instead of 8.46); a multimodal wrapper's
    quantization_config sits beside its text_config."""
    cfg = {**get_preset("llama-3.1-8b").config, "quantization_config": _ct(8, "float", "channel", ignore=["lm_head"])}
    a = from_hf_config(cfg)
    assert a.native_format == "fp8-channel" and not a.warnings
    e = estimate(a, Scenario(engine="vllm", weight_format=a.native_format, gpu="l40s"))
    assert e.bytes["weights"] < 0.6 * estimate(a, Scenario(engine="vllm", gpu="l40s")).bytes["weights"]
    wrapped = {"model_type": "qwen3_vl", "text_config": {**get_preset("qwen2.5-7b").config, "model_type": "qwen3_vl_text"},
               "quantization_config": _ct(4, "int", "group", 128)}
    assert from_hf_config(wrapped).native_format == "w4a16"


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
