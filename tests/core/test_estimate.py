import math

import numpy as np
import pytest

from memviz.core.arch import SLIDING
from memviz.core.errors import InputError
from memviz.core.estimate import COMPONENTS, Scenario, device_arrays, estimate
from memviz.core.formats import get_weight_format, weight_bytes
from memviz.core.presets import get_preset
from memviz.core.units import GiB, MiB

LLAMA8 = get_preset("llama-3.1-8b").architecture()
SEED = get_preset("seed-hypothetical").architecture()


def test_components_sum_to_total_and_carry_provenance():
    e = estimate(LLAMA8, Scenario(context_tokens=8192, batch=2))
    assert e.total == sum(e.bytes[c] for c in COMPONENTS)
    prov = {c.name: c.provenance for c in e.components}
    assert prov == {"weights": "exact", "kv_cache": "formula", "activations": "formula", "overhead": "constant"}
    assert e.bytes["weights"] == 16060522496


@pytest.mark.parametrize("engine", ["transformers", "vllm", "llamacpp"])
def test_seed_kv_table_in_every_engine(engine):
    e = estimate(SEED, Scenario(context_tokens=32768, batch=4, engine=engine, kv_format="bf16"))
    assert e.kv_bytes_per_token == 131072
    assert e.bytes["kv_cache"] == 16 * GiB


def test_engines_apply_their_own_rules_to_the_same_model():
    a = get_preset("deepseek-v2-lite").architecture()
    hf = estimate(a, Scenario(engine="transformers", context_tokens=4096))
    vllm = estimate(a, Scenario(engine="vllm", context_tokens=4096, gpu="h100-80g"))
    # both cache MLA's latent (512 + 64 values per token and layer: transformers 5.x, measured on an H200), but
    # vLLM reserves its whole pool while transformers holds what the sequences wrote
    assert hf.bytes["kv_cache"] == hf.kv_cache_required == vllm.kv_cache_required == 27 * 576 * 2 * 4096
    assert vllm.bytes["kv_cache"] > vllm.kv_cache_required
    mistral = get_preset("mistral-7b-v0.1").architecture()
    hf_m = estimate(mistral, Scenario(engine="transformers", context_tokens=10000)).bytes["kv_cache"]
    vl_m = estimate(mistral, Scenario(engine="vllm", context_tokens=10000)).bytes["kv_cache"]
    # both hold the 4,096-token window (transformers: a window-1 view of a window-token tensor)
    assert hf_m == vl_m == 32 * 8 * 128 * 2 * 2 * 4096


def test_llamacpp_pads_context_keeps_embedding_on_host_and_output_buffer():
    e = estimate(LLAMA8, Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=1000))
    assert e.bytes["kv_cache"] == 1024 * 131072  # n_ctx padded to 256 with flash attention
    fmt = get_weight_format("Q4_K_M")
    embed = 128256 * 4096 // 256 * 144
    assert e.bytes["weights"] == weight_bytes(LLAMA8, fmt) - embed
    # host: the output buffer (one row of f32 logits) and the host compute buffer beside the GPU (the token
    # embedding's 512 rows and the f32 mask over 1,024 cells)
    assert e.host.weights == embed and e.host.activations == 128256 * 4 + 4 * 512 * (4096 + 1024)


def test_llamacpp_gpu_layers_offload_last_layers():
    full = estimate(LLAMA8, Scenario(engine="llamacpp", weight_format="Q8_0"))
    half = estimate(LLAMA8, Scenario(engine="llamacpp", weight_format="Q8_0", gpu_layers=16))
    assert half.bytes["weights"] < full.bytes["weights"] / 2  # output layer also leaves the GPU
    assert half.bytes["kv_cache"] == full.bytes["kv_cache"] / 2
    assert half.host.weights + half.bytes["weights"] == full.host.weights + full.bytes["weights"]
    no_kv = estimate(LLAMA8, Scenario(engine="llamacpp", weight_format="Q8_0", kv_offload=True))
    assert no_kv.bytes["kv_cache"] == 0 and no_kv.host.kv_cache == full.bytes["kv_cache"]


def test_transformers_cpu_offload_keeps_kv_on_gpu_and_streams_a_layer():
    full = estimate(LLAMA8, Scenario())
    off = estimate(LLAMA8, Scenario(gpu_layers=8))
    assert off.bytes["kv_cache"] == full.bytes["kv_cache"]
    assert off.host.weights > 0 and off.bytes["activations"] > full.bytes["activations"]


