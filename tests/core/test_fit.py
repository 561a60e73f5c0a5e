import numpy as np
import pytest

from memviz.core import fit
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import capacity_bytes, fits, max_batch, max_context, min_gpus, sweep
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()
RTX4090 = get_gpu("rtx4090")


def _total(sc):
    return estimate(LLAMA8, sc).total


def test_sweep_matches_pointwise_estimates():
    sc = Scenario(engine="vllm", batch=2)
    xs = np.array([512, 4096, 32768])
    s = sweep(LLAMA8, sc, xs)
    for x, total in zip(xs, s.total, strict=True):
        assert total == pytest.approx(_total(sc.with_changes(context_tokens=int(x))), abs=4)
    b = sweep(LLAMA8, sc, np.array([1, 8]), axis="batch")
    assert b.kv_cache[1] == pytest.approx(8 * b.kv_cache[0])


@pytest.mark.parametrize(("engine", "fmt"), [("transformers", "bf16"), ("vllm", "bf16"), ("llamacpp", "Q4_K_M")])
def test_max_context_is_the_boundary(engine, fmt):
    sc = Scenario(engine=engine, weight_format=fmt, kv_format="fp16", gpu="rtx4090")
    n = max_context(LLAMA8, sc, RTX4090)
    assert n > 0
    cap = capacity_bytes(RTX4090, sc, LLAMA8)
    assert fits(LLAMA8, sc.with_changes(context_tokens=n), RTX4090)
    if n < LLAMA8.max_position_embeddings:
        assert not fits(LLAMA8, sc.with_changes(context_tokens=n + 1), RTX4090)
    assert cap <= RTX4090.memory_bytes


def test_a_context_memory_does_not_bound_is_said_so():
    """A Mamba model on vLLM holds a state per sequence whatever the context and prefills in chunks: the search ends
    at its limit, which is no limit of the model's."""
    from memviz.core.arch import from_hf_config

    mamba = from_hf_config({"model_type": "falcon_mamba", "hidden_size": 4096, "intermediate_size": 8192,
                            "num_hidden_layers": 64, "state_size": 16, "time_step_rank": 256, "vocab_size": 65024})
    n = max_context(mamba, Scenario(engine="vllm", gpu="h100-80g"), get_gpu("h100-80g"))
    assert n == fit.CONTEXT_SEARCH_LIMIT and fit.context_text(n) == f"≥ {n:,d} tokens (memory does not bound it)"
    assert fit.context_text(131072) == "131,072 tokens"


def test_max_batch_boundary():
    sc = Scenario(weight_format="bnb-nf4", context_tokens=8192)
    n = max_batch(LLAMA8, sc, RTX4090)
    assert fits(LLAMA8, sc.with_changes(batch=n), RTX4090)
    assert not fits(LLAMA8, sc.with_changes(batch=n + 1), RTX4090)


def test_nothing_fits_gives_zero():
    a = get_preset("llama-3.1-70b").architecture()
    assert max_context(a, Scenario(), RTX4090) == 0


def test_min_gpus_for_405b_fp8_on_h100():
    # ~380 GiB of FP8 weights; each H100 offers 0.9 x 79.6 GiB to vLLM: 5 GPUs are too few, 6 fit
    a = get_preset("llama-3.1-405b").architecture()
    h100 = get_gpu("h100-80g")
    base = Scenario(engine="vllm", weight_format="fp8", context_tokens=8192)
    sc = min_gpus(a, base, h100)
    assert sc is not None and sc.tp * sc.pp == 6 and fits(a, sc, h100)
    assert not fits(a, base.with_changes(pp=5, gpu="h100-80g"), h100)


def test_min_gpus_passes_over_a_split_the_engine_refuses():
    """DeepSeek-V3 on DP 8 with EPLB's 24 redundant experts does not fit one H200 per rank at a 0.9 share; TP 2
    would spread 280 experts over 16 ranks, which EPLB refuses: the search goes on to two pipeline stages."""
    a = get_preset("deepseek-v3").architecture()
    h200 = get_gpu("h200")
    base = Scenario(engine="vllm", weight_format="fp8-block", context_tokens=4096, gpu_memory_utilization=0.9,
                    options={"data_parallel_size": 8, "enable_expert_parallel": True, "enable_eplb": True,
                             "num_redundant_experts": 24, "extensible_kv_cache": False})
    assert not fits(a, base.with_changes(gpu="h200"), h200)
    with pytest.raises(InputError, match="do not divide"):
        fits(a, base.with_changes(gpu="h200", tp=2), h200)
    sc = min_gpus(a, base, h200)
    assert sc is not None and (sc.tp, sc.pp) == (1, 2)
