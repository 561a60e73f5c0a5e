import pytest

from memviz.core.arch import FULL
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.importers.gguf_file import read_gguf

from .files import cuda_padding, write_gguf_model


def test_architecture_and_exact_bytes(tmp_path):
    path = tmp_path / "tiny.gguf"
    expected = write_gguf_model(path)
    a = read_gguf(path)
    assert (a.model_type, a.num_layers, a.hidden_size, a.num_heads, a.num_kv_heads, a.head_dim) == ("llama", 2, 256, 4, 2, 64)
    assert (a.intermediate_size, a.vocab_size, a.max_position_embeddings) == (512, 1000, 4096)
    assert not a.tie_word_embeddings and set(a.layer_types) == {FULL} and a.name == "tiny-llama-test"
    stored = {t.name: (t.storage, t.nbytes) for t in a.stored}
    assert stored == expected
    e = estimate(a, Scenario(weight_format="stored", engine="llamacpp"))
    total = sum(b for _, b in expected.values())
    # token_embd stays in host memory; on the GPU each tensor takes what ggml-cuda allocates for it
    padded = cuda_padding(path)
    assert padded > 0  # rows of 256 values: quantized matrices get one 512-value row more
    assert e.bytes["weights"] + e.host.weights == total + padded
    assert e.host.weights == expected["token_embd.weight"][1]
    shapes = {t.name: t.shape for t in a.stored}
    assert shapes["blk.0.ffn_down.weight"] == (256, 512)  # [out, in]
    roles = {t.name: t.role for t in a.stored}
    assert roles["output.weight"] == "lm_head" and roles["blk.1.attn_v.weight"] == "attention"


def test_not_gguf_and_corrupt(tmp_path):
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"GGML" + b"\0" * 100)
    with pytest.raises(InputError, match="magic"):
        read_gguf(bad)
    path = tmp_path / "tiny.gguf"
    write_gguf_model(path)
    raw = path.read_bytes()
    bad.write_bytes(raw[:4] + (99).to_bytes(4, "little") + raw[8:])  # unsupported version
    with pytest.raises(InputError):
        read_gguf(bad)
    bad.write_bytes(raw[:200])
    with pytest.raises(InputError):
        read_gguf(bad)


@pytest.mark.parametrize("gating, probs_bias, model_type", [(1, False, "deepseek_v2"), (None, False, "deepseek_v2"),
                                                          (2, False, "deepseek_v3"), (None, True, "deepseek_v3")])
def test_deepseek2_files_are_v2_or_v3_by_their_routing(gating, probs_bias, model_type):
    """llama.cpp's deepseek2 architecture holds both: V3's sigmoid routing (expert_gating_func 2) has a score
    correction bias (exp_probs_b); V2's softmax routing has none."""
    from memviz.core.importers.gguf_file import config_from_gguf

    meta = {"general.architecture": "deepseek2", "deepseek2.block_count": 4, "deepseek2.embedding_length": 512,
            "deepseek2.attention.head_count": 8, "deepseek2.attention.head_count_kv": 1,
            "deepseek2.feed_forward_length": 1024, "deepseek2.expert_count": 8, "deepseek2.expert_used_count": 2,
            "deepseek2.attention.kv_lora_rank": 512, "deepseek2.vocab_size": 1000}
    if gating is not None:
        meta["deepseek2.expert_gating_func"] = gating
    names = {"token_embd.weight", "output.weight"} | ({"blk.1.exp_probs_b.bias"} if probs_bias else set())
    cfg, _ = config_from_gguf(meta, names)
    assert cfg["model_type"] == model_type


def test_recurrent_gguf_architectures_are_refused():
    """llama.cpp's hybrid / recurrent architectures state their SSM or RWKV sizes in the metadata."""
    from memviz.core.importers.gguf_file import config_from_gguf

    for meta in ({"general.architecture": "rwkv6", "rwkv6.wkv.head_size": 64},
                 {"general.architecture": "rwkv7", "rwkv7.wkv.head_size": 64},
                 {"general.architecture": "plamo2", "plamo2.ssm.state_size": 64},
                 {"general.architecture": "arwkv7", "arwkv7.wkv.head_size": 64}):
        with pytest.raises(InputError, match="recurrent layers"):
            config_from_gguf({**meta, f"{meta['general.architecture']}.block_count": 4}, set())


@pytest.mark.parametrize("config", ["gemma4-ondevice", "gemma4-moe", "qwen35-deltanet", "qwen35moe-deltanet",
                                    "granite-hybrid-moe", "granite-hybrid-dense", "nemotron-h-dense", "nemotron-h-moe",
                                    "lfm2-shortconv", "lfm2moe-shortconv", "falcon-h1", "minimax-m3", "hy-v4", "laguna"])
