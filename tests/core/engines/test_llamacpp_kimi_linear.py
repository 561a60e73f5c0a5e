"""Kimi Linear on llama.cpp (ggml-org/llama.cpp 0c1e570 src/models/kimi-linear.cpp; Ollama runs the same file,
ollama/ollama llama/llama.cpp/src/models/kimi-linear.cpp): its GGUF names and metadata, the cache (the MLA layers'
latent, the delta layers' F32 states) and the compute buffer against a real llama.cpp (tests/data/llamacpp/
kimi_linear_buffers.json, made by benchmarks/llamacpp_kimi_linear_sweep.py on this project's CPU)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from memviz.core.arch import FULL, LINEAR, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_mixes import gguf_tensor_type
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.importers.gguf_file import config_from_gguf
from memviz.core.units import MiB
from tests.core.engines.test_kimi_linear import RELEASED

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "kimi_linear_buffers.json").read_text())


def _estimate(case: dict):
    a = from_hf_config(DATA["shapes"][case["shape"]], name=case["shape"])
    sc = Scenario(engine="llamacpp", device="cpu", weight_format="F16", kv_format="fp16",
                  context_tokens=-(-case["context"] // case["sequences"]), batch=case["sequences"],
                  options={"flash_attn": case["flash_attn"], "n_ubatch": case["ubatch"]})
    return estimate(a, sc)


def _error(case: dict) -> float:
    return (_estimate(case).bytes["activations"] / MiB - case["compute_mib"]) / case["compute_mib"]


def test_the_data_spans_widths_heads_micro_batches_and_sequences():
    shapes = [from_hf_config(s) for s in DATA["shapes"].values()]
    assert {a.linear_v_head_dim for a in shapes} == {64, 128} and {a.num_heads for a in shapes} == {8, 16, 32}
    assert {c["ubatch"] for c in DATA["cases"]} == {64, 128, 256, 512, 1024}
    assert {c["sequences"] for c in DATA["cases"]} == {1, 2, 3, 4, 8, 16}


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"{c['shape']}-{c['ubatch']}-{c['flash_attn']}-"
                                                              f"{c['sequences']}")
def test_the_cache_is_exact(case):
    """Each MLA layer's latent (kv_lora_rank + rope a cell, K only) over the padded cells, each delta layer's
    convolution rows and state per sequence, F32."""
    assert _estimate(case).kv_cache_required / MiB == pytest.approx(case["kv_mib"], abs=0.0051)


def test_the_compute_buffer_within_ten_percent_and_its_median_within_one():
    """Where the delta layers' stage is the peak (flash attention, the heads' widths above the hidden size) both
    reserved prompt graphs count; where MLA's score matrix is (without flash attention), DeepSeek's MLA rule.
    Before the stage was modelled: +0.3 ... +24 % with flash attention and -17 % with several sequences."""
    errors = sorted(_error(c) for c in DATA["cases"])
    within = [e for e in errors if abs(e) <= 0.10]
    assert len(within) >= 0.95 * len(errors), errors
    assert abs(statistics.median(errors)) <= 0.01 and min(errors) >= -0.16 and max(errors) <= 0.09


@pytest.mark.parametrize("case", [c for c in DATA["cases"] if c["flash_attn"] == "on" and c["ubatch"] >= 512
                                  and c["shape"] in ("h1024-16x128", "h512-32x128", "h2048-16x128")],
                         ids=lambda c: f"{c['shape']}-{c['ubatch']}-{c['sequences']}")
def test_where_the_delta_stage_decides_at_long_micro_batches_within_four_percent(case):
    assert abs(_error(case)) <= 0.04


def test_gguf_names_and_shapes_as_the_converter_writes_them():
    """conversion/kimi_linear.py: q, k and v as attention's, three convolutions {d_conv, 1, d_inner}, A {1, heads},
    dt_bias as ssm_dt.bias, the gates' low-rank pairs, the output projection as attn_output."""
    a = from_hf_config(RELEASED)
    names = {gguf_name(t, a): t.shape for t in gguf_tensors(a) if t.layer == 0}
    assert names["blk.0.ssm_conv1d_q.weight"] == names["blk.0.ssm_conv1d_v.weight"] == (4096, 1, 4)
    assert names["blk.0.ssm_a"] == (32, 1) and names["blk.0.ssm_dt.bias"] == (4096,)
    assert {"blk.0.attn_q.weight", "blk.0.attn_output.weight", "blk.0.ssm_f_a.weight", "blk.0.ssm_f_b.weight",
            "blk.0.ssm_g_a.weight", "blk.0.ssm_g_b.weight", "blk.0.ssm_beta.weight", "blk.0.ssm_norm.weight"} <= set(names)
    mla = {gguf_name(t, a) for t in gguf_tensors(a) if t.layer == 3}
    assert {"blk.3.attn_q.weight", "blk.3.attn_kv_a_mqa.weight", "blk.3.attn_k_b.weight", "blk.3.attn_v_b.weight",
            "blk.3.exp_probs_b.bias", "blk.3.ffn_gate_exps.weight"} <= mla


