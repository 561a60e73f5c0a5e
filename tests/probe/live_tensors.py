"""Live-tensor accounting for tests: the bytes of tensor storages PyTorch ops create and that are still
referenced, op by op — the allocator-independent peak that the activation formula models (CPU RSS adds
glibc's retained heap on top, a caching allocator its reserve)."""

from __future__ import annotations

import weakref

import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode


class LiveTensors(TorchDispatchMode):
    """Tracks storages created inside the mode; `peak_bytes` is the most alive at once."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, list[int]] = {}  # storage address -> [bytes, tensor objects referencing it]
        self.current_bytes = 0
        self.peak_bytes = 0

    def _release(self, address: int) -> None:
        entry = self.live[address]
        entry[1] -= 1
        if entry[1] == 0:
            del self.live[address]
            self.current_bytes -= entry[0]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage().data_ptr() for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if not isinstance(t, torch.Tensor) or t.untyped_storage().data_ptr() == 0:
                continue
            storage = t.untyped_storage()
            address = storage.data_ptr()
            if address in inputs and address not in self.live:
                continue  # a view of a tensor made before the mode (a weight): not a new allocation
            if address in self.live:
                self.live[address][1] += 1
            else:
                self.live[address] = [storage.nbytes(), 1]
                self.current_bytes += storage.nbytes()
                self.peak_bytes = max(self.peak_bytes, self.current_bytes)
            weakref.finalize(t, self._release, address)
        return out