def test_tensor_parallel_splits_weights_and_kv_per_device():
    a = get_preset("llama-3.1-70b").architecture()
    one = estimate(a, Scenario(engine="vllm", context_tokens=8192))
    four = estimate(a, Scenario(engine="vllm", context_tokens=8192, tp=4))
    assert len(four.devices) == 4
    assert four.bytes["kv_cache"] == one.bytes["kv_cache"] / 4
    assert four.bytes["weights"] == pytest.approx(one.bytes["weights"] / 4, rel=1e-4)


def test_pipeline_parallel_splits_layers():
    a = get_preset("llama-3.1-70b").architecture()
    e = estimate(a, Scenario(engine="vllm", pp=2, context_tokens=8192))
    assert len(e.devices) == 2
    assert sum(d.kv_cache for d in e.devices) == estimate(a, Scenario(engine="vllm", context_tokens=8192)).bytes["kv_cache"]


def test_vllm_pool_takes_what_is_left_in_whole_blocks():
    """vLLM budgets gpu_memory_utilization x the CUDA total (79.22 GiB on an H100 80GB, not 80 GB) and the pool
    takes what weights, profile peak and non-torch memory leave, in whole 16-token blocks (vLLM before 0.34)."""
    sc = Scenario(engine="vllm", gpu="h100-80g", gpu_memory_utilization=0.9,
                  options={"extensible_kv_cache": False, "block_size": 16})
    e = estimate(LLAMA8, sc)
    budget = math.ceil(0.9 * round(79.22 * GiB))
    block = 16 * 131072
    assert budget - block < e.total <= budget
    assert e.bytes["kv_cache"] % block == 0
    assert e.engine_facts["kv_pool_tokens"] == e.bytes["kv_cache"] // 131072
    assert e.engine_facts["max_concurrency"] == pytest.approx(e.engine_facts["kv_pool_tokens"] / 4096)
    assert e.kv_cache_required < e.bytes["kv_cache"]


def test_overhead_is_editable():
    e = estimate(LLAMA8, Scenario(runtime_overhead_bytes=0, allocator_fraction=0))
    assert e.bytes["overhead"] == 0
    assert estimate(LLAMA8, Scenario()).bytes["overhead"] >= 512 * MiB


def test_per_sequence_lengths():
    e = estimate(SEED, Scenario(sequence_tokens=(1000, 3000), engine="vllm"))
    assert e.bytes["kv_cache"] == (1024 + 3008) * 131072  # each rounded up to 64-token pages


def test_device_arrays_match_estimate():
    sc = Scenario(context_tokens=4096)
    gpus, _ = device_arrays(LLAMA8, sc, np.array([4096, 8192]), np.array([1, 1]))
    assert int(np.ceil(gpus[0].total[0])) == pytest.approx(estimate(LLAMA8, sc).total, abs=4)


@pytest.mark.parametrize("unified", [False, True])
@pytest.mark.parametrize("config", ["minimax-m3", "hy-v4", "laguna", "deepseek-v4"])
def test_a_sweep_of_the_sparse_attention_models_matches_its_points(config, unified):
    """Sweeps hand every engine rule arrays of contexts and sequences: MiniMax-M3's sparse-layer stage (dense when a
    unified cache holds several sequences) and HY-V4's masks give, point by point, the single estimates."""
    import json
    from pathlib import Path

    from memviz.core.arch import from_hf_config

    a = from_hf_config(json.loads((Path(__file__).parents[1] / "data" / "llamacpp" / "configs" / f"{config}.json")
                                  .read_text()))
    points = [(1024, 1), (2048, 2), (4096, 4)]
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", device="cpu",
                  options=(("kv_unified", unified),))
    gpus, _ = device_arrays(a, sc, np.array([c for c, _ in points]), np.array([b for _, b in points]))
    for i, (context, batch) in enumerate(points):
        single = estimate(a, sc.with_changes(context_tokens=context, batch=batch))
        assert int(np.ceil(gpus[0].activations[i])) == single.bytes["activations"]


