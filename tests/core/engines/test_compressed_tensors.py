"""A compressed-tensors checkpoint in the engines, against a real one (tests/data/probe/compressed_tensors_w4a16.json,
made by benchmarks/compressed_tensors_load.py): vLLM keeps the file's packed bytes; transformers loads them so and
compressed-tensors decompresses each layer to bf16 on its first forward, keeping the scales beside."""

import json
from pathlib import Path

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate

RUN = json.loads((Path(__file__).parents[2] / "data" / "probe" / "compressed_tensors_w4a16.json").read_text())


def _weights(engine: str, **kw) -> tuple[int, str]:
    a = from_hf_config(RUN["config"])
    e = estimate(a, Scenario(engine=engine, weight_format=a.native_format, context_tokens=16, **kw))
    return e.bytes["weights"], e.launch_command()


def test_the_checkpoint_reads_as_its_own_format_to_the_byte():
    a = from_hf_config(RUN["config"])
    assert (a.native_format, a.native_quantizer, a.warnings) == ("w4a16", "compressed-tensors", ())
    assert _weights("vllm", gpu="l4")[0] == RUN["file_bytes"] == RUN["parameter_bytes_loaded"]


def test_transformers_holds_the_decompressed_weights_after_the_first_forward():
    held, command = _weights("transformers", device="cpu")
    assert held == RUN["parameter_bytes_after_forward"]
    assert "decompresses each layer to bf16" in command


def test_a_format_chosen_apart_from_the_checkpoint_is_not_decompressed():
    """Only the checkpoint's own format decompresses; another scenario on the same model keeps its bytes."""
    a = from_hf_config(RUN["config"])
    bf16 = estimate(a, Scenario(engine="transformers", weight_format="bf16", context_tokens=16, device="cpu"))
    awq = estimate(a, Scenario(engine="transformers", weight_format="awq-int4", context_tokens=16, device="cpu"))
    assert awq.bytes["weights"] < bf16.bytes["weights"] < RUN["parameter_bytes_after_forward"]
