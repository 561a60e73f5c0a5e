"""Ollama: llama.cpp with Ollama's own defaults (ollama fb30760, August 2026).

- context (`server/routes.go`): OLLAMA_CONTEXT_LENGTH, else 4,096 tokens below
  23 GiB of total VRAM, 32,768 from 23 GiB, 262,144 from 47 GiB, capped at the
  model's trained length (`server/sched.go`); each of OLLAMA_NUM_PARALLEL
  (default 1, `envconfig/config.go`) parallel requests gets that context;
- batch: num_batch, passed as both -b and -ub (`llm/llama_server.go` `appendBatchArgs`); left at its default,
  the scheduler picks it for generation (`server/sched.go` `automaticGenerationBatch`): 512 up to 4,096 tokens of
  context in all (num_ctx x parallel), 1,024 up to 32,768, 2,048 beyond, stepped down while its own prediction
  (`llm.PredictServerVRAM`: the GGUF file + an f16 KV estimate) exceeds 80 % of the GPUs' free memory, 75 % (1,024)
  or 60 % (2,048) of it, or leaves less than 768 MiB (1,024) / 2 GiB (2,048) below that 80 %; with flash attention
  off on CUDA, 512 (256 beyond 4,096 tokens on a GPU of 8 GiB or less); a sweep keeps the batch of the
  scenario's own context;
- flash attention: OLLAMA_FLASH_ATTENTION unset lets the runner decide
  (`llm.LlamaServerFlashAttention`): on where the GPUs support it;
- KV cache type: OLLAMA_KV_CACHE_TYPE, default f16 (`llm/server.go`): f16, q8_0 or q4_0 (`fs/ggml/ggml.go`
  `SupportsKVCacheType`), a quantized one with flash attention only; another falls back to f16 (refused here).
Buffers are then llama.cpp's (`memviz.core.engines.llamacpp`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memviz.core.arch import Architecture
from memviz.core.engines.base import encoders_bytes
from memviz.core.engines.llamacpp import CACHE_TYPES, RUNTIME_BYTES_CUDA, LlamaCpp
from memviz.core.errors import InputError
from memviz.core.gpus import get_gpu
from memviz.core.units import GiB, MiB

#: the cache types Ollama passes on to its runner (`fs/ggml/ggml.go` `SupportsKVCacheType`), memviz's names
OLLAMA_CACHE_TYPES = ("fp16", "q8_0", "q4_0")
# num_batch is Ollama's batch and micro-batch (automatic unless set); each parallel request has its own context
_OLLAMA_DEFAULTS: dict[str, dict[str, Any]] = {
    "n_ubatch": {"default": None, "help": "num_batch (default: as n_batch)"},
    "n_batch": {"default": None, "help": "num_batch (default: Ollama's automatic generation batch)"},
    "flash_attn": {"help": "OLLAMA_FLASH_ATTENTION"},
    "n_cpu_moe": {"choices": (0,), "help": "not an Ollama setting"},
    "fit": {"default": True, "help": "llama-server's --fit: Ollama leaves -ngl unset unless num_gpu is given"},
    "host_buffer": {"choices": (True,), "help": "not an Ollama setting (its runner keeps llama.cpp's host buffer)"},
    "tensor_split": {"choices": ("",), "help": "not an Ollama setting (llama-server splits the layers by free memory)"},
    "mmproj": {"default": True, "help": "the model's projector (its manifest's projector layer, or the vision "
               "tensors of the model file) passed as --mmproj"},
    "image_max_tokens": {"choices": (0,), "help": "not an Ollama setting"},
}


def default_context(total_vram_bytes: float, model_max_tokens: int = 0) -> int:
    """Ollama's context when neither the request nor OLLAMA_CONTEXT_LENGTH sets one."""
    tokens = 262144 if total_vram_bytes >= 47 * GiB else 32768 if total_vram_bytes >= 23 * GiB else 4096
    return min(tokens, model_max_tokens) if model_max_tokens else tokens


