"""compressed-tensors checkpoints in the engines, against real ones (tests/data/probe/compressed_tensors.json, made by
benchmarks/compressed_tensors_load.py: W4A16, per-channel FP8, INT8, NVFP4 and MXFP4 of one tiny Llama). vLLM keeps the
packed weights; transformers loads them so and compressed-tensors decompresses each layer to bf16 on its first
forward, its scales to 16 bit beside."""

import json
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import Role, build_inventory

RUNS = json.loads((Path(__file__).parents[2] / "data" / "probe" / "compressed_tensors.json").read_text())["runs"]


def _scaled_rows(a) -> int:
    """Output rows of the quantized matrices: a per-channel scheme keeps one scale each, 16-bit in the file
    (compressed-tensors' scale_dtype defaults to the model's) where memviz's fp8-channel / int8 count vLLM's float32
    (vLLM 0.33 fp8_utils.py `create_fp8_scale_parameter`, compressed_tensors_w8a8_int8.py: torch.float32)."""
    quantized = (Role.ATTENTION, Role.MLP, Role.EXPERT)
    return sum(t.shape[0] for t in build_inventory(a) if t.role in quantized and t.is_matrix)


def _weights(run: dict, engine: str, **kw) -> tuple[int, str]:
    a = from_hf_config(run["config"])
    e = estimate(a, Scenario(engine=engine, weight_format=a.native_format, context_tokens=16, **kw))
    return e.bytes["weights"], e.launch_command()


@pytest.mark.parametrize("run", RUNS, ids=[r["scheme"] for r in RUNS])
def test_the_checkpoint_reads_as_its_own_format(run):
    a = from_hf_config(run["config"])
    assert (a.native_format, a.native_quantizer, a.warnings) == (run["scheme"], "compressed-tensors", ())
    wide = 2 * _scaled_rows(a) if run["scheme"] in ("fp8-channel", "int8") else 0  # vLLM's float32 channel scales
    assert _weights(run, "vllm", gpu="l4")[0] == run["file_bytes"] + wide
    assert run["file_bytes"] == run["parameter_bytes_loaded"]


@pytest.mark.parametrize("run", RUNS, ids=[r["scheme"] for r in RUNS])
def test_transformers_holds_the_decompressed_weights_after_the_first_forward(run):
    """Before, memviz counted the packed bytes (5,211,360 for W4A16, 36.6 % of what the run holds) and refused
    the per-channel FP8 one on the CPU as if it were an fbgemm_fp8 checkpoint, which transformers loaded; NVFP4's
    FP8 scales come back as bf16 ones (753,664 bytes where the file holds 376,832)."""
    held, command = _weights(run, "transformers", device="cpu")
    assert held == run["parameter_bytes_after_forward"]
    assert "decompresses each layer to bf16" in command


def test_a_format_chosen_apart_from_the_checkpoint_is_not_decompressed():
    """Only the checkpoint's own format decompresses; another scenario on the same model keeps its bytes."""
    a = from_hf_config(RUNS[0]["config"])
    bf16 = estimate(a, Scenario(engine="transformers", weight_format="bf16", context_tokens=16, device="cpu"))
    awq = estimate(a, Scenario(engine="transformers", weight_format="awq-int4", context_tokens=16, device="cpu"))
    assert awq.bytes["weights"] < bf16.bytes["weights"] < RUNS[0]["parameter_bytes_after_forward"]


@pytest.mark.parametrize("run", RUNS, ids=[r["scheme"] for r in RUNS])
def test_an_imported_checkpoint_folder_counts_as_transformers_holds_it(run, tmp_path):
    """The checkpoint's own tensor header (names, dtypes, shapes as compressed-tensors wrote them; zero-filled here)
    imported as a folder: its stored bytes are the file's, and transformers holds what its format decompresses to
    after the first forward (before, the stored packed bytes)."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    from memviz.core.importers.safetensors_file import read_safetensors

    save_file({name: torch.zeros(shape, dtype=getattr(torch, dtype)) for name, dtype, shape in run["tensors"]},
              str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(run["config"]))
    a = read_safetensors(tmp_path)
    stored = estimate(a, Scenario(engine="vllm", weight_format="stored", context_tokens=16, gpu="l4"))
    held = estimate(a, Scenario(engine="transformers", weight_format="stored", context_tokens=16, device="cpu"))
    assert stored.bytes["weights"] == run["file_bytes"]
    assert held.bytes["weights"] == run["parameter_bytes_after_forward"]
