"""What vLLM (0.33 and 0.34 alike) holds of an AWQ or GPTQ checkpoint's linear layers, and the GPTQ checkpoints it refuses.

GPTQ at 4 or 8 bits (`AutoGPTQConfig.TYPE_MAP`: uint4b8, uint8b128; Machete and Marlin take both) and AutoRound's
integer checkpoints, which vLLM 0.34 runs through the same AutoGPTQ / AutoAWQ Marlin methods
(`quantization/inc/schemes/inc_wna16_linear.py` `INCWNA16LinearScheme._build_gptq_method`, desc_act False) follow
the same rules.

vLLM 0.33.0 (`model_executor/layers/quantization/auto_gptq.py`, `auto_awq.py`) picks the kernel with
`kernels/linear/__init__.py` `choose_mp_linear_kernel`, first that can on CUDA: Machete (compute capability 9.0
only: `mixed_precision/machete.py`), then Marlin (7.5 and up: `mixed_precision/marlin.py`).

- GPTQ: `AutoGPTQLinearMethod.create_weights` registers qweight, scales and qzeros and no g_idx, so the file's
  g_idx is not loaded; Marlin replaces a symmetric checkpoint's qzeros by an empty tensor (`marlin_make_empty`),
  Machete keeps them as loaded.
- AWQ: Marlin repacks the zero points into as many bytes; Machete pre-scales them into 16-bit values, K/128 x N
  (`transform_w_zp`).
- GPTQ with act-order (desc_act, groups smaller than the whole row) is refused:
  `quantization/utils/gptq_utils.py` `normalize_and_validate_gptq_desc_act` ("GPTQ group activation ordering
  (desc_act=True) is no longer supported").

- Experts (`AutoGPTQMoEMethod.create_weights`, `fused_moe/oracle/int_wna16.py` `_process_weights_marlin`): no
  g_idx either; their zero points are kept, permuted for the Marlin MoE kernel.

GPUs below 7.5, where the ExLlama or Triton kernels run, are taken as holding the file's bytes.
"""

from __future__ import annotations

from memviz.core.arch import Architecture
from memviz.core.engines.gptq_kernels import asymmetric, bits_of, method_of, modules
from memviz.core.errors import InputError
from memviz.core.gpus import MARLIN_MIN_CAPABILITY
from memviz.core.inventory import Role

MACHETE_CAPABILITY = (9, 0)


def check(a: Architecture, weight_format: str) -> None:
    """InputError for a GPTQ checkpoint vLLM 0.34 refuses to load: quantized with act-order, or with zero points
    (`AutoGPTQConfig.TYPE_MAP` and INC's `_build_gptq_method` take 4 or 8 bits symmetric only: "Unsupported
    quantization config: bits=4, sym=False")."""
    if method_of(a, weight_format) != "gptq":
        return
    if a.native_act_order:
        raise InputError("vLLM 0.34 refuses GPTQ checkpoints quantized with desc_act=True (group activation "
                         "ordering); use one with static activation ordering, or transformers")
    if asymmetric(a, weight_format):
        raise InputError("vLLM 0.34 refuses GPTQ-packed checkpoints with zero points (sym false): its GPTQ and "
                         "AutoRound paths take symmetric 4- or 8-bit values only; use transformers")


def held_bytes(a: Architecture, weight_format: str, capability: tuple[int, int] | None,
               layers: range) -> tuple[int, int]:
    """Bytes vLLM's kernel holds beyond the checkpoint's tensors of the linear layers in `layers` (negative: dropped;
    imported files' own bytes where given), all ranks together: (the MoE experts', the other layers'); 0 for other
    formats and GPUs below 7.5; an unnamed GPU is taken as Marlin's."""
    method = method_of(a, weight_format)
    if method is None or (capability is not None and capability < MARLIN_MIN_CAPABILITY):
        return 0, 0
    machete = capability == MACHETE_CAPABILITY
    experts = others = 0
    for m in modules(a, method, stored=weight_format == "stored", bits=bits_of(a, weight_format)):
        if m.layer is None or m.layer not in layers:
            continue
        if m.role is Role.EXPERT:  # the MoE method's zero points stay (Marlin-permuted); GPTQ's g_idx is not loaded
            experts -= m.g_idx_bytes * m.count
            continue
        gptq = -m.g_idx_bytes - (0 if machete else m.qzeros_bytes)  # no g_idx; Marlin: no qzeros
        awq = 3 * m.qzeros_bytes if machete else 0  # Machete: 16-bit zero points, 4x the packed int32 words
        others += (gptq if method == "gptq" else awq) * m.count
    return experts, others
