"""Which CPU weights llama.cpp 0c1e570 repacks, by CPU feature set (ggml-cpu/repack.cpp)."""

from __future__ import annotations

import pytest

from memviz.core.engines.llamacpp_cpu import WeightTensor, cpu_weight_buffers, extra_buffer, features_of


def weight(ggml_type: str, rows: int, nbytes: int = 1000) -> WeightTensor:
    return WeightTensor("blk.0.ffn_up.weight", ggml_type, (4096, rows), nbytes, None, True)


@pytest.mark.parametrize("ggml_type, rows, x86, arm", [
    ("Q4_0", 4096, True, True), ("Q4_0", 4100, False, True),  # ARM takes rows in fours, x86 in eights
    ("Q4_K", 4096, True, True), ("Q4_K", 4100, False, False),
    ("Q5_K", 4096, False, True), ("Q6_K", 4096, False, True), ("Q8_0", 4096, False, True),
    ("IQ4_NL", 4100, False, True), ("MXFP4", 4096, True, True), ("Q2_K", 4096, False, False),
    ("Q3_K", 4096, False, False), ("F16", 4096, False, False)])
def test_repacked_types_follow_the_cpu(ggml_type, rows, x86, arm):
    t = weight(ggml_type, rows)
    assert (extra_buffer(t, "avx2") is not None) is x86
    assert (extra_buffer(t, "arm") is not None) is arm
    assert extra_buffer(t, "generic") is None
    assert (extra_buffer(t, "avx512") is not None) is (x86 or ggml_type == "Q2_K")


def test_a_repacked_weight_keeps_its_size_and_leaves_the_mapped_file_whole():
    tensors = [weight("Q8_0", 4096, 1000), weight("F16", 4096, 64)]
    assert cpu_weight_buffers(tensors, "arm", mmap=True, repack=True) == {"CPU_REPACK": 1024, "CPU_Mapped": 1064}
    assert cpu_weight_buffers(tensors, "arm", mmap=False, repack=True) == {"CPU_REPACK": 1024, "CPU": 64}
    assert cpu_weight_buffers(tensors, "arm", mmap=False, repack=False) == {"CPU": 1024 + 64}


@pytest.mark.parametrize("info, features", [
    ("CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | DOTPROD = 1 | MATMUL_INT8 = 1 | REPACK = 1 |", "arm"),
    ("CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | LLAMAFILE = 1 |", "generic"),
    # late-2024 builds print MATMUL_INT8 and no DOTPROD (a Graviton4, Arm's learning path)
    ("CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | MATMUL_INT8 = 1 | SVE = 1 | AARCH64_REPACK = 1 |", "arm"),
    ("CUDA : ARCHS = 700 | CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 |", "avx2"),
    ("CPU : AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 |", "amx"), ("", "generic")])
def test_features_of_a_system_info_line(info, features):
    assert features_of(f"system_info: n_threads = 8 (n_threads_batch = 8) / 8 | {info}") == features