def test_gemma4_qwen35_and_granite_hybrid_files_read_back_as_their_config(config, tmp_path):
    """A Gemma 4, Qwen3.5, Granite-4.0-H or LFM2 file as llama.cpp's converter lays it out (memviz.probe.gguf_build
    follows conversion/gemma.py, conversion/qwen.py, conversion/granite.py and conversion/lfm2.py): which layers
    slide, are delta-nets, Mamba2 or short convolutions (no KV heads), the head widths, KV heads and
    feed-forward widths per layer, the layers reusing K/V, the per-layer embedding width, the delta-net's heads,
    widths and convolution come back as the config had them; a full layer without attn_v takes V from K."""
    import json
    from dataclasses import fields
    from pathlib import Path

    from memviz.core.arch import from_hf_config
    from memviz.core.inventory import Role
    from memviz.probe.gguf_build import write_f16

    cfg = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "configs" / f"{config}.json").read_text())
    want = from_hf_config(cfg)
    got = read_gguf(write_f16(want, tmp_path / "g4.gguf"))
    same = [f.name for f in fields(want) if f.name not in ("stored", "source", "ref", "warnings", "name")]
    assert {k: getattr(got, k) for k in same} == {k: getattr(want, k) for k in same}
    assert not got.warnings
    roles = {t.name: t.role for t in got.stored}
    if want.per_layer_input_size:
        assert roles["blk.0.inp_gate.weight"] == roles["blk.0.proj.weight"] == Role.MLP.value
        assert roles["per_layer_token_embd.weight"] == Role.EMBEDDING.value


