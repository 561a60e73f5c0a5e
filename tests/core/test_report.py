"""Scenario labels and rows of the report exports (memviz.core.report)."""

from __future__ import annotations

from memviz.core.estimate import Scenario
from memviz.core.report import scenario_label


def test_a_label_names_the_gpus_a_scenario_is_split_over():
    """Charts draw one bar per scenario at its busiest GPU: a split must not read as one GPU of the same model."""
    one = Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=32768)
    assert scenario_label(one) == "Q4_K_M · KV fp16 · 32K×1"
    assert scenario_label(one.with_changes(pp=2)) == "Q4_K_M · KV fp16 · 32K×1 · PP2"
    vllm = Scenario(engine="vllm", weight_format="bf16", context_tokens=8192, tp=4, pp=2)
    assert scenario_label(vllm) == "bf16 · KV bf16 · 8K×1 · TP4 · PP2"
    assert scenario_label(vllm.with_changes(name="mine")) == "mine"
    replicas = vllm.with_changes(pp=1, options=(("data_parallel_size", 2), ("enable_expert_parallel", True)))
    assert scenario_label(replicas) == "bf16 · KV bf16 · 8K×1 · TP4 · DP2 · EP"


def test_rows_count_the_gpus_each_scenario_runs_on():
    """The CSV / JSON / Markdown rows carry the GPUs a scenario runs on: TP x PP x vLLM's data-parallel replicas."""
    from memviz.core.presets import get_preset
    from memviz.core.report import rows

    a = get_preset("qwen3-30b-a3b").architecture()
    sc = Scenario(engine="vllm", context_tokens=4096, tp=2, pp=2, options=(("data_parallel_size", 3),))
    assert [r["gpus"] for r in rows(a, [sc, sc.with_changes(options=())])] == [12, 4]


def test_the_markdown_report_says_what_vllm_would_print_and_refuse():
    from memviz.core.presets import get_preset
    from memviz.core.report import to_markdown

    a = get_preset("llama-3.1-8b").architecture()
    base = Scenario(engine="vllm", weight_format="bf16", kv_format="bf16", gpu="rtx4090", context_tokens=8192, batch=4)
    text = to_markdown(a, [base.with_changes(name="pinned", options=(("kv_cache_memory_bytes", "4GiB"),)),
                           base.with_changes(name="too big", options=(("kv_cache_memory_bytes", "12GiB"),)),
                           base.with_changes(name="default")], ["rtx4090"])
    assert ("pinned: vLLM's KV pool 4.00 GiB (set by kv_cache_memory_bytes), 512 blocks; GPU KV cache size 32,768 "
            "tokens; maximum concurrency 4.00x for 8,192 tokens per request.") in text
    assert "default: vLLM's KV pool 5.75 GiB, 736 blocks; GPU KV cache size 47,104 tokens" in text
    assert "too big: the engine refuses it: vLLM would run out of memory" in text
    assert "too big: vLLM's KV pool" not in text  # it would not start: no pool to state


def test_scenarios_whose_labels_coincide_are_told_apart_by_what_differs():
    """Three vLLM bars of Llama-3.1-8B at 8K: an H100, a V100, and the H100 with an older release's sampler; two
    identical scenarios are numbered; a scenario with its own label keeps it."""
    from memviz.core.report import scenario_labels

    h100 = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    scs = [h100, h100.with_changes(gpu="v100-32g"), h100.with_changes(options=(("sampler", "flashinfer-only"),)),
           h100.with_changes(context_tokens=4096), h100.with_changes(engine="transformers", gpu=None)]
    assert scenario_labels(scs) == [
        "bf16 · KV bf16 · 8K×1 · vllm · H100 SXM 80GB", "bf16 · KV bf16 · 8K×1 · vllm · Tesla V100 32GB",
        "bf16 · KV bf16 · 8K×1 · vllm · H100 SXM 80GB · sampler=flashinfer-only", "bf16 · KV bf16 · 4K×1",
        "bf16 · KV bf16 · 8K×1 · transformers"]
    assert scenario_labels([h100, h100]) == ["bf16 · KV bf16 · 8K×1 #1", "bf16 · KV bf16 · 8K×1 #2"]
    assert scenario_labels([h100, h100.with_changes(name="mine")]) == ["bf16 · KV bf16 · 8K×1", "mine"]
