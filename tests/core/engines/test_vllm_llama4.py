"""Llama 4's chunked local attention on vLLM 0.34: the hybrid KV cache manager stays on for it
(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 1, vllm/envs.py), so its 36 chunked layers keep one
chunk and the tokens in flight (v1/kv_cache_interface.py `ChunkedLocalAttentionSpec`); with the variable at 0 (the
default of earlier releases) or beside a drafter that reads the target's hidden states, config/vllm.py turns the
manager off and `unify_hybrid_kv_cache_specs` promotes every chunked layer to full attention."""

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
#: one token of one layer on one of two ranks: 4 KV heads x 128 x K and V x bf16
TOKEN_LAYER_BYTES = 4 * 128 * 2 * 2


def _scout():
    """Llama4TextConfig's defaults, Llama-4-Scout's widths (48 layers, 8 KV heads of 128, chunks of 8,192 in three
    layers of four)."""
    return from_hf_config(transformers.AutoConfig.for_model("llama4_text").to_dict(), name="scout")


def _scenario(**options) -> Scenario:
    return Scenario(engine="vllm", gpu="H100 80GB", weight_format="fp8", kv_format="bf16", context_tokens=65536, tp=2,
                    options={"max_num_batched_tokens": 8192, **options})


def _options(**given) -> dict:
    return VLLM().resolve(given)


def test_the_chunked_layers_stay_chunked_unless_the_manager_is_off():
    a = _scout()
    assert a.layer_types.count(SLIDING) == 36 and a.sliding_window == 8192
    assert VLLM().runs_as(a, _options()) is a
    assert set(VLLM().runs_as(a, _options(chunked_local_hybrid_kv=False)).layer_types) == {FULL}
    assert set(VLLM().runs_as(a, _options(num_speculative_tokens=3, speculative_method="eagle3")).layer_types) == {FULL}


def test_a_request_holds_its_chunk_and_the_tokens_in_flight_in_each_chunked_layer():
    """vLLM admits a request with cdiv(chunk + in-flight tokens, block) blocks in a chunked layer, no extra block
    (the sliding window's +1): 8,192 + 2 batches x 8,192 = 24,576 tokens = 384 blocks of 64; the 12 full layers hold
    all 65,536. The sequence itself holds one chunk a chunked layer."""
    e = estimate(_scout(), _scenario())
    assert e.engine_facts["one_request_kv_bytes"] == TOKEN_LAYER_BYTES * (12 * 65536 + 36 * 24576)  # 3.19 GiB a rank
    assert e.kv_cache_required == TOKEN_LAYER_BYTES * (12 * 65536 + 36 * 8192)


def test_with_the_manager_off_every_layer_holds_max_model_len():
    e = estimate(_scout(), _scenario(chunked_local_hybrid_kv=False))
    assert e.kv_cache_required == e.engine_facts["one_request_kv_bytes"] == TOKEN_LAYER_BYTES * 48 * 65536  # 6 GiB a rank
    cmd = VLLM().launch_command(_scout(), _scenario(chunked_local_hybrid_kv=False), "meta-llama/Llama-4-Scout")
    assert cmd.startswith("VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0 ")
    assert "CHUNKED_LOCAL" not in VLLM().launch_command(_scout(), _scenario(), "meta-llama/Llama-4-Scout")


def test_the_published_v0_19_scout_pool_holds_all_48_layers_a_token():
    """v0.19 left the manager off for chunked attention by default: the bytes a token on one of four ranks
    (48 layers x 2 KV heads x 128 x K and V x bf16 = 49,152) times the printed tokens give the printed pool, to its
    two decimals."""
    e = estimate(_scout(), Scenario(engine="vllm", gpu="H100 80GB", weight_format="bf16", kv_format="bf16",
                                    context_tokens=8192, tp=4, options={"chunked_local_hybrid_kv": False}))
    per_token = e.kv_cache_required / 8192
    assert per_token == 49_152
    assert per_token * SCOUT_POOL_TOKENS / GiB == pytest.approx(SCOUT_POOL_GIB, abs=0.005 + 64 * per_token / GiB)
