"""llama-server's --fit (common/fit.cpp in llama.cpp 0c1e570) as memviz models it: the most the GPU holds with 1 GiB
left free, whole layers for a dense model, experts moved to host memory first for a MoE model."""

from dataclasses import replace

import pytest

from memviz.core.engines import get_engine
from memviz.core.engines.llamacpp_fit import FIT_MARGIN_BYTES, experts_pattern, fit_placement
from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import needed_bytes
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset


def _budget(sc: Scenario) -> float:
    return get_engine(sc.engine).usable_bytes(get_gpu(sc.gpu), sc) - FIT_MARGIN_BYTES


def _need(a, sc: Scenario, **changes) -> int:
    return needed_bytes(estimate(a, sc.with_changes(**changes)))


def test_a_dense_model_keeps_the_most_layers_that_leave_a_gib_free():
    a = get_preset("llama-3.1-70b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=32768, gpu="rtx4090",
                  options={"fit": True})
    fit = fit_placement(a, sc)
    assert fit is not None and 0 < fit.gpu_layers < a.num_layers and not fit.all_experts_on_host
    plain = sc.with_changes(options={"fit": False})
    assert _need(a, plain, gpu_layers=fit.gpu_layers) <= _budget(sc) < _need(a, plain, gpu_layers=fit.gpu_layers + 1)
    fitted = estimate(a, sc)
    assert fitted.devices == estimate(a, plain.with_changes(gpu_layers=fit.gpu_layers)).devices
    assert fitted.engine_facts["fit"].startswith(f"-ngl {fit.gpu_layers}:")
    assert "-ngl" not in fitted.launch_command()  # llama-server places them itself


def test_a_moe_model_moves_the_last_layers_experts_to_host_memory_first():
    a = get_preset("qwen3-30b-a3b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q8_0", kv_format="fp16", context_tokens=32768, gpu="rtx4090",
                  options={"fit": True})
    fit = fit_placement(a, sc)
    assert fit is not None and fit.gpu_layers is None and 0 < fit.experts_from < a.num_layers
    plain = {"fit": False}

    def need(first: int) -> int:
        rule = experts_pattern(range(first, a.num_layers))
        return _need(a, sc, options={**plain, "override_tensor": rule})

    assert need(fit.experts_from) <= _budget(sc) < need(fit.experts_from + 1)
    e = estimate(a, sc)
    assert e.host.weights > 0 and needed_bytes(e) <= _budget(sc)
    # the last step: layer F's up experts back on the GPU, then its gate experts as well (both fit here on the 23.64
    # GiB CUDA reports; its down experts too would be layer F whole, which does not)
    assert fit.first_layer_rule == "gate"
    up = replace(fit, first_layer_rule="up")
    assert _need(a, sc, options={**plain, **up.options(a)}) < _need(a, sc, options={**plain, **fit.options(a)}) \
        <= _budget(sc)
    assert e.engine_facts["fit"] == (f"every layer on the GPU, the experts of layers {fit.experts_from}-47 in host "
                                     f"memory (layer {fit.experts_from} keeps its up and gate experts on the GPU)")
    assert e.bytes["weights"] > estimate(a, sc.with_changes(options={**plain, **replace(
        fit, first_layer_rule="moe").options(a)})).bytes["weights"]


def test_where_even_dense_only_layers_do_not_all_fit_the_last_ones_stay_with_every_expert_in_host_memory():
    a = get_preset("mixtral-8x7b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q8_0", kv_format="fp16", context_tokens=32768, gpu="vram:4GiB",
                  options={"fit": True})
    fit = fit_placement(a, sc)
    assert fit.all_experts_on_host and 0 < fit.gpu_layers < a.num_layers
    plain = {"fit": False, "n_cpu_moe": a.num_layers}
    assert (_need(a, sc, gpu_layers=fit.gpu_layers, options=plain) <= _budget(sc)
            < _need(a, sc, gpu_layers=fit.gpu_layers + 1, options=plain))


@pytest.mark.parametrize("changes", [{"gpu_layers": 40}, {"options": {"fit": True, "n_cpu_moe": 2}},
                                     {"options": {"fit": False}}, {"gpu": "h200"}])
def test_fit_changes_nothing_the_user_placed_or_that_already_fits(changes):
    a = get_preset("mixtral-8x7b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q8_0", context_tokens=8192, gpu="rtx4090", options={"fit": True})
    e = estimate(a, sc.with_changes(**changes))
    assert "fit" not in e.engine_facts


def test_ollama_leaves_the_layers_to_llama_servers_fit():
    """Ollama fb30760 passes no -ngl unless num_gpu is set (llm/llama_server.go `startLlamaServer`)."""
    a = get_preset("llama-3.1-70b").architecture()
    base = dict(weight_format="Q4_K_M", kv_format="fp16", context_tokens=8192, gpu="rtx4090")
    ollama = estimate(a, Scenario(engine="ollama", **base))
    assert "fit" in ollama.engine_facts and "num_gpu" not in ollama.launch_command()
    assert needed_bytes(ollama) <= _budget(ollama.scenario)
    assert "fit" not in estimate(a, Scenario(engine="llamacpp", **base)).engine_facts  # memviz's -ngl 999