def test_the_quantizer_types_the_delta_layers_by_their_names():
    """llama-quant.cpp `tensor_get_category` by name: the delta layers' attn_v counts among the attn_v tensors, their
    attn_output is the output projection's; the convolutions stay F32; f_b's rows, one head wide, fall back."""
    a = from_hf_config(RELEASED)
    types = {gguf_name(t, a): gguf_tensor_type("Q4_K_M", t, a) for t in gguf_tensors(a)}
    assert types["blk.0.attn_v.weight"] == "Q6_K"  # the first eighth: use_more_bits
    assert types["blk.0.ssm_conv1d_k.weight"] == "F32" and types["blk.0.ssm_f_b.weight"] == "Q5_0"
    assert types["blk.0.attn_q.weight"] == types["blk.0.attn_output.weight"] == "Q4_K"


def test_llamacpp_caches_the_latent_and_f32_states_per_sequence():
    """src/llama-model.cpp `create_memory` (a hybrid memory): 7 MLA layers x 576 F16 values a cell over n_ctx
    padded to 256; 20 delta layers x (3 x 3 x 4096 convolution rows + 32 x 128 x 128 state) F32 a sequence."""
    a = from_hf_config(RELEASED)
    e = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=32768,
                             batch=4, device="cpu"))
    assert e.bytes["kv_cache"] == 7 * 576 * 2 * 4 * 32768 + 20 * 4 * 4 * (9 * 4096 + 32 * 128 * 128)


def test_delta_heads_other_than_the_attention_heads_refused_in_one_line():
    cfg = {**RELEASED, "linear_attn_config": {**RELEASED["linear_attn_config"], "num_heads": 16}}
    with pytest.raises(InputError, match="16 delta heads beside 32 attention heads"):
        estimate(from_hf_config(cfg), Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16",
                                               context_tokens=4096))


def test_a_kimi_linear_gguf_reads_back_as_the_config_it_was_built_from():
    """A layer without KV heads is a delta layer; the heads, kda.head_dim and ssm.conv_kernel make the delta
    attention; MLA's keys as DeepSeek's (conversion/kimi_linear.py writes them)."""
    meta = {"general.architecture": "kimi-linear", "kimi-linear.block_count": 4, "kimi-linear.embedding_length": 2304,
            "kimi-linear.attention.head_count": 32, "kimi-linear.attention.head_count_kv": [0, 0, 0, 1],
            "kimi-linear.feed_forward_length": 9216, "kimi-linear.context_length": 1048576,
            "kimi-linear.attention.key_length": 576, "kimi-linear.attention.value_length": 512,
            "kimi-linear.attention.key_length_mla": 192, "kimi-linear.attention.value_length_mla": 128,
            "kimi-linear.attention.kv_lora_rank": 512, "kimi-linear.rope.dimension_count": 64,
            "kimi-linear.ssm.conv_kernel": 4, "kimi-linear.kda.head_dim": 128, "kimi-linear.expert_count": 256,
            "kimi-linear.expert_used_count": 8, "kimi-linear.expert_feed_forward_length": 1024,
            "kimi-linear.expert_shared_count": 1, "kimi-linear.leading_dense_block_count": 1,
            "tokenizer.ggml.tokens": 163840}
    cfg, _ = config_from_gguf(meta, {"output.weight"})
    a = from_hf_config(cfg)
    assert a.layer_types == (LINEAR, LINEAR, LINEAR, FULL) and a.linear_v_heads == 32 and a.linear_v_head_dim == 128
    assert (a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim, a.num_experts) == (512, 64, 128, 256)
    with pytest.raises(InputError, match="kda.head_dim"):
        config_from_gguf({k: v for k, v in meta.items() if k != "kimi-linear.kda.head_dim"}, {"output.weight"})


WIDE = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "kimi_linear_wide_buffers.json").read_text())


@pytest.mark.parametrize("case", WIDE["cases"], ids=lambda c: f"{c['shape']}-{c['ubatch']}-{c['flash_attn']}-"
                                                              f"{c['sequences']}")
def test_the_releases_widths_within_five_percent(case):
    """The release's widths (tests/data/llamacpp/kimi_linear_wide_buffers.json): where a delta layer runs right
    before experts, the down projection's output lies on top of its stage, not in the dense layer's hole (with the
    hole counted: -7 %); two layers with MLA before the experts keep the hole (exact)."""
    a = from_hf_config(WIDE["shapes"][case["shape"]])
    sc = Scenario(engine="llamacpp", device="cpu", weight_format=case["weights"], kv_format="fp16",
                  context_tokens=case["context"] // case["sequences"], batch=case["sequences"],
                  options={"flash_attn": case["flash_attn"], "n_ubatch": case["ubatch"]})
    got = estimate(a, sc).bytes["activations"] / MiB
    assert abs(got - case["compute_mib"]) / case["compute_mib"] <= 0.05
