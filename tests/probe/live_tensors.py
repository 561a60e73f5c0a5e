"""Live-tensor accounting for tests: the bytes of tensor storages PyTorch ops create and that are still
referenced, op by op — the allocator-independent peak that the activation formula models (CPU RSS adds
glibc's retained heap on top, a caching allocator its reserve)."""

from __future__ import annotations

import weakref

import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.probe.runner import addressed_bytes, cache_keyword, cache_tensors, hf_config


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


def live_prefill(cfg: dict, dtype: str, attention: str | None, batch: int, prompt: int) -> tuple[int, int]:
    """(peak bytes of live tensors beyond the cache, bytes the cache holds) of one real prefill of `cfg` in `dtype`,
    `attention` the implementation asked for (None: transformers' own pick)."""
    from transformers import AutoModelForCausalLM, DynamicCache

    torch_dtype = torch.float32 if dtype == "fp32" else torch.bfloat16
    model = AutoModelForCausalLM.from_config(hf_config(cfg), dtype=torch_dtype,
                                             **({"attn_implementation": attention} if attention else {})).eval()
    ids = torch.randint(3, model.config.vocab_size, (batch, prompt), generator=torch.Generator().manual_seed(0))
    cache = DynamicCache(config=model.config)
    with torch.inference_mode(), LiveTensors() as live:
        model(input_ids=ids, **{cache_keyword(model): cache}, use_cache=True, logits_to_keep=1)
    held = addressed_bytes(cache_tensors(cache))  # the cache proper is not a transient
    return live.peak_bytes - held, held


def estimated(cfg: dict, dtype: str, attention: str | None, batch: int, prompt: int) -> dict[str, float]:
    """memviz's transformers estimate of the same prefill, by component."""
    sc = Scenario(weight_format=dtype, kv_format=dtype, context_tokens=prompt, batch=batch, device="cpu",
                  engine="transformers", attention=attention)
    return estimate(from_hf_config(cfg), sc).bytes
