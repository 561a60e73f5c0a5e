import gguf
import pytest

from memviz.core.errors import InputError
from memviz.core.formats import (
    GGML_TYPES,
    MATRIX_STORAGE,
    get_kv_format,
    get_weight_format,
    raw_weight_bytes,
    tensor_bytes,
    weight_bytes,
)
from memviz.core.inventory import Role, parameter_count
from memviz.core.presets import get_preset
from memviz.core.units import GiB

LLAMA8 = get_preset("llama-3.1-8b").architecture()


def test_seed_7b_at_4_bit_is_3_26_gib():
    assert round(raw_weight_bytes(7_000_000_000, 4) / GiB, 2) == 3.26


@pytest.mark.parametrize(("bits", "expected_gb"), [(32, 4), (16, 2), (8, 1)])
def test_seed_1b_examples_in_decimal_gb(bits, expected_gb):
    assert raw_weight_bytes(1_000_000_000, bits) == expected_gb * 10**9


@pytest.mark.parametrize(("fmt", "expected_gb"), [("fp32", 1620), ("bf16", 810), ("fp8", 405)])
def test_seed_405b_examples(fmt, expected_gb):
    # the seed rounds Llama-3.1-405B to 405e9 parameters: 1,620 / 810 / 405 GB
    assert raw_weight_bytes(405_000_000_000, {"fp32": 32, "bf16": 16, "fp8": 8}[fmt]) == expected_gb * 10**9
    # the real model has 405,853,388,800 parameters: exact bytes, and FP8 keeps embeddings/LM head at 16 bit
    a = get_preset("llama-3.1-405b").architecture()
    real = weight_bytes(a, get_weight_format(fmt))
    if fmt != "fp8":
        assert real == parameter_count(a) * {"fp32": 4, "bf16": 2}[fmt]
    else:
        embed = 2 * 128256 * 16384 * 2  # embed_tokens + lm_head in bf16
        assert real > parameter_count(a) and real - embed < parameter_count(a) * 1.001


def test_ggml_table_matches_the_gguf_package():
    for name, (block, size) in GGML_TYPES.items():
        assert gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[name]] == (block, size), name


@pytest.mark.parametrize(
    ("name", "bpw"),
    [("Q4_0", 4.5), ("Q4_K", 4.5), ("Q6_K", 6.5625), ("Q8_0", 8.5), ("Q2_K", 2.625), ("IQ4_XS", 4.25), ("MXFP4", 4.25)],
)
def test_ggml_bits_per_weight(name, bpw):
    block, size = GGML_TYPES[name]
    assert size * 8 / block == bpw


@pytest.mark.parametrize(
    ("fmt", "bpw"),
    [("bnb-nf4", 4.5), ("mxfp4", 4.25), ("nvfp4", 4.5), ("gptq-int4", 4 + 20 / 128 + 32 / 4096), ("awq-int4", 4 + 20 / 128),
     ("gptq-int8", 8 + 24 / 128 + 32 / 4096)],
)
def test_quantized_matrix_bits_include_scales(fmt, bpw):
    assert MATRIX_STORAGE[fmt].bits_per_element == pytest.approx(bpw, abs=1e-5)


def test_bnb_double_quant_is_about_4_13_bits():
    assert MATRIX_STORAGE["bnb-nf4-dq"].bits_per_element == pytest.approx(4 + 8 / 64 + 32 / 16384, abs=1e-4)


def test_gptq_bytes_equal_its_tensor_layout():
    k, n, g = 4096, 11008, 128  # in_features, out_features, group
    qweight = k // 8 * n * 4
    scales = k // g * n * 2
    qzeros = k // g * n // 8 * 4
    g_idx = k * 4
    assert MATRIX_STORAGE["gptq-int4"].nbytes((n, k)) == qweight + scales + qzeros + g_idx
    # 8 bits: four values an int32 in qweight and qzeros (Qwen's GPTQ-Int8 releases)
    assert MATRIX_STORAGE["gptq-int8"].nbytes((n, k)) == k // 4 * n * 4 + scales + k // g * n // 4 * 4 + g_idx


def test_fp8_block_scales_of_deepseek_layout():
    # a 7168 x 18432 matrix has ceil(18432/128) x ceil(7168/128) fp32 scales
    assert MATRIX_STORAGE["fp8-block"].nbytes((18432, 7168)) == 18432 * 7168 + 144 * 56 * 4


def test_policy_keeps_embeddings_head_norms_and_routers_at_16_bit():
    a = get_preset("mixtral-8x7b").architecture()
    for t, storage, _ in tensor_bytes(a, get_weight_format("gptq-int4")):
        if t.role in (Role.EMBEDDING, Role.LM_HEAD, Role.NORM, Role.ROUTER):
            assert storage == "bf16", t.name
        elif t.is_matrix:
            assert storage == "gptq-int4", t.name


def test_mxfp4_moe_matches_gpt_oss_download_size():
    # openai/gpt-oss-20b ships MXFP4 experts with bf16 everything else: 13.8 GB on the hub
    b = weight_bytes(get_preset("gpt-oss-20b").architecture(), get_weight_format("mxfp4-moe"))
    assert round(b / 1e9, 1) == 13.8


def test_plain_formats_are_params_times_bytes():
    n = parameter_count(LLAMA8)
    assert weight_bytes(LLAMA8, get_weight_format("bf16")) == 2 * n == 16060522496


def test_kv_format_bytes_and_errors():
    assert get_kv_format("q8_0").bytes_per_vector(128) == 4 * 34
    assert get_kv_format("q4_0").bytes_per_vector(128) == 4 * 18
    # ggml-common.h: block_q4_1 20, block_q5_0 22, block_q5_1 24, block_iq4_nl 18 bytes per 32 values
    for name, block_bytes in (("q4_1", 20), ("q5_0", 22), ("q5_1", 24), ("iq4_nl", 18)):
        assert get_kv_format(name).bytes_per_vector(128) == 4 * block_bytes
    assert get_kv_format("f16").name == "fp16" and get_kv_format("f32").name == "fp32"  # llama.cpp's names
    assert get_kv_format("int8").bytes_per_vector(128) == 128 + 4
    assert get_kv_format("F16").name == "fp16"
    with pytest.raises(InputError, match="unknown KV"):
        get_kv_format("int3")
    with pytest.raises(InputError, match="unknown weight"):
        get_weight_format("q9_k")


def test_the_gguf_bf16_mix_is_not_the_bf16_checkpoint():
    """"BF16" names the GGUF file (1-D tensors F32, the quantizer's layout), "bf16" the checkpoint; a log's
    file type 32 read as the checkpoint had counted norms and biases in 16 bits (Qwen2-7B: 0.64 MiB)."""
    assert get_weight_format("BF16").gguf_mix == "BF16" and get_weight_format("bf16").gguf_mix is None
    assert get_weight_format(" BF16 ").gguf_mix == "BF16" and get_weight_format("Bf16").gguf_mix is None
    assert get_weight_format("q4_k_m").name == "Q4_K_M"
