"""vLLM's pipeline stages: its layer split (distributed/utils.py `get_pp_indices`) and the one block count every
rank keeps (v1/core/kv_cache_planning.py: the smallest rank's)."""

import pytest

from memviz.core.engines.vllm import pipeline_split
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset


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
