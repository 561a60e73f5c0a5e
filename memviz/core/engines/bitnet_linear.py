"""What a BitNet b1.58 checkpoint's linear layers hold in transformers, which loads a `quant_method` "bitnet"
checkpoint through `quantizers/quantizer_bitnet.py` and `integrations/bitnet.py` (huggingface/transformers 5.24,
read from its source; no GPU run here measured it):

- BitLinear (`linear_class` "bitlinear", BitNetQuantConfig's default): the stored packed weights (uint8, four
  ternary values a byte: out/4 x in) and a weight_scale in the model dtype stay as the file holds them (memviz's
  "bitnet" format); each forward unpacks the weight into an out x in matrix in the model dtype (`unpack_weights`)
  that lives while its matmul runs: the largest of a block's matrices on top of the block's activations.
- AutoBitLinear (`linear_class` "autobitlinear", offline): an nn.Linear whose weight `BitNetDeserialize` unpacks
  while loading ("packed checkpoints hold VALUES_PER_ITEM ternary rows per stored row") into the model dtype,
  beside its weight_scale buffer in that dtype: 2 bytes a value and 2 a matrix, nothing unpacked per call.
"""

from __future__ import annotations

from memviz.core.arch import Architecture
from memviz.core.formats import QUANTIZED_ROLES, STORED
from memviz.core.inventory import Role, Tensor, build_inventory

FORMAT = "bitnet"
UNPACKED_AT_LOAD = "autobitlinear"
VALUES_PER_BYTE = 4  # integrations/bitnet.py VALUES_PER_ITEM
STORED_PACKED = "U8"  # the safetensors dtype of a packed weight


def unpacked_at_load(a: Architecture) -> bool:
    """Whether transformers unpacks the checkpoint's weights while loading (AutoBitLinear)."""
    return a.native_format == FORMAT and a.native_linear_class == UNPACKED_AT_LOAD


def held_extra(a: Architecture, t: Tensor, storage: str, nbytes: int, act_bytes: int = 2) -> int:
    """Bytes transformers holds for tensor `t` beyond its `nbytes` in `storage`: AutoBitLinear's unpacked weight
    (and its scale, where the format counted it) in place of the packed one; 0 otherwise."""
    if not unpacked_at_load(a) or t.role not in QUANTIZED_ROLES:
        return 0
    if storage == FORMAT:  # the format's bytes include the matrix's scale, which stays in the model dtype
        return t.numel * act_bytes + act_bytes - nbytes
    if storage == STORED_PACKED:  # a packed tensor of the imported file (its scale is a tensor of its own)
        return nbytes * VALUES_PER_BYTE * act_bytes - nbytes
    return 0


def unpack_bytes(a: Architecture, weight_format: str, roles: frozenset[Role], act_bytes: int) -> int:
    """The largest unpacked weight a BitLinear forward of `roles` holds beside the activations: 0 unless the
    weights are held packed (the "bitnet" format, or an imported BitNet checkpoint not unpacked at load)."""
    packed = weight_format == FORMAT or (weight_format == STORED and a.native_format == FORMAT)
    if not packed or unpacked_at_load(a):
        return 0
    return max((t.numel * act_bytes for t in build_inventory(a) if t.role in roles and t.is_matrix), default=0)
