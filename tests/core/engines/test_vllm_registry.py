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


#: the classes vLLM builds where neither transformers nor memviz's architecture table names one: step3p5's release
#: (tests/data/step3p5_released_shape.json: Step3p5ForCausalLM) and Mistral Large 4, which vLLM runs from its
#: Mistral-format files (`adapt_config_dict`: MistralLarge4ForCausalLM)
VLLM_CLASSES = {"step3p5": {"Step3p5ForCausalLM"}, "mistral_large4_text": {"MistralLarge4ForCausalLM"}}


def types_without(interface: str) -> dict[str, set[str]]:
    """The model types memviz reads whose classes vLLM registers (transformers' class, or the ones vLLM resolves
    the type's architectures to) but none of which is in the wheel's list of the classes implementing `interface`
    ("lora", "eagle3"), with those classes."""
    from memviz.core.arch import _BY_ARCHITECTURE

    by_type = {k: set(v) for k, v in VLLM_CLASSES.items()}
    for name, model_type in _BY_ARCHITECTURE.items():
        by_type.setdefault(model_type, set()).add(name)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model_type in KNOWN_MODEL_TYPES:
            cls = _transformers_class(model_type)
            registered = (({cls.__name__} if cls else set()) | by_type.get(model_type, set())) \
                & set(REGISTRY["registered"])
            if registered and not registered & set(REGISTRY[interface]):
                out[model_type] = registered
    return out


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
