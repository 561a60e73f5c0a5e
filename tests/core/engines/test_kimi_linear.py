"""Kimi Linear (transformers 5.25 modeling_kimi_linear.py): Kimi delta attention beside MLA layers, DeepSeek-V3's
experts. Read and estimated for transformers and llama.cpp (tests/core/engines/test_llamacpp_kimi_linear.py); vLLM
refused in one line until modelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memviz.cli import main
from memviz.core.arch import FULL, KIMI_DELTA, LINEAR, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import active_parameter_count, parameter_count

#: Kimi-Linear-48B-A3B's shape as its release names the fields (KimiLinearConfig's attribute_map, linear_attn_config
#: with 1-indexed full-attention layers: every fourth from the fourth, and the last)
RELEASED = {"model_type": "kimi_linear", "architectures": ["KimiLinearForCausalLM"], "vocab_size": 163840,
            "hidden_size": 2304, "intermediate_size": 9216, "moe_intermediate_size": 1024, "num_hidden_layers": 27,
            "num_attention_heads": 32, "num_key_value_heads": 32, "num_experts": 256, "num_experts_per_token": 8,
            "num_shared_experts": 1, "first_k_dense_replace": 1, "kv_lora_rank": 512, "q_lora_rank": None,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "model_max_length": 1048576,
            "tie_word_embeddings": False,
            "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
                                   "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23,
                                                  25, 26],
                                   "head_dim": 128, "num_heads": 32, "short_conv_kernel_size": 4}}
TINY = json.loads((Path(__file__).parents[2] / "data" / "probe" / "kimi_linear_kda.json").read_text())


def test_the_release_reads_as_delta_attention_beside_mla_with_deepseek_experts():
    a = from_hf_config(RELEASED)
    assert a.layer_types.count(FULL) == 7 and a.layer_types.count(LINEAR) == 20
    assert [i for i, t in enumerate(a.layer_types) if t == FULL] == [3, 7, 11, 15, 19, 23, 26]
    assert (a.linear_mixer, a.linear_v_heads, a.linear_k_head_dim, a.linear_conv_kernel) == (KIMI_DELTA, 32, 128, 4)
    assert (a.kv_lora_rank, a.qk_rope_head_dim, a.num_experts, a.experts_per_token) == (512, 64, 256, 8)
    assert (a.shared_expert_intermediate_size, sum(a.moe_layers), a.max_position_embeddings) == (1024, 26, 1048576)
    assert "20 × Kimi delta attention" in a.layer_kinds_text() and "7 × full" in a.layer_kinds_text()


def test_parameters_and_active_parameters():
    """49,122,681,728 elements, 3,106,972,544 a token (moonshotai/Kimi-Linear-48B-A3B-Instruct's card: 48B total,
    3B activated); transformers' own build of the default configuration matches memviz to the element and byte
    (tests/core/test_arch_vs_transformers.py)."""
    a = from_hf_config(RELEASED)
    assert (parameter_count(a), active_parameter_count(a)) == (49_122_681_728, 3_106_972_544)


def test_transformers_caches_the_latent_of_mla_layers_and_a_state_for_each_delta_layer():
    """transformers keeps the MLA layers' latent (kv_lora_rank + rope a token) and, per sequence and delta layer,
    the convolution's last kernel inputs over q, k and v in the compute dtype and the float32 recurrent state
    (heads x head width x head width): a real tiny run's cache measured to the byte (memviz probe, 466,816 bytes)."""
    a = from_hf_config(RELEASED)
    e = estimate(a, Scenario(engine="transformers", weight_format="bf16", context_tokens=131072, batch=2))
    latent = 7 * (512 + 64) * 2 * 131072 * 2
    states = 20 * 2 * (3 * 32 * 128 * 4 * 2 + 32 * 128 * 128 * 4)
    assert e.bytes["kv_cache"] == latent + states
    tiny = from_hf_config(TINY)
    small = estimate(tiny, Scenario(engine="transformers", weight_format="fp32", kv_format="fp32", context_tokens=307,
                                    batch=2))
    assert small.bytes["kv_cache"] == 466_816 and small.bytes["weights"] == 25_084_736


def test_vllm_not_modelled_for_it_refuses_in_one_line():
    a = from_hf_config(RELEASED)
    with pytest.raises(InputError, match="vLLM's Kimi Linear"):
        estimate(a, Scenario(engine="vllm", weight_format="bf16", context_tokens=4096))


def test_the_cli_estimates_it_with_transformers_and_refuses_vllm_with_exit_2(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(RELEASED))
    assert main(["estimate", "--config", str(path), "--engine", "transformers", "--context", "8192"]) == 0
    assert main(["estimate", "--config", str(path), "--engine", "vllm", "--context", "8192"]) == 2
    assert "Kimi Linear" in capsys.readouterr().err


@pytest.mark.parametrize(("linear", "full"), [
    ({"full_attn_layers": [2], "kda_layers": [1, 3]}, [1]),  # 1-indexed; a layer in neither list: delta
    ({"full_attn_layers": [2]}, [4]),  # without kda_layers KimiLinearConfig ignores the list: every fourth from the fifth
    ({}, [4]),
])
def test_layer_kinds_as_kimi_linear_config_places_them(linear, full):
    cfg = {**RELEASED, "num_hidden_layers": 6, "linear_attn_config": {**linear, "num_heads": 32, "head_dim": 128}}
    a = from_hf_config(cfg)
    assert [i for i, t in enumerate(a.layer_types) if t == FULL] == full
