"""Ling 2.0 / Ring 2.0 (BailingMoeV2ForCausalLM, model_type bailing_moe_v2; its releases say "bailing_moe"): the
release's modeling code and vLLM 0.34 bailing_moe.py build one query_key_value, RMSNorm q/k norms, leading dense
layers, sigmoid-routed experts with their score bias and a shared MLP. transformers 5.25 has no class for it; the
llama.cpp runs (bailingmoe2) are in tests/probe/test_llamacpp_live.py, the GGUF round trip in test_gguf_build.py."""

import json
from pathlib import Path

import pytest

from memviz.cli import main
from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import active_parameter_count, build_inventory, parameter_count

#: inclusionAI/Ling-mini-2.0's shape (config.json in the release's names)
LING_MINI = dict(model_type="bailing_moe", architectures=["BailingMoeV2ForCausalLM"], num_hidden_layers=20,
                 hidden_size=2048, intermediate_size=5120, first_k_dense_replace=1, moe_intermediate_size=512,
                 moe_shared_expert_intermediate_size=512, num_shared_experts=1, num_experts=256, num_experts_per_tok=8,
                 n_group=8, topk_group=4, norm_topk_prob=True, routed_scaling_factor=2.5, score_function="sigmoid",
                 moe_router_enable_expert_bias=True, num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                 use_qk_norm=True, partial_rotary_factor=0.5, rope_theta=600000, tie_word_embeddings=False,
                 vocab_size=157184, max_position_embeddings=32768, num_nextn_predict_layers=1, use_qkv_bias=False,
                 use_bias=False)


def test_ling_mini_counts_its_cards_parameters():
    """By hand: 20 layers of attention (q/k/v 2048 x (16 + 2 x 4) x 128, dense 2048 x 2048, q/k norms), two norms,
    one dense MLP of 5,120 then 19 layers of 256 experts of 512, a shared one, the router and its bias; the card's
    16.26B total and 789M activated non-embedding parameters (the head counted, the embedding not)."""
    a = from_hf_config(LING_MINI)
    assert a.model_type == "bailing_moe_v2" and not a.warnings  # its class says which generation it is
    assert (a.qk_norm, a.router_score_bias, a.qkv_bias, a.out_bias) == (True, True, False, False)
    attention = 2048 * 24 * 128 + 2048 * 2048 + 2 * 128 + 2 * 2048
    moe = 256 * 3 * 2048 * 512 + 3 * 2048 * 512 + 256 * 2048 + 256
    total = 20 * attention + 3 * 2048 * 5120 + 19 * moe + 2 * 157184 * 2048 + 2048
    assert parameter_count(a) == total == 16_255_643_392
    assert active_parameter_count(a) - 157184 * 2048 == pytest.approx(789e6, rel=0.001)


def test_v1_is_read_as_vllm_and_llamacpp_build_it():
    """BailingMoeForCausalLM (Ling-lite / -plus): V2's blocks without q/k norms or a score bias; llama.cpp's bailingmoe
    (q/k/v apart, experts in every layer, the shared MLP a count of the experts' width) refuses dense layers."""
    v1 = {**LING_MINI, "architectures": ["BailingMoeForCausalLM"], "use_qk_norm": False,
          "moe_router_enable_expert_bias": False, "num_shared_experts": 2}
    a = from_hf_config(v1)
    assert (a.model_type, a.qk_norm, a.router_score_bias, a.shared_expert_intermediate_size) == \
        ("bailing_moe", False, False, 1024)
    assert "BailingMoeForCausalLM" in a.remote_code and not a.warnings
    with pytest.raises(InputError, match="bailingmoe builds experts in every layer"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", device="cpu"))
    every = from_hf_config({**v1, "first_k_dense_replace": 0})
    e = estimate(every, Scenario(engine="llamacpp", weight_format="Q4_K_M", device="cpu", context_tokens=4096))
    assert e.kv_bytes_per_token == 20 * 2 * 4 * 128 * 2


def test_shared_experts_are_as_wide_as_vllm_builds_them():
    """bailing_moe.py `BailingMoE`: num_shared_experts x moe_shared_expert_intermediate_size (else the experts')."""
    assert from_hf_config({**LING_MINI, "num_shared_experts": 2}).shared_expert_intermediate_size == 1024
    cfg = {k: v for k, v in LING_MINI.items() if k != "moe_shared_expert_intermediate_size"}
    assert from_hf_config({**cfg, "moe_intermediate_size": 384}).shared_expert_intermediate_size == 384


def test_the_engines_estimate_it_and_transformers_names_the_release_code(capsys):
    a = from_hf_config(LING_MINI)
    for engine, fmt in (("vllm", "bf16"), ("transformers", "bf16"), ("llamacpp", "Q4_K_M")):
        e = estimate(a, Scenario(engine=engine, weight_format=fmt, context_tokens=8192, gpu="h100-80g"))
        assert e.kv_bytes_per_token == 20 * 2 * 4 * 128 * 2
    assert "BailingMoeV2ForCausalLM" in a.remote_code


def test_vllms_lora_modules_are_its_own_names(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LING_MINI))
    base = ["estimate", "--config", str(path), "--engine", "vllm", "--gpu", "h100-80g", "--context", "8192",
            "-o", "enable_lora=true"]
    assert main([*base, "-o", "lora_target_modules=query_key_value+dense"]) == 0
    capsys.readouterr()
    assert main([*base, "-o", "lora_target_modules=q_proj"]) == 2
    assert "its vLLM modules are query_key_value, dense" in capsys.readouterr().err


def test_vllm_has_no_mtp_drafter_for_it():
    sc = Scenario(engine="vllm", weight_format="bf16", gpu="h100-80g", options=(("num_speculative_tokens", 1),))
    with pytest.raises(InputError, match="no MTP model for it"):
        estimate(from_hf_config(LING_MINI), sc)


def test_llamacpp_refuses_heads_that_do_not_span_the_hidden_size():
    a = from_hf_config({**LING_MINI, "head_dim": 64})
    with pytest.raises(InputError, match="bailingmoe2 sizes attn_qkv"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", device="cpu"))


def test_its_gguf_names_are_llamacpps():
    """One attn_qkv a layer (conversion/bailingmoe.py keeps query_key_value), the score bias as exp_probs_b."""
    from memviz.core.gguf_names import gguf_name, gguf_tensors

    config = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "configs" / "bailing-moe-v2.json").read_text())
    a = from_hf_config(config)
    names = {gguf_name(t, a) for t in gguf_tensors(a)}
    assert {"blk.0.attn_qkv.weight", "blk.0.attn_q_norm.weight", "blk.0.ffn_gate.weight", "blk.1.ffn_gate_inp.weight",
            "blk.1.exp_probs_b.bias", "blk.1.ffn_up_shexp.weight"} <= names
    assert "blk.0.attn_q.weight" not in names and len(build_inventory(a)) > len(names)


@pytest.mark.parametrize(("model_type", "architecture"), [("bailing_moe", "BailingMoeV2_5ForCausalLM"),
                                                          ("bailing_moe", "BailingMoeV3ForCausalLM"),
                                                          ("bailing_moe_linear", "BailingMoeV2_5ForCausalLM"),
                                                          ("bailing_hybrid", "BailingHybridForCausalLM")])
def test_lings_linear_attention_hybrids_are_refused_in_one_line(model_type, architecture):
    with pytest.raises(InputError, match="linear-attention layers beside MLA layers"):
        from_hf_config({**LING_MINI, "model_type": model_type, "architectures": [architecture]})
