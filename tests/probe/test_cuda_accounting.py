"""The CUDA accounting of the probe, run without a GPU: a real tiny model on the CPU measured through a
meter that answers like torch.cuda's allocator and NVML (allocated = RSS, reserved = allocated + 6 MiB,
process = reserved + 300 MiB of context). Exercises the branch no machine here can run for real: non-torch
memory, reserved peaks, fragmentation, and how the components add up to the peak."""

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from memviz.probe import runner  # noqa: E402
from memviz.probe.memory import CPUMeter  # noqa: E402

CONFIG = Path(__file__).parents[1] / "data" / "probe" / "llama_gqa.json"
MiB = 2**20


class AllocatorLikeMeter(CPUMeter):
    RESERVE, CONTEXT = 6 * MiB, 300 * MiB

    def reserved(self):
        return self.rss() + self.RESERVE

    def peak_reserved(self):
        return self.peak() + self.RESERVE

    def process_used(self):
        return self.reserved() + self.CONTEXT

    def sample(self):
        return {"allocated": self.allocated(), "reserved": self.reserved()}


def test_cuda_branch_accounts_context_reserve_and_fragmentation(capsys):
    from transformers import AutoModelForCausalLM, DynamicCache, StaticCache

    args = runner.parser().parse_args(["--config", str(CONFIG), "--dtype", "fp32", "--device", "cpu", "--batch", "2",
                                       "--prompt", "64", "--new", "4", "--no-store"])
    cfg, arch, _ = runner._source(args)
    meter = AllocatorLikeMeter()
    group = runner.MeterGroup({"cpu": meter}, on_cuda=True)
    measured = dict.fromkeys(("weights", "kv_cache", "activations", "overhead", "peak"))
    state = {"phase": "load", "env": {}, "baseline_rss": 0, "runtime_rss": 0}
    code = runner._measure(args, torch, AutoModelForCausalLM, DynamicCache, StaticCache, runner.hf_config(cfg), None,
                           torch.float32, ["cpu"], group, meter, state, measured, arch, 64 + 4 - 1)
    assert code == runner.EXIT_OK
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    result = next(e for e in events if e["event"] == "result")
    m = result["measured"]
    # (each figure is read from RSS a moment apart: equal within a few pages)
    assert result["details"]["nontorch"] == pytest.approx(AllocatorLikeMeter.CONTEXT, abs=64 * 1024)
    assert result["details"]["fragmentation"] == pytest.approx(AllocatorLikeMeter.RESERVE, abs=64 * 1024)
    # peak = non-torch (context) + the largest reserved peak; overhead is what weights, KV and activations leave
    assert m["peak"] >= m["weights"] + m["kv_cache"] + AllocatorLikeMeter.CONTEXT
    assert sum(m[k] for k in ("weights", "kv_cache", "activations", "overhead")) == m["peak"]
    assert m["kv_cache"] == result["estimate"]["kv_cache"] and m["overhead"] >= AllocatorLikeMeter.CONTEXT - 64 * 1024
    assert result["scenario"]["device"] == "cpu" and "per_device" not in result
