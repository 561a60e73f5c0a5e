"""Mamba, Falcon-Mamba and Mamba2: blocks of one Mamba (selective scan) or Mamba2 mixer, no attention, no MLP.
Parameters and the state transformers keeps, run for real (tiny random models, CPU), to the element and the byte; the
released configs' counts; llama.cpp's names, types, state and compute buffer against a real llama.cpp
(tests/data/llamacpp/mamba_buffers.json, made by benchmarks/llamacpp_mamba_sweep.py on this project's CPU); what each
engine refuses."""

import json
import statistics
import warnings
from pathlib import Path

import pytest

from memviz.core.arch import LINEAR, MAMBA, MAMBA2, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_mixes import gguf_tensor_type
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.importers.gguf_file import config_from_gguf
from memviz.core.inventory import parameter_count
from memviz.core.units import MiB

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "mamba_buffers.json").read_text())
#: tiiuae/falcon-mamba-7b's config.json (its expand of 16 is overridden by intermediate_size, as transformers reads it)
FALCON_MAMBA_7B = {"architectures": ["FalconMambaForCausalLM"], "conv_kernel": 4, "expand": 16, "hidden_size": 4096,
                   "intermediate_size": 8192, "layer_norm_epsilon": 1e-05, "model_type": "falcon_mamba",
                   "num_hidden_layers": 64, "residual_in_fp32": True, "state_size": 16, "tie_word_embeddings": False,
                   "time_step_rank": 256, "torch_dtype": "bfloat16", "use_bias": False, "use_conv_bias": True,
                   "vocab_size": 65024}
#: state-spaces/mamba-2.8b-hf's config.json (MambaConfig's defaults fill the rest: expand 2, rank "auto")
MAMBA_2P8B = {"architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": 2560, "num_hidden_layers": 64,
              "state_size": 16, "vocab_size": 50280, "conv_kernel": 4, "expand": 2, "time_step_rank": 160,
              "use_bias": False, "use_conv_bias": True, "tie_word_embeddings": True}

#: mistralai/Mamba-Codestral-7B-v0.1's config.json (Mamba2Config's defaults are its shape)
CODESTRAL = {"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "hidden_size": 4096, "num_heads": 128,
             "head_dim": 64, "n_groups": 8, "state_size": 128, "num_hidden_layers": 64, "expand": 2, "conv_kernel": 4,
             "chunk_size": 256, "vocab_size": 32768, "use_bias": False, "use_conv_bias": True,
             "residual_in_fp32": True, "tie_word_embeddings": False}


def _hf_config(model_type: str, **fields):
    import transformers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoConfig.for_model(model_type, **fields)


@pytest.mark.parametrize(("model_type", "fields", "dtype"), [
    ("falcon_mamba", dict(hidden_size=96, intermediate_size=192, state_size=16, time_step_rank=8, vocab_size=512,
                          num_hidden_layers=3, tie_word_embeddings=False), "bf16"),
    ("mamba", dict(hidden_size=64, expand=3, state_size=8, conv_kernel=3, use_bias=True, use_conv_bias=False,
                   vocab_size=512, num_hidden_layers=2), "fp32"),
    ("mamba2", dict(hidden_size=128, num_heads=8, head_dim=32, n_groups=2, state_size=16, chunk_size=16,
                    vocab_size=512, num_hidden_layers=2), "bf16"),
    ("mamba2", dict(hidden_size=96, num_heads=6, head_dim=32, state_size=32, n_groups=1, use_bias=True,
                    use_conv_bias=False, tie_word_embeddings=True, vocab_size=512, num_hidden_layers=2), "fp32")])
