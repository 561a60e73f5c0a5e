"""MiniCPM3 on llama.cpp: its attention runs per head (src/models/minicpm3.cpp: attn_kv_b's K and V for every head
into `build_attn`), so the cache holds K (nope + rope) and V per head, not DeepSeek's latent. Checked against a real
llama.cpp run of a converted MiniCPM3 (tests/data/llamacpp/minicpm3_buffers.json)."""

import json
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.engines.llamacpp import latent_cache
from memviz.core.estimate import Scenario, estimate

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "minicpm3_buffers.json").read_text())


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"fa-{c['flash_attn']}")
def test_llamacpp_caches_minicpm3_per_head_to_the_byte(case):
    a = from_hf_config(DATA["config"])
    assert a.is_mla and not latent_cache(a)
    e = estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="F16", kv_format="fp16",
                             context_tokens=case["context"],
                             options={"n_ubatch": case["ubatch"], "flash_attn": case["flash_attn"]}))
    assert e.kv_cache_required == case["kv_bytes"]  # the latent would be 9,437,184 bytes (-89 %)
    assert e.bytes["activations"] == pytest.approx(case["compute_bytes"], rel=0.025)


def test_vllm_caches_minicpm3_per_head_with_v_padded_to_k():
    """vLLM 0.34 models/minicpm3.py `MiniCPM3Attention`: plain `Attention` over every head, K of nope + rope (96) and
    V padded to it, not MLA's latent."""
    a = from_hf_config(DATA["config"])
    e = estimate(a, Scenario(engine="vllm", gpu="H100 80GB", weight_format="bf16", kv_format="bf16",
                             context_tokens=4096))
    layers, heads, width = 4, 16, 64 + 32
    assert e.kv_cache_required == layers * 4096 * heads * 2 * width * 2
