"""The attention implementation memviz's transformers engine assumes when a scenario names none is the one
transformers itself picks: eager for the model classes without an SDPA path, SDPA for the others."""

import pytest

from memviz.core.arch import KNOWN_MODEL_TYPES
from memviz.core.engines.transformers import EAGER_ONLY, Transformers

transformers = pytest.importorskip("transformers")


def test_eager_only_is_the_classes_without_sdpa():
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    without = set()
    for model_type in KNOWN_MODEL_TYPES:
        cls = getattr(transformers, MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type, ""), None)
        if cls is not None and not getattr(cls, "_supports_sdpa", False):
            without.add(model_type)
    assert without == EAGER_ONLY


def test_a_class_built_without_naming_one_runs_what_memviz_assumes():
    """Tiny gpt-oss and Llama models built as from_config builds them (transformers 5.24)."""
    from memviz.core.arch import from_hf_config

    small = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, vocab_size=512)
    for model_type, extra in (("gpt_oss", dict(num_local_experts=4, num_experts_per_tok=2)), ("llama", {})):
        config = transformers.AutoConfig.for_model(model_type, **small, **extra)
        model = transformers.AutoModelForCausalLM.from_config(config)
        assert model.config._attn_implementation == Transformers().default_attention(from_hf_config(config.to_dict()))
