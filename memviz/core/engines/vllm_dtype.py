"""The dtype vLLM 0.34 computes and caches in (vllm-project/vllm 0.34.0, read from its PyPI wheel).

- `--dtype auto` takes the checkpoint's dtype, an fp32 checkpoint downcast to the platform's first dtype: bfloat16 on
  compute capability 8.0 and up, float16 below (config/model.py `_resolve_auto_dtype`; platforms/cuda.py
  `supported_dtypes`). A float32 or float16 scenario is asked for by name (`--dtype float32` / `float16`).
- Gemma 2, Gemma 3 and GLM-4 are refused in float16 (`_FLOAT16_NOT_SUPPORTED_MODELS`, "Numerical instability"), so
  below compute capability 8.0, where there is no bfloat16 (`CudaPlatform.check_if_supports_dtype`), "auto" runs
  them in float32: twice a 16-bit scenario's weights.
- `--kv-cache-dtype auto` caches in the model's dtype; `CacheDType` names bfloat16 and float16 but no float32, so a
  16-bit cache beside float32 weights is asked for by name and a float32 cache needs float32 weights.
"""

from __future__ import annotations

from typing import Any

from memviz.core.arch import Architecture
from memviz.core.errors import InputError

#: `_FLOAT16_NOT_SUPPORTED_MODELS`
FLOAT16_REFUSED = frozenset({"gemma2", "gemma3", "gemma3_text", "glm4"})
#: memviz's 16- and 32-bit formats by vLLM's --dtype / --kv-cache-dtype names
TORCH_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
#: `CudaPlatform.supported_dtypes`: bfloat16 from compute capability 8.0
BF16_CAPABILITY = (8, 0)


def check(a: Architecture, sc: Any) -> None:
    """What vLLM refuses or would run otherwise than the scenario says, in one line each."""
    cc = sc.compute_capability
    if a.model_type in FLOAT16_REFUSED and sc.weight_format == "fp16":
        raise InputError(f"vLLM refuses {a.name} ({a.model_type}) in float16 (numerical instability, "
                         "_FLOAT16_NOT_SUPPORTED_MODELS); choose bf16 or fp32 weights")
    if a.model_type in FLOAT16_REFUSED and sc.weight_format == "bf16" and cc is not None and cc < BF16_CAPABILITY:
        raise InputError(f"vLLM runs {a.name} ({a.model_type}) in float32 on compute capability {cc[0]}.{cc[1]}: no bfloat16 "
                         "there and float16 refused for it (_resolve_auto_dtype); choose fp32 weights")
    if sc.kv_format == "fp32" and sc.weight_format != "fp32":
        raise InputError("vLLM caches in the model's dtype or a quantized format (CacheDType has no float32): a "
                         "float32 cache comes with fp32 weights only")


def dtype_args(sc: Any) -> list[str]:
    """--dtype for a float32 or float16 scenario ("auto" gives bfloat16 to a bfloat16 or float32 checkpoint)."""
    return ["--dtype", TORCH_NAMES[sc.weight_format]] if sc.weight_format in ("fp32", "fp16") else []


def names_16_bit_cache(sc: Any) -> bool:
    """Whether a 16-bit cache must be named: beside float32 weights, where "auto" would cache in float32."""
    return sc.weight_format == "fp32" and sc.kv_format in ("bf16", "fp16")
