"""The kernel an AWQ or GPTQ checkpoint runs on in transformers, and what that kernel holds beside its weights.

transformers 5.24 loads both through gptqmodel: AWQ in `quantizers/quantizer_awq.py` (`replace_with_awq_linear`,
then `hf_gptqmodel_post_init`), GPTQ through optimum 2.3.0 (`optimum/gptq/quantizer.py`
`GPTQQuantizer.convert_model` with pack=False, then `post_init_model`). Followed here: gptqmodel 7.7.0
(ModelCloud/GPTQModel, October 2026), read from its sdist; no GPU run here measured it.

- Kernel (`gptqmodel/utils/importer.py` `select_quant_linear`, backend auto): the highest `SUPPORTS_FORMATS`
  priority valid on the device. GPTQ: Swordfish 101 (compute capability 10.0, 10.3, 11.0: `utils/swordfish.py`
  `_SWORDFISH_ARCH_FLAGS`), Machete 100 (9.0 only: `utils/machete.py`), Marlin 90 (7.5 and up: `utils/marlin.py`
  `_marlin_capability_supported`), ExLlamaV2 80 (4-bit); AWQ (GEMM format) the same four's AWQ classes. Each
  declares the widths and zero points it takes (`SUPPORTS_BITS`: 4 and 8 but ExLlamaV2's 4; `SUPPORTS_SYM`:
  Marlin symmetric only), so an 8-bit checkpoint below 7.5 or one with zero points and 8 bits off Hopper and
  Blackwell falls to the Triton / PyTorch kernels. On the CPU the int4pack kernels (`torch_aten_kernel.py`,
  `torch_cpu_avx512.py`; 8 bits: PyTorch's, `torch.py`), on ROCm and Apple GPUs the Triton / PyTorch ones
  (`gemm_awq_triton.py`, `tritonv2.py`, `torch.py`; the four above declare CUDA only): taken as the checkpoint's
  bytes, no scratch. AutoRound checkpoints load through auto-round's own pick (`AUTOROUND_BACKENDS`: gptqmodel's
  Marlin, else ExLlamaV2; on the CPU its ARK or PyTorch kernels, taken as the checkpoint's bytes).
- What each keeps after `post_init`: Marlin (`nn_modules/qlinear/marlin.py`) drops GPTQ's qzeros and, without
  act-order, its g_idx (with it: the sorted g_idx and its sort indices, int32 each), and gives every module a lock
  workspace of max(SMs, 128) int32 (`marlin_make_workspace_new`); Machete (`machete.py`) and Swordfish
  (`swordfish.py`) drop a symmetric GPTQ checkpoint's qzeros (one with zero points: turned into 16-bit values,
  K/128 x N, `qzeros_fp`) and keep g_idx, Machete adding an int32 input permutation with act-order; for AWQ both
  turn the packed zero points into 16-bit values. ExLlamaV2 (`exllamav2.py`) keeps the file's tensors, adds int16 q_perm
  and q_invperm (K each) to every GPTQ module, and `gptqmodel_post_init` allocates one scratch per device: the
  largest module's `scratch_space_fixed` = K x N x 2 + N x 2,048 x batch x 4 bytes (+ 256), batch 8 for GPTQ and
  AWQ_BATCH_SIZE (1) for AWQ.
- Per call: Marlin reduces in fp32 (GPTQMODEL_MARLIN_USE_FP32 on) into c_tmp of SMs x min(M rounded to 16, 64) x
  256 floats (`gptqmodel_ext/marlin/marlin_scratch.cuh` `marlin_scratch_sizes_checked`); with act-order Marlin
  (a_tmp), Machete and Swordfish (`input_2d[:, perm]`) copy the M x K input.

SMs are taken as 128 (Marlin's workspace floor): a GPU of more holds 4 bytes a module and 64 KiB of c_tmp more
per SM beyond it (a 170-SM RTX 5090: 2.6 MiB of c_tmp more).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from memviz.core.arch import GPTQ_GROUP, Architecture
from memviz.core.errors import InputError
from memviz.core.formats import QUANTIZED_ROLES, get_weight_format, tensor_bytes
from memviz.core.gguf_names import FUSED_GATE_UP, FUSED_QKV
from memviz.core.gpus import MARLIN_MIN_CAPABILITY
from memviz.core.inventory import Role
from memviz.core.units import Unit, format_bytes

METHODS = ("awq", "gptq")
KERNELS = ("auto", "swordfish", "machete", "marlin", "exllama_v2")
LABELS = {"swordfish": "Swordfish", "machete": "Machete", "marlin": "Marlin", "exllama_v2": "ExLlamaV2",
          "cpu": "CPU int4pack", "portable": "Triton / PyTorch", "autoround_cpu": "auto-round's CPU (ARK / PyTorch)"}
#: the kernels AwqConfig(backend=...) accepts (transformers 5.24 utils/quantization_config.py `AwqBackend`: no
#: Swordfish, which gptqmodel's auto still picks for AWQ on 10.x / 11.0); GPTQConfig passes any gptqmodel name,
#: which `normalize_backend` maps to the method's kernel ("marlin" -> gptq_marlin)
AWQ_BACKENDS = ("auto", "machete", "marlin", "exllama_v2")
#: the only compute capabilities Swordfish and Machete run on (Marlin: MARLIN_MIN_CAPABILITY and up)
_RUNS_ON = {"swordfish": ((10, 0), (10, 3), (11, 0)), "machete": ((9, 0),)}
SMS = 128  # Marlin's workspace floor (`marlin_make_workspace_new`: max(SMs, 128)), the SM count taken for every GPU
MARLIN_WORKSPACE_BYTES = SMS * 4  # a module's int32 lock workspace
MARLIN_THREAD_N = 256  # `max_thread_n`, gptqmodel_ext/marlin/marlin.cuh
EXLLAMA_INPUT_TOKENS = 2048  # `scratch_space_fixed(max_input_len=2048, ...)`
EXLLAMA_BATCH = {"gptq": 8, "awq": 1}  # ExllamaV2Linear's default max_batch_size; AWQ_BATCH_SIZE's default
#: the widths each CUDA kernel takes (gptqmodel 7.7.0 `SUPPORTS_BITS`: ExLlamaV2 4 only) and whether it takes GPTQ
#: checkpoints with zero points (`SUPPORTS_SYM`: Marlin symmetric only)
_BITS = {"swordfish": (4, 8), "machete": (4, 8), "marlin": (4, 8), "exllama_v2": (4,)}
_ASYMMETRIC = ("swordfish", "machete", "exllama_v2")
#: the gptqmodel kernels intel/auto-round 0.16 runs an AutoRound checkpoint on, as transformers 5.25 loads it
#: (`quantizer_auto_round.py` -> auto_round's `convert_hf_model`): its CUDA backends by priority for the GPTQ and the
#: AWQ packing (`inference/backend.py`: gptqmodel:marlin(_zp) / awq_marlin 6, gptqmodel:exllamav2 / awq_exllamav2 5;
#: no Machete or Swordfish backend), with their names for AutoRoundConfig(backend=...)
AUTOROUND_BACKENDS = {"gptq": {"marlin": "gptqmodel:marlin", "exllama_v2": "gptqmodel:exllamav2"},
                      "awq": {"marlin": "gptqmodel:awq_marlin", "exllama_v2": "gptqmodel:awq_exllamav2"}}


@dataclass(frozen=True)
class Module:
    """One quantized linear layer: K inputs, N outputs, how many of this shape, its role and decoder layer, and the
    bytes its packed zero points (qzeros) and GPTQ's g_idx take in the checkpoint (each of the `count`)."""

    k: int
    n: int
    count: int
    role: Role
    layer: int | None
    qzeros_bytes: int
    g_idx_bytes: int


