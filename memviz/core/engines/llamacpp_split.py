"""How llama.cpp spreads layers over several GPUs (`--split-mode layer`, its default) and what that costs.

llama.cpp 0c1e570, src/llama-model.cpp `llama_model::load_tensors`: the split points are the devices' shares
(`--tensor-split`, else each device's free memory), summed and normalised; of the `n_gpu_layers` offloaded
positions (the repeating layers from `i_gpu_start = n_layer + 1 - n_gpu_layers`, then the output layer), position
`il - i_gpu_start` goes to the first device whose split point exceeds `(il - i_gpu_start) / act_gpu_layers`
(`std::upper_bound`). Two equal GPUs and 48 layers: layers 0-24 on the first, 25-47 and the output on the second.
memviz takes equal shares unless `tensor_split` gives them (the free memory of identical GPUs differs only by what
else runs on them).

Pipeline parallelism (src/llama-context.cpp, `llama_context::llama_context`): with more than one device, every
layer and the output offloaded, `--split-mode layer`, the KV cache offloaded and no tensor override, the scheduler
keeps `GGML_SCHED_MAX_COPIES` (4) copies of each graph input and each split input on every backend
(ggml/src/ggml-backend.cpp `ggml_backend_sched_split_graph`: with n_copies > 1 they are leafs, allocated first and
never freed), so micro-batch k + 1's inputs can be uploaded while k runs. On each GPU that is the attention masks
(n_kv x n_ubatch, f16 with flash attention) and the n_ubatch rows of hidden state that cross from the previous
device, four times over where one of each lives in the graph without it. Unsloth's fit measured 4.0 GiB a device
for a 1M-token context on four GPUs (unslothai/unsloth pull request #7637: four f16 masks of 512 rows).
"""

from __future__ import annotations

import bisect

from memviz.core.errors import InputError

N_COPIES = 4  # ggml/src/ggml-backend.h GGML_SCHED_MAX_COPIES


def split_points(n_devices: int, tensor_split: str) -> list[float]:
    """The normalised cumulative shares of `--tensor-split` ("3,1"), equal when it is empty."""
    if not tensor_split:
        shares = [1.0] * n_devices
    else:
        try:
            shares = [float(s) for s in tensor_split.replace(";", ",").split(",")]
        except ValueError:
            raise InputError(f"tensor_split: {tensor_split!r} is not a list of numbers (e.g. '3,1')") from None
        if len(shares) != n_devices:
            raise InputError(f"tensor_split gives {len(shares)} shares for {n_devices} GPUs (pp)")
        if any(s < 0 for s in shares) or not sum(shares):
            raise InputError(f"tensor_split: {tensor_split!r} needs shares of zero or more, not all zero")
    total, points = sum(shares), []
    for s in shares:
        points.append((points[-1] if points else 0.0) + s)
    return [p / total for p in points]


def layer_devices(n_layers: int, n_devices: int, gpu_layers: int | None, tensor_split: str) -> list[range]:
    """The repeating layers each GPU holds (layers left on the CPU count with the first GPU's range; the caller
    places them), and the output layer with the device of position n_layers."""
    points = split_points(n_devices, tensor_split)
    ngl = n_layers + 1 if gpu_layers is None else min(gpu_layers, n_layers + 1)
    start = max(n_layers + 1 - ngl, 0)
    device = [0 if il < start or ngl == 0 else min(bisect.bisect_right(points, (il - start) / ngl), n_devices - 1)
              for il in range(n_layers)]
    edges = [0] + [sum(1 for d in device if d <= k) for k in range(n_devices)]
    return [range(edges[k], edges[k + 1]) for k in range(n_devices)]
