"""MLA and shared-expert MoE shapes against a real llama.cpp (tests/data/llamacpp/mla_moe_buffers.json, made by
benchmarks/llamacpp_mla_sweep.py with llama.cpp 0c1e570 on this project's CPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.formats import get_weight_format, weight_bytes
from memviz.core.units import MiB

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "mla_moe_buffers.json").read_text())
PRINTED = 0.0051  # MiB: llama.cpp prints two decimals (0.625 shows as 0.62)


def _estimate(case: dict):
    a = from_hf_config(DATA["shapes"][case["shape"]], name=case["shape"])
    sc = Scenario(engine="llamacpp", device="cpu", weight_format="F16", kv_format="fp16",
                  context_tokens=case["context"], options={"n_ubatch": case["ubatch"], "flash_attn": case["flash_attn"]})
    return a, estimate(a, sc)


def _compute_error(case: dict) -> float:
    _, e = _estimate(case)
    return (e.bytes["activations"] / MiB - case["compute_mib"]) / case["compute_mib"]


def test_the_data_covers_mla_and_shared_experts_with_and_without_flash_attention():
    shapes = {c["shape"] for c in DATA["cases"]}
    assert sum(s.startswith("mla") for s in shapes) >= 8 and "qwen2moe-wide-shared" in shapes
    assert {c["flash_attn"] for c in DATA["cases"]} == {"on", "off"} and len(DATA["cases"]) >= 70


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"{c['shape']}-{c['context']}-{c['ubatch']}-fa{c['flash_attn']}")
def test_mla_latent_cache_and_weights_are_exact(case):
    """MLA caches the latent and the rope key (kv_lora_rank + rope per token and layer), no V; the weights are the
    builder's F16 file with kv_b as attn_k_b / attn_v_b."""
    a, e = _estimate(case)
    assert e.kv_cache_required / MiB == pytest.approx(case["kv_mib"], abs=PRINTED)
    assert weight_bytes(a, get_weight_format("F16")) / MiB == pytest.approx(case["model_mib"], abs=PRINTED)


def test_compute_buffer_within_five_percent_in_nine_cases_of_ten_and_twenty_in_all():
    """The absorbed-query stage of MLA attention and the shared expert after (not beside) the routed ones. The
    misses are flash-attention-off runs whose peak ggml-alloc places elsewhere (a routed-expert-dominated MLA shape,
    +7 ... +18 %; eight heads at 4,096 cells, -14 %)."""
    errors = [_compute_error(c) for c in DATA["cases"]]
    assert sum(abs(e) <= 0.05 for e in errors) >= 0.9 * len(errors), sorted(errors)
    assert max(abs(e) for e in errors) <= 0.20


def test_flash_attention_cases_within_four_percent():
    errors = [_compute_error(c) for c in DATA["cases"] if c["flash_attn"] == "on"]
    assert max(abs(e) for e in errors) <= 0.04, sorted(errors)  # llama.cpp's default: flash attention on
