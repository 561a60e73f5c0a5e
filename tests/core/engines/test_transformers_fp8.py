"""transformers loads an FP8 checkpoint as FP8 only where the GPU has FP8 arithmetic; elsewhere it dequantizes the
weights to the model's bf16 (quantizer_finegrained_fp8.py, transformers 5.x). Checked against a real CPU load:
every parameter bf16, their bytes memviz's to the byte."""

import json
from functools import partial

import pytest

from memviz.core.arch import from_config_path
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()


def weights(a, fmt, **kw) -> float:
    return estimate(a, Scenario(engine="transformers", weight_format=fmt, **kw)).bytes["weights"]


@pytest.mark.parametrize("fmt", ["fp8", "fp8-block"])
def test_fp8_stays_fp8_from_compute_capability_8_9_and_is_bf16_below_and_on_the_cpu(fmt):
    bf16 = weights(LLAMA8, "bf16")
    for gpu in ("h100-80g", "rtx4090", "l40s"):
        assert weights(LLAMA8, fmt, gpu=gpu) < 0.6 * bf16, gpu
    assert weights(LLAMA8, fmt) < 0.6 * bf16  # no GPU named: taken to have FP8
    for kw in ({"gpu": "a100-80g"}, {"gpu": "rtx3090"}, {"device": "cpu"}):
        assert weights(LLAMA8, fmt, **kw) == bf16, kw


def test_the_launch_command_says_when_fp8_is_dequantized():
    on_a100 = estimate(LLAMA8, Scenario(engine="transformers", weight_format="fp8-block", gpu="a100-80g"))
    on_h100 = estimate(LLAMA8, Scenario(engine="transformers", weight_format="fp8-block", gpu="h100-80g"))
    assert "dequantizes the FP8 weights to bf16" in on_a100.launch_command()
    assert "dequantizes" not in on_h100.launch_command()


def _checkpoint(folder, tie: bool, quantization_config: dict) -> int:
    """A random Qwen3 saved with `quantization_config`; for quant_method "fp8" as a block-FP8 release (every decoder
    matrix float8_e4m3fn with its fp32 `weight_scale_inv` per 128 x 128 block, embeddings and norms bf16: the layout
    of Qwen/Qwen3-*-FP8), else in bf16. Returns the tensors' bytes."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model("qwen3", hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                               num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=1024,
                               tie_word_embeddings=tie)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    fp8 = quantization_config["quant_method"] == "fp8"
    tensors = {}
    for name, t in model.state_dict().items():
        if tie and name == "lm_head.weight":
            continue
        if fp8 and ".layers." in name and name.endswith("proj.weight"):
            rows, cols = t.shape
            tensors[name] = t.to(torch.float8_e4m3fn)
            tensors[name.removesuffix("weight") + "weight_scale_inv"] = torch.ones(-(-rows // 128), -(-cols // 128))
        else:
            tensors[name] = t.contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps({**cfg.to_dict(), "quantization_config": quantization_config}))
    return sum(t.numel() * t.element_size() for t in tensors.values())


BLOCK_FP8 = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}


def _transformers_major(transformers) -> int:
    return int(transformers.__version__.split(".")[0])


@pytest.mark.parametrize("tie", [True, False])
def test_a_real_cpu_load_of_a_block_fp8_checkpoint_holds_what_memviz_estimates(tmp_path, tie):
    """transformers 5.x dequantizes on the CPU, to memviz's bytes; 4.x (the lowest version the probe takes) refuses
    FP8 without a GPU, which is why the engine follows 5.x."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    stored = _checkpoint(tmp_path, tie, BLOCK_FP8)
    load = partial(transformers.AutoModelForCausalLM.from_pretrained, tmp_path, dtype=torch.bfloat16, device_map="cpu")
    if _transformers_major(transformers) < 5:
        with pytest.raises(RuntimeError, match="A GPU or XPU is needed for FP8"):
            load()
        return
    model = load()
    params = {p.data_ptr(): p for p in model.parameters()}
    assert {p.dtype for p in params.values()} == {torch.bfloat16}
    loaded = sum(p.numel() * p.element_size() for p in params.values())
    shares = model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    assert shares is tie  # the default skip list keeps tied keys in bf16: no separate output copy

    a = from_config_path(tmp_path)
    assert a.native_format == "fp8-block"
    assert weights(a, "fp8-block", device="cpu") == loaded
    assert weights(a, "fp8-block", gpu="h100-80g") == stored < loaded  # kept in FP8 where the GPU has it


