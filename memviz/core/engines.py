"""Inference engines and the rules each applies to the same model.

Each engine changes different terms of the estimate:

- transformers (HF `generate`): the whole prompt is one forward (no chunking);
  logits only for the last position (`logits_to_keep=1` in generate); DynamicCache
  grows by `torch.cat`, so a decode step briefly holds one layer's cache twice;
  sliding layers (`DynamicSlidingWindowLayer`) keep the last `window - 1` tokens
  as a view of the `window`-token tensor just concatenated, so they hold `window`
  tokens of memory (measured by the probe: exact); MLA
  models cache per-head K/V (`DeepseekV3Attention`); PyTorch's caching allocator
  keeps freed blocks reserved.
- vLLM: pages of 16 tokens (`--block-size` default); chunked prefill of up to
  `max_num_batched_tokens` (8192) tokens; MLA caches the latent, replicated on
  every tensor-parallel rank; at start-up it reserves `gpu_memory_utilization` x
  capacity and hands all that weights, activations and overhead leave to the KV
  pool (`gpu_worker.determine_available_memory`).
- llama.cpp: one unified cache of n_ctx = context x sequences cells, padded to
  256 with flash attention on (32 otherwise); the compute buffer is sized for a
  micro-batch of n_ubatch = 512 tokens with logits for all of them (graph
  reserve); the token embedding stays in host memory, the output (logits)
  buffer is host memory; `-ngl` puts the last N layers on the GPU
  (`i_gpu_start = n_layer - ngl`) and the output layer only when ngl > n_layer;
  SWA layers keep min(n_ctx, PAD(window x n_seq + n_ubatch, 256)) cells (iSWA cache).

The overhead figures are assumed constants (provenance "constant"), editable per
scenario: transformers 512 MiB (CUDA context + cuBLAS/cuDNN handles, lazily loaded
kernels; measure with `memviz probe`), vLLM 1 GiB (context, NCCL/cuBLAS, CUDA
graphs), llama.cpp 250 MiB (gguf-parser's `--platform-footprint` VRAM default).
On the CPU the transformers runtime is the interpreter plus the torch and
transformers imports and the modules loaded while building a model: 425 MiB of
RSS measured by `memviz probe` in a fresh virtual environment with torch 2.13 CPU
and transformers 5.24 on 2-vCPU Linux. The figure depends on the environment: the
same virtual environment on the same VM measured 353-436 MiB within one day, a
system Python 385-411 MiB; calibration (stored runs) replaces it per machine;
the allocator fraction models PyTorch's CUDA caching allocator and is not applied
on the CPU. Loading through bitsandbytes imports it and accelerate on top: +63 MiB
of CPU runtime (median overhead of 16 bitsandbytes runs, 415 MiB, against 32 plain
runs, 352 MiB, same VM and venv; docs/accuracy-cpu.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from memviz.core.errors import InputError
from memviz.core.units import MiB

BITSANDBYTES_RUNTIME_BYTES_CPU = 63 * MiB


@dataclass(frozen=True)
class Engine:
    name: str
    description: str
    block_tokens: int
    latent_mla: bool
    prefill_chunk_tokens: int | None  # None: the whole prompt in one forward
    runtime_bytes_cuda: int
    runtime_bytes_cpu: int
    allocator_fraction: float  # caching-allocator reserve on top of KV + activations
    preallocates_kv_pool: bool
    context_padding: int = 1
    supports_tp: bool = False
    supports_offload: bool = False
    attention_default: str = "sdpa"


ENGINES: dict[str, Engine] = {
    "transformers": Engine(
        "transformers", "Hugging Face transformers generate() with DynamicCache",
        block_tokens=0, latent_mla=False, prefill_chunk_tokens=None,
        runtime_bytes_cuda=512 * MiB, runtime_bytes_cpu=425 * MiB, allocator_fraction=0.05,
        preallocates_kv_pool=False, supports_offload=True,
    ),
    "vllm": Engine(
        "vllm", "vLLM (V1 engine): paged KV pool, chunked prefill, CUDA graphs",
        block_tokens=16, latent_mla=True, prefill_chunk_tokens=8192,
        runtime_bytes_cuda=1024 * MiB, runtime_bytes_cpu=1024 * MiB, allocator_fraction=0.0,
        preallocates_kv_pool=True, supports_tp=True, attention_default="flash",
    ),
    "llamacpp": Engine(
        "llamacpp", "llama.cpp / llama-server with a GGUF file",
        block_tokens=0, latent_mla=True, prefill_chunk_tokens=512,
        runtime_bytes_cuda=250 * MiB, runtime_bytes_cpu=150 * MiB, allocator_fraction=0.0,
        preallocates_kv_pool=False, context_padding=256, supports_offload=True, attention_default="flash",
    ),
}


def get_engine(name: str) -> Engine:
    key = name.strip().lower().replace(".", "").replace("-", "").replace("_", "")
    aliases = {"hf": "transformers", "llamacpp": "llamacpp", "llama": "llamacpp", "ollama": "llamacpp"}
    key = aliases.get(key, key)
    if key not in ENGINES:
        raise InputError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    return ENGINES[key]
