"""Inductor's benchmark on a copy of the embedding table in vLLM's cold compile (`vllm_compile`)."""

import pytest

from memviz.core.engines.vllm_compile import embedding_benchmark_bytes
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset
from memviz.core.units import GiB

LLAMA8 = get_preset("llama-3.1-8b").architecture()
PROFILED = {"extensible_kv_cache": False, "model_runner": "v1"}


def test_the_rank_s_padded_table_and_two_rows_of_tokens():
    """Llama-3.1-8B: 128,256 rows (a multiple of 64) x 4,096 in bf16 and 2 x 8,192 x 4,096: 1.10 GiB, as vLLM 0.19
    printed for its first pipeline stage; at TP 2 half the table; 32,001 rows pad to 32,064."""
    assert embedding_benchmark_bytes(LLAMA8, 1, 8192, 2) == (128256 + 2 * 8192) * 4096 * 2
    assert embedding_benchmark_bytes(LLAMA8, 1, 8192, 2) / GiB == pytest.approx(1.10, abs=0.005)
    assert embedding_benchmark_bytes(LLAMA8, 2, 8192, 2) == (64128 + 2 * 8192) * 4096 * 2
    odd = LLAMA8.with_changes(vocab_size=32001)
    assert embedding_benchmark_bytes(odd, 1, 8192, 2) == (32064 + 2 * 8192) * 4096 * 2


def _first_stage_peak(a=LLAMA8, **options) -> float:
    sc = Scenario(engine="vllm", gpu="h100-80g", pp=2, context_tokens=8192, options={**PROFILED, **options})
    return estimate(a, sc).devices[0].activations


def test_the_first_stage_of_a_profile_sized_pool_holds_it_on_a_cold_start_only():
    """The first stage's peak is the benchmark (above its forward); a warm compile cache, enforce_eager and 0.34's
    measured pool (which resets its peak after the profile run) leave the forward."""
    cold = _first_stage_peak()
    assert cold == embedding_benchmark_bytes(LLAMA8, 1, 8192, 2)
    forward = _first_stage_peak(cold_compile=False)
    assert forward < cold and _first_stage_peak(enforce_eager=True) == forward
    measured = Scenario(engine="vllm", gpu="h100-80g", pp=2, context_tokens=8192)
    warm = measured.with_changes(options={"cold_compile": False})
    assert estimate(LLAMA8, measured).devices[0].activations == estimate(LLAMA8, warm).devices[0].activations


def test_a_multimodal_model_embeds_outside_the_compiled_graph():
    """Gemma 3 with its vision tower: the runner passes inputs_embeds, so no table copy; --language-model-only puts
    the embedding back in the compiled graph."""
    gemma = get_preset("gemma-3-27b").architecture()
    assert gemma.encoders
    with_tower = _first_stage_peak(gemma, language_model_only=False)
    assert with_tower == _first_stage_peak(gemma, language_model_only=False, cold_compile=False)
    text_only = _first_stage_peak(gemma, language_model_only=True)
    assert text_only == embedding_benchmark_bytes(gemma, 1, 8192, 2)