def test_a_qwen35_files_multi_token_prediction_block_is_left_out(tmp_path):
    """conversion/qwen.py appends the MTP block as one more layer and writes nextn_predict_layers; llama.cpp skips
    its tensors unless told to load them (src/models/qwen35.cpp: TENSOR_SKIP), so memviz reads the decoder alone and
    says what it left out."""
    import gguf
    import numpy as np

    path = tmp_path / "mtp.gguf"
    w = gguf.GGUFWriter(str(path), "qwen35")
    for key, value in {"block_count": 5, "nextn_predict_layers": 1, "embedding_length": 64, "feed_forward_length": 128,
                       "attention.head_count": 4, "attention.head_count_kv": 2, "attention.key_length": 16,
                       "ssm.conv_kernel": 4, "ssm.state_size": 8, "ssm.group_count": 2, "ssm.time_step_rank": 4,
                       "ssm.inner_size": 32, "vocab_size": 100}.items():
        w.add_uint32(f"qwen35.{key}", value)
    names = ["token_embd.weight", "output.weight"] + [f"blk.{i}.ssm_conv1d.weight" for i in range(3)]
    names += [f"blk.{i}.attn_q.weight" for i in (3, 4)]
    for name in names:
        w.add_tensor(name, np.zeros((100 if "token" in name or "output" in name else 8, 64), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    a = read_gguf(path)
    assert a.num_layers == 4 and a.layer_types == ("linear",) * 3 + ("full",)
    assert max(t.layer or 0 for t in a.stored) == 3 and len(a.stored) == len(names) - 1
    assert any("multi-token-prediction block (1 tensors" in w for w in a.warnings)


def test_a_qwen35_log_without_tensor_names_places_its_delta_nets_by_the_interval():
    """A llama.cpp log prints the metadata but no tensor names: the full-attention interval decides, as in llama.cpp."""
    from memviz.core.arch import FULL, LINEAR
    from memviz.core.importers.gguf_file import architecture_from_gguf_config, config_from_gguf

    meta = {"general.architecture": "qwen35moe", "qwen35moe.block_count": 8, "qwen35moe.embedding_length": 256,
            "qwen35moe.attention.head_count": 4, "qwen35moe.ssm.time_step_rank": 4, "qwen35moe.ssm.inner_size": 128,
            "qwen35moe.ssm.state_size": 32, "qwen35moe.ssm.group_count": 2, "qwen35moe.ssm.conv_kernel": 4,
            "qwen35moe.full_attention_interval": 4, "qwen35moe.vocab_size": 1000}
    def layer_types(meta, names):
        return architecture_from_gguf_config(*config_from_gguf(meta, names)).layer_types

    assert layer_types(meta, {"token_embd.weight", "output.weight"}) == (LINEAR,) * 3 + (FULL,) + (LINEAR,) * 3 + (FULL,)
    assert layer_types({**meta, "qwen35moe.attention.recurrent_layers": [True, False] * 4}, set()) == (LINEAR, FULL) * 4


def test_the_sliding_layers_a_converter_lists_decide_the_cache():
    """llama.cpp's converters write one sliding flag a layer (conversion/mimo.py: MiMo-V2-Flash's
    hybrid_layer_pattern, full attention at the first layer and every sixth); memviz reads them for any
    architecture, so only the full layers hold the whole context."""
    from memviz.core.arch import SLIDING, from_hf_config
    from memviz.core.importers.gguf_file import config_from_gguf

    flags = [False] + [True] * 4 + [False] + [True] * 5 + [False]
    meta = {"general.architecture": "mimo2", "mimo2.block_count": 12, "mimo2.embedding_length": 512,
            "mimo2.attention.head_count": 8, "mimo2.attention.head_count_kv": 2, "mimo2.feed_forward_length": 1024,
            "mimo2.vocab_size": 1000, "mimo2.attention.sliding_window": 128,
            "mimo2.attention.sliding_window_pattern": flags}
    cfg, _ = config_from_gguf(meta, set())
    a = from_hf_config(cfg)
    assert a.layer_types == tuple(SLIDING if f else FULL for f in flags) and a.sliding_window == 128
    with pytest.raises(InputError, match="sliding_window_pattern lists 3 layers for 12"):
        config_from_gguf({**meta, "mimo2.attention.sliding_window_pattern": [True] * 3}, set())


def test_an_ollama_llama_3_2_vision_file_is_read_with_its_cross_attention_layers_and_refused_by_llamacpp():
    """Ollama's converter (convert/convert_mllama.go) names the cross-attention layers in
    mllama.attention.cross_attention_layers; llama.cpp has no such architecture, and Ollama runs it on its own
    engine: one clear refusal, not a Llama-style reading of 40 self-attention layers."""
    from memviz.core.arch import CROSS, from_hf_config
    from memviz.core.importers.gguf_file import config_from_gguf

    meta = {"general.architecture": "mllama", "mllama.block_count": 40, "mllama.embedding_length": 4096,
            "mllama.attention.head_count": 32, "mllama.attention.head_count_kv": 8, "mllama.feed_forward_length": 14336,
            "mllama.vocab_size": 128256, "mllama.context_length": 131072,
            "mllama.attention.cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]}
    cfg, warnings = config_from_gguf(meta, {"output.weight"})
    a = from_hf_config(cfg)
    assert [i for i, kind in enumerate(a.layer_types) if kind == CROSS] == [3, 8, 13, 18, 23, 28, 33, 38]
    assert not a.warnings and not [w for w in warnings if "generic rules" in w]
    for engine in ("llamacpp", "ollama"):
        with pytest.raises(InputError, match="no architecture with cross-attention layers"):
            estimate(a, Scenario(engine=engine, weight_format="Q4_K_M", kv_format="fp16", context_tokens=4096))


def test_granite_smollm3_exaone_and_ministral3_files_are_read_as_their_types():
    """llama.cpp's names for decoders of Llama's layout (src/llama-arch.cpp) map to their transformers types, without
    the generic-rules warning; a granitemoe file with expert_shared_feed_forward_length (conversion/granite.py
    `GraniteMoeModel`: GraniteMoeShared) keeps its shared MLP beside the experts."""
    from memviz.core.arch import from_hf_config
    from memviz.core.importers.gguf_file import config_from_gguf
    from memviz.core.inventory import parameter_count

    def meta(arch: str, **more) -> dict:
        return {"general.architecture": arch, f"{arch}.block_count": 2, f"{arch}.embedding_length": 256,
                f"{arch}.attention.head_count": 4, f"{arch}.attention.head_count_kv": 2,
                f"{arch}.feed_forward_length": 512, f"{arch}.vocab_size": 1000, **{f"{arch}.{k}": v for k, v in more.items()}}

    for arch, model_type in (("granite", "granite"), ("smollm3", "smollm3"), ("exaone", "exaone"),
                             ("mistral3", "ministral3")):
        cfg, warnings = config_from_gguf(meta(arch), {"token_embd.weight", "output.weight"})
        a = from_hf_config(cfg)
        assert a.model_type == model_type and not [w for w in (*warnings, *a.warnings) if "generic" in w or "knows" in w]
    experts = dict(expert_count=4, expert_used_count=2, expert_feed_forward_length=128)
    plain = from_hf_config(config_from_gguf(meta("granitemoe", **experts), {"token_embd.weight"})[0])
    shared = from_hf_config(config_from_gguf(meta("granitemoe", **experts, expert_shared_feed_forward_length=384),
                                             {"token_embd.weight"})[0])
    assert plain.model_type == shared.model_type == "granitemoeshared"
    assert parameter_count(shared) - parameter_count(plain) == 2 * 3 * 256 * 384  # gate, up, down in both layers
