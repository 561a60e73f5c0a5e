"""vLLM's pipeline stages: its layer split (distributed/utils.py `get_pp_indices`) and the one block count every
rank keeps (v1/core/kv_cache_planning.py: the smallest rank's)."""

import pytest

from memviz.core.engines.vllm_pipeline import (
    HIDDEN_ONLY_TYPES,
    pipeline_split,
    receive_buffer_bytes,
    receive_values_per_token,
)
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset
from memviz.core.units import GiB


@pytest.mark.parametrize(("layers", "pp", "sizes"), [(32, 2, [16, 16]), (61, 4, [15, 15, 16, 15]),
                                                     (8, 3, [3, 3, 2]), (10, 4, [2, 3, 3, 2]), (7, 4, [2, 2, 2, 1])])
def test_the_remainder_goes_to_the_stages_before_the_last_from_the_last_but_one_back(layers, pp, sizes):
    stages = pipeline_split(layers, pp)
    assert [len(r) for r in stages] == sizes
    assert stages[0].start == 0 and stages[-1].stop == layers
    assert all(a.stop == b.start for a, b in zip(stages, stages[1:], strict=False))


@pytest.mark.parametrize("extensible", [True, False])
def test_every_stage_keeps_the_smallest_stages_pool(extensible):
    """The first stage holds the embeddings, the last the LM head and the sampler step: their free memory
    differs, and vLLM keeps the smaller stage's block count on both; the reported pool is that one."""
    a = get_preset("llama-3.1-8b").architecture()
    sc = Scenario(engine="vllm", weight_format="bf16", gpu="rtx4090", pp=2, context_tokens=8192,
                  options=(("extensible_kv_cache", extensible),))
    e = estimate(a, sc)
    first, last = e.devices
    assert first.kv_cache == last.kv_cache == e.engine_facts["kv_pool_bytes"]
    assert first.total != last.total  # the stages' other memory differs; the pool does not


def _stages(preset: str, runner: str, pp: int = 2, fmt: str = "bf16"):
    a = get_preset(preset).architecture()
    sc = Scenario(engine="vllm", weight_format=fmt, gpu="h100-80g", pp=pp, context_tokens=2048,
                  options=(("extensible_kv_cache", False), ("model_runner", runner), ("cold_compile", False)))
    return a, estimate(a, sc).devices


@pytest.mark.parametrize("runner", ["v1", "v2"])
def test_a_stage_after_the_first_keeps_a_buffer_for_the_previous_stages_tensors(runner):
    """Llama's hidden_states and residual for max_num_batched_tokens (8,192 on an H100) in bf16: 0.125 GiB on every
    stage but the first. V1 makes it in the profile run (its torch peak), V2 when it loads the model (consumed). A
    warm start: the first stage's peak is its forward, not the cold compile's benchmark (`vllm_compile`)."""
    a, (first, *others) = _stages("llama-3.1-8b", runner, pp=4)
    _, (one,) = _stages("llama-3.1-8b", runner, pp=1)
    buffer = 8192 * 2 * a.hidden_size * 2
    assert buffer == 0.125 * GiB
    middle, last = others[0], others[-1]
    assert first.activations == middle.activations - (buffer if runner == "v1" else 0)
    assert last.activations == one.activations + (buffer if runner == "v1" else 0)
    assert middle.overhead - first.overhead == (buffer if runner == "v2" else 0)


@pytest.mark.parametrize(("preset", "rows"), [("falcon-7b", 1), ("opt-6.7b", 1), ("qwen2.5-7b", 2)])
def test_classes_that_send_hidden_states_alone_keep_one_row_a_token(preset, rows):
    """Falcon's and OPT's vLLM classes send hidden_states without a residual (`HIDDEN_ONLY_TYPES`), Qwen2's both."""
    a, (first, last) = _stages(preset, "v2")
    assert (a.model_type in HIDDEN_ONLY_TYPES) == (rows == 1)
    assert receive_buffer_bytes(a, 8192, 2) == 8192 * rows * a.hidden_size * 2
    assert last.overhead - first.overhead >= receive_buffer_bytes(a, 8192, 2)


def test_hyper_connection_streams_and_gemma4s_per_layer_inputs_travel_too():
    """DeepSeek-V4 sends its hc_mult streams; Gemma 4 hidden_states and every layer's per-layer input."""
    hyper = get_preset("deepseek-v4-flash-base").architecture()
    assert receive_values_per_token(hyper) == hyper.hyper_streams * hyper.hidden_size == 4 * 4096
    gemma = get_preset("gemma-4-31b").architecture()
    assert gemma.model_type == "gemma4_text"
    assert receive_values_per_token(gemma) == gemma.hidden_size
    with_inputs = gemma.with_changes(per_layer_input_size=256, per_layer_vocab_size=gemma.vocab_size)
    assert receive_values_per_token(with_inputs) == gemma.hidden_size + gemma.num_layers * 256