@dataclass(frozen=True)
class Checkpoint:
    """An AWQ / GPTQ checkpoint as a kernel runs it: its method, the kernel, its quantized modules, act-order, the
    values' width and whether a GPTQ checkpoint carries zero points (sym false)."""

    method: str
    kernel: str
    modules: tuple[Module, ...]
    act_order: bool
    bits: int = 4
    asym: bool = False


def format_of(a: Architecture, weight_format: str) -> str:
    """The memviz format the weights are in: the one named, or for imported files the checkpoint's own."""
    return a.native_format if weight_format == "stored" else weight_format


def method_of(a: Architecture, weight_format: str) -> str | None:
    """"awq" or "gptq" when the weights are such a checkpoint (its format named, or its files imported: GPTQ's and
    AutoRound's GPTQ packing, AWQ's), else None."""
    fmt = format_of(a, weight_format)
    return next((m for m in METHODS if fmt.startswith(f"{m}-int")), None)


def bits_of(a: Architecture, weight_format: str) -> int:
    """The width of an AWQ / GPTQ checkpoint's values: 8 for gptq-int8, else 4."""
    return 8 if format_of(a, weight_format) == "gptq-int8" else 4


def asymmetric(a: Architecture, weight_format: str) -> bool:
    """The weights are a GPTQ checkpoint with zero points (sym false), as released."""
    return a.native_asymmetric and weight_format in ("stored", a.native_format)


