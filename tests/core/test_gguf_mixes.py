"""GGUF mixes against llama.cpp's own table (tools/quantize/quantize.cpp, Llama-3-8B sizes in GiB) and its
quantizer's files."""

import json
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.formats import get_weight_format, tensor_bytes, weight_bytes
from memviz.core.gguf_mixes import gguf_tensor_type, use_more_bits
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.inventory import build_inventory
from memviz.core.presets import get_preset
from memviz.core.units import GiB

LLAMA3_8B = get_preset("llama-3.1-8b").architecture()  # same shapes as Llama-3-8B


@pytest.mark.parametrize(
    ("mix", "gib"),
    [("Q2_K", 2.96), ("Q3_K_M", 3.74), ("Q4_0", 4.34), ("Q4_K_S", 4.37), ("Q4_K_M", 4.58), ("Q5_K_M", 5.33),
     ("Q6_K", 6.14), ("Q8_0", 7.96)],
)
def test_mix_sizes_match_llama_cpp_table(mix, gib):
    got = weight_bytes(LLAMA3_8B, get_weight_format(mix)) / GiB
    assert got == pytest.approx(gib, rel=0.005)


def test_q4_k_m_per_tensor_choices():
    types = {t.name: s for t, s, _ in tensor_bytes(LLAMA3_8B, get_weight_format("Q4_K_M"))}
    assert types["lm_head.weight"] == "Q6_K"
    assert types["model.embed_tokens.weight"] == "Q4_K"
    assert types["model.layers.0.self_attn.v_proj.weight"] == "Q6_K"  # first eighth
    assert types["model.layers.5.self_attn.v_proj.weight"] == "Q4_K"
    assert types["model.layers.0.norm0.weight"] == "F32"


def test_use_more_bits_pattern():
    assert [i for i in range(32) if use_more_bits(i, 32)] == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]


def test_row_length_not_multiple_of_256_falls_back():
    a = get_preset("qwen2.5-0.5b").architecture()  # hidden 896 = 3.5 x 256
    t = next(t for t in build_inventory(a) if t.name == "model.layers.3.mlp.gate_proj.weight")
    assert gguf_tensor_type("Q4_K_M", t, a) == "Q5_0"
    emb = next(t for t in build_inventory(a) if t.name == "model.embed_tokens.weight")
    assert gguf_tensor_type("Q4_K_M", emb, a) == "Q8_0"  # tied output, row not a multiple of 256


def test_mixtral_keeps_attn_v_and_k_at_q8_0():
    a = get_preset("mixtral-8x7b").architecture()
    types = {t.name: s for t, s, _ in tensor_bytes(a, get_weight_format("Q4_K_M"))}
    assert types["model.layers.7.self_attn.v_proj.weight"] == "Q8_0"
    assert types["model.layers.7.self_attn.k_proj.weight"] == "Q8_0"
    assert types["model.layers.7.mlp.router.weight"] == "F32"


