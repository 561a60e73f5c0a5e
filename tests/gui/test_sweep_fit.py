"""One answer to "largest context that fits": the sweep's legend, the CLI and the breakdown agree to the token."""

from memviz.core.estimate import Scenario
from memviz.core.fit import max_batch, max_context
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset
from memviz.core.session import Session
from memviz.gui.model import series, sweep_grid


def _session() -> Session:
    return Session(architecture=get_preset("llama-3.1-8b").architecture(), gpus=("rtx4090", "l40s"),
                   scenarios=(Scenario(weight_format="bf16", kv_format="bf16", context_tokens=8192, batch=4),
                              Scenario(weight_format="Q4_K_M", engine="llamacpp", kv_format="fp16",
                                       context_tokens=8192, batch=4)))


def test_sweep_legend_gives_the_bisection_answer():
    s = _session()
    for sc, line in zip(s.scenarios, series(s, "context"), strict=True):
        for g in s.gpus:
            assert line.largest_fit[get_gpu(g).label] == max_context(s.architecture, sc, get_gpu(g))
    assert series(s, "context")[0].largest_fit["RTX 4090 24GB"] == 6945  # the bisection, to the token (no grid point)
    for sc, line in zip(s.scenarios, series(s, "batch"), strict=True):
        assert line.largest_fit["L40S 48GB"] == max_batch(s.architecture, sc, get_gpu("l40s"))


def test_context_sweep_stops_at_the_models_positions():
    s = _session()
    assert sweep_grid(s, "context").max() == s.architecture.max_position_embeddings == 131072


def test_twins_are_told_apart_in_bars_and_lines_and_a_hidden_twin_adds_nothing():
    """Two vLLM scenarios that differ only in their GPU get it in their labels; hide one and the other's label is
    the plain one again (the charts show only what is drawn)."""
    from memviz.gui.model import bars, compute_estimates

    twin = Scenario(engine="vllm", context_tokens=8192, gpu="h100-80g")
    s = Session(architecture=get_preset("llama-3.1-8b").architecture(), gpus=("h100-80g",),
                scenarios=(twin, twin.with_changes(gpu="a100-80g")))
    assert [b.label for b in bars(s, compute_estimates(s))] == ["bf16 · KV bf16 · 8K×1 · H100 SXM 80GB",
                                                                "bf16 · KV bf16 · 8K×1 · A100 80GB"]
    assert [line.label for line in series(s, "context")] == [b.label for b in bars(s, compute_estimates(s))]
    one = s.with_changes(scenarios=(twin, twin.with_changes(gpu="a100-80g", hidden=True)))
    assert [b.label for b in bars(one, compute_estimates(one))] == ["bf16 · KV bf16 · 8K×1"]
    assert [line.label for line in series(one, "context")] == ["bf16 · KV bf16 · 8K×1"]
