"""Speed bounds (capacity and speed are two questions, seed 000).

Roofline lower bounds on time, never predictions:

- decode: each step must read the active weights and every cached K/V once, so
  time per step >= (active weight bytes + KV bytes) / memory bandwidth (MQA paper,
  Shazeer 2019, on the bandwidth cost of incremental decoding); MoE reads top-k
  experts only; tensor-parallel ranks read their shares at the same time; weights
  the engine dequantized while loading are read as their 16-bit copies;
- offloaded layers (llama.cpp `-ngl`, accelerate's device_map): the host's share
  of the weights is read once per step from host memory, by the CPU (llama.cpp
  computes those layers there: dual-channel DDR5-5600, 89.6 GB/s) or over PCIe
  4.0 x16 to the GPU (accelerate streams them: 31.5 GB/s, the PCI-SIG figure);
- prefill: time >= FLOPs / peak FLOP/s with FLOPs = 2 x active parameters x tokens
  + causal attention 2 x L x heads x (Dk + Dv) x T^2 / 2 per sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

from memviz.core.engines import get_engine
from memviz.core.estimate import Estimate, active_weight_bytes
from memviz.core.gpus import GPU

HOST_READ_BYTES_PER_S = {"llamacpp": 89.6e9, "ollama": 89.6e9, "transformers": 31.5e9}


@dataclass(frozen=True)
class SpeedBounds:
    decode_step_s_min: float
    decode_tokens_per_s_max: float  # all sequences together
    prefill_s_min: float
    gpu: str


def speed_bounds(est: Estimate, gpu: GPU) -> SpeedBounds:
    a, sc = est.architecture, est.scenario
    parallel = sc.tp  # pipeline stages run one after another for a single token
    kv_read = est.kv_cache_required * len(est.devices) / parallel
    host_read = est.host_read_bytes  # offloaded layers' weights, read from host memory each step
    loaded_16_bit = get_engine(sc.engine).dequantized_storages(sc, sc.engine_options)
    step_bytes = (active_weight_bytes(a, sc.weight_format, loaded_16_bit) - host_read + kv_read) / parallel
    decode = step_bytes / gpu.bandwidth_bytes_per_s
    if host_read:
        decode += host_read / HOST_READ_BYTES_PER_S.get(sc.engine, HOST_READ_BYTES_PER_S["transformers"])
    tokens = sc.longest_sequence
    flops_per_seq = 2 * est.active_parameters * tokens + a.num_layers * a.num_heads * (a.head_dim + a.v_head_dim) * tokens**2
    prefill = flops_per_seq * sc.sequences / (gpu.bf16_flops * parallel)
    return SpeedBounds(decode, sc.sequences / decode, prefill, gpu.key)
