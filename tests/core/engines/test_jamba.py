"""Jamba: Mamba layers (with RMSNorms on dt, B and C) beside an attention layer every attn_layer_period, experts in
every expert_layer_period-th layer. Parameters and the cache transformers fills, run for real (tiny random models,
CPU), to the element and the byte; the released config's counts; vLLM's Mamba state pages (vLLM 0.34 source);
llama.cpp's file, cache and compute buffer against a real llama.cpp (tests/data/llamacpp/mamba_buffers.json, made by
benchmarks/llamacpp_mamba_sweep.py on this project's CPU)."""

import json
from pathlib import Path

import pytest

from memviz.core.arch import FULL, LINEAR, MAMBA, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.importers.gguf_file import config_from_gguf
from memviz.core.inventory import active_parameter_count, parameter_count
from memviz.core.units import MiB

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "mamba_buffers.json").read_text())
#: ai21labs/AI21-Jamba-Mini-1.7's config.json (the fields memviz reads): 52 B parameters, 12 B active (its card)
JAMBA_MINI = {"architectures": ["JambaForCausalLM"], "attn_layer_offset": 4, "attn_layer_period": 8,
              "expert_layer_offset": 1, "expert_layer_period": 2, "hidden_size": 4096, "intermediate_size": 14336,
              "mamba_conv_bias": True, "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_dt_rank": 256, "mamba_expand": 2,
              "mamba_proj_bias": False, "max_position_embeddings": 262144, "model_type": "jamba",
              "num_attention_heads": 32, "num_experts": 16, "num_experts_per_tok": 2, "num_hidden_layers": 32,
              "num_key_value_heads": 8, "tie_word_embeddings": False, "vocab_size": 65536}
TINY = dict(hidden_size=128, num_attention_heads=4, num_key_value_heads=2, intermediate_size=96, num_hidden_layers=4,
            attn_layer_period=2, attn_layer_offset=1, num_experts=4, num_experts_per_tok=2, vocab_size=512,
            mamba_dt_rank=8)


@pytest.mark.parametrize(("changes", "dtype"), [
    ({}, "fp32"), ({}, "bf16"),
    ({"num_experts": 1, "mamba_proj_bias": True, "mamba_conv_bias": False, "tie_word_embeddings": True,
      "num_hidden_layers": 8, "attn_layer_period": 8, "attn_layer_offset": 4}, "fp32")])
def test_the_cache_transformers_fills_and_the_parameters_are_exact(changes, dtype):
    """The attention layers' K / V, each Mamba layer's convolution inputs (model dtype) and float32 state; every
    parameter (dt / B / C norms, routers, a dense Jamba of one expert) counted."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import warnings

    from tests.core.engines.transformers_runs import run_and_compare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("jamba", **{**TINY, **changes})
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config, dtype)
    assert a.linear_mixer == MAMBA and a.mamba_norm_weights and FULL in a.layer_types and LINEAR in a.layer_types
    assert kv == held > 0
    assert parameter_count(a) == sum(p.numel() for p in model.parameters())


def test_jamba_mini_counts_as_published_and_places_its_layers():
    a = from_hf_config(JAMBA_MINI)
    assert parameter_count(a) == pytest.approx(52e9, rel=0.01)
    assert active_parameter_count(a) == pytest.approx(12e9, rel=0.02)
    assert [i for i, t in enumerate(a.layer_types) if t == FULL] == [4, 12, 20, 28]
    assert a.moe_layers == tuple(i % 2 == 1 for i in range(32))
    with pytest.raises(InputError, match="attn_layer_offset"):
        from_hf_config({**JAMBA_MINI, "attn_layer_offset": 8})


def test_each_engine_holds_the_attention_kv_and_the_mamba_states():
    """4 attention layers x 8 KV heads x 128 x K, V a token; per sequence and Mamba layer 8,192 channels x 3 (llama.cpp,
    vLLM) or 4 (transformers) convolution inputs and 8,192 x 16 states: float32 in transformers and llama.cpp, the
    model's dtype in vLLM (mamba_ssm_cache_dtype "auto": jamba.py `get_mamba_state_dtype_from_config`)."""
    a = from_hf_config(JAMBA_MINI)
    kv_token = 4 * 8 * 128 * 2 * 2
    hf = estimate(a, Scenario(engine="transformers", context_tokens=8192, batch=2))
    assert hf.bytes["kv_cache"] == 2 * (8192 * kv_token + 28 * (8192 * 4 * 2 + 8192 * 16 * 4))
    vllm = estimate(a, Scenario(engine="vllm", gpu="H100 80GB", tp=2, context_tokens=8192, batch=2))
    assert vllm.engine_facts["linear_state_bytes_per_layer_sequence"] >= (4096 * 3 + 4096 * 16) * 2
    odd = a.with_changes(linear_v_heads=8191)  # MambaMixer divides d_inner over the ranks
    with pytest.raises(InputError, match="channels divisible by tp"):
        estimate(odd, Scenario(engine="vllm", gpu="H100 80GB", tp=2))


