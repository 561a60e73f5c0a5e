"""One model's weight tensors in one format as arrays, and where an engine's placement puts each of them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from memviz.core.arch import Architecture
from memviz.core.formats import tensor_bytes
from memviz.core.inventory import Role, active_fraction

if TYPE_CHECKING:  # the engines package imports this module
    from memviz.core.engines.base import Placement

_SPLIT_ROLES = frozenset({Role.ATTENTION, Role.MLP, Role.EXPERT, Role.EMBEDDING, Role.LM_HEAD})


@dataclass(frozen=True)
class TensorTable:
    """The inventory of one model in one weight format as arrays, for placing whole sets of tensors at once."""

    names: tuple[str, ...]
    roles: tuple[Role, ...]
    kinds: tuple[str, ...]  # `Tensor.kind`: q, kv_a, gate, ...
    nbytes: np.ndarray  # float64
    layer: np.ndarray  # -1 outside the decoder layers
    split: np.ndarray  # of a role tensor parallelism divides (`Engine.tp_shares` gives the engine's own)
    expert: np.ndarray
    embedding: np.ndarray  # the token embedding
    active: np.ndarray  # share read per decoded token (memviz.core.inventory.active_fraction)
    front: np.ndarray  # embedding or position table: kept with the first stage


@lru_cache(maxsize=256)
def tensor_table(a: Architecture, wf) -> TensorTable:
    rows = tensor_bytes(a, wf)
    in_layer = [t.layer is not None and t.layer < a.num_layers for t, _, _ in rows]
    return TensorTable(
        names=tuple(t.name for t, _, _ in rows),
        roles=tuple(t.role for t, _, _ in rows),
        kinds=tuple(t.kind for t, _, _ in rows),
        nbytes=np.array([b for _, _, b in rows], dtype=np.float64),
        layer=np.array([t.layer if inside else -1 for (t, _, _), inside in zip(rows, in_layer, strict=True)]),
        split=np.array([t.role in _SPLIT_ROLES for t, _, _ in rows]),
        expert=np.array([t.role is Role.EXPERT for t, _, _ in rows]),
        embedding=np.array([t.role is Role.EMBEDDING for t, _, _ in rows]),
        active=np.array([active_fraction(t, a) for t, _, _ in rows], dtype=np.float64),
        front=np.array([t.role in (Role.EMBEDDING, Role.POSITION) and not inside
                        for (t, _, _), inside in zip(rows, in_layer, strict=True)]))


def on_gpu(a: Architecture, tt: TensorTable, placement: Placement) -> np.ndarray:
    """Per tensor: loaded into GPU memory under `placement` (a tied output's GPU duplicate aside)."""
    gpu_layer = np.zeros(a.num_layers + 1, dtype=bool)  # the last slot: "no layer"
    gpu_layer[list(placement.gpu_layers)] = True
    host_expert = np.zeros(a.num_layers + 1, dtype=bool)
    host_expert[list(placement.host_expert_layers)] = True
    layer_idx = np.where(tt.layer >= 0, tt.layer, a.num_layers)
    forced_host = (np.array([n in placement.host_tensors for n in tt.names], dtype=bool) if placement.host_tensors
                   else np.zeros(len(tt.names), dtype=bool))
    return np.where(tt.layer >= 0, gpu_layer[layer_idx] & ~(tt.expert & host_expert[layer_idx]) & ~forced_host,
                    np.where(tt.front, placement.embed_on_gpu, placement.output_on_gpu))
