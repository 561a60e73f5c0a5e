"""llama.cpp's attention rotation beside a quantized KV cache (`memviz.core.engines.llamacpp_rotation`): its
Hadamard matrices as graph inputs and the placement it moves. Checked against a real llama.cpp
(tests/data/llamacpp/rotation_buffers.json, made by benchmarks/llamacpp_rotation_sweep.py on this project's CPU:
each shape with LLAMA_ATTN_ROT_DISABLE=0 and =1)."""

import json
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.engines import llamacpp
from memviz.core.engines.llamacpp_rotation import k_rotation_width, rotation
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.units import KiB, MiB
from memviz.probe.llamacpp_runner import _rotation_on

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "rotation_buffers.json").read_text())


def _arch(name: str):
    return from_hf_config(DATA["shapes"][name], name=name)


def _compute_mib(case: dict, rotation: bool | None = None) -> float:
    on = case["rotation"] == "on" if rotation is None else rotation
    e = estimate(_arch(case["shape"]), Scenario(
        engine="llamacpp", device="cpu", weight_format="Q8_0", kv_format=case["cache"], context_tokens=case["context"],
        options={"n_ubatch": case["ubatch"], "flash_attn": case["flash_attn"], "attn_rotation": on}))
    return e.bytes["activations"] / MiB


def _error(case: dict) -> float:
    return (_compute_mib(case) - case["compute_mib"]) / case["compute_mib"]


def _pairs() -> list[tuple[dict, dict]]:
    """(rotation on, rotation off) runs of one shape and micro-batch."""
    off = {(c["shape"], c["ubatch"]): c for c in DATA["cases"] if c["rotation"] == "off"}
    return [(c, off[c["shape"], c["ubatch"]]) for c in DATA["cases"] if c["rotation"] == "on"]


@pytest.mark.parametrize(("head_dim", "width"), [(64, 64), (128, 128), (192, 64), (256, 256), (512, 512), (320, 64)])
def test_k_matrix_is_the_largest_power_of_two_dividing_the_head(head_dim, width):
    assert k_rotation_width(head_dim) == width


def test_matrices_per_cache():
    """A K matrix of the head's power of two and a 64 x 64 V matrix, F32, per cache: Gemma 2's full and sliding caches
    have a set each; an MLA latent cache none; nothing beside an F16 cache."""
    assert rotation(_arch("llama-hd128"), latent=False, quantized=True)[1] == 4 * (128 * 128 + 64 * 64) == 80 * KiB
    assert rotation(_arch("gemma2-hd256"), latent=False, quantized=True)[1] == 2 * 4 * (256 * 256 + 64 * 64)
    assert rotation(_arch("llama-hd192"), latent=False, quantized=True)[1] == 2 * 4 * 64 * 64
    assert rotation(_arch("mla-latent576"), latent=True, quantized=True)[1] == 0
    assert rotation(_arch("llama-hd128"), latent=False, quantized=False)[1] == 0


def test_heads_not_a_multiple_of_64_are_not_rotated():
    a = from_hf_config({**DATA["shapes"]["llama-hd128"], "hidden_size": 768, "num_attention_heads": 8, "head_dim": 96})
    assert rotation(a, latent=False, quantized=True)[1] == 0


def test_the_lightning_indexer_always_rotates():
    """DeepSeek sparse attention's indexer cache rotates its 128-wide keys whatever the cache type."""
    cfg = {"model_type": "deepseek_v32", "hidden_size": 1024, "intermediate_size": 2048, "moe_intermediate_size": 256,
           "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "n_routed_experts": 4,
           "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "kv_lora_rank": 256,
           "q_lora_rank": 512, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64, "vocab_size": 4096,
           "index_n_heads": 8, "index_head_dim": 128, "index_topk": 256, "max_position_embeddings": 4096}
    a = from_hf_config(cfg)
    assert a.indexer_heads and a.is_mla
    assert rotation(a, latent=True, quantized=False)[1] == 4 * 128 * 128


@pytest.mark.parametrize("case", [c for c in DATA["cases"] if c["rotation"] == "on"],
                         ids=lambda c: f"{c['shape']}-{c['ubatch']}")
