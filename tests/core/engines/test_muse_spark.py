"""Muse Spark's language model (transformers 5.24 `MuseSparkTextModel`): Muse Glimmer's attention (a query-sized
output gate, scaleless q/k norms), three weighted norms and two float32 residual gates a layer, and experts that
work in a narrower space (`MuseSparkMoE`: pre_expert_proj and its norm into moe_hidden_size, the experts there, a
norm, post_expert_proj back) behind a float32 sigmoid router with its score bias. Read as a Llama-style decoder it
counted +96.8 % (its experts taken hidden-wide)."""

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.core.engines.transformers_runs import transformers_weights, wrapped_language_model  # noqa: E402

TOWERS = r"vision|visual|multi_modal|projector|audio|perception"


def test_the_default_config_counts_what_transformers_builds_to_the_byte():
    """MuseSparkConfig's default (62 layers, 256 experts of 4,096 in a 4,096-wide space under an 8,192 hidden size):
    the language model's elements and bf16 bytes (router, score bias and residual gates float32) as transformers
    builds it, towers aside; the vision tower, adapter and projection (1,928,137,216) and the audio encoder counted
    as transformers builds them."""
    config, elements, nbytes = wrapped_language_model("muse_spark", TOWERS)
    a = from_hf_config(config.to_dict())
    assert a.model_type == "muse_spark_text" and a.moe_hidden_size == 4096
    assert parameter_count(a) == elements == 819_990_552_064
    assert transformers_weights(a) == nbytes
    _, vision, _ = wrapped_language_model("muse_spark", r"^(?!.*(vision|visual))")  # its vision tensors only
    _, audio, _ = wrapped_language_model("muse_spark", r"^(?!.*audio)")
    assert [(e.family, e.parameters) for e in a.encoders] == [("muse_spark_vision", vision), ("muse_spark_audio", audio)]
    assert not [w for w in a.warnings if "not counted" in w]


def test_a_tiny_real_run_fills_the_cache_memviz_predicts():
    from tests.core.engines.transformers_runs import run_and_compare

    config = transformers.AutoConfig.for_model("muse_spark").text_config
    for key, value in dict(hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
                           num_key_value_heads=2, head_dim=16, vocab_size=512, moe_intermediate_size=32,
                           moe_hidden_size=48, num_local_experts=4, num_experts_per_tok=2, sliding_window=32,
                           layer_types=["sliding_attention"] * 3 + ["full_attention"],
                           mlp_layer_types=["sparse"] * 4).items():
        setattr(config, key, value)
    a, model, held, kv = run_and_compare(transformers.AutoModel.from_config, config)
    assert kv == held > 0
    stored = sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    assert parameter_count(a) == stored + 512 * 64  # the text model without its LM head


def test_engines():
    a = from_hf_config(transformers.AutoConfig.for_model("muse_spark").to_dict())
    with pytest.raises(InputError, match="cannot run muse_spark_text"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096))
    assert estimate(a, Scenario(engine="vllm", weight_format="fp8", gpu="b200", tp=8, context_tokens=8192)).bytes
