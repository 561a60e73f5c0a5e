"""Several GPUs under llama.cpp: the layers each holds (`--split-mode layer`) and pipeline parallelism's input
copies, as llama.cpp 0c1e570 does them (memviz.core.engines.llamacpp_split)."""

from __future__ import annotations

import pytest

from memviz.core.engines.llamacpp_split import layer_devices, split_points
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset


def test_two_equal_gpus_take_the_layers_before_and_after_the_middle_of_the_offloaded_positions():
    """48 layers and the output are 49 positions: the first GPU takes positions below 24.5 (layers 0-24)."""
    assert layer_devices(48, 2, None, "") == [range(0, 25), range(25, 48)]
    assert layer_devices(80, 4, None, "") == [range(0, 21), range(21, 41), range(41, 61), range(61, 80)]


def test_tensor_split_shares_and_partial_offload():
    assert layer_devices(48, 2, None, "3,1") == [range(0, 37), range(37, 48)]
    # -ngl 25: layers 24-47 and the output are offloaded; the CPU's layers 0-23 sit in the first range
    assert layer_devices(48, 2, 25, "") == [range(0, 37), range(37, 48)]
    assert split_points(3, "1;1;2") == [0.25, 0.5, 1.0]


@pytest.mark.parametrize("spec", ["3,x", "1,1,1", "0,0", "-1,2"])
def test_a_tensor_split_llama_cpp_would_not_take_is_refused(spec):
    with pytest.raises(InputError):
        split_points(2, spec)


def _llama70b(**kw):
    a = get_preset("llama-3.1-70b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=32768, gpu="rtx4090",
                  **kw)
    return estimate(a, sc)


def test_the_gpus_hold_the_one_gpu_figures_between_them_and_each_keeps_four_copies_of_its_inputs():
    one, two = _llama70b(), _llama70b(pp=2)
    assert sum(d.weights for d in two.devices) == one.devices[0].weights
    assert sum(d.kv_cache for d in two.devices) == one.devices[0].kv_cache
    assert two.devices[0].kv_cache / two.devices[1].kv_cache == 41 / 39  # 80 layers: 41 and 39
    n, h, mask = 512, 8192, 2 * 32768 * 512  # f16 flash-attention mask of n_kv x n_ubatch
    ring = 3 * (mask + 4 * n * h)
    no_ring = _llama70b(pp=2, options=(("n_cpu_moe", 0), ("override_tensor", "blk\\.0\\.ffn_up=CUDA0")))
    assert two.devices[1].activations - no_ring.devices[1].activations == ring


def test_tensor_split_needs_several_gpus():
    with pytest.raises(InputError, match="pp"):
        _llama70b(options=(("tensor_split", "1,1"),))
    with pytest.raises(InputError, match="2 GPUs"):
        _llama70b(pp=2, options=(("tensor_split", "1,1,1"),))


def test_the_fewest_gpus_search_drops_a_split_written_for_another_number_of_gpus():
    from memviz.core.fit import min_gpus
    from memviz.core.gpus import get_gpu

    a = get_preset("llama-3.1-70b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=32768, gpu="rtx4090", pp=2,
                  options=(("tensor_split", "3,1"),))
    fewest = min_gpus(a, sc, get_gpu("rtx4090"))
    assert fewest.pp == 3 and "tensor_split" not in dict(fewest.options)


def test_ollama_has_no_tensor_split_and_says_so():
    a = get_preset("llama-3.1-70b").architecture()
    with pytest.raises(InputError, match="not an Ollama setting"):
        estimate(a, Scenario(engine="ollama", weight_format="Q4_K_M", pp=2, options=(("tensor_split", "3,1"),)))
