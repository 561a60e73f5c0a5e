"""The MoE routers vLLM 0.34 keeps in float32 (vllm-project/vllm 0.34.0, read from its PyPI wheel).

These classes build their gate as `GateLinear(..., params_dtype=torch.float32)` (model_executor/layers/fused_moe/
router/gate_linear.py, a `ReplicatedLinear`: whole on every rank) whatever the model's dtype, and glm4_moe.py its
e_score_correction_bias as a float32 parameter too: glm4_moe.py `Glm4MoE` (GLM-4.5 / 4.6 / 4.7, and GLM-4.7-Flash
through glm4_moe_lite.py, which builds it), minimax_m2.py, afmoe.py, ernie45_moe.py, hy_v3.py, step3p5.py,
param2moe.py, sarvam.py (router_dtype "fp32" by default) and longcat_flash.py (`LongcatFlashMoE.router_params_dtype`,
the router of LongCat-Flash-Lite too). mimo_v2.py takes the config's moe_router_dtype, "float32" where it names
none; bailing_moe.py takes Ling's router_dtype, float32 for "fp32" only ("bf16" and an absent one: the model's
dtype). DeepSeek-V2 / V3 ask for float32 logits only (`out_dtype`), their weights stay in the model's dtype.
"""

from __future__ import annotations

from memviz.core.arch import BAILING_TYPES, Architecture
from memviz.core.formats import WeightFormat, tensor_bytes

#: types whose vLLM class builds its gate in float32 whatever the config says
#: (memviz reads Param2-MoE, Sarvam-M and GLM-4.5V's text model as glm4_moe, LongCat-Flash-Lite as longcat_flash)
FLOAT32_ROUTER_TYPES = frozenset({"glm4_moe", "glm4_moe_lite", "minimax_m2", "afmoe", "ernie4_5_moe", "hy_v3",
                                  "step3p5", "longcat_flash"})
#: torch dtype names mimo_v2.py's `str_dtype_to_torch_dtype` reads as float32
_FLOAT32_NAMES = frozenset({"float32", "fp32"})


def float32_router(a: Architecture) -> bool:
    """Whether vLLM holds `a`'s router weights (and score bias) in float32."""
    if a.model_type in BAILING_TYPES:
        return a.router_dtype == "fp32"
    if a.model_type == "mimo_v2_flash":
        return (a.router_dtype or "float32") in _FLOAT32_NAMES
    return a.model_type in FLOAT32_ROUTER_TYPES


def upcast_bytes(a: Architecture, wf: WeightFormat, layers: range) -> float:
    """Bytes the float32 router weights and score biases of the layers `layers` add on every rank beyond what the
    checkpoint's format stores them in (4 bytes a value less the stored ones; none for a float32 scenario)."""
    if not float32_router(a):
        return 0.0
    return float(sum(4 * t.numel - nbytes for t, _, nbytes in tensor_bytes(a, wf)
                     if t.layer in layers and (t.name.endswith(".router.weight") or t.kind == "router_bias")))
