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
