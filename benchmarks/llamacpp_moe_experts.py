"""llama.cpp's compute buffer where the routed experts' stage is the peak: MoE shapes whose down projection's
output (top-k x hidden a token) is wider or narrower than the gate and up it follows (2 x top-k x I), with and
without a shared expert, with and without a leading dense layer. Each shape is built by memviz's GGUF builder
(Q8_0, random weights) and run by `memviz probe --engine llamacpp` at 4,096 cells, n_ubatch 512, flash attention
on and off, one and two sequences; llama.cpp's printed buffers are kept. `--write PATH` stores them as
tests/data/llamacpp/moe_experts_buffers.json does.

    python benchmarks/llamacpp_moe_experts.py [--write tests/data/llamacpp/moe_experts_buffers.json]
"""

from __future__ import annotations

import itertools

from llamacpp_mla_sweep import probe_buffers, sweep_cli  # this folder: run as a script

_QWEN3 = {"model_type": "qwen3_moe", "vocab_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
          "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 2048, "max_position_embeddings": 8192,
          "rope_theta": 1e6, "rms_norm_eps": 1e-6, "tie_word_embeddings": False}
_QWEN2 = {**_QWEN3, "model_type": "qwen2_moe"}
_DS2 = {"model_type": "deepseek_v2", "vocab_size": 512, "num_hidden_layers": 2, "n_routed_experts": 8,
        "n_shared_experts": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": None,
        "v_head_dim": 128, "max_position_embeddings": 4096, "tie_word_embeddings": False, "num_attention_heads": 8,
        "num_key_value_heads": 8, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64}

SHAPES = {
    # no shared expert: the GLU takes the freed input's place, the down output where gate and up were
    "qwen3moe-h1024-k4-i256": {**_QWEN3, "hidden_size": 1024, "num_experts": 16, "num_experts_per_tok": 4,
                               "moe_intermediate_size": 256},
    "qwen3moe-h1024-k8-i128": {**_QWEN3, "hidden_size": 1024, "num_experts": 32, "num_experts_per_tok": 8,
                               "moe_intermediate_size": 128},
    "qwen3moe-h768-k2-i256": {**_QWEN3, "hidden_size": 768, "num_attention_heads": 6, "num_experts": 8,
                              "num_experts_per_tok": 2, "moe_intermediate_size": 256},
    "qwen3moe-h512-k4-i512": {**_QWEN3, "hidden_size": 512, "num_attention_heads": 4, "num_experts": 16,
                              "num_experts_per_tok": 4, "moe_intermediate_size": 512},
    # a shared expert keeps the input alive: the GLU on top, the down output above it where no hole holds it
    "qwen2moe-h1024-k4-i256": {**_QWEN2, "hidden_size": 1024, "num_experts": 16, "num_experts_per_tok": 4,
                               "moe_intermediate_size": 256, "shared_expert_intermediate_size": 512},
    "qwen2moe-h1024-k8-i128": {**_QWEN2, "hidden_size": 1024, "num_experts": 32, "num_experts_per_tok": 8,
                               "moe_intermediate_size": 128, "shared_expert_intermediate_size": 256},
    "qwen2moe-h512-k2-i512": {**_QWEN2, "hidden_size": 512, "num_attention_heads": 4, "num_experts": 8,
                              "num_experts_per_tok": 2, "moe_intermediate_size": 512,
                              "shared_expert_intermediate_size": 512},
    # a leading dense layer whose gate and up leave a hole the down output fits in, or not
    "deepseek2-dense1024-h1024-k4": {**_DS2, "hidden_size": 1024, "intermediate_size": 1024,
                                     "moe_intermediate_size": 128, "num_experts_per_tok": 4},
    "deepseek2-dense2048-h1024-k4": {**_DS2, "hidden_size": 1024, "intermediate_size": 2048,
                                     "moe_intermediate_size": 128, "num_experts_per_tok": 4},
}
SETTINGS = list(itertools.product(("on", "off"), (1, 2)))


def measure(config: dict, flash: str, sequences: int, data: str) -> dict:
    return {"flash_attn": flash, "sequences": sequences, **probe_buffers(config, [
        "--weights", "Q8_0", "--context", "4096", "--parallel", str(sequences), "--flash-attn", flash,
        "--prompt", "24", "--new", "2"], data)}


def main() -> None:
    sweep_cli("tests/data/llamacpp/moe_experts_buffers.json", "flash attention | sequences", SHAPES,
              lambda name: SETTINGS, measure, "benchmarks/llamacpp_moe_experts.py: shapes built by "
              "memviz.probe.gguf_build (Q8_0, random weights), 4,096 cells, n_ubatch 512")


if __name__ == "__main__":
    main()
