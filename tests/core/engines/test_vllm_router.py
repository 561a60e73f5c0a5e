"""Routers vLLM 0.34 holds in float32 (GateLinear params_dtype=torch.float32): counted beside the weights on every
rank, whatever the checkpoint stores them in."""

from __future__ import annotations

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.engines import vllm_router
from memviz.core.estimate import Scenario, estimate
from memviz.core.formats import get_weight_format

#: GLM-4.5-Air's shape (tests/core/test_arch.py: transformers 5.24 builds 106,852,245,504 parameters)
GLM_AIR = {"model_type": "glm4_moe", "hidden_size": 4096, "num_hidden_layers": 46, "num_attention_heads": 96,
           "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 10944, "moe_intermediate_size": 1408,
           "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1,
           "vocab_size": 151552, "attention_bias": True, "tie_word_embeddings": False,
           "max_position_embeddings": 131072, "use_qk_norm": False}
#: Ling-mini-2.0's shape (tests/core/engines/test_bailing_moe.py reads it too)
LING = {"architectures": ["BailingMoeV2ForCausalLM"], "model_type": "bailing_moe", "hidden_size": 2048,
        "intermediate_size": 5120, "moe_intermediate_size": 512, "num_experts": 256, "num_shared_experts": 1,
        "num_experts_per_tok": 8, "num_hidden_layers": 20, "first_k_dense_replace": 1, "num_attention_heads": 16,
        "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 157184, "use_qk_norm": True,
        "moe_router_enable_expert_bias": True, "score_function": "sigmoid", "max_position_embeddings": 32768,
        "tie_word_embeddings": False, "router_dtype": "fp32"}


@pytest.mark.parametrize(("cfg", "fp32"), [
    (GLM_AIR, True),
    (LING, True),
    ({**LING, "router_dtype": "bf16"}, False),  # bailing_moe.py: torch.bfloat16
    ({k: v for k, v in LING.items() if k != "router_dtype"}, False),  # None: the model's dtype
])
def test_which_routers_vllm_keeps_in_float32(cfg, fp32):
    assert vllm_router.float32_router(from_hf_config(cfg)) is fp32


def _vllm_weights(cfg: dict, fmt: str, tp: int) -> int:
    a = from_hf_config(cfg)
    return estimate(a, Scenario(engine="vllm", weight_format=fmt, tp=tp, context_tokens=4096,
                                gpu="h100-80g")).bytes["weights"]


def test_glm_air_routers_add_two_bytes_a_value_on_every_rank(monkeypatch):
    """45 MoE layers x 128 experts x (4,096 router values + a score bias), 4 bytes each where bf16 stores 2:
    47,197,440 bytes on each of the two ranks."""
    a = from_hf_config(GLM_AIR)
    routers = 45 * 128 * (4096 + 1)
    assert vllm_router.upcast_bytes(a, get_weight_format("bf16"), range(a.num_layers)) == 2 * routers
    assert vllm_router.upcast_bytes(a, get_weight_format("fp32"), range(a.num_layers)) == 0
    with_fp32 = _vllm_weights(GLM_AIR, "bf16", 2)
    monkeypatch.setattr(vllm_router, "float32_router", lambda a: False)
    assert with_fp32 - _vllm_weights(GLM_AIR, "bf16", 2) == 2 * routers


def test_an_fp8_checkpoint_keeps_its_routers_in_float32_too(monkeypatch):
    with_fp32 = _vllm_weights(LING, "fp8", 1)
    monkeypatch.setattr(vllm_router, "float32_router", lambda a: False)
    assert with_fp32 - _vllm_weights(LING, "fp8", 1) >= 19 * 256 * 2048 * 2
