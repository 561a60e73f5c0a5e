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


def test_the_exports_give_what_the_fits_judge_beside_the_pool():
    """vLLM's pool sized on a B200 holds 172.8 GiB of Gemma-3-12B's budget; its sequences need far less, which is
    what fits_h100-80g judges: the rows carry both, the Markdown a "needed" column."""
    from memviz.core.estimate import estimate
    from memviz.core.fit import capacity_bytes, needed_bytes
    from memviz.core.gpus import get_gpu
    from memviz.core.presets import get_preset
    from memviz.core.report import rows, to_csv, to_markdown

    a = get_preset("gemma-3-12b").architecture()
    sc = Scenario(engine="vllm", gpu="b200", context_tokens=32768)
    est = estimate(a, sc)
    (row,) = rows(a, [sc], ("b200", "h100-80g"))
    assert row["needed_bytes"] == needed_bytes(est) < row["total_bytes"] == est.total
    assert row["kv_required_bytes"] == est.kv_cache_required < row["kv_cache_bytes"]
    assert row["fits_h100-80g"] and row["needed_bytes"] <= capacity_bytes(get_gpu("h100-80g"), sc, a) < row["total_bytes"]
    assert "needed_bytes" in to_csv(a, [sc], ("h100-80g",)).splitlines()[0]
    md = to_markdown(a, [sc], ("h100-80g",))
    assert "| needed (GiB) |" in md and f"| {est.total / 2**30:.2f} | {needed_bytes(est) / 2**30:.2f} | yes |" in md
    plain = to_markdown(a, [Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=8192)], ())
    assert "needed (GiB)" not in plain
