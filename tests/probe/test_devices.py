"""Device handling of the probe that runs without a GPU: --device parsing, per-device grouping and
sampling, and the per-device estimate of a model spread over several GPUs (a pipeline split)."""

import argparse

import pytest

from memviz.probe.runner import BadInput, MeterGroup, by_device, estimate_result, requested_devices


@pytest.mark.parametrize(("spec", "devices"), [("auto", []), ("cpu", ["cpu"]), ("cuda", ["cuda:0"]),
                                               ("cuda:1", ["cuda:1"]), ("cuda:0,1", ["cuda:0", "cuda:1"])])
def test_requested_devices(spec, devices):
    assert requested_devices(spec) == devices


@pytest.mark.parametrize("spec", ["gpu", "cuda:", "cuda:0,0", "cuda:0,00", "cuda:a", "cuda:0,-1", "cpu,cuda"])
def test_bad_device_specs(spec):
    with pytest.raises(BadInput, match="unknown device"):
        requested_devices(spec)


class FakeMeter:
    def __init__(self, allocated):
        self.value, self.resets = allocated, 0

    def allocated(self):
        return self.value

    def reset_peak(self):
        self.resets += 1

    def sample(self):
        return {"allocated": self.value, "reserved": self.value + 10}


def test_meter_group_reads_every_device_and_sums_samples():
    group = MeterGroup({"cuda:0": FakeMeter(100), "cuda:1": FakeMeter(30)}, on_cuda=True)
    assert group.allocated() == {"cuda:0": 100, "cuda:1": 30}
    group.reset_peak()
    assert [m.resets for m in group.meters.values()] == [1, 1]
    s = group.sample()
    assert s["allocated"] == 130 and s["reserved"] == 150 and s["per_device"]["cuda:1"]["allocated"] == 30
    single = MeterGroup({"cpu": FakeMeter(5)}, on_cuda=False)
    assert single.sample() == {"allocated": 5, "reserved": 15}


def test_by_device_groups_tensors():
    torch = pytest.importorskip("torch")
    a, b = torch.zeros(4), torch.ones(2)
    assert {k: len(v) for k, v in by_device([a, None, b]).items()} == {"cpu": 2}


def test_spread_model_estimate_is_per_device():
    args = argparse.Namespace(quant="none", dtype="bf16", model=None, batch=2, attn="sdpa", cache="dynamic")
    one, _ = estimate_result(_llama(), args, ["cuda:0"], 1000)
    two, scenario = estimate_result(_llama(), args, ["cuda:0", "cuda:1"], 1000)
    assert scenario["pp"] == 2 and "per_device" not in one
    per = two["per_device"]
    assert [d["device"] for d in per] == ["cuda:0", "cuda:1"]
    # the split moves layers, it does not create or lose bytes: weights and KV add up to the single-GPU figures
    assert sum(d["weights"] for d in per) == one["weights"]
    assert sum(d["kv_cache"] for d in per) == one["kv_cache"]
    assert two["peak"] == max(d["peak"] for d in per) < one["peak"]


def _llama():
    from memviz.core.presets import get_preset

    return get_preset("llama-3.2-1b").architecture()