def test_the_state_transformers_keeps_and_the_parameters_are_exact(model_type, fields, dtype):
    """The convolution's last conv_kernel inputs over the mixer's width in the model's dtype and the scan's state
    (width x state_size) in float32 (the discretisation runs in float32), every parameter counted."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import AutoModelForCausalLM

    from tests.core.engines.transformers_runs import run_and_compare

    a, model, held, kv = run_and_compare(AutoModelForCausalLM.from_config, _hf_config(model_type, **fields), dtype)
    assert a.linear_mixer == (MAMBA2 if model_type == "mamba2" else MAMBA)
    assert set(a.layer_types) == {LINEAR} and not a.attends and not a.has_ffn
    assert kv == held > 0
    assert parameter_count(a) == sum(p.numel() for p in model.parameters())


def test_the_releases_count_as_published():
    """Falcon-Mamba-7B: 7.27 B parameters (its model card); Mamba-2.8B: 2.8 B; Mamba-Codestral-7B: 7,285,403,648
    (its safetensors index's total, 7.29 B on its card). Mamba2Mixer is expand x hidden wide whatever
    intermediate_size says; its heads must fill that width."""
    falcon = from_hf_config(FALCON_MAMBA_7B)
    assert falcon.linear_conv_dim == 8192 and falcon.linear_dt_rank == 256 and falcon.mamba_dt_b_c_rms
    assert parameter_count(falcon) == pytest.approx(7.27e9, rel=0.002)
    assert parameter_count(from_hf_config(MAMBA_2P8B)) == pytest.approx(2.77e9, rel=0.01)
    no_width = {k: v for k, v in MAMBA_2P8B.items() if k not in ("expand", "time_step_rank")}
    a = from_hf_config(no_width)  # MambaConfig.__post_init__: expand 2 x hidden, rank ceil(hidden / 16)
    assert (a.linear_conv_dim, a.linear_dt_rank) == (5120, 160)
    codestral = from_hf_config(CODESTRAL)
    assert parameter_count(codestral) == 7_285_403_648
    assert codestral == from_hf_config({**CODESTRAL, "intermediate_size": 1234})
    with pytest.raises(InputError, match="num_heads x head_dim"):
        from_hf_config({**CODESTRAL, "num_heads": 100})


def test_transformers_holds_the_state_and_the_reference_scans_float32_discretisations():
    """Per sequence and layer 8,192 x 4 bf16 convolution inputs and 8,192 x 16 float32 states; a 4,096-token prompt
    through the reference scan holds exp(A dt), dt B and dt B x for every token (3 x 16 float32 values a channel)."""
    a = from_hf_config(FALCON_MAMBA_7B)
    e = estimate(a, Scenario(engine="transformers", context_tokens=4096, batch=2))
    assert e.bytes["kv_cache"] == 2 * 64 * (8192 * 4 * 2 + 8192 * 16 * 4)
    assert e.bytes["activations"] > 3 * 16 * 4 * 8192 * 4096 * 2
    fused = estimate(a, Scenario(engine="transformers", context_tokens=4096, batch=2, options={"mamba_kernels": True}))
    assert fused.bytes["activations"] < e.bytes["activations"] / 10


def test_mamba2_states_in_transformers_and_llamacpp():
    """Per layer and sequence the convolution over x, B and C (8,192 + 2 x 8 x 128 channels) and 128 heads x 64 x 128
    state values: transformers keeps 4 taps in bf16 and the state float32, llama.cpp 3 taps and the state F32."""
    a = from_hf_config(CODESTRAL)
    conv = 8192 + 2 * 8 * 128
    hf = estimate(a, Scenario(engine="transformers", context_tokens=4096, batch=2))
    assert hf.bytes["kv_cache"] == 2 * 64 * (conv * 4 * 2 + 128 * 64 * 128 * 4)
    gg = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096, batch=2))
    assert gg.kv_cache_required == 2 * 64 * 4 * (conv * 3 + 128 * 64 * 128)


def test_transformers_refuses_an_attention_implementation_for_a_model_without_attention():
    with pytest.raises(InputError, match="no attention layers"):
        estimate(from_hf_config(FALCON_MAMBA_7B), Scenario(engine="transformers", attention="sdpa"))


def test_llamacpp_names_shapes_and_types_as_its_converter_and_quantizer():
    """conversion/mamba.py: A as -exp(A_log) {d_state, d_inner} F32 without a suffix, D F32, the convolution F32
    {d_conv, d_inner}; x_proj and dt_proj quantized as other matrices (llama-quant.cpp skips only ssm_conv1d)."""
    a = from_hf_config(FALCON_MAMBA_7B)
    layer0 = {gguf_name(t, a): t for t in gguf_tensors(a) if t.layer == 0}
    assert sorted(layer0) == ["blk.0.attn_norm.weight", "blk.0.ssm_a", "blk.0.ssm_conv1d.bias", "blk.0.ssm_conv1d.weight",
                              "blk.0.ssm_d", "blk.0.ssm_dt.bias", "blk.0.ssm_dt.weight", "blk.0.ssm_in.weight",
                              "blk.0.ssm_out.weight", "blk.0.ssm_x.weight"]
    assert layer0["blk.0.ssm_conv1d.weight"].shape == (8192, 4) and layer0["blk.0.ssm_a"].shape == (8192, 16)
    types = {name: gguf_tensor_type("Q4_K_M", t, a) for name, t in layer0.items()}
    assert types["blk.0.ssm_conv1d.weight"] == types["blk.0.ssm_a"] == types["blk.0.ssm_d"] == "F32"
    assert types["blk.0.ssm_in.weight"] == types["blk.0.ssm_x.weight"] == "Q4_K"


def test_a_mamba2_gguf_reads_back_as_its_config():
    """conversion/mamba.py `Mamba2Model`: the heads as ssm.time_step_rank, heads x head width as ssm.inner_size."""
    meta = {"general.architecture": "mamba2", "mamba2.block_count": 64, "mamba2.embedding_length": 4096,
            "mamba2.context_length": 2**20, "mamba2.feed_forward_length": 0, "mamba2.attention.head_count": 0,
            "mamba2.ssm.conv_kernel": 4, "mamba2.ssm.inner_size": 8192, "mamba2.ssm.state_size": 128,
            "mamba2.ssm.time_step_rank": 128, "mamba2.ssm.group_count": 8, "mamba2.vocab_size": 32768}
    a = from_hf_config(config_from_gguf(meta, {"output.weight"})[0])
    assert parameter_count(a) == 7_285_403_648 and a.linear_mixer == MAMBA2


def test_a_mamba_gguf_reads_back_as_its_config():
    meta = {"general.architecture": "mamba", "mamba.block_count": 64, "mamba.embedding_length": 4096,
            "mamba.context_length": 2**20, "mamba.feed_forward_length": 0, "mamba.attention.head_count": 0,
            "mamba.ssm.conv_kernel": 4, "mamba.ssm.inner_size": 8192, "mamba.ssm.state_size": 16,
            "mamba.ssm.time_step_rank": 256, "mamba.ssm.dt_b_c_rms": True, "mamba.vocab_size": 65024}
    cfg, warnings_ = config_from_gguf(meta, {"output.weight"})
    a = from_hf_config(cfg)
    assert a.model_type == "falcon_mamba" and a.mamba_dt_b_c_rms
    assert [w for w in warnings_ if "token list" not in w] == []  # no head / feed-forward notes
    assert parameter_count(a) == parameter_count(from_hf_config(FALCON_MAMBA_7B))
    plain = from_hf_config(config_from_gguf({**meta, "mamba.ssm.dt_b_c_rms": False}, set())[0])
    assert plain.model_type == "mamba" and plain.tie_word_embeddings


def _estimate(case: dict):
    a = from_hf_config(DATA["shapes"][case["shape"]], name=case["shape"])
    return estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="F16", kv_format="fp16",
                                context_tokens=-(-case["context"] // case["sequences"]), batch=case["sequences"],
                                options={"n_ubatch": case["ubatch"]}))


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"{c['shape']}-{c['ubatch']}-{c['sequences']}")
def test_llamacpp_states_are_exact(case):
    """Per layer and sequence (d_conv - 1) x d_inner convolution rows and d_state x d_inner states, F32."""
    assert _estimate(case).kv_cache_required / MiB == pytest.approx(case["kv_mib"], abs=0.0051)


def _errors(*model_types: str) -> list[float]:
    return [(_estimate(c).bytes["activations"] / MiB - c["compute_mib"]) / c["compute_mib"] for c in DATA["cases"]
            if DATA["shapes"][c["shape"]]["model_type"] in model_types]


def test_llamacpp_compute_buffer_within_four_percent_for_mamba():
    """The Mamba blocks' stage (`LlamaCpp._mamba_stage`) or, at released vocabularies, the output's logits. Before it
    was modelled: -29 ... +7 % (the gated delta-net's stage, an attention stage and masks the graph does not have)."""
    errors = _errors("mamba", "falcon_mamba")
    assert len(errors) == 40 and max(map(abs, errors)) <= 0.04 and abs(statistics.median(errors)) <= 0.015, errors


def test_llamacpp_compute_buffer_within_ten_percent_for_mamba2():
    """Mamba2 blocks alone take Granite-4.0-H's Mamba2 stage (`LlamaCpp._mamba2_stage`, fitted beside attention):
    -4.9 ... +8.7 % over four shapes and Mamba-Codestral-7B's widths; its logits' stage exact."""
    errors = _errors("mamba2")
    assert len(errors) == 28 and max(map(abs, errors)) <= 0.10 and abs(statistics.median(errors)) <= 0.03, errors


@pytest.mark.parametrize(("config", "changes", "message"), [
    (FALCON_MAMBA_7B, {"intermediate_size": 3 * 4096}, "mixer twice the hidden size"),
    (FALCON_MAMBA_7B, {"use_bias": True}, "no in_proj / out_proj bias"),
    (CODESTRAL, {"use_bias": True}, "no in_proj / out_proj bias"),
    (CODESTRAL, {"use_conv_bias": False}, "requires the convolution's bias")])
def test_llamacpp_refuses_what_its_mamba_does_not_load(config, changes, message):
    with pytest.raises(InputError, match=message):
        estimate(from_hf_config({**config, **changes}), Scenario(engine="llamacpp", weight_format="Q4_K_M"))


@pytest.mark.parametrize(("config", "state_bytes"), [(FALCON_MAMBA_7B, 8192 * 3 * 2 + 8192 * 16 * 2),
                                                   (CODESTRAL, (8192 + 2 * 8 * 128) * 3 * 2 + 128 * 64 * 128 * 2)])
def test_vllm_pages_an_attention_free_model_one_state_a_layer_and_request(config, state_bytes):
    """vLLM 0.34 turns prefix caching off for attention-free models (config/model.py `is_prefix_caching_supported`),
    so a block is max_model_len tokens (models/config.py `MambaModelConfig`) and a request holds one page a layer:
    the state unpadded, convolution and SSM state in the model's dtype (mamba_ssm_cache_dtype "auto"). The pool is
    whole blocks of every layer; "GPU KV cache size" is maximum concurrency x max_model_len; no rotary table."""
    e = estimate(from_hf_config(config), Scenario(engine="vllm", gpu="H100 80GB", context_tokens=8192, batch=4))
    f = e.engine_facts
    assert f["linear_state_bytes_per_layer_sequence"] == state_bytes and f["kv_request_blocks"] == 1
    assert f["kv_block_bytes"] == 64 * state_bytes and f["kv_pool_bytes"] == f["kv_blocks"] * f["kv_block_bytes"]
    assert f["max_concurrency"] == f["kv_blocks"] and f["kv_pool_tokens"] == f["kv_blocks"] * 8192
    assert f["rotary_table_bytes"] == 0
    longer = estimate(from_hf_config(config), Scenario(engine="vllm", gpu="H100 80GB", context_tokens=8192, batch=4,
                                                       options={"max_model_len": 32768})).engine_facts
    assert (longer["block_size"], longer["kv_blocks"]) == (32768, f["kv_blocks"])  # the block is max_model_len
