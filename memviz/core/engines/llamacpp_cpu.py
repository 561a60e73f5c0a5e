"""Where llama.cpp's CPU backend keeps each weight, and the host buffers that follow.

llama.cpp 0c1e570 (vendored by llama-cpp-python 0.3.36) loads a weight that runs
on the CPU into the first buffer type of its list that supports the weight's op
(`src/llama-model.cpp`: `make_cpu_buft_list`, `weight_buft_supported`): the CPU
backend's "extra" buffer types first (`ggml/src/ggml-cpu/ggml-cpu.cpp`:
`ggml_backend_cpu_device_get_extra_buffers_type`: AMX, then REPACK), else the
plain CPU buffer — with mmap, the file's own pages (`CPU_Mapped`).

- AMX (`ggml-cpu/amx/amx.cpp` `supports_op`, `amx/mmq.cpp`
  `ggml_backend_amx_get_alloc_size`; CPUs with AMX-INT8 and AVX512-VNNI): 2-D
  matrix products whose output rows are a multiple of 32, for F16 (K % 16) and
  Q4_0 / Q4_1 / Q8_0 (K % 32) / Q4_K / Q5_K / Q6_K / IQ4_XS (K % 256); packed rows
  of `get_row_size`: Q8_0 +4 bytes, Q4_K / Q5_K +4 bytes, IQ4_XS +2 bytes per block.
- REPACK (`ggml-cpu/repack.cpp` `ggml_repack_get_optimal_repack_type`): on x86
  Q4_0, Q4_K, IQ4_NL, MXFP4 with AVX2 and Q2_K with AVX512, when the output rows
  are a multiple of 8; on ARM with NEON and DOTPROD (`cpu="arm"`; MATMUL_INT8
  changes the layout, not the set) Q4_0, IQ4_NL, MXFP4 and Q8_0 when the rows are
  a multiple of 4, Q4_K, Q5_K and Q6_K when a multiple of 8; 2-D products and 3-D
  expert products (MUL_MAT_ID) alike; same size as the file's tensor (a packed
  block holds 4 or 8 of the file's blocks).
- The token embedding is read by GET_ROWS and never moves; vectors (norms,
  biases) and F32 routers stay too. A tied embedding also serves as the output
  layer: llama.cpp loads it a second time only when the output's buffer type differs.

Each buffer is the sum of its tensors padded to 32 bytes (`TENSOR_ALIGNMENT`,
`ggml_backend_alloc_ctx_tensors_from_buft`). With mmap the CPU_Mapped buffer is
the file range from the first to the last tensor it keeps (`get_mapping_range`),
so tensors moved elsewhere but lying inside that range are counted twice: once
mapped, once packed. Without the file's offsets (a mix sized from a config, a log) a quantized file's order
is llama.cpp's quantizer's (`llamacpp._quantizer_offsets`); a float file's range is the whole file.
Other CPUs (ARM without DOTPROD, RISC-V, KleidiAI builds) are `cpu="generic"`: none
of their packings is counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CPU_FEATURES = ("avx2", "avx512", "amx", "arm", "generic")
ALIGN = 32
_AMX_K = {"F16": 16, "Q4_0": 32, "Q4_1": 32, "Q8_0": 32, "Q4_K": 256, "Q5_K": 256, "Q6_K": 256, "IQ4_XS": 256}
_AMX_BLOCK = {"F16": (1, 2, 0), "Q4_0": (32, 18, 0), "Q4_1": (32, 20, 0), "Q8_0": (32, 34, 4), "Q4_K": (256, 144, 4),
              "Q5_K": (256, 176, 4), "Q6_K": (256, 210, 0), "IQ4_XS": (256, 136, 2)}
#: ggml type -> the multiple of output rows REPACK needs, by CPU feature set
_REPACK: dict[str, dict[str, int]] = {"avx2": {"Q4_0": 8, "Q4_K": 8, "IQ4_NL": 8, "MXFP4": 8}}
_REPACK["avx512"] = {**_REPACK["avx2"], "Q2_K": 8}
_REPACK["amx"] = _REPACK["avx512"]
_REPACK["arm"] = {"Q4_0": 4, "IQ4_NL": 4, "MXFP4": 4, "Q8_0": 4, "Q4_K": 8, "Q5_K": 8, "Q6_K": 8}


def features_of(system_info: str) -> str:
    """The CPU feature set (`CPU_FEATURES`) of the CPU a llama.cpp `system_info` line reports
    (`CPU : ... AVX512 = 1 | AMX_INT8 = 1 |`, `NEON = 1 | DOTPROD = 1`); nothing known: generic. Builds before
    2025 did not print DOTPROD: an ARM CPU with MATMUL_INT8 (i8mm) is read as "arm", which the repack selects
    with i8mm as with dotprod for every type but IQ4_NL and MXFP4 (and every core with i8mm has dotprod)."""
    flags = {part.split("=")[0].split(":")[-1].strip() for part in system_info.split("|")
             if part.strip().endswith("= 1")}
    for needs, features in ((("AMX_INT8",), "amx"), (("AVX512",), "avx512"), (("AVX2",), "avx2"),
                            (("NEON", "DOTPROD"), "arm"), (("NEON", "MATMUL_INT8"), "arm")):
        if flags.issuperset(needs):
            return features
    return "generic"


@dataclass(frozen=True)
class WeightTensor:
    """One weight as llama.cpp sees it: ggml type, ne (K, N[, experts]), bytes in the file, file offset."""

    name: str
    ggml_type: str
    ne: tuple[int, ...]
    nbytes: int
    offset: int | None
    matmul: bool  # read by a matrix product (not GET_ROWS, not a vector)


def _pad(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _amx_bytes(t: WeightTensor) -> int | None:
    """Bytes in the AMX buffer, or None when AMX does not take the tensor."""
    if len(t.ne) != 2 or t.ggml_type not in _AMX_K or t.ne[0] % _AMX_K[t.ggml_type] or t.ne[1] % 32:
        return None
    block, size, extra = _AMX_BLOCK[t.ggml_type]
    return t.ne[1] * (t.ne[0] // block) * (size + extra)


def extra_buffer(t: WeightTensor, cpu: str) -> tuple[str, int] | None:
    """(buffer name, bytes) when an extra buffer type takes the tensor on a CPU with `cpu` features."""
    if not t.matmul or len(t.ne) < 2:
        return None
    if cpu == "amx":
        packed = _amx_bytes(t)
        if packed is not None:
            return "AMX", packed
    rows = _REPACK.get(cpu, {}).get(t.ggml_type)
    if rows and t.ne[1] % rows == 0:
        return "CPU_REPACK", t.nbytes
    return None


def cpu_weight_buffers(tensors: Iterable[WeightTensor], cpu: str, mmap: bool, repack: bool,
                       tied_output: WeightTensor | None = None) -> dict[str, int]:
    """Model buffers of weights that run on the CPU, by llama.cpp's buffer name ("CPU_Mapped" or "CPU",
    "AMX", "CPU_REPACK"). `repack=False` is llama-server's --no-repack; `tied_output` is the token
    embedding when it also serves as the output layer."""
    tensors = list(tensors)
    buffers: dict[str, int] = {}
    kept: list[WeightTensor] = []
    for t in tensors:
        extra = extra_buffer(t, cpu) if repack else None
        if extra:
            buffers[extra[0]] = buffers.get(extra[0], 0) + _pad(extra[1])
        else:
            kept.append(t)
    if tied_output is not None and repack:
        extra = extra_buffer(tied_output, cpu)
        if extra:
            buffers[extra[0]] = buffers.get(extra[0], 0) + _pad(extra[1])
    if not kept:
        return buffers
    if not mmap:
        buffers["CPU"] = sum(_pad(t.nbytes) for t in kept)
    elif all(t.offset is not None for t in kept):
        buffers["CPU_Mapped"] = max(t.offset + t.nbytes for t in kept) - min(t.offset for t in kept)
    else:
        buffers["CPU_Mapped"] = sum(t.nbytes for t in tensors)
    return buffers
