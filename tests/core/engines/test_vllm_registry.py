"""Which model types vLLM 0.34 runs: a class its registry names (tests/data/published/vllm_registry.json, from the
0.34.0 wheel), or one its Transformers backend takes (`ModelRegistry._try_resolve_transformers`: transformers'
class goes through the attention interface). A type neither way is refused in one line, as vLLM refuses it."""

import json
import warnings
from pathlib import Path

import pytest

from memviz.core.arch import KNOWN_MODEL_TYPES, from_hf_config
from memviz.core.engines.vllm import NOT_IN_VLLM
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate

REGISTRY = json.loads((Path(__file__).parents[2] / "data" / "published" / "vllm_registry.json").read_text())


def _transformers_class(model_type: str):
    """transformers' causal-LM (else image-text-to-text, else base) class of a model type, or None."""
    import transformers
    from transformers.models.auto import modeling_auto as auto

    for names in (auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
                  auto.MODEL_MAPPING_NAMES):
        if model_type in names:
            name = names[model_type]
            return getattr(transformers, name if isinstance(name, str) else name[0], None)
    return None


def test_every_type_vllm_cannot_run_is_refused():
    pytest.importorskip("transformers")
    unrunnable = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model_type in KNOWN_MODEL_TYPES:
            cls = _transformers_class(model_type)
            if cls is None or cls.__name__ in REGISTRY["registered"]:
                continue
            if not (cls.is_backend_compatible() or cls._can_set_attn_implementation()):
                unrunnable.add(model_type)
    assert unrunnable == {"mpt", "gpt_neo"}
    assert unrunnable <= set(NOT_IN_VLLM)


@pytest.mark.parametrize(("config", "reason"), [
    ({"architectures": ["MptForCausalLM"], "model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
      "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432}, "0.28 removed it"),
    ({"architectures": ["GPTNeoForCausalLM"], "model_type": "gpt_neo", "hidden_size": 2048, "num_heads": 16,
      "num_layers": 24, "max_position_embeddings": 2048, "vocab_size": 50257,
      "attention_types": [[["global", "local"], 12]], "window_size": 256}, "names no GPTNeoForCausalLM"),
])
def test_vllm_refuses_what_it_dropped_or_never_had(config, reason):
    """MPT (mosaicml/mpt-7b's widths) and GPT-Neo (EleutherAI/gpt-neo-1.3B's): vLLM 0.34 raises "was supported in
    vLLM until v0.28.0" / "are not supported for now"; transformers and llama.cpp (MPT) still run them."""
    a = from_hf_config(config)
    assert a.model_type == config["model_type"]
    assert "MptForCausalLM" in REGISTRY["removed"] and REGISTRY["removed"]["MptForCausalLM"] == "0.28.0"
    with pytest.raises(InputError, match=f"vLLM 0.34 does not run {a.model_type}: .*{reason}"):
        estimate(a, Scenario(engine="vllm", context_tokens=2048, gpu="rtx4090"))
    assert estimate(a, Scenario(engine="transformers", context_tokens=2048, gpu="rtx4090")).total > 0