def predicted_vram(a: Architecture, sc: Any, context_tokens: int) -> float:
    """`llm.PredictServerVRAM`: the GGUF file (its tensors here) + 2 x layers x the fewest KV heads x
    (hidden / heads) x context x 2 bytes."""
    from memviz.core.formats import get_weight_format, weight_bytes

    kv = 2 * a.num_layers * a.num_kv_heads * (a.hidden_size // a.num_heads) * context_tokens * 2
    return weight_bytes(a, get_weight_format(sc.weight_format)) + kv


def automatic_batch(a: Architecture, sc: Any, flash: bool) -> int:
    """num_batch Ollama picks for generation when the request leaves it unset (`server/sched.go`
    `automaticGenerationBatch` and the generationBatch* helpers); the GPUs' free memory is their CUDA total less
    the runtime constant memviz counts for the CUDA context."""
    ctx = sc.longest_sequence * sc.sequences
    gpu = get_gpu(sc.gpu) if sc.gpu and sc.device == "cuda" else None
    if gpu is not None and not flash:
        return 256 if ctx > 4096 and gpu.usable_bytes <= 8 * GiB else 512
    batch = 2048 if ctx > 32768 else 1024 if ctx > 4096 else 512
    if gpu is None:
        return batch  # no GPU memory to weigh it against (`generationBatchFits` with none available)
    available = sc.tp * sc.pp * (gpu.cuda_total_bytes - RUNTIME_BYTES_CUDA)
    predicted = predicted_vram(a, sc, ctx)
    while batch > 512 and not _batch_fits(batch, predicted, available):
        batch = 1024 if batch > 1024 else 512
    return batch


def _batch_fits(batch: int, predicted: float, available: float) -> bool:
    """`generationBatchFits`: within 80 % of the free memory, under the batch's headroom, room for its surcharge."""
    threshold = 0.8 * available
    headroom = 0.6 if batch >= 2048 else 0.75
    surcharge = 2 * GiB if batch >= 2048 else 768 * MiB
    return predicted <= threshold and predicted <= headroom * available and surcharge <= threshold - predicted


class Ollama(LlamaCpp):
    name = "ollama"
    label = "Ollama (llama.cpp with Ollama's defaults)"
    version = "ollama fb30760 on llama.cpp"
    source = ("ollama/ollama fb30760: envconfig/config.go, server/routes.go, server/sched.go, api/types.go, "
              "llm/llama_server.go")
    options = tuple(replace(o, **_OLLAMA_DEFAULTS.get(o.name, {})) for o in LlamaCpp.options)

    def check(self, a: Architecture, sc: Any, options: dict[str, Any]) -> None:
        """Ollama passes OLLAMA_KV_CACHE_TYPE on only for f16, q8_0 and q4_0 (`fs/ggml/ggml.go`
        `SupportsKVCacheType`) and a quantized one only with flash attention (`llm/server.go`: "quantized kv cache
        requested but flash attention disabled"); it runs f16 otherwise, which a scenario says as fp16."""
        if sc.kv_format not in OLLAMA_CACHE_TYPES:
            raise InputError(f"Ollama takes OLLAMA_KV_CACHE_TYPE f16, q8_0 or q4_0 (SupportsKVCacheType) and runs "
                             f"f16 for {CACHE_TYPES.get(sc.kv_format, sc.kv_format)}: choose fp16, q8_0 or q4_0")
        if sc.kv_format != "fp16" and not self.flash(sc, options):
            raise InputError(f"Ollama uses a {CACHE_TYPES[sc.kv_format]} cache only with flash attention "
                             "(OLLAMA_FLASH_ATTENTION) and runs f16 without it: turn flash_attn on or choose fp16")
        super().check(a, sc, options)

    def mmproj_on_host(self, x: Any) -> bool:
        """Ollama passes --no-mmproj-offload when only some layers are on the GPU (`llm/llama_server.go`
        `shouldDisableMMProjOffload`: "partial-text-offload"; also "cpu-only", memviz's CPU device, and
        "limited-vram", a GPU with less than the projector + 1 GiB)."""
        sc = x.sc
        partial = sc.gpu_layers is not None and sc.gpu_layers < x.a.num_layers
        small = sc.gpu is not None and get_gpu(sc.gpu).cuda_total_bytes < encoders_bytes(x) + GiB
        return sc.device == "cuda" and (partial or small)

    def default_context(self, a: Architecture, total_vram_bytes: float | None) -> int:
        """Ollama's VRAM tier (`server/routes.go`); without a GPU named, its lowest, 4,096 tokens."""
        if total_vram_bytes is None:
            return super().default_context(a, None)
        return default_context(total_vram_bytes, a.max_position_embeddings)

    @staticmethod
    def num_batch(sc: Any, options: dict[str, Any]) -> int | None:
        """The num_batch the scenario sets (the option, else its prefill chunk); None leaves it to Ollama."""
        return options["n_batch"] or sc.prefill_chunk_tokens

    def batches(self, x: Any) -> tuple[int, int]:
        o = x.options
        n_batch = self.num_batch(x.sc, o) or automatic_batch(x.a, x.sc, self.flash(x.sc, o))
        return n_batch, o["n_ubatch"] or n_batch

    def launch_command(self, a: Architecture, sc: Any, model: str) -> str:
        o = sc.engine_options
        env = [f"OLLAMA_NUM_PARALLEL={sc.sequences}", f"OLLAMA_CONTEXT_LENGTH={sc.longest_sequence}"]
        env.append(f"OLLAMA_FLASH_ATTENTION={'0' if not self.flash(sc, o) else '1'}")
        if sc.kv_format != "fp16":
            env.append(f"OLLAMA_KV_CACHE_TYPE={CACHE_TYPES[sc.kv_format]}")
            if not o["attn_rotation"]:  # its llama-server inherits the environment (llm/llama_server.go: os.Environ())
                env.append("LLAMA_ATTN_ROT_DISABLE=1")
        modelfile = [f"FROM {model}", f"PARAMETER num_ctx {sc.longest_sequence}"]
        if sc.gpu_layers is not None:
            modelfile.append(f"PARAMETER num_gpu {sc.gpu_layers}")
        if self.num_batch(sc, o):
            modelfile.append(f"PARAMETER num_batch {self.num_batch(sc, o)}")
        return "# Modelfile\n" + "\n".join(modelfile) + "\n# server\n" + " ".join(env) + " ollama serve"