def test_compute_buffer_with_the_rotation(case):
    """Within 0.25 % of llama.cpp where it rotates: the matrices while the layers run, one hidden row fewer beside a
    feed-forward wider than two hidden widths and one more beside the logits; the MLA shape, which does not rotate,
    within its own rule's 1.1 %."""
    assert abs(_error(case)) <= (0.011 if case["shape"].startswith("mla") else 0.0025)


def test_rotation_off_keeps_the_unrotated_figures():
    """LLAMA_ATTN_ROT_DISABLE=1: the unrotated rules, exact but for the logits beside an MLP of two hidden widths
    (ggml-alloc leaves 5 more rows there, -13 %: not modelled) and the MLA shape."""
    off = [c for c in DATA["cases"] if c["rotation"] == "off"]
    odd = {"logits-h1024-mlp2048-v32000", "mla-latent576"}
    assert max(abs(_error(c)) for c in off if c["shape"] not in odd) <= 0.0015
    assert -0.14 <= _error(next(c for c in off if c["shape"] == "logits-h1024-mlp2048-v32000")) < -0.12


def test_what_the_rotation_changes_is_what_llama_cpp_changes():
    """The on - off difference: the matrices, -1 row beside wide MLPs and experts, +1 beside the logits (-4.00 ...
    +4.00 MiB), memviz's within 0.04 MiB of llama.cpp's in every pair but the narrow-MLP logits (its anomaly)."""
    pairs = [(on, off) for on, off in _pairs() if on["shape"] != "logits-h1024-mlp2048-v32000"]
    assert len(pairs) >= 12
    for on, off in pairs:
        measured = on["compute_mib"] - off["compute_mib"]
        assert abs((_compute_mib(on) - _compute_mib(off)) - measured) <= 0.04, on["shape"]


def test_without_the_placement_shift_the_wide_mlps_miss(monkeypatch):
    """Negative control: the matrices alone leave the wide-MLP and expert shapes 5.8-10.3 % above llama.cpp."""
    engine_rotation = llamacpp.LlamaCpp._rotation
    monkeypatch.setattr(llamacpp.LlamaCpp, "_rotation", staticmethod(lambda x: (False, engine_rotation(x)[1])))
    wide = [c for c in DATA["cases"] if c["rotation"] == "on" and c["shape"] in
            ("llama-hd64", "llama-hd128", "llama-hd192", "gemma2-hd256", "qwen3moe-hd128")]
    assert len(wide) == 6 and min(_error(c) for c in wide) > 0.05


def test_launch_commands_turn_it_off_with_the_variable():
    a = _arch("llama-hd128")
    off = Scenario(engine="llamacpp", kv_format="q8_0", options={"attn_rotation": False})
    assert llamacpp.LlamaCpp().launch_command(a, off, "m.gguf").startswith("LLAMA_ATTN_ROT_DISABLE=1 llama-server ")
    assert "LLAMA_ATTN_ROT" not in llamacpp.LlamaCpp().launch_command(a, Scenario(engine="llamacpp", kv_format="q8_0"),
                                                                      "m.gguf")
    from memviz.core.engines.ollama import Ollama

    assert "LLAMA_ATTN_ROT_DISABLE=1" in Ollama().launch_command(a, Scenario(
        engine="ollama", kv_format="q8_0", options={"attn_rotation": False}), "m.gguf")


def test_a_quantized_cache_needs_blocks_that_divide_the_heads():
    """llama.cpp refuses a q8_0 cache for 80-wide heads (src/llama-context.cpp `llama_init_from_model`; the probe's
    run of that shape was refused the same way)."""
    a = from_hf_config({**DATA["shapes"]["llama-hd128"], "hidden_size": 2560, "num_attention_heads": 32,
                        "num_key_value_heads": 8, "head_dim": 80})
    with pytest.raises(InputError, match="q8_0 cache for heads 80 wide"):
        estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="Q8_0", kv_format="q8_0"))
    estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="Q8_0", kv_format="fp16"))


@pytest.mark.parametrize(("value", "on"), [(None, True), ("0", True), ("1", False), (" 2x", False), ("abc", True)])
def test_the_probe_reads_the_variable_as_llama_cpp_does(monkeypatch, value, on):
    """atoi: a non-zero leading integer turns the rotation off."""
    if value is None:
        monkeypatch.delenv("LLAMA_ATTN_ROT_DISABLE", raising=False)
    else:
        monkeypatch.setenv("LLAMA_ATTN_ROT_DISABLE", value)
    assert _rotation_on() is on