def test_llamacpp_names_the_norms_and_reads_a_jamba_file_back():
    a = from_hf_config(JAMBA_MINI)
    names = {gguf_name(t, a) for t in gguf_tensors(a) if t.layer in (0, 1, 4)}
    assert {"blk.0.ssm_dt_norm.weight", "blk.0.ssm_b_norm.weight", "blk.0.ssm_c_norm.weight", "blk.0.ffn_gate.weight",
            "blk.1.ffn_gate_inp.weight", "blk.1.ffn_up_exps.weight", "blk.4.attn_q.weight", "blk.4.attn_k.weight"} <= names
    meta = {"general.architecture": "jamba", "jamba.block_count": 32, "jamba.embedding_length": 4096,
            "jamba.context_length": 262144, "jamba.feed_forward_length": 14336, "jamba.attention.head_count": 32,
            "jamba.attention.head_count_kv": [8 if i % 8 == 4 else 0 for i in range(32)], "jamba.ssm.conv_kernel": 4,
            "jamba.ssm.inner_size": 8192, "jamba.ssm.state_size": 16, "jamba.ssm.time_step_rank": 256,
            "jamba.expert_count": 16, "jamba.expert_used_count": 2, "jamba.vocab_size": 65536}
    tensors = {f"blk.{i}.ffn_gate_inp.weight" for i in range(1, 32, 2)} | {"output.weight"}
    back = from_hf_config(config_from_gguf(meta, tensors)[0])
    assert parameter_count(back) == parameter_count(a) and back.layer_types == a.layer_types
    assert back.moe_layers == a.moe_layers


def _estimate(case: dict):
    a = from_hf_config(DATA["shapes"][case["shape"]], name=case["shape"])
    return estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="F16", kv_format="fp16",
                                context_tokens=-(-case["context"] // case["sequences"]), batch=case["sequences"],
                                options={"n_ubatch": case["ubatch"], "flash_attn": case["flash_attn"]}))


JAMBA_CASES = [c for c in DATA["cases"] if DATA["shapes"][c["shape"]]["model_type"] == "jamba"]


@pytest.mark.parametrize("case", JAMBA_CASES, ids=lambda c: f"{c['shape']}-{c['ubatch']}-{c['sequences']}-"
                                                           f"{c['flash_attn']}")
def test_llamacpp_cache_is_exact(case):
    """The attention layers' cells padded to 256 and the Mamba layers' F32 states per sequence."""
    assert _estimate(case).kv_cache_required / MiB == pytest.approx(case["kv_mib"], abs=0.0051)


def test_llamacpp_compute_buffer_within_ten_percent():
    """The Mamba stage beside the attention, dense and expert stages: +0.5 ... +6.5 % over three shapes, micro-batches
    of 128 and 512, one and four sequences, flash attention on and off; where a 65,536-token vocabulary's logits
    decide, -9.6 ... -2.2 % (the output stage holds three hidden rows and the attention mask there, memviz two rows:
    docs/engines.md)."""
    errors = [(_estimate(c).bytes["activations"] / MiB - c["compute_mib"]) / c["compute_mib"] for c in JAMBA_CASES]
    assert len(errors) == 28 and max(map(abs, errors)) <= 0.10, sorted(errors)
