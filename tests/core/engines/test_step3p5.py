"""Step 3.5 / 3.7's language model (transformers 5.24 `Step3p7TextConfig`, model_type step3p5): Laguna-like
attention (q/k norms, g_proj's gate of one value a head) whose sliding layers have their own query heads, three
dense layers then experts with a shared one of share_expert_dim and a router with its score bias. Read before as a
warned Llama-style decoder (-1.1 %), and a released config (num_attention_groups, moe_num_experts, moe_top_k,
moe_layers_enum, attention_other_setting) stopped at "config is missing num_experts_per_tok"."""

import json
import re
import warnings
from pathlib import Path

import pytest

from memviz.core.arch import SLIDING, from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

#: Step-3.5-Flash's widths in its released config's key names (45 layers, 96 query heads in the sliding layers,
#: 288 experts of 1,280, a 1,280-wide shared expert), as public conversion tools quote them; see the file's _note
RELEASED = json.loads((Path(__file__).parents[2] / "data" / "step3p5_released_shape.json").read_text())


def _language_model(config) -> int:
    """Elements of the language model transformers builds from `config` (a Step3p7Config), its LM head included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = transformers.AutoModel.from_config(config)
    stored = set(model.state_dict())
    named = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers()
                                              if n in stored and "inv_freq" not in n]
    text = config.text_config
    return sum(t.numel() for n, t in named if not re.search(r"vision|projector", n)) + text.vocab_size * text.hidden_size


@pytest.mark.parametrize("source", ["default", "released", "re-saved"])
def test_memviz_counts_what_transformers_builds(source):
    from transformers.models.step3p7.configuration_step3p7 import Step3p7Config

    config = Step3p7Config() if source == "default" else Step3p7Config(text_config=dict(RELEASED))
    cfg = RELEASED if source == "released" else config.to_dict()
    a = from_hf_config(cfg)
    assert a.model_type == "step3p5" and parameter_count(a) == _language_model(config)
    if source != "default":
        assert parameter_count(a) == 196_993_879_104
        assert (a.num_kv_heads, a.head_gate, a.shared_expert_intermediate_size, a.num_experts) == (8, 1, 1280, 288)
        assert {a.layer_num_heads(i) for i, kind in enumerate(a.layer_types) if kind == SLIDING} == {96}
        assert sum(a.moe_layers) == 42 and a.sliding_window == 512


def test_the_cache_is_eight_kv_heads_full_and_windowed():
    a = from_hf_config(RELEASED)
    kv = estimate(a, Scenario(engine="transformers", weight_format="bf16", context_tokens=4096)).bytes["kv_cache"]
    per_token_layer = 8 * 128 * 2 * 2
    assert kv == per_token_layer * (12 * 4096 + 33 * 512)  # 12 full layers, 33 sliding ones of 512
