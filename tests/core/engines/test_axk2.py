"""A.X-K2 (transformers 5.24 modular_axk2.py): DeepSeek-V3.2's DSA attention whose query up-projection also makes a
sigmoid gate on the attention's output (q_gate_proj, from the normed and the raw query latent), and RMS norms gated
by a low-rank MLP (the input norm of every layer, the post-attention norm of the expert layers). Read before as a
warned Llama-style decoder: -1.66 % at the default (A.X-K2-Light) shape, the indexer's keys not cached."""

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import build_inventory

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.core.engines.transformers_runs import assert_run_matches  # noqa: E402


def tiny(**kw):
    from transformers.models.axk2.configuration_axk2 import AXK2Config

    return AXK2Config(**{**dict(
        vocab_size=512, hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
        q_lora_rank=16, kv_lora_rank=8, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, index_n_heads=2,
        index_head_dim=8, index_topk=4, gated_norm_rank=4), **kw})


@pytest.mark.parametrize("kw", [{}, {"first_k_dense_replace": 2}, {"n_group": 2, "topk_group": 1}])
def test_a_tiny_real_run_fills_the_cache_memviz_predicts(kw):
    """The latent (kv_lora_rank + rope) and the indexer's key per token and layer, as the real DynamicCache holds
    them; the parameters (q_gate_proj, the gates of the norms, the dense first layers' plain post-attention norm)."""
    assert_run_matches(tiny(**kw))


def test_the_gate_and_the_gated_norms_are_the_tensors_transformers_builds():
    a = from_hf_config(transformers.AutoConfig.for_model("axk2").to_dict())
    shapes = {t.name: t.shape for t in build_inventory(a)}
    assert shapes["model.layers.0.self_attn.q_b_proj.weight"] == (32 * (96 + 64), 2 * 384)
    assert shapes["model.layers.0.input_layernorm.mlp.fc1.weight"] == (16, 2048)
    assert "model.layers.0.post_attention_layernorm.mlp.fc2.weight" not in shapes  # layer 0 is dense
    assert shapes["model.layers.1.post_attention_layernorm.mlp.fc2.weight"] == (2048, 16)
    assert a.indexer_layers == (True,) * 48 and a.indexer_head_dim == 128


def test_engines_without_it_and_a_config_without_a_query_lora_are_refused():
    cfg = transformers.AutoConfig.for_model("axk2").to_dict()
    a = from_hf_config(cfg)
    with pytest.raises(InputError, match="AXK1ForCausalLM only"):
        estimate(a, Scenario(engine="vllm", weight_format="bf16", gpu="h100-80g"))
    with pytest.raises(InputError, match="cannot run axk2"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M"))
    with pytest.raises(InputError, match="q_lora_rank"):
        from_hf_config({**cfg, "q_lora_rank": None})
