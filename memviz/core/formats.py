"""Storage formats for weights and for the KV cache, with their real overheads.

One `Storage` formula covers every format: packed elements plus the scales,
zero points, block headers and index tensors each format stores next to them,

    bytes = ceil(numel * elem_bits / 8)
          + rows * ceil(cols / group) * group_bytes       (per-group scales / ggml blocks)
          + rows * row_bytes                              (per-output-channel scales)
          + matrices * cols * col_bytes                   (GPTQ g_idx)
          + matrices * ceil(rows/b)*ceil(cols/b) * block2d_bytes   (2-D block scales)
          + ceil(numel / flat) * flat_bytes (+ nested stats)      (bitsandbytes blocks)
          + matrices * tensor_bytes                       (per-tensor scales)

with `cols` the input dimension of a linear layer (the GGUF `ne0`, the axis GPTQ
groups run along) and `rows` the product of the other dimensions. Sources:
ggml block sizes from ggml's type traits (`ggml.c` `type_traits`, mirrored by
`gguf.GGML_QUANT_SIZES`); GPTQ/AWQ tensor layouts from AutoGPTQ/AutoAWQ
checkpoints (`qweight`, `qzeros`, `scales`, `g_idx`); bitsandbytes
`functional.quantize_4bit` (blocksize 64, fp32 absmax; nested: 8-bit absmax
in blocks of 256 with one fp32 scale each); LLM.int8 `Int8Params` (int8 +
fp32 row scale `SCB`); OCP Microscaling spec v1.0 (MXFP4: 32 fp4 values share
one E8M0 byte); NVIDIA NVFP4 (16 fp4 values share one E4M3 byte, plus an fp32
tensor scale); DeepSeek-V3 FP8 (128x128 blocks, fp32 `weight_scale_inv`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from math import ceil, prod

from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.gguf_mixes import GGUF_MIXES, QKV_BRANCH_SUFFIX, gguf_tensor_type
from memviz.core.gguf_names import gguf_tensors
from memviz.core.inventory import Role, Tensor, build_inventory


@dataclass(frozen=True)
class Storage:
    """How the elements of one tensor are laid out in memory (see module docstring)."""

    name: str
    elem_bits: float = 0.0
    group: int = 0
    group_bytes: float = 0.0
    row_bytes: float = 0.0
    col_bytes: float = 0.0
    block2d: int = 0
    block2d_bytes: float = 0.0
    flat: int = 0
    flat_bytes: float = 0.0
    nested_flat: int = 0  # bitsandbytes double quantization: fp32 scale per `nested_flat` blocks
    tensor_bytes: float = 0.0

    def nbytes(self, shape: tuple[int, ...]) -> int:
        numel, rows, cols, matrices = _dims(shape)
        total = numel * self.elem_bits / 8
        if self.group:
            total += rows * ceil(cols / self.group) * self.group_bytes
        total += rows * self.row_bytes + matrices * cols * self.col_bytes + matrices * self.tensor_bytes
        if self.block2d:
            r = rows // matrices
            total += matrices * ceil(r / self.block2d) * ceil(cols / self.block2d) * self.block2d_bytes
        if self.flat:
            blocks = ceil(numel / self.flat)
            total += blocks * self.flat_bytes
            if self.nested_flat:
                total += ceil(blocks / self.nested_flat) * 4
        return ceil(total)

    def decompressed_nbytes(self, shape: tuple[int, ...]) -> int:
        """What compressed-tensors leaves of a tensor it decompresses (compressed-tensors 0.20.1, measured:
        tests/data/probe/compressed_tensors.json): the values in 16 bit, each scale in 16 bit whatever it was
        stored in (NVFP4's FP8 scales included), the per-tensor extras (global scales, weight_shape) as stored."""
        numel, rows, cols, matrices = _dims(shape)
        scales = rows * ceil(cols / self.group) if self.group else 0
        scales += rows if self.row_bytes else 0
        if self.block2d:
            scales += matrices * ceil(rows // matrices / self.block2d) * ceil(cols / self.block2d)
        return 2 * (numel + scales) + ceil(matrices * self.tensor_bytes)

    @property
    def bits_per_element(self) -> float:
        """Effective bits per element of a large (4096 x 4096) matrix, overheads included."""
        return self.nbytes((4096, 4096)) * 8 / 4096**2


def _dims(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(elements, rows, columns, matrices) of a tensor: the last axis is a linear layer's input (the GGUF ne0),
    the axes before the last two stack matrices (experts)."""
    numel = prod(shape)
    cols = shape[-1]
    return numel, numel // cols if cols else 0, cols, prod(shape[:-2]) if len(shape) > 2 else 1


def dense(name: str, bits: float) -> Storage:
    return Storage(name, elem_bits=bits)


def ggml(name: str, block: int, type_size: int) -> Storage:
    """A ggml type: `type_size` bytes hold `block` consecutive elements of a row."""
    return Storage(name, group=block, group_bytes=type_size) if block > 1 else Storage(name, elem_bits=8 * type_size)


#: ggml types: (elements per block, bytes per block), from ggml's type traits.
GGML_TYPES: dict[str, tuple[int, int]] = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "F64": (1, 8), "I8": (1, 1), "I16": (1, 2), "I32": (1, 4), "I64": (1, 8),
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34), "Q8_1": (32, 40),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210), "Q8_K": (256, 292),
    "IQ2_XXS": (256, 66), "IQ2_XS": (256, 74), "IQ2_S": (256, 82), "IQ3_XXS": (256, 98), "IQ3_S": (256, 110),
    "IQ1_S": (256, 50), "IQ1_M": (256, 56), "IQ4_NL": (32, 18), "IQ4_XS": (256, 136),
    "TQ1_0": (256, 54), "TQ2_0": (256, 66), "MXFP4": (32, 17),
}


def ggml_storage(type_name: str) -> Storage:
    try:
        block, size = GGML_TYPES[type_name.upper()]
    except KeyError:
        raise InputError(f"unknown ggml type {type_name!r}") from None
    return ggml(type_name.upper(), block, size)


BF16 = dense("bf16", 16)
F32 = dense("fp32", 32)

#: Storage of quantized weight matrices for the non-GGUF formats.
MATRIX_STORAGE: dict[str, Storage] = {
    "fp32": F32,
    "bf16": BF16,
    "fp16": dense("fp16", 16),
    # vLLM/llm-compressor FP8 e4m3: per-tensor weight scale + static input scale (fp32 each)
    "fp8": Storage("fp8", elem_bits=8, tensor_bytes=8),
    "fp8-channel": Storage("fp8-channel", elem_bits=8, row_bytes=4),
    "fp8-block": Storage("fp8-block", elem_bits=8, block2d=128, block2d_bytes=4),
    "int8": Storage("int8", elem_bits=8, row_bytes=4),  # per-output-channel fp32 scale (W8A8)
    "llm-int8": Storage("llm-int8", elem_bits=8, row_bytes=4),  # bitsandbytes Int8Params + SCB
    # GPTQ: qweight int32[K/8, N], scales fp16[K/g, N], qzeros int32[K/g, N/8], g_idx int32[K]
    "gptq-int4": Storage("gptq-int4", elem_bits=4, group=128, group_bytes=2.5, col_bytes=4),
    # GPTQ 8-bit: qweight int32[K/4, N], scales fp16[K/g, N], qzeros int32[K/g, N/4], g_idx int32[K]
    "gptq-int8": Storage("gptq-int8", elem_bits=8, group=128, group_bytes=3, col_bytes=4),
    # AWQ: qweight int32[K, N/8], qzeros int32[K/g, N/8], scales fp16[K/g, N]
    "awq-int4": Storage("awq-int4", elem_bits=4, group=128, group_bytes=2.5),
    "bnb-nf4": Storage("bnb-nf4", elem_bits=4, flat=64, flat_bytes=4),
    "bnb-nf4-dq": Storage("bnb-nf4-dq", elem_bits=4, flat=64, flat_bytes=1, nested_flat=256),
    "bnb-fp4": Storage("bnb-fp4", elem_bits=4, flat=64, flat_bytes=4),
    "mxfp4": Storage("mxfp4", elem_bits=4, group=32, group_bytes=1),
    "nvfp4": Storage("nvfp4", elem_bits=4, group=16, group_bytes=1, tensor_bytes=4),
    # compressed-tensors "pack-quantized" INT4 (llm-compressor's W4A16 scheme: symmetric, groups of 128):
    # weight_packed int32[N, K/8], weight_scale 16-bit[N, K/128], weight_shape int64[2] (compressed-tensors 0.20.1
    # compressors/pack_quantized/base.py `compression_param_names`)
    "w4a16": Storage("w4a16", elem_bits=4, group=128, group_bytes=2, tensor_bytes=16),
    # BitNet b1.58's packed ternary weights: four values a uint8 (out/4 x in) and one 16-bit weight_scale per matrix
    # (transformers 5.24 integrations/bitnet.py `BitLinear`, VALUES_PER_ITEM 4)
    "bitnet": Storage("bitnet", elem_bits=2, tensor_bytes=2),
}

_DESCRIPTIONS = {
    "fp32": "32-bit float everywhere",
    "bf16": "bfloat16 everywhere (the usual checkpoint)",
    "fp16": "float16 everywhere",
    "fp8": "FP8 e4m3 linear layers, per-tensor scales; embeddings/LM head 16-bit",
    "fp8-channel": "FP8 e4m3 linear layers, per-channel fp32 scales",
    "fp8-block": "FP8 e4m3 with 128x128 block scales (DeepSeek-V3 checkpoints)",
    "int8": "INT8 linear layers, per-channel fp32 scales (W8A8)",
    "llm-int8": "bitsandbytes LLM.int8 (int8 + fp32 row scale)",
    "gptq-int4": "GPTQ 4-bit, group 128, fp16 scales, packed zeros, g_idx",
    "gptq-int8": "GPTQ 8-bit, group 128, fp16 scales, packed zeros, g_idx",
    "awq-int4": "AWQ 4-bit, group 128, fp16 scales, packed zeros",
    "bnb-nf4": "bitsandbytes NF4, block 64, fp32 absmax",
    "bnb-nf4-dq": "bitsandbytes NF4 with double quantization (8-bit absmax)",
    "bnb-fp4": "bitsandbytes FP4, block 64, fp32 absmax",
    "mxfp4": "OCP MXFP4: 32 fp4 values + one E8M0 scale (gpt-oss experts)",
    "nvfp4": "NVIDIA NVFP4: 16 fp4 values + one E4M3 scale, fp32 tensor scale",
    "w4a16": "compressed-tensors W4A16: INT4 in groups of 128, 16-bit scales, symmetric (llm-compressor)",
    "bitnet": "BitNet b1.58 ternary linear layers, four a byte, one 16-bit scale a matrix (BitNet checkpoints)",
}

STORED = "stored"  # the weight format of an imported file: its tensors' exact sizes
FP8_MXFP4_MOE = "fp8-block-mxfp4-moe"
QUANTIZED_ROLES = frozenset({Role.ATTENTION, Role.MLP, Role.EXPERT})
SIXTEEN_BIT_ROLES = frozenset({Role.EMBEDDING, Role.POSITION, Role.LM_HEAD})


@dataclass(frozen=True)
class WeightFormat:
    """A weight format and its precision policy: which tensors it quantizes.

    Non-GGUF formats quantize the weight matrices of attention, MLP and expert
    layers; embeddings and the LM head stay at 16 bit unless `quantize_embeddings`
    (the seed's point, and what GPTQ/AWQ/bitsandbytes/vLLM FP8 do by default);
    norms, biases and routers are never shrunk. GGUF file mixes choose a ggml type
    per tensor by llama.cpp's rules (`gguf_mixes`).
    """

    name: str
    description: str
    matrix: Storage | None = None
    gguf_mix: str | None = None
    quantize_embeddings: bool = False
    roles: frozenset[Role] = QUANTIZED_ROLES
    other: Storage = field(default=BF16)
    experts: Storage | None = None  # the routed experts' own storage, where a release keeps them apart

    def storage_for(self, t: Tensor, a: Architecture) -> Storage:
        if self.gguf_mix is not None:
            return ggml_storage(gguf_tensor_type(self.gguf_mix, t, a))
        assert self.matrix is not None
        if self.experts is not None and t.role is Role.EXPERT and t.is_matrix:
            return self.experts
        if self.matrix.elem_bits >= 16 and not self.matrix.group:
            return self.matrix  # plain float formats store every tensor that way
        if t.is_matrix and (t.role in self.roles or (self.quantize_embeddings and t.role in SIXTEEN_BIT_ROLES)):
            return self.matrix
        return self.other


#: bitsandbytes quantizes nn.Linear modules while loading (transformers' `replace_with_bnb_linear`);
#: transformers >= 5 holds MoE experts as fused 3-D parameters (`MixtralExperts.gate_up_proj`), which it
#: leaves in the compute dtype — measured by the probe: Mixtral NF4 experts stay bf16.
BITSANDBYTES = frozenset({"llm-int8", "bnb-nf4", "bnb-nf4-dq", "bnb-fp4"})


def weight_formats() -> dict[str, WeightFormat]:
    """Every weight format by name: the non-GGUF formats and the GGUF file mixes."""
    out = {k: WeightFormat(k, _DESCRIPTIONS[k] + ("; MoE experts stay 16-bit" if k in BITSANDBYTES else ""), matrix=s,
                           roles=QUANTIZED_ROLES - {Role.EXPERT} if k in BITSANDBYTES else QUANTIZED_ROLES)
           for k, s in MATRIX_STORAGE.items()}
    out[STORED] = WeightFormat(STORED, "exactly as stored in the imported file (safetensors / GGUF tensor sizes)")
    out["mxfp4-moe"] = WeightFormat(
        "mxfp4-moe", "MXFP4 experts only, attention/router/embeddings bf16 (gpt-oss checkpoints)",
        matrix=MATRIX_STORAGE["mxfp4"], roles=frozenset({Role.EXPERT}),
    )
    # DeepSeek-V4's release (its config's expert_dtype "fp4" beside quant_method fp8): the experts as MXFP4 (an fp4
    # value a weight, one E8M0 scale per 32: deepseek-ai's inference/model.py `Linear` for float4_e2m1fn_x2), every
    # other linear layer FP8 in 128 x 128 blocks (its UE8M0 scales are 1 byte where fp8-block counts 4: 3 bytes per
    # 16,384 weights more)
    out[FP8_MXFP4_MOE] = WeightFormat(
        FP8_MXFP4_MOE, "FP8 linear layers in 128 x 128 blocks, MXFP4 experts (DeepSeek-V4 checkpoints)",
        matrix=MATRIX_STORAGE["fp8-block"], experts=MATRIX_STORAGE["mxfp4"],
    )
    for mix, desc in GGUF_MIXES.items():
        out[mix] = WeightFormat(mix, desc, gguf_mix=mix)
    return out


def get_weight_format(name: str) -> WeightFormat:
    """A weight format by name, case-insensitively where the case decides nothing ("BF16", the GGUF mix, is not
    "bf16", the checkpoint format); a GGUF mix also with `gguf_mixes.QKV_BRANCH_SUFFIX`."""
    formats = _weight_formats_cached()
    if name.strip() in formats:
        return formats[name.strip()]
    key = name.strip().lower()
    for known, fmt in formats.items():
        if known.lower() == key:
            return fmt
    if key.endswith(QKV_BRANCH_SUFFIX):
        base = get_weight_format(name.strip()[: -len(QKV_BRANCH_SUFFIX)])
        if base.gguf_mix is not None and base.gguf_mix not in ("F16", "BF16"):
            return WeightFormat(base.name + QKV_BRANCH_SUFFIX, base.description + ", fused attn_qkv by the older "
                                "quantizer's own branch", gguf_mix=base.gguf_mix + QKV_BRANCH_SUFFIX)
    raise InputError(f"unknown weight format {name!r}; known: {', '.join(formats)}")


@lru_cache(maxsize=1)
def _weight_formats_cached() -> dict[str, WeightFormat]:
    return weight_formats()


@lru_cache(maxsize=1024)
def tensor_bytes(a: Architecture, fmt: WeightFormat) -> tuple[tuple[Tensor, str, int], ...]:
    """(tensor, storage name, bytes) for every tensor of `a` stored in `fmt`.

    The "stored" format takes the exact bytes of an imported file's tensors."""
    if fmt.name == STORED:
        if not a.stored:
            raise InputError("weight format 'stored' needs a model imported from a safetensors or GGUF file")
        return tuple((Tensor(t.name, t.shape, Role(t.role), t.layer, t.storage), t.storage, t.nbytes) for t in a.stored)
    rows = []
    for t in gguf_tensors(a) if fmt.gguf_mix is not None else build_inventory(a):  # a GGUF file's own tensors
        s = fmt.storage_for(t, a)
        rows.append((t, s.name, s.nbytes(t.shape)))
    return tuple(rows)


def weight_bytes(a: Architecture, fmt: WeightFormat) -> int:
    """Exact bytes of all weights of `a` in `fmt` (sum over the tensor inventory)."""
    return sum(b for _, _, b in tensor_bytes(a, fmt))


def raw_weight_bytes(parameters: int, bits: float) -> float:
    """The seed's raw arithmetic: parameters x bits / 8, no scales or metadata."""
    return parameters * bits / 8


# --- KV cache formats -------------------------------------------------------------


@dataclass(frozen=True)
class KVFormat:
    """Storage of cached keys/values. `group` elements of one token's head vector share
    `group_bytes` of scale/zero data (0 = no per-group data). Sources: vLLM fp8 KV
    (one scale per layer, negligible); vLLM int8 per-token-head fp32 scales
    (`kv_cache_interface.py`); transformers' `QuantizedCache` int4 / int2 (quanto, q_group_size 64,
    a 16-bit scale and shift per group); llama.cpp `--cache-type-k/v` (ggml blocks of
    32 values: ggml/src/ggml-common.h `block_q8_0`, `block_q4_0`, `block_q4_1`, `block_q5_0`,
    `block_q5_1`, `block_iq4_nl`). `ggml` is the name llama.cpp takes for it
    (common/arg.cpp `kv_cache_types`, 0c1e570), empty where llama.cpp has no such cache."""

    name: str
    elem_bits: float
    group: int = 0
    group_bytes: float = 0.0
    vector_bytes: float = 0.0  # fixed bytes per cached head vector (per-token-head scale)
    description: str = ""
    ggml: str = ""
    flat_groups: bool = False  # groups of `group` consecutive values that run on across vectors (quanto's axis 0)
    packed_kv: tuple[int, int] = ()  # (key bits, value bits) of a head's K and V packed in one slot (TurboQuant)

    def bytes_per_vector(self, elements: int) -> float:
        """Bytes to store one cached head vector of `elements` values (one token, one layer)."""
        total = elements * self.elem_bits / 8 + self.vector_bytes
        if self.group:
            total += (elements / self.group if self.flat_groups else ceil(elements / self.group)) * self.group_bytes
        return total

    def head_bytes(self, k_elements: int, v_elements: int) -> float:
        """Bytes one KV head's K and V take for one token: the two vectors, or a TurboQuant slot (vLLM 0.34
        quantization/turboquant/config.py `TurboQuantConfig.slot_size_aligned`: FP8 keys or `key bits`-bit indices
        and an fp16 norm, `value bits`-bit values and an fp16 scale and zero, rounded up to an even size)."""
        if not self.packed_kv:
            return self.bytes_per_vector(k_elements) + self.bytes_per_vector(v_elements)
        key_bits, value_bits = self.packed_kv
        key = k_elements if key_bits == 8 else ceil(k_elements * key_bits / 8) + 2
        slot = key + ceil(k_elements * value_bits / 8) + 4
        return slot + slot % 2


KV_FORMATS: dict[str, KVFormat] = {
    "fp32": KVFormat("fp32", 32, description="32-bit float", ggml="f32"),
    "bf16": KVFormat("bf16", 16, description="bfloat16 (default of bf16 models)", ggml="bf16"),
    "fp16": KVFormat("fp16", 16, description="float16 (llama.cpp default f16)", ggml="f16"),
    "fp8": KVFormat("fp8", 8, description="FP8 e4m3/e5m2 with per-layer scales (vLLM --kv-cache-dtype fp8, "
                     "transformers QuantizedCache fp8)"),
    "int8": KVFormat("int8", 8, vector_bytes=4, description="INT8 with one fp32 scale per token and head "
                     "(vLLM int8_per_token_head)"),
    # vLLM 0.34's other per-token-head caches (`TritonAttentionBackend.customize_spec`: a head's K and V values, then
    # one fp32 scale each; int4 two values a byte) and NVFP4 (`FlashInferBackend.customize_spec`,
    # utils/torch_utils.py `nvfp4_kv_cache_full_dim`: head / 2 fp4 bytes and an fp8 scale per 16 values, K and V in
    # slots of their own)
    "fp8_pth": KVFormat("fp8_pth", 8, vector_bytes=4,
                        description="FP8 with one fp32 scale per token and head (vLLM fp8_per_token_head)"),
    "int4_pth": KVFormat("int4_pth", 4, vector_bytes=4,
                         description="INT4, two a byte, one fp32 scale per token and head (vLLM int4_per_token_head)"),
    "nvfp4": KVFormat("nvfp4", 4, group=16, group_bytes=1,
                      description="NVFP4: fp4 values and an fp8 scale per 16 (vLLM nvfp4)"),
    # vLLM 0.34's TurboQuant presets (engines/vllm_turboquant.py): K and V of a head in one slot (`head_bytes`;
    # elem_bits: the mean of the key and the value bits, the slot adds the norms and scales)
    **{name: KVFormat(name, (key + value) / 2, packed_kv=(key, value), description=f"vLLM TurboQuant: {what}")
       for name, key, value, what in (
           ("turboquant_k8v4", 8, 4, "FP8 keys, 4-bit values"),
           ("turboquant_4bit_nc", 4, 4, "4-bit keys and values, norm correction"),
           ("turboquant_k3v4_nc", 3, 4, "3-bit keys, 4-bit values, norm correction"),
           ("turboquant_3bit_nc", 3, 3, "3-bit keys and values, norm correction"))},
    # transformers' QuantizedCache on optimum-quanto (engines/transformers_cache.py): a scale and a shift in the
    # states' dtype for each 64 consecutive values, 16-bit here (an fp32 model's: the transformers engine's
    # `kv_storage`)
    "int4": KVFormat("int4", 4, group=64, group_bytes=4, flat_groups=True,
                     description="INT4, 16-bit scale + shift per 64 values (transformers QuantizedCache, quanto)"),
    "int2": KVFormat("int2", 2, group=64, group_bytes=4, flat_groups=True,
                     description="INT2, 16-bit scale + shift per 64 values (transformers QuantizedCache, quanto)"),
    "q8_0": KVFormat("q8_0", 8, group=32, group_bytes=2, description="llama.cpp q8_0 blocks (34 bytes / 32 values)",
                     ggml="q8_0"),
    "q5_1": KVFormat("q5_1", 5, group=32, group_bytes=4, description="llama.cpp q5_1 blocks (24 bytes / 32 values)",
                     ggml="q5_1"),
    "q5_0": KVFormat("q5_0", 5, group=32, group_bytes=2, description="llama.cpp q5_0 blocks (22 bytes / 32 values)",
                     ggml="q5_0"),
    "q4_1": KVFormat("q4_1", 4, group=32, group_bytes=4, description="llama.cpp q4_1 blocks (20 bytes / 32 values)",
                     ggml="q4_1"),
    "iq4_nl": KVFormat("iq4_nl", 4, group=32, group_bytes=2,
                       description="llama.cpp iq4_nl blocks (18 bytes / 32 values, non-linear levels)", ggml="iq4_nl"),
    "q4_0": KVFormat("q4_0", 4, group=32, group_bytes=2, description="llama.cpp q4_0 blocks (18 bytes / 32 values)",
                     ggml="q4_0"),
}
#: the cache types llama.cpp takes, memviz name -> llama.cpp's name
LLAMACPP_CACHE_TYPES: dict[str, str] = {k: f.ggml for k, f in KV_FORMATS.items() if f.ggml}


def get_kv_format(name: str) -> KVFormat:
    """A KV format by memviz's name, llama.cpp's (f16, f32) or torch's (float16, bfloat16)."""
    key = name.strip().lower()
    aliases = {"float16": "fp16", "bfloat16": "bf16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
               "int8_per_token_head": "int8", "fp8_per_token_head": "fp8_pth", "int4_per_token_head": "int4_pth"}
    aliases.update((ggml, k) for k, ggml in LLAMACPP_CACHE_TYPES.items())
    key = aliases.get(key, key)
    if key not in KV_FORMATS:
        raise InputError(f"unknown KV cache format {name!r}; known: {', '.join(KV_FORMATS)}")
    return KV_FORMATS[key]