@pytest.mark.parametrize(
    "kwargs",
    [{"context_tokens": 0}, {"batch": -1}, {"tp": 0}, {"weight_format": "int3"}, {"kv_format": "x"}, {"engine": "trt"},
     {"tp": 2, "engine": "transformers"}, {"gpu_layers": 3, "engine": "vllm"}, {"gpu": "gtx-ultra"},
     {"gpu_memory_utilization": 1.5}, {"attention": "magic"}, {"sequence_tokens": (5, 0)}, {"device": "tpu"}],
)
def test_bad_scenarios_raise_input_error(kwargs):
    with pytest.raises(InputError):
        Scenario(**kwargs)


def test_scenario_round_trip():
    sc = Scenario(name="a", sequence_tokens=(3, 4), engine="vllm", tp=2)
    assert Scenario.from_dict(sc.to_dict()) == sc
    with pytest.raises(InputError):
        Scenario.from_dict({"nonsense": 1})


def test_every_preset_every_engine_estimates():
    """Every engine estimates every preset (but vLLM DeepSeek-V4 and the types it dropped, llama.cpp the types it has
    no architecture for, refused with one line)."""
    from memviz.core.arch import CROSS
    from memviz.core.engines.llamacpp import NO_ARCHITECTURE
    from memviz.core.engines.vllm import NOT_IN_VLLM
    from memviz.core.presets import all_presets

    for key, p in all_presets().items():
        a = p.architecture()
        for engine, fmt in (("transformers", "bf16"), ("vllm", "fp8"), ("llamacpp", "Q4_K_M")):
            context = min(4096, a.max_position_embeddings or 4096)
            if engine == "vllm" and a.compress_ratios:
                with pytest.raises(InputError, match="DeepSeek-V4"):
                    estimate(a, Scenario(engine=engine, weight_format=fmt, context_tokens=context))
                continue
            if engine == "vllm" and a.model_type in NOT_IN_VLLM:
                with pytest.raises(InputError, match="vLLM 0.34 does not run"):
                    estimate(a, Scenario(engine=engine, weight_format=fmt, context_tokens=context))
                continue
            if engine == "llamacpp" and CROSS in a.layer_types:
                with pytest.raises(InputError, match="no architecture with cross-attention layers"):
                    estimate(a, Scenario(engine=engine, weight_format=fmt, context_tokens=context))
                continue
            if engine == "llamacpp" and a.model_type in NO_ARCHITECTURE:
                with pytest.raises(InputError, match="no such architecture"):
                    estimate(a, Scenario(engine=engine, weight_format=fmt, context_tokens=context))
                continue
            e = estimate(a, Scenario(engine=engine, weight_format=fmt, context_tokens=context))
            assert all(v >= 0 for v in e.bytes.values()), (key, engine)
            assert e.total > e.bytes["weights"] > 0


def test_cpu_device_uses_the_measured_runtime_overhead():
    e = estimate(LLAMA8, Scenario(device="cpu"))
    assert e.devices[0].device == "CPU0" and e.bytes["overhead"] == 425 * MiB  # no allocator reserve on the CPU
    assert e.bytes["weights"] / GiB == pytest.approx(14.96, abs=0.01)


def test_transformers_sliding_layers_hold_the_prompt_after_prefill():
    a = get_preset("gemma-2-9b").architecture()
    sliding = sum(kind == SLIDING for kind in a.layer_types)
    assert sliding == 21 and a.sliding_window == 4096
    wide = a.with_changes(sliding_window=16384)  # a window as long as the context: nothing held beyond it
    sc = Scenario(context_tokens=16384, batch=2, extrapolate=True)  # twice its 8,192 positions, on purpose
    held = estimate(a, sc).bytes["activations"] - estimate(wide, sc).bytes["activations"]
    per_token_layer = 2 * 8 * 256 * 2  # K and V, 8 KV heads x 256 dims, bf16
    assert held == 2 * sliding * per_token_layer * (16384 - 4096)
    # engines that do not keep the prefill tensor (vLLM pages, llama.cpp's iSWA cells) hold nothing extra
    vllm = sc.with_changes(engine="vllm")
    assert estimate(a, vllm).bytes["activations"] == estimate(wide, vllm).bytes["activations"]


def test_bitsandbytes_imports_add_cpu_runtime_only():
    def overhead(device, weights):
        return estimate(LLAMA8, Scenario(device=device, weight_format=weights)).bytes["overhead"]

    assert overhead("cpu", "bnb-nf4") - overhead("cpu", "bf16") == 63 * MiB
    assert overhead("cpu", "gptq-int4") == overhead("cpu", "bf16")
    assert overhead("cuda", "bnb-nf4") == overhead("cuda", "bf16")  # host imports are not device memory