def test_transformers_and_memviz_both_refuse_per_channel_fbgemm_fp8_on_the_cpu(tmp_path):
    """FbgemmFp8HfQuantizer.validate_environment raises before any weight is read (5.x: no GPU; 4.x: no fbgemm-gpu,
    then no GPU); memviz refuses the same scenario."""
    from memviz.core.errors import InputError

    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    _checkpoint(tmp_path, True, {"quant_method": "fbgemm_fp8"})
    match = "requires a GPU" if _transformers_major(transformers) >= 5 else "fbgemm"
    with pytest.raises((ImportError, RuntimeError), match=match):
        transformers.AutoModelForCausalLM.from_pretrained(tmp_path, dtype=torch.bfloat16, device_map="cpu")
    a = from_config_path(tmp_path)
    assert a.native_format == "fp8-channel"
    with pytest.raises(InputError, match="on the CPU"):
        weights(a, "fp8-channel", device="cpu")


@pytest.mark.parametrize("kw", [{"device": "cpu"}, {"gpu": "a100-80g"}, {"gpu": "rtx4090"}])
def test_transformers_refuses_per_channel_fbgemm_fp8_below_compute_capability_9(kw):
    from memviz.core.errors import InputError

    with pytest.raises(InputError, match="compute capability 9.0"):
        weights(LLAMA8, "fp8-channel", **kw)
    assert weights(LLAMA8, "fp8-channel", gpu="h100-80g") < 0.6 * weights(LLAMA8, "bf16")


#: loads a checkpoint through transformers' FP8 path with CUDA reported present at capability 9.0, in a process of its
#: own (libraries cache what CUDA reports); prints the parameters' bytes, how many are float8 and the LM head's form
_GPU_PATH_LOAD = """
import json, sys, torch, transformers
torch.cuda.is_available = lambda: True
torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
m = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.bfloat16, device_map="cpu")
ps = {p.data_ptr(): p for p in m.parameters()}
print(json.dumps({"bytes": sum(p.numel() * p.element_size() for p in ps.values()),
                  "fp8": sum(1 for p in ps.values() if p.dtype == torch.float8_e4m3fn),
                  "head": [type(m.lm_head).__name__, str(m.lm_head.weight.dtype)],
                  "shared": m.lm_head.weight.data_ptr() == m.model.embed_tokens.weight.data_ptr()}))
"""


@pytest.mark.parametrize("tie", [True, False])
def test_the_fp8_gpu_path_keeps_the_checkpoint_bytes_and_a_tied_head_shared(tmp_path, tie):
    """Where the GPU has FP8 (compute capability 8.9+), transformers 5.x swaps the decoder's linear layers for FP8Linear
    and loads the float8 weights and their scales as stored; its default skip list (tied keys, the last module, the
    output embeddings) keeps the LM head a bf16 Linear, which a tied model shares with its embedding: no separate
    16-bit output copy. Loaded on this CPU through that path (the loading code is the device-independent part; no
    FP8 kernel runs). The engine follows 5.x, so an install of 4.x fails here rather than passing unchecked."""
    import subprocess
    import sys

    pytest.importorskip("torch")  # the probe's extra: absent only from the lowest-versions run of the core tests
    pytest.importorskip("transformers")
    stored = _checkpoint(tmp_path, tie, BLOCK_FP8)
    run = subprocess.run([sys.executable, "-c", _GPU_PATH_LOAD, str(tmp_path)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["fp8"] == 14 and got["bytes"] == stored  # 2 layers x 7 matrices in float8, scales as stored
    assert got["head"] == ["Linear", "torch.bfloat16"] and got["shared"] is tie
    assert weights(from_config_path(tmp_path), "fp8-block", gpu="h100-80g") == stored
