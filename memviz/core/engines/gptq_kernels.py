"""The kernel an AWQ or GPTQ checkpoint runs on in transformers, and what that kernel holds beside its weights.

transformers 5.24 loads both through gptqmodel: AWQ in `quantizers/quantizer_awq.py` (`replace_with_awq_linear`,
then `hf_gptqmodel_post_init`), GPTQ through optimum 2.3.0 (`optimum/gptq/quantizer.py`
`GPTQQuantizer.convert_model` with pack=False, then `post_init_model`). Followed here: gptqmodel 7.7.0
(ModelCloud/GPTQModel, October 2026), read from its sdist; no GPU run here measured it.

- Kernel (`gptqmodel/utils/importer.py` `select_quant_linear`, backend auto): the highest `SUPPORTS_FORMATS`
  priority valid on the device. GPTQ: Swordfish 101 (compute capability 10.0, 10.3, 11.0: `utils/swordfish.py`
  `_SWORDFISH_ARCH_FLAGS`), Machete 100 (9.0 only: `utils/machete.py`), Marlin 90 (7.5 and up: `utils/marlin.py`
  `_marlin_capability_supported`), ExLlamaV2 80 (4-bit); AWQ (GEMM format) the same four's AWQ classes. On the CPU
  the int4pack kernels (`torch_aten_kernel.py`, `torch_cpu_avx512.py`), on ROCm and Apple GPUs the Triton /
  PyTorch ones (`gemm_awq_triton.py`, `tritonv2.py`, `torch.py`; the four above declare CUDA only): taken as the
  checkpoint's bytes, no scratch.
- What each keeps after `post_init` (GPTQ taken as symmetric, as released GPTQ checkpoints mostly are):
  Marlin (`nn_modules/qlinear/marlin.py`) drops GPTQ's qzeros and, without act-order, its g_idx (with it: the
  sorted g_idx and its sort indices, int32 each), and gives every module a lock workspace of max(SMs, 128) int32
  (`marlin_make_workspace_new`); Machete (`machete.py`) and Swordfish (`swordfish.py`) drop GPTQ's qzeros and keep
  g_idx, Machete adding an int32 input permutation with act-order; for AWQ both turn the packed zero points into
  16-bit values (K/128 x N, `qzeros_fp`). ExLlamaV2 (`exllamav2.py`) keeps the file's tensors, adds int16 q_perm
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

from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.formats import QUANTIZED_ROLES, get_weight_format, tensor_bytes
from memviz.core.gguf_names import FUSED_GATE_UP, FUSED_QKV
from memviz.core.gpus import MARLIN_MIN_CAPABILITY
from memviz.core.inventory import Role
from memviz.core.units import Unit, format_bytes

METHODS = ("awq", "gptq")
KERNELS = ("auto", "swordfish", "machete", "marlin", "exllama_v2")
LABELS = {"swordfish": "Swordfish", "machete": "Machete", "marlin": "Marlin", "exllama_v2": "ExLlamaV2",
          "cpu": "CPU int4pack", "portable": "Triton / PyTorch"}
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
GROUP = 128  # the group size of memviz's awq-int4 / gptq-int4 formats


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


def method_of(a: Architecture, weight_format: str) -> str | None:
    """"awq" or "gptq" when the weights are such a checkpoint (its format named, or its files imported), else None."""
    for m in METHODS:
        if weight_format == f"{m}-int4" or (weight_format == "stored" and a.native_quantizer == m):
            return m
    return None


def modules(a: Architecture, method: str, stored: bool = False) -> tuple[Module, ...]:
    """The linear layers the checkpoint quantizes: its imported files' (`stored`), else as memviz's format for
    `method` lays them out (groups of 128); q / k / v and gate / up as one module where the model's checkpoints hold
    them so (`FUSED_QKV`, `FUSED_GATE_UP`: Phi-3's qkv_proj and gate_up_proj, GPT-NeoX's query_key_value, ...)."""
    if stored:
        return _stored_modules(a, method)
    fmt = get_weight_format(f"{method}-int4")
    fused = {**dict.fromkeys(("q", "k", "v") if a.model_type in FUSED_QKV else (), "qkv"),
             **dict.fromkeys(("gate", "up") if a.model_type in FUSED_GATE_UP else (), "gate_up")}
    out: dict[tuple[Any, ...], Module] = {}
    for i, (t, storage, _) in enumerate(tensor_bytes(a, fmt)):
        if storage == fmt.matrix.name and t.role in QUANTIZED_ROLES and t.is_matrix:
            count = t.numel // (t.shape[-1] * t.shape[-2])
            key = (t.layer, fused[t.kind]) if t.kind in fused else (i,)
            k, n = t.shape[-1], t.shape[-2] + (out[key].n if key in out else 0)
            out[key] = Module(k, n, count, t.role, t.layer, -(-k // GROUP) * n // 2, k * 4 if method == "gptq" else 0)
    return tuple(out.values())


def _stored_modules(a: Architecture, method: str) -> tuple[Module, ...]:
    """The modules of imported AWQ / GPTQ files, from each `<module>.qweight` (int32: GPTQ [K/8, N], AWQ [K, N/8])
    and the bytes of its `.qzeros` and `.g_idx` as stored."""
    nbytes = {t.name: t.nbytes for t in a.stored}
    out = []
    for t in a.stored:
        if t.name.endswith(".qweight") and len(t.shape) == 2:
            prefix = t.name.removesuffix(".qweight")
            k, n = (t.shape[0] * 8, t.shape[1]) if method == "gptq" else (t.shape[0], t.shape[1] * 8)
            out.append(Module(k, n, 1, Role(t.role), t.layer, nbytes.get(f"{prefix}.qzeros", 0),
                              nbytes.get(f"{prefix}.g_idx", 0)))
    return tuple(out)


def select(method: str, device: str, capability: tuple[int, int] | None, choice: str, nvidia: bool = True) -> str:
    """The kernel gptqmodel runs `method` on (`choice` "auto": its own pick; an unnamed GPU is taken as NVIDIA 7.5 or
    newer, not Hopper or Blackwell: Marlin), or InputError where the chosen one cannot run. On a GPU that is not
    NVIDIA's (`nvidia` False: ROCm, Apple) the CUDA kernels are out (each declares SUPPORTS_DEVICES CUDA only)."""
    if device == "cpu" or not nvidia:
        if choice != "auto":
            where = "on the CPU" if device == "cpu" else "on a GPU that is not NVIDIA's"
            raise InputError(f"quant_kernel {choice} is a CUDA kernel: {where} gptqmodel runs a portable one "
                             "(choose auto)")
        return "cpu" if device == "cpu" else "portable"
    if choice == "auto":
        if capability is None:
            return "marlin"
        for kernel, caps in _RUNS_ON.items():
            if capability in caps:
                return kernel
        return "marlin" if capability >= MARLIN_MIN_CAPABILITY else "exllama_v2"
    if method == "awq" and choice not in AWQ_BACKENDS:
        raise InputError(f"quant_kernel {choice} cannot be named for AWQ: transformers 5.24's AwqConfig has no such "
                         "backend (choose auto, which picks it where it runs)")
    runs = _RUNS_ON.get(choice)
    if capability is not None and ((runs and capability not in runs)
                                   or (choice == "marlin" and capability < MARLIN_MIN_CAPABILITY)):
        need = " or ".join(f"{c[0]}.{c[1]}" for c in runs) if runs else "7.5 or more"
        raise InputError(f"quant_kernel {choice} needs compute capability {need}; this GPU has "
                         f"{capability[0]}.{capability[1]}")
    return choice


def held_bytes(method: str, kernel: str, mods: tuple[Module, ...], act_order: bool) -> int:
    """Bytes the kernel's modules hold beyond the checkpoint's tensors after `post_init` (negative: dropped)."""
    total = 0
    for m in mods:
        qzeros, g_idx = m.qzeros_bytes, m.g_idx_bytes
        if method == "gptq" and kernel == "marlin":
            one = -qzeros + (g_idx if act_order else -g_idx) + MARLIN_WORKSPACE_BYTES
        elif method == "gptq" and kernel in ("machete", "swordfish"):
            one = -qzeros + (m.k * 4 if act_order and kernel == "machete" else 0)
        elif method == "awq" and kernel in ("machete", "swordfish"):
            one = 3 * qzeros  # int32 words of 8 zero points become 8 16-bit values
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
