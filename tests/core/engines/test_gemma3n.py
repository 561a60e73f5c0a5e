"""Gemma 3n in the engines: the GGUF file llama.cpp's converter writes and its loader requires, and llama.cpp's fixed
split of caching layers (ggml-org/llama.cpp 0c1e570 conversion/gemma.py `Gemma3NModel`, src/models/gemma3n.cpp)."""

import json

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_mixes import gguf_tensor_type
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.inventory import parameter_count

#: E2B's text decoder (google/gemma-3n-E2B-it config.json text_config), Gemma3nTextConfig's defaults elsewhere
E2B = dict(model_type="gemma3n_text", vocab_size=262_400, vocab_size_per_layer_input=262_144, hidden_size=2048,
           num_hidden_layers=30, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
           intermediate_size=[8192] * 30, hidden_size_per_layer_input=256, num_kv_shared_layers=10,
           sliding_window=512, laurel_rank=64, altup_num_inputs=4, max_position_embeddings=32_768)
#: the tensors src/models/gemma3n.cpp `load_arch_tensors` creates in every layer, and once
LAYER_TENSORS = {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "attn_q_norm", "attn_k_norm",
                 "post_attention_norm", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down", "post_ffw_norm", "inp_gate",
                 "proj", "post_norm", "altup_correct_coef", "altup_correct_scale", "altup_predict_coef",
                 "altup_router", "altup_router_norm", "laurel_l", "laurel_r", "laurel_post_norm"}
GLOBAL_TENSORS = {"token_embd", "altup_proj", "altup_unembd_proj", "per_layer_token_embd", "per_layer_model_proj",
                  "per_layer_proj_norm", "output_norm"}


def test_the_gguf_file_holds_every_tensor_llamacpp_loads():
    a = from_hf_config(E2B)
    names = [gguf_name(t, a) for t in gguf_tensors(a)]
    assert len(names) == len(set(names)) == 30 * len(LAYER_TENSORS) + len(GLOBAL_TENSORS)
    assert {n.removesuffix(".weight") for n in names if not n.startswith("blk.")} == GLOBAL_TENSORS
    for i in (0, 29):  # a caching layer and a sharing one: the file keeps the checkpoint's K / V for both
        assert {n.removeprefix(f"blk.{i}.").removesuffix(".weight") for n in names if n.startswith(f"blk.{i}.")} \
            == LAYER_TENSORS


def test_the_file_adds_the_sharing_layers_kv_and_the_padded_per_layer_table():
    """transformers builds no K / V in the 10 sharing layers; the file has them (2 x 512 x 2048 and a k_norm each),
    and the per-layer table padded from 262,144 to 262,400 rows of 30 x 256."""
    a = from_hf_config(E2B)
    extra = 10 * (2 * 512 * 2048 + 256) + (262_400 - 262_144) * 30 * 256
    assert sum(t.numel for t in gguf_tensors(a)) - parameter_count(a) == extra
    shapes = {gguf_name(t, a): t.shape for t in gguf_tensors(a)}
    assert shapes["altup_proj.weight"] == shapes["altup_unembd_proj.weight"] == (3, 2048, 2048)


def test_altup_and_laurel_stay_as_converted_in_a_quantized_file():
    a = from_hf_config(E2B)
    types = {gguf_name(t, a): gguf_tensor_type("Q4_K_M", t, a) for t in gguf_tensors(a)}
    assert {types[n] for n in types if "altup" in n or "laurel" in n} == {"F16", "F32"}
    assert types["blk.3.attn_q.weight"] == "Q4_K" and types["per_layer_model_proj.weight"] == "F16"


def test_llamacpp_caches_the_first_20_layers_whatever_the_config_says():
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096)
    kv = estimate(from_hf_config(E2B), sc).bytes["kv_cache"]
    assert kv == 4 * 4096 * 2 * 512 * 2 + 16 * 1024 * 2 * 512 * 2  # 4 full layers, 16 sliding of 512 + 512 cells
    other = {**E2B, "num_kv_shared_layers": 12}
    with pytest.raises(InputError, match="first 20 layers caching K/V .* this model has 18"):
        estimate(from_hf_config(other), sc)
    assert estimate(from_hf_config(other), Scenario(engine="vllm", context_tokens=4096)).total > 0


@pytest.mark.parametrize(("change", "message"), [
    ({"altup_num_inputs": 3}, "altup_inputs at 4 .* this model has 3"),
    ({"laurel_rank": 32}, "laurel_rank at 64 .* this model has 32"),
    ({"hidden_size_per_layer_input": 128}, "per_layer_input_size at 256 .* this model has 128"),
    ({"intermediate_size": [8192] * 10 + [12288] * 20}, "layer 0's width .* from 8192 to 12288"),
])
def test_llamacpp_refuses_the_shapes_it_fixes_otherwise(change, message):
    """llama.cpp 0c1e570 fixes AltUp's streams, Laurel's rank and the per-layer width (src/llama-hparams.h) and builds
    every MLP at layer 0's width: a MatFormer slice or another shape fails at its tensors, so memviz refuses it in one
    line; transformers builds it."""
    a = from_hf_config({**E2B, **change})
    with pytest.raises(InputError, match=message):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096))
    assert estimate(a, Scenario(engine="transformers", context_tokens=4096)).total > 0


def test_a_file_without_the_sharing_layers_kv_is_refused_for_llamacpp(tmp_path):
    """llama.cpp's converter copies what the checkpoint holds: from a Gemma 3n saved by transformers 5.24 (no K / V
    in the 2 sharing layers, tests/data/llamacpp/gemma3n_gguf_header.json) it writes a file llama.cpp 0c1e570 does
    not load ("check_tensor_dims: tensor 'blk.20.attn_k.weight' not found", run on this project's CPU). memviz reads
    the file and says so in one line for llama.cpp; transformers' estimate of the same file stands."""
    from memviz.core.importers.gguf_file import read_gguf
    from tests.core.importers.test_gguf_converted import DATA, _write

    _write(tmp_path / "m.gguf", json.loads((DATA / "gemma3n_gguf_header.json").read_text()))
    a = read_gguf(tmp_path / "m.gguf")
    with pytest.raises(InputError, match="none in 2 of its 22 layers"):
        estimate(a, Scenario(engine="llamacpp", weight_format="stored", context_tokens=1024))
    assert estimate(a, Scenario(engine="transformers", weight_format="stored", context_tokens=1024)).total > 0
