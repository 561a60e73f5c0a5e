"""EAGLE-3 speculative decoding in vLLM 0.34 (`vllm_eagle3`): the drafter's weights as `Eagle3LlamaForCausalLM`
builds them, worked by hand for Llama-3.1-8B's released drafter shape (one layer of the target's widths, a head over
32,000 tokens, the target's embedding shared), its layer's cache in the pool, and what vLLM refuses."""

import json
from pathlib import Path

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
        "method": "eagle3", "layers": 1, "num_speculative_tokens": 3, "weight_bytes": 849_635_328, "state_layers": 0}


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
    ("mistral-7b-v0.1", EAGLE3, {}, "a sliding window on every layer"),
    ("llama-3.1-8b", {**EAGLE3, "draft_vocab_size": 200000}, {}, "exceeds the target's vocabulary"),
    ("llama-3.1-8b", {"speculative_method": "eagle3"}, {}, "without num_speculative_tokens"),
    ("llama-3.1-8b", {"draft_vocab_size": 32000}, {}, "without num_speculative_tokens"),
    ("llama-3.1-8b", {"draft_model": "org/drafter"}, {}, "without num_speculative_tokens"),
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


#: a released EAGLE-3 drafter's config for Llama-3.1-8B (the fields vLLM reads; SpecForge's llama3-8B-eagle3.json)
DRAFTER = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
           "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 1,
           "vocab_size": 128256, "draft_vocab_size": 32000, "torch_dtype": "bfloat16"}


def test_a_drafters_config_sets_its_options(tmp_path, capsys):
    from memviz.core.engines.vllm_eagle3 import drafter_options

    assert drafter_options(DRAFTER, LLAMA8) == {"speculative_method": "eagle3", "draft_intermediate_size": "14336",
                                                "draft_vocab_size": "32000"}
    full = {k: v for k, v in DRAFTER.items() if k != "draft_vocab_size"}
    assert drafter_options(full, LLAMA8)["draft_vocab_size"] == "128256"  # vLLM's default: the drafter's vocab_size
    for bad, message in (({"architectures": ["LlamaForCausalLM"]}, "not an EAGLE-3 drafter"),
                         ({"num_hidden_layers": 2}, "one-layer"), ({"hidden_size": 5120}, "hidden_size"),
                         ({"intermediate_size": None}, "intermediate_size")):
        with pytest.raises(InputError, match=message):
            drafter_options({**DRAFTER, **bad}, LLAMA8)
    (tmp_path / "config.json").write_text(json.dumps(DRAFTER))
    args = ["estimate", "--preset", "llama-3.1-8b", "--engine", "vllm", "--gpu", "h100-80g", "--context", "8192",
            "-o", "num_speculative_tokens=3", "--draft-config", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "EAGLE-3 drafter" in out and f'"model": "{tmp_path}"' in out  # the launch command loads that drafter
    for extra, message in ((["-o", "draft_vocab_size=64000"], "which -o gives otherwise"),
                           (["--engine", "transformers"], "runs none")):
        assert main([*args, *extra]) == 2
        assert message in capsys.readouterr().err


RELEASED = json.loads((Path(__file__).parents[2] / "data" / "published" / "eagle3_drafters.json").read_text())


@pytest.mark.parametrize("case", RELEASED["drafters"], ids=lambda c: c["target"])
def test_released_drafters_stand_beside_their_targets(case):
    """SpecForge's drafters for gpt-oss-20b, Qwen3-30B-A3B and Llama-3.1-70B: their widths are their targets' but the
    MoE targets' MLPs (17,280 and 12,288 against the targets' 2,880 and 6,144), which an MoE target must be told."""
    from memviz.core.engines.vllm_eagle3 import drafter_options

    a = get_preset(case["target"]).architecture()
    options = drafter_options(case["config"], a)
    assert options["draft_intermediate_size"] == str(case["config"]["intermediate_size"])
    assert options["draft_vocab_size"] == "32000"
    values = {k: int(v) if v.isdigit() else v for k, v in options.items()}
    est = run(a, {**values, "num_speculative_tokens": 3}, gpu="h200")
    h, inter, hd = a.hidden_size, case["config"]["intermediate_size"], a.head_dim
    q, kv = a.num_heads * hd, a.num_kv_heads * hd
    drafter = 2 * h * (q + 2 * kv) + q * h + 3 * h * inter + 3 * h + 3 * h * h + h + 32000 * h
    assert est.engine_facts["drafter"]["weight_bytes"] == drafter * 2 + 32000 * 8
    if a.is_moe:
        with pytest.raises(InputError, match="MLP width of their own"):
            run(a, EAGLE3, gpu="h200")
