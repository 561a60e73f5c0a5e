"""Ollama: llama.cpp with Ollama's own defaults (ollama fb30760, August 2026).

- context (`server/routes.go`): OLLAMA_CONTEXT_LENGTH, else 4,096 tokens below
  23 GiB of total VRAM, 32,768 from 23 GiB, 262,144 from 47 GiB, capped at the
  model's trained length (`server/sched.go`); each of OLLAMA_NUM_PARALLEL
  (default 1, `envconfig/config.go`) parallel requests gets that context;
- batch: num_batch 512 (`api/types.go` DefaultOptions), also the micro-batch;
- flash attention: OLLAMA_FLASH_ATTENTION unset lets the runner decide
  (`llm.LlamaServerFlashAttention`): on where the GPUs support it;
- KV cache type: OLLAMA_KV_CACHE_TYPE, default f16 (`llm/server.go`).
Buffers are then llama.cpp's (`memviz.core.engines.llamacpp`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memviz.core.arch import Architecture
from memviz.core.engines.llamacpp import CACHE_TYPES, LlamaCpp
from memviz.core.units import GiB

# num_batch 512 is Ollama's batch and micro-batch; each parallel request has its own context; no --n-cpu-moe
_OLLAMA_DEFAULTS: dict[str, dict[str, Any]] = {
    "n_ubatch": {"default": 512, "help": "num_batch"},
    "n_batch": {"default": 512, "help": "num_batch"},
    "flash_attn": {"help": "OLLAMA_FLASH_ATTENTION"},
    "n_cpu_moe": {"choices": (0,), "help": "not an Ollama setting"},
    "fit": {"default": True, "help": "llama-server's --fit: Ollama leaves -ngl unset unless num_gpu is given"},
    "host_buffer": {"choices": (True,), "help": "not an Ollama setting (its runner keeps llama.cpp's host buffer)"},
}


def default_context(total_vram_bytes: float, model_max_tokens: int = 0) -> int:
    """Ollama's context when neither the request nor OLLAMA_CONTEXT_LENGTH sets one."""
    tokens = 262144 if total_vram_bytes >= 47 * GiB else 32768 if total_vram_bytes >= 23 * GiB else 4096
    return min(tokens, model_max_tokens) if model_max_tokens else tokens


class Ollama(LlamaCpp):
    name = "ollama"
    label = "Ollama (llama.cpp with Ollama's defaults)"
    version = "ollama fb30760 on llama.cpp"
    source = "ollama/ollama fb30760: envconfig/config.go, server/routes.go, server/sched.go, api/types.go"
    options = tuple(replace(o, **_OLLAMA_DEFAULTS.get(o.name, {})) for o in LlamaCpp.options)

    def launch_command(self, a: Architecture, sc: Any, model: str) -> str:
        o = sc.engine_options
        env = [f"OLLAMA_NUM_PARALLEL={sc.sequences}", f"OLLAMA_CONTEXT_LENGTH={sc.longest_sequence}"]
        env.append(f"OLLAMA_FLASH_ATTENTION={'0' if not self.flash(sc, o) else '1'}")
        if sc.kv_format != "fp16":
            env.append(f"OLLAMA_KV_CACHE_TYPE={CACHE_TYPES[sc.kv_format]}")
        modelfile = [f"FROM {model}", f"PARAMETER num_ctx {sc.longest_sequence}"]
        if sc.gpu_layers is not None:
            modelfile.append(f"PARAMETER num_gpu {sc.gpu_layers}")
        if o["n_batch"] != 512:
            modelfile.append(f"PARAMETER num_batch {o['n_batch']}")
        return "# Modelfile\n" + "\n".join(modelfile) + "\n# server\n" + " ".join(env) + " ollama serve"