def autoround(a: Architecture, weight_format: str) -> bool:
    """The weights are an AutoRound checkpoint (quant_method auto-round), as released."""
    return a.native_quantizer == "auto-round" and weight_format in ("stored", a.native_format)


def modules(a: Architecture, method: str, stored: bool = False, bits: int = 4) -> tuple[Module, ...]:
    """The linear layers the checkpoint quantizes: its imported files' (`stored`), else as memviz's format for
    `method` at `bits` lays them out (groups of 128); q / k / v and gate / up as one module where the model's
    checkpoints hold them so (`FUSED_QKV`, `FUSED_GATE_UP`: Phi-3's qkv_proj and gate_up_proj, GPT-NeoX's
    query_key_value, ...)."""
    if stored:
        return _stored_modules(a, method, bits)
    fmt = get_weight_format(f"{method}-int{bits}")
    fused = {**dict.fromkeys(("q", "k", "v") if a.model_type in FUSED_QKV else (), "qkv"),
             **dict.fromkeys(("gate", "up") if a.model_type in FUSED_GATE_UP else (), "gate_up")}
    out: dict[tuple[Any, ...], Module] = {}
    for i, (t, storage, _) in enumerate(tensor_bytes(a, fmt)):
        if storage == fmt.matrix.name and t.role in QUANTIZED_ROLES and t.is_matrix:
            count = t.numel // (t.shape[-1] * t.shape[-2])
            key = (t.layer, fused[t.kind]) if t.kind in fused else (i,)
            k, n = t.shape[-1], t.shape[-2] + (out[key].n if key in out else 0)
            out[key] = Module(k, n, count, t.role, t.layer, -(-k // GPTQ_GROUP) * n * bits // 8,
                              k * 4 if method == "gptq" else 0)
    return tuple(out.values())


def _stored_modules(a: Architecture, method: str, bits: int) -> tuple[Module, ...]:
    """The modules of imported AWQ / GPTQ files, from each `<module>.qweight` (int32 of 32 / bits values: GPTQ
    [K x bits / 32, N], AWQ [K, N x bits / 32]) and the bytes of its `.qzeros` and `.g_idx` as stored."""
    nbytes = {t.name: t.nbytes for t in a.stored}
    per_word = 32 // bits
    out = []
    for t in a.stored:
        if t.name.endswith(".qweight") and len(t.shape) == 2:
            prefix = t.name.removesuffix(".qweight")
            k, n = (t.shape[0] * per_word, t.shape[1]) if method == "gptq" else (t.shape[0], t.shape[1] * per_word)
            out.append(Module(k, n, 1, Role(t.role), t.layer, nbytes.get(f"{prefix}.qzeros", 0),
                              nbytes.get(f"{prefix}.g_idx", 0)))
    return tuple(out)


def select(method: str, device: str, capability: tuple[int, int] | None, choice: str, nvidia: bool = True,
           bits: int = 4, asym: bool = False, auto_round: bool = False) -> str:
    """The kernel gptqmodel runs `method` at `bits` on (`asym`: a GPTQ checkpoint with zero points; `auto_round`: an
    AutoRound checkpoint, which auto-round places on `AUTOROUND_BACKENDS` only; `choice` "auto": the first of
    Swordfish, Machete, Marlin, ExLlamaV2 that takes the checkpoint, else a Triton / PyTorch one; an unnamed GPU is
    taken as NVIDIA 7.5 or newer, not Hopper or Blackwell), or InputError where the chosen one cannot run. On a GPU
    that is not NVIDIA's (`nvidia` False: ROCm, Apple) the CUDA kernels are out (each declares SUPPORTS_DEVICES
    CUDA only)."""
    if device == "cpu" or not nvidia:
        if choice != "auto":
            where = "on the CPU" if device == "cpu" else "on a GPU that is not NVIDIA's"
            raise InputError(f"quant_kernel {choice} is a CUDA kernel: {where} gptqmodel runs a portable one "
                             "(choose auto)")
        if device == "cpu" and auto_round:  # auto-round 0.16's CPU backends: auto_round_kernel (ARK), else torch
            return "autoround_cpu"
        return "cpu" if device == "cpu" and bits == 4 else "portable"  # the int4pack kernels: SUPPORTS_BITS [4]
    pool = tuple(AUTOROUND_BACKENDS[method]) if auto_round else KERNELS[1:]
    if choice == "auto":
        return next((k for k in pool if _takes(k, capability or MARLIN_MIN_CAPABILITY, bits, asym)), "portable")
    if choice not in pool:
        raise InputError(f"quant_kernel {choice} is not one auto-round 0.16 runs an AutoRound checkpoint on "
                         f"({', '.join(pool)}); choose auto")
    if method == "awq" and choice not in AWQ_BACKENDS:
        raise InputError(f"quant_kernel {choice} cannot be named for AWQ: transformers 5.24's AwqConfig has no such "
                         "backend (choose auto, which picks it where it runs)")
    if bits not in _BITS[choice] or (asym and choice not in _ASYMMETRIC):
        what = f"{bits}-bit values" if bits not in _BITS[choice] else "GPTQ zero points (sym false)"
        raise InputError(f"quant_kernel {choice} does not take {what} (gptqmodel 7.7.0); choose auto")
    runs = _RUNS_ON.get(choice)
    if capability is not None and not _takes(choice, capability, bits, asym):
        need = " or ".join(f"{c[0]}.{c[1]}" for c in runs) if runs else "7.5 or more"
        raise InputError(f"quant_kernel {choice} needs compute capability {need}; this GPU has "
                         f"{capability[0]}.{capability[1]}")
    return choice


def _takes(kernel: str, capability: tuple[int, int], bits: int, asym: bool) -> bool:
    """`kernel` runs on `capability` and takes the checkpoint's width and zero points."""
    runs = _RUNS_ON.get(kernel)
    on_gpu = capability in runs if runs else kernel != "marlin" or capability >= MARLIN_MIN_CAPABILITY
    return on_gpu and bits in _BITS[kernel] and (not asym or kernel in _ASYMMETRIC)


def held_bytes(method: str, kernel: str, mods: tuple[Module, ...], act_order: bool, bits: int = 4,
               asym: bool = False) -> int:
    """Bytes the kernel's modules hold beyond the checkpoint's tensors after `post_init` (negative: dropped; `asym`:
    a GPTQ checkpoint with zero points)."""
    total = 0
    widened = 16 // bits - 1  # zero points of `bits` become 16-bit values (`qzeros_fp`)
    for m in mods:
        qzeros, g_idx = m.qzeros_bytes, m.g_idx_bytes
        if method == "gptq" and kernel == "marlin":
            one = -qzeros + (g_idx if act_order else -g_idx) + MARLIN_WORKSPACE_BYTES
        elif method == "gptq" and kernel in ("machete", "swordfish"):
            one = (widened * qzeros if asym else -qzeros) + (m.k * 4 if act_order and kernel == "machete" else 0)
        elif method == "awq" and kernel in ("machete", "swordfish"):
            one = widened * qzeros  # int32 words of 8 zero points become 8 16-bit values
        elif kernel == "marlin":
            one = MARLIN_WORKSPACE_BYTES
        elif method == "gptq" and kernel == "exllama_v2":
            one = m.k * 4
        else:
            one = 0
        total += one * m.count
    return total


def scratch_bytes(method: str, kernel: str, mods: tuple[Module, ...]) -> int:
    """ExLlamaV2's scratch, one per device and held from loading on; 0 for the other kernels."""
    if kernel != "exllama_v2" or not mods:
        return 0
    batch = EXLLAMA_BATCH[method]
    fixed = max(m.k * m.n * 2 + 128 + m.n * EXLLAMA_INPUT_TOKENS * batch * 4 + 128 for m in mods)
    return fixed // 2 * 2  # `ScratchSpace`: scratch_bytes // 2 halves


def call_bytes(kernel: str, mods: tuple[Module, ...], roles: frozenset[Role], tokens: Any, act_order: bool,
               act_bytes: int) -> Any:
    """The largest transient one call of a module in `roles` allocates over `tokens` input rows (array-like)."""
    ks = [m.k for m in mods if m.role in roles]
    if not ks or kernel not in ("marlin", "machete", "swordfish"):
        return 0
    tokens = np.asarray(tokens)
    c_tmp = SMS * np.minimum((tokens + 15) // 16 * 16, 64) * MARLIN_THREAD_N * 4 if kernel == "marlin" else 0
    return c_tmp + (tokens * max(ks) * act_bytes if act_order else 0)


def describe(facts: dict[str, Any], unit: Unit) -> str:
    """The kernel and its scratch (`Transformers.facts`) in words, as the CLI and the Markdown report say them."""
    scratch = facts["quant_scratch_bytes"]
    held = f"; its scratch holds {format_bytes(scratch, unit)} from loading on" if scratch else ""
    order = " (act-order: each call copies its input)" if facts["quant_act_order"] else ""
    return f"AWQ / GPTQ layers on gptqmodel's {facts['quant_kernel']} kernel{order}{held}"
