"""EAGLE-3 speculative decoding in vLLM 0.34 (`vllm_eagle3`): the drafter's weights as `Eagle3LlamaForCausalLM`
builds them, worked by hand for Llama-3.1-8B's released drafter shape (one layer of the target's widths, a head over
32,000 tokens, the target's embedding shared), its layer's cache in the pool, and what vLLM refuses."""

import pytest

from memviz.cli import main
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()
EAGLE3 = {"num_speculative_tokens": 3, "speculative_method": "eagle3"}


def llama8_drafter_values(tp: int, inter: int = 14336, vocab: int = 32000) -> float:
    """Llama-3.1-8B's drafter on one of `tp` ranks: qkv_proj over 2 x 4,096 inputs (32 query and 8 KV heads of 128),
    o_proj, the gated MLP, three norms, fc 3 x 4,096 -> 4,096 whole, the final norm, the head over `vocab` tokens."""
    h = 4096
    layer = 2 * h * (4096 + 2 * 1024) / tp + 4096 * h / tp + 3 * h * inter / tp + 3 * h
    return layer + 3 * h * h + h + vocab * h / tp


def run(a=LLAMA8, options=None, **kw):
    sc = Scenario(**{"engine": "vllm", "gpu": "h100-80g", "context_tokens": 8192, "options": options or {}, **kw})
    return estimate(a, sc)


def test_the_drafter_adds_its_layer_fc_and_head_to_the_weights():
    """849,635,328 bytes on one H100 (the released checkpoint's ~811 MiB plus the int64 draft-to-target map), the
    column and row layers and the head halved at TP 2, fc and the map whole."""
    for tp in (1, 2):
        extra = run(options=EAGLE3, tp=tp).devices[0].weights - run(tp=tp).devices[0].weights
        assert extra == llama8_drafter_values(tp) * 2 + 32000 * 8, tp
    assert run(options=EAGLE3).engine_facts["drafter"] == {
        "method": "eagle3", "layers": 1, "num_speculative_tokens": 3, "weight_bytes": 849_635_328}


def test_another_drafters_widths_and_a_full_vocabulary():
    """draft_intermediate_size and draft_vocab_size shape another drafter; a head over the target's whole vocabulary
    needs no draft-to-target map."""
    base = run().devices[0].weights
    wider = run(options={**EAGLE3, "draft_intermediate_size": 16384}).devices[0].weights - base
    assert wider == llama8_drafter_values(1, inter=16384) * 2 + 32000 * 8
    full = run(options={**EAGLE3, "draft_vocab_size": 128256}).devices[0].weights - base
    assert full == llama8_drafter_values(1, vocab=128256) * 2


def test_the_drafters_layer_caches_as_one_more_layer():
    """33 layers' worth a block; one request of max_model_len needs it too (`check_enough_kv_cache_memory`)."""
    est = run(options=EAGLE3)
    assert est.engine_facts["kv_block_bytes"] == 64 * 33 * 8 * 128 * 2 * 2
    assert est.engine_facts["one_request_kv_bytes"] == 8192 * 33 * 4096
    assert est.engine_facts["kv_pool_tokens"] < run().engine_facts["kv_pool_tokens"]


def test_the_launch_command_names_the_drafter():
    cmd = run(options=EAGLE3).launch_command("meta-llama/Llama-3.1-8B")
    assert cmd.endswith("""--speculative-config '{"method": "eagle3", "model": "<EAGLE-3 drafter>", """
                        """"num_speculative_tokens": 3}'""")


@pytest.mark.parametrize(("preset", "options", "kw", "message"), [
    ("gemma-3-12b", EAGLE3, {}, "does not support the EAGLE3 interface"),
    ("llama-3.1-8b", EAGLE3, {"pp": 2}, "one pipeline stage"),
    ("deepseek-v2-lite", EAGLE3, {}, "Llama-style EAGLE-3 drafters"),
    ("llama-3.1-8b", {**EAGLE3, "draft_vocab_size": 200000}, {}, "exceeds the target's vocabulary"),
    ("llama-3.1-8b", {"speculative_method": "eagle3"}, {}, "without num_speculative_tokens"),
    ("llama-3.1-8b", {"draft_vocab_size": 32000}, {}, "without num_speculative_tokens"),
    ("qwen3.5-35b-a3b", {"num_speculative_tokens": 2, "draft_vocab_size": 32000}, {}, "set speculative_method eagle3"),
])
def test_what_vllm_refuses_and_settings_without_a_drafter_are_one_line(preset, options, kw, message):
    with pytest.raises(InputError, match=message):
        run(get_preset(preset).architecture(), options, **kw)


def test_the_types_whose_class_lacks_eagle3_support_are_the_ones_refused():
    """The classes `set_eagle3_aux_hidden_state_layers` refuses ("Model does not support EAGLE3 interface"): the types
    memviz reads whose class is registered without SupportsEagle3 in the 0.34.0 wheel; the Transformers backend
    implements it."""
    pytest.importorskip("transformers")
    from memviz.core.engines.vllm_eagle3 import NO_EAGLE3
    from tests.core.engines.test_vllm_registry import types_without

    refused = types_without("eagle3")
    assert set(refused) == set(NO_EAGLE3)
    assert all(NO_EAGLE3[t] in names for t, names in refused.items())


def test_the_cli_names_the_drafter(capsys):
    assert main(["estimate", "--preset", "llama-3.1-8b", "--engine", "vllm", "--gpu", "h100-80g", "--context", "8192",
                 "-o", "num_speculative_tokens=3", "-o", "speculative_method=eagle3"]) == 0
    assert ("vLLM EAGLE-3 drafter (3 draft token(s) a step): 1 draft layer(s), 0.79 GiB of weights on the last stage"
            in capsys.readouterr().out)
