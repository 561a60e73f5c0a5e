"""Parameter counts of every model type memviz knows against what transformers itself builds from the same
config (each type's default configuration, on the meta device: no memory, no download). Rotary frequency
buffers and attention masks are not weights and are left out on both sides; the differences named in
ALLOWED are memviz's documented simplifications."""

import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from memviz.core.arch import KNOWN_MODEL_TYPES, from_hf_config  # noqa: E402
from memviz.core.errors import InputError  # noqa: E402
from memviz.core.inventory import parameter_count  # noqa: E402

#: model type -> elements memviz leaves out on purpose
ALLOWED = {
    "phi": 51_200,  # PhiForCausalLM's lm_head bias (vocab_size elements)
    "apertus": 4 * 32,  # xIELU's two learned scalars and two constants per layer
}
NOT_WEIGHTS = ("inv_freq", "rotary", "causal_mask", "masked_bias", "embed_scale")


def _reference(model_type: str) -> tuple[dict, int]:
    from transformers import AutoConfig, AutoModelForCausalLM

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model(model_type)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    count = sum(p.numel() for p in model.parameters())
    count += sum(b.numel() for n, b in model.named_buffers() if not any(k in n for k in NOT_WEIGHTS))
    return config.to_dict(), count


@pytest.mark.parametrize("model_type", sorted(set(KNOWN_MODEL_TYPES) - {"gemma3"}))
def test_memviz_counts_what_transformers_builds(model_type):
    cfg, reference = _reference(model_type)  # every type memviz knows must exist in the transformers it is tested with
    try:
        a = from_hf_config(cfg)
    except InputError as exc:  # default configs that are not models (no experts per token, heads not dividing)
        assert model_type in ("deepseek_v2", "glm4_moe"), exc
        return
    assert reference - parameter_count(a) == ALLOWED.get(model_type, 0)
