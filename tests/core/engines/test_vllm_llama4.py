"""Llama 4's chunked local attention on vLLM: cached as full attention (vLLM 0.34 config/vllm.py turns the hybrid KV
cache manager off for attention_chunk_size models; v1/core/kv_cache_planning.py `unify_hybrid_kv_cache_specs`
promotes each chunked layer's spec to full attention), where memviz had cached 8,192 tokens of window in 36 of
Llama-4-Scout's 48 layers: 2.9 x short at 65,536 tokens."""

import pytest

from memviz.core.arch import FULL, SLIDING, from_hf_config
from memviz.core.engines.vllm import VLLM
from memviz.core.estimate import Scenario, estimate
from memviz.core.units import GiB

transformers = pytest.importorskip("transformers")
#: a published v0.19 start-up of meta-llama/Llama-4-Scout-17B-16E-Instruct on four H100s, bf16, max_model_len 8,192
#: (github.com/llm-d-incubation/llm-d-planner, commit d3121e0, accuracy/results/v0.19.0/logs/
#: meta-llama-llama-4-scout--h100-80gb--tp4pp1dp1--8192.log): "Available KV cache memory: 16.75 GiB",
#: "GPU KV cache size: 365,968 tokens"
SCOUT_POOL_GIB, SCOUT_POOL_TOKENS = 16.75, 365_968


def _scout():
    """Llama4TextConfig's defaults, Llama-4-Scout's widths (48 layers, 8 KV heads of 128, chunks of 8,192 in three
    layers of four)."""
    return from_hf_config(transformers.AutoConfig.for_model("llama4_text").to_dict(), name="scout")


def test_the_checkpoint_has_chunked_layers_and_vllm_caches_every_one_in_full():
    a = _scout()
    assert a.layer_types.count(SLIDING) == 36 and a.sliding_window == 8192
    assert set(VLLM().runs_as(a).layer_types) == {FULL}


def test_a_request_holds_every_layer_at_max_model_len():
    e = estimate(_scout(), Scenario(engine="vllm", gpu="H100 80GB", weight_format="fp8", kv_format="bf16",
                                    context_tokens=65536, tp=2))
    assert e.kv_cache_required == 48 * 65536 * (8 // 2) * 128 * 2 * 2  # 6 GiB a rank (2.06 before)


def test_the_published_scout_pool_holds_all_48_layers_a_token():
    """The bytes a token on one of four ranks (48 layers x 2 KV heads x 128 x K and V x bf16 = 49,152) times the
    printed tokens give the printed pool, to its two decimals; with 36 layers windowed the pool would hold more."""
    e = estimate(_scout(), Scenario(engine="vllm", gpu="H100 80GB", weight_format="bf16", kv_format="bf16",
                                    context_tokens=8192, tp=4))
    per_token = e.kv_cache_required / 8192
    assert per_token == 49_152
    assert per_token * SCOUT_POOL_TOKENS / GiB == pytest.approx(SCOUT_POOL_GIB, abs=0.005 + 64 * per_token / GiB)
