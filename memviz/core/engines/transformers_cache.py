"""The KV caches transformers keeps, as huggingface/transformers 5.25 builds them (src/transformers/cache_utils.py;
generation/utils.py `_prepare_cache_for_generation`).

- `DynamicCache`, the default: K and V in the model's compute dtype, so the cache format is that dtype (bf16 / fp16
  for 16-bit and quantized weights, fp32 for an fp32 model); a cache of another width is not one transformers keeps.
- `QuantizedCache`, asked for with `generate(cache_implementation="quantized", cache_config={...})`:
  - backend "quanto" (optimum-quanto; memviz KV `int4` / `int2`): `QuantoQuantizedLayer`, nbits 4 or 2, MaxOptimizer's
    scale and shift in the model's dtype for each q_group_size (64) consecutive values (axis 0: the groups run
    along the head vectors), 0.5 / 0.25 byte a value and 4 bytes a group; the newest tokens wait in the model's
    dtype until residual_length (128) of them are there (`QuantizedLayer.update` quantizes when residual + new
    >= 128), so a sequence holds up to 127 of them unquantized;
  - backend "fp8" (memviz KV `fp8`): `Fp8QuantizedLayer`, float8_e4m3fn appended as it comes, one fp32 scale per
    layer for K and one for V, no residual;
  - backend "hqq" is not modelled (its own bit packing).
  `QuantizedCache` takes models whose layers are all full attention ("`QuantizedCache` is only supported for models
  with only full attention layers"); memviz does not model an MLA latent in it.
- A decode step's `update` dequantizes the layer's whole cache and concatenates it with the residual and the new
  token; beyond the cache it holds, for each value of the layer's K (`update_bytes_per_k_value`): with quanto the
  dequantized and the returned K and V, 4 values in the model's dtype; with fp8 the returned K, V upcast to float32
  and scaled (8 bytes), and the FP8 K and V the new token replaced, which the update's locals keep until it returns
  (2 bytes).

Measured with transformers 5.25 and optimum-quanto 0.2.7 on this project's CPU (scripts/transformers_quantized_cache.py,
tests/data/probe/transformers_quantized_cache.json): the stored tensors' bytes after a prompt and decode steps, and
the peak resident memory a decode step's update adds over the cache it holds.
"""

from __future__ import annotations

import json

import numpy as np

from memviz.core.arch import FULL, Architecture
from memviz.core.errors import InputError

#: memviz's KV format -> (QuantizedCache backend, nbits)
QUANTIZED_CACHES: dict[str, tuple[str, int]] = {"int4": ("quanto", 4), "int2": ("quanto", 2), "fp8": ("fp8", 8)}
#: `QuantizedLayer.residual_length` (128) less one: the most tokens a sequence holds unquantized (quanto)
RESIDUAL_TOKENS = 127
#: `Fp8QuantizedLayer`'s per-tensor scales, one fp32 for K and one for V in each layer
FP8_SCALE_BYTES = 2 * 4
#: the compute dtype's own cache format, by bytes a value
NATIVE = {2: ("bf16", "fp16"), 4: ("fp32",)}


def check(a: Architecture, kv_format: str, act_bytes: int) -> None:
    """A cache transformers keeps for `a` computing in `act_bytes`-wide values, or one clear error."""
    if kv_format in NATIVE[act_bytes]:
        return
    native = "/".join(NATIVE[act_bytes])
    if kv_format not in QUANTIZED_CACHES:
        raise InputError(f"transformers keeps its cache in the model's compute dtype ({native}) or quantized by "
                         f"QuantizedCache (int4 / int2: quanto, fp8); it has no {kv_format} cache")
    others = sorted({kind for kind in a.layer_types if kind != FULL})
    if others:
        raise InputError(f"transformers' QuantizedCache takes models of full-attention layers only; {a.name} has "
                         f"{', '.join(others)} layers")
    if a.is_mla:
        raise InputError("memviz does not model transformers' QuantizedCache over an MLA latent; use a 16-bit cache")


def backend(kv_format: str) -> str | None:
    """The QuantizedCache backend of a format, or None for the compute dtype's own cache."""
    return QUANTIZED_CACHES[kv_format][0] if kv_format in QUANTIZED_CACHES else None


def update_bytes_per_k_value(kv_format: str, act_bytes: int) -> int:
    """What a decode step's update holds beyond the cache, per value of the layer's K (module docstring): 8 / 16
    bytes with quanto in bf16 / fp32, 12 / 14 with fp8, as measured."""
    return 4 * act_bytes if backend(kv_format) == "quanto" else act_bytes + 8 + 2


def residual_tokens(tokens: np.ndarray) -> np.ndarray:
    """Tokens of `tokens`-long sequences a quanto cache keeps unquantized at worst: min(127, tokens - 1) (the prompt
    is quantized whole by the first update)."""
    return np.clip(np.asarray(tokens) - 1, 0, RESIDUAL_TOKENS)


def generate_line(kv_format: str) -> str:
    """The launch command's comment on the cache `generate` keeps (empty for the default DynamicCache)."""
    name = backend(kv_format)
    if name is None:
        return ""
    config = {"backend": name, **({"nbits": QUANTIZED_CACHES[kv_format][1]} if name == "quanto" else {})}
    install = "  # pip install optimum-quanto" if name == "quanto" else ""
    return f'# generate(..., cache_implementation="quantized", cache_config={json.dumps(config)}){install}'