def test_fused_qkv_is_one_attn_v_tensor_per_layer():
    """GPT-NeoX files hold Q, K and V as one attn_qkv tensor; llama.cpp 0c1e570 types it by the attn_v rules
    (`category_is_attn_v`), counting one per layer: Q4_K_M gives Q6_K where `use_more_bits` says so, else Q4_K."""
    from memviz.core.gguf_names import gguf_name

    a = get_preset("pythia-1.4b").architecture()
    fmt = get_weight_format("Q4_K_M")
    qkv = {}
    for t, storage, _ in tensor_bytes(a, fmt):
        if t.kind in ("q", "k", "v"):
            assert gguf_name(t, a) == f"blk.{t.layer}.attn_qkv.weight"
            qkv.setdefault(t.layer, set()).add(storage)
    assert all(len(types) == 1 for types in qkv.values())
    layers = a.num_layers
    more = [i < layers // 8 or i >= 7 * layers // 8 or (i - layers // 8) % 3 == 2 for i in range(layers)]
    assert [qkv[i] == {"Q6_K"} for i in range(layers)] == more
    assert all(qkv[i] == {"Q4_K"} for i in range(layers) if not more[i])


@pytest.mark.parametrize("mix, without, with_imatrix", [("IQ4_XS", "Q5_K", "IQ4_XS"), ("IQ4_NL", "Q5_K", "IQ4_NL"),
                                                        ("Q4_0", "Q4_0", "Q4_1"), ("Q5_0", "Q5_0", "Q5_1")])
def test_an_importance_matrix_changes_the_first_eighth_of_ffn_down(mix, without, with_imatrix):
    """llama-quant.cpp: IQ4_XS / IQ4_NL raise the first n_layer/8 ffn_down to Q5_K only without an importance
    matrix; Q4_0 / Q5_0 raise them to Q4_1 / Q5_1 only with one."""
    a = get_preset("llama-3.1-8b").architecture()
    downs = [t for t in build_inventory(a) if t.kind == "down"]
    early, late = downs[0], downs[-1]
    assert gguf_tensor_type(mix, early, a) == without
    assert gguf_tensor_type(mix + "+imatrix", early, a) == with_imatrix
    assert gguf_tensor_type(mix + "+imatrix", late, a) == gguf_tensor_type(mix, late, a)
    assert get_weight_format(mix.lower() + "+IMATRIX").name == mix + "+imatrix"


def test_gguf_names_are_those_of_the_files():
    """Pythia's GGUF holds 292 tensors (its loader line in ggml-org/ci) with output_norm.bias; GLM-4-0414's gate
    and up projections are one ffn_up tensor (llama.cpp src/models/glm4.cpp), as its 613-tensor file shows."""
    from memviz.core.gguf_mixes import gguf_type_counts
    from memviz.core.gguf_names import gguf_name

    a = get_preset("pythia-1.4b").architecture()
    names = {gguf_name(t, a) for t in build_inventory(a)}
    assert len(names) == 292 and {"output_norm.weight", "output_norm.bias"} <= names
    assert sum(gguf_type_counts("Q4_0", a).values()) == 292
    glm = from_hf_config({"model_type": "glm4", "hidden_size": 6144, "intermediate_size": 23040,
                          "num_hidden_layers": 61, "num_attention_heads": 48, "num_key_value_heads": 2,
                          "head_dim": 128, "vocab_size": 151552, "attention_bias": False}, name="GLM-Z1-32B-0414")
    glm_names = {gguf_name(t, glm) for t in build_inventory(glm)}
    assert not any("ffn_gate" in n for n in glm_names) and len(glm_names) == 613


def test_the_older_quantizers_qkv_branch_is_a_variant_of_each_mix():
    """Older llama.cpp quantizers typed a fused attn_qkv by its own branch (llama.cpp's CI files of build 4343);
    the variant is found by name, not listed among the formats, and changes only fused-QKV models."""
    from memviz.core.errors import InputError
    from memviz.core.formats import weight_formats
    from memviz.core.gguf_mixes import QKV_BRANCH_SUFFIX

    pythia = get_preset("pythia-1.4b").architecture()
    for mix, qkv in (("Q4_K_M", "Q5_K"), ("Q5_K_M", "Q6_K"), ("Q3_K_M", "Q4_K"), ("Q2_K", "Q2_K")):
        fmt = get_weight_format(mix + QKV_BRANCH_SUFFIX)
        assert {fmt.storage_for(t, pythia).name for t in build_inventory(pythia) if t.kind in ("q", "k", "v")} == {qkv}
    assert not any(name.endswith(QKV_BRANCH_SUFFIX) for name in weight_formats())
    llama = get_preset("llama-3.1-8b").architecture()
    assert weight_bytes(llama, get_weight_format("q4_k_m+QKV-BRANCH")) == weight_bytes(llama, get_weight_format("Q4_K_M"))
    with pytest.raises(InputError, match="unknown weight format"):
        get_weight_format("bf16" + QKV_BRANCH_SUFFIX)


def test_delta_net_tensors_are_named_and_typed_as_llamacpp_writes_them():
    """Qwen3.5: attn_qkv (an attn_v tensor to the quantizer), attn_gate, ssm_beta / ssm_alpha, an F32 ssm_conv1d of
    {d_conv, channels}, ssm_a without a suffix; Qwen3-Next keeps b and a in one ssm_ba tensor
    (src/models/qwen35.cpp, src/models/qwen3next.cpp)."""
    from memviz.core.gguf_names import gguf_name, gguf_tensors

    a = get_preset("qwen3.5-35b-a3b").architecture()
    names = {gguf_name(t, a): t for t in gguf_tensors(a) if t.layer == 0}
    assert {"blk.0.attn_qkv.weight", "blk.0.attn_gate.weight", "blk.0.ssm_beta.weight", "blk.0.ssm_alpha.weight",
            "blk.0.ssm_conv1d.weight", "blk.0.ssm_dt.bias", "blk.0.ssm_a", "blk.0.ssm_norm.weight",
            "blk.0.ssm_out.weight"} <= set(names)
    conv = names["blk.0.ssm_conv1d.weight"]
    assert conv.shape == (8192, 4) and gguf_tensor_type("Q4_K_M", conv, a) == "F32"
    qkv = [gguf_tensor_type("Q4_K_M", t, a) for t in gguf_tensors(a) if t.kind in ("ssm_in_qkv", "v")]
    assert set(qkv) == {"Q4_K", "Q6_K"}  # use_more_bits over the attn_v tensors, the delta-nets' attn_qkv among them
    nxt = get_preset("qwen3-next-80b-a3b").architecture()
    assert {gguf_name(t, nxt) for t in gguf_tensors(nxt) if t.layer == 0 and t.kind in ("ssm_beta", "ssm_alpha")} == {
        "blk.0.ssm_ba.weight"}


QUANTIZED = json.loads((Path(__file__).parents[1] / "data" / "llamacpp" / "quantizer_types.json").read_text())


@pytest.mark.parametrize("file", QUANTIZED["files"], ids=lambda f: f"{f['config']}-{f['mix']}")
def test_every_tensor_typed_as_llama_cpp_quantizer_typed_it(file):
    """Files llama.cpp's own quantizer made (tests/data/llamacpp/quantizer_types.json): the attn_v tensors are counted
    over the file's tensors, Gemma 3n's KV-sharing layers' K / V and Kimi Linear's delta layers' attn_v among them (an
    MLA layer's kv_b is attn_k_b / attn_v_b there); counted over memviz's inventory, two attn_v tensors of the Gemma 3n
    files and of the Kimi Linear test file had each other's type. Granite-4.0-H's file lists KV heads per layer, 0 in
    its recurrent layer 0, so llama.cpp's n_gqa() is 0 there and IQ4_XS keeps its attn_v at IQ4_XS (memviz took the
    model's GQA, 4, and said Q5_K)."""
    config = json.loads((Path(__file__).parents[1] / "data" / "llamacpp" / "configs" / f"{file['config']}.json")
                        .read_text())
    a = from_hf_config(config)
    mine = {gguf_name(t, a): gguf_tensor_type(file["mix"], t, a) for t in gguf_tensors(a)}
    assert mine == file["types"]
