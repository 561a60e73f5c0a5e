"""Parameter counts of every bundled preset against published figures.

Exact presets: the published `model.safetensors.index.json` total_size / 2 (bf16
checkpoints) or the model's published parameter count, cited in each preset file.
Rounded presets (published as "671B", "20.9B") are checked to their precision,
and exactly against transformers' own count of the same config (meta device,
transformers 5.24), stored in the preset.
"""

import pytest

from memviz.core.errors import InputError
from memviz.core.inventory import active_parameter_count, parameter_count
from memviz.core.presets import all_presets, get_preset

PRESETS = all_presets()


def test_at_least_twenty_presets_with_sources():
    assert len(PRESETS) >= 20
    for p in PRESETS.values():
        assert p.source and p.published_source


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_parameter_count_matches_published(key):
    p = PRESETS[key]
    a = p.architecture()
    n = parameter_count(a)
    towers = sum(e.parameters for e in a.encoders) if p.published_includes_encoders else 0
    if p.published_precision == "exact":
        assert n + towers == p.published_parameters
    else:
        step = float(p.published_precision)
        assert abs(n + towers - p.published_parameters) <= step / 2, (n, p.published_parameters)
    assert n == p.transformers_parameters + p.checkpoint_buffers


@pytest.mark.parametrize(
    ("key", "published_active", "step"),
    [
        ("deepseek-v3", 36.6e9, 0.1e9),  # README_WEIGHTS.md: 36.6B activated
        ("gpt-oss-20b", 3.6e9, 0.1e9),  # model card: 3.6B active
        ("gpt-oss-120b", 5.1e9, 0.1e9),  # model card: 5.1B active
        ("deepseek-v2-lite", 2.4e9, 0.1e9),  # DeepSeek-V2 README: 2.4B activated
        ("gemma-4-26b-a4b", 3.8e9, 0.1e9),  # model card: 3.8B active
        ("deepseek-v4-flash-base", 13e9, 1e9),  # model card: 13B activated
        ("ai21-jamba-1.5-mini", 12e9, 1e9),  # model card: 12B active
    ],
)
def test_active_parameters_of_moe_models(key, published_active, step):
    # within one step of the published figure (DeepSeek-V2-Lite: 2.45B counted, published as "2.4B")
    assert abs(active_parameter_count(PRESETS[key].architecture()) - published_active) <= step


def test_preset_lookup_by_unique_substring_and_errors():
    assert get_preset("Mixtral").key == "mixtral-8x7b"
    with pytest.raises(InputError, match="did you mean"):
        get_preset("llama-3.1")
    with pytest.raises(InputError, match="unknown preset"):
        get_preset("nonexistent-model")


def test_launch_commands_load_the_presets_repository():
    """The Breakdown view and the exports name what an engine can load (the preset's repository), as the CLI does."""
    from memviz.core.estimate import Scenario, estimate

    est = estimate(get_preset("gpt-oss-20b").architecture(), Scenario(engine="vllm", weight_format="mxfp4-moe"))
    assert est.launch_command().startswith("vllm serve openai/gpt-oss-20b ")
