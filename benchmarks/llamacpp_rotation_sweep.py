"""llama.cpp's attention rotation beside a quantized KV cache: the same model and settings run with a q8_0 cache,
the rotation on (0c1e570's default) and off (LLAMA_ATTN_ROT_DISABLE=1), so that the difference between the two
compute buffers is the Hadamard matrices the graph holds as inputs (`memviz.core.engines.llamacpp_rotation`).
Shapes built by memviz's GGUF builder (Q8_0): Llama layers with heads 64, 128 and 192 wide and MLPs of 1-4 hidden
widths, Gemma 2's full and sliding caches of 256-wide heads and Qwen3-MoE layers, with a 4,096-token vocabulary (the
feed-forward stage, which the inputs outlive, decides); an MLA model caching its 576-wide latent (no rotation); and
vocabularies of 16-32 hidden widths, where the logits' stage decides. `--write PATH` stores the buffers as
tests/data/llamacpp/rotation_buffers.json does.

    python benchmarks/llamacpp_rotation_sweep.py [--write tests/data/llamacpp/rotation_buffers.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llamacpp_mla_sweep import _mla, probe_buffers, sweep_cli  # noqa: E402


def _llama(hidden: int, heads: int, head_dim: int, mlp: int, kv_heads: int) -> dict:
    return {"model_type": "llama", "hidden_size": hidden, "intermediate_size": mlp, "num_hidden_layers": 4,
            "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim, "vocab_size": 4096,
            "max_position_embeddings": 8192, "tie_word_embeddings": False}


SHAPES = {
    "llama-hd64": _llama(1024, 16, 64, 4096, 4),
    "llama-hd128": _llama(2048, 16, 128, 8192, 4),
    "llama-hd192": _llama(1536, 8, 192, 6144, 2),
    "llama-hd128-mlp1.5h": _llama(1024, 8, 128, 1536, 2),
    "llama-hd128-mlp1h": _llama(1024, 8, 128, 1024, 2),
    "gemma2-hd256": {"model_type": "gemma2", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4,
                     "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 4096,
                     "sliding_window": 512, "max_position_embeddings": 8192, "query_pre_attn_scalar": 256},
    "qwen3moe-hd128": {"model_type": "qwen3_moe", "hidden_size": 1024, "intermediate_size": 3072,
                       "moe_intermediate_size": 768, "num_experts": 8, "num_experts_per_tok": 2, "num_hidden_layers": 4,
                       "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 4096,
                       "max_position_embeddings": 8192, "tie_word_embeddings": False, "decoder_sparse_step": 1,
                       "mlp_only_layers": []},
    "mla-latent576": _mla(1024, 16, 512),
    # vocabularies of 16-32 hidden widths: the logits' stage decides
    **{f"logits-h{h}-mlp{i}-v{v}": {**_llama(h, h // 128, 128, i, h // 512), "vocab_size": v}
       for h, i, v in ((1024, 1536, 32000), (1024, 2048, 32000), (1024, 3584, 32000), (1024, 3584, 16384),
                       (2048, 7168, 64000))},
}
ROTATION = ("on", "off")


def settings(name: str) -> list[tuple[str, int]]:
    """Each shape with the rotation on and off at n_ubatch 512; Llama's 128-wide heads at 256 too."""
    ubatches = (256, 512) if name == "llama-hd128" else (512,)
    return [(r, u) for u in ubatches for r in ROTATION]


def measure(config: dict, rotation: str, ubatch: int, data: str) -> dict:
    env = {"LLAMA_ATTN_ROT_DISABLE": "0" if rotation == "on" else "1"}
    return {"context": 4096, "ubatch": ubatch, "flash_attn": "on", "cache": "q8_0", "rotation": rotation,
            **probe_buffers(config, ["--weights", "Q8_0", "--context", "4096", "--ubatch", str(ubatch),
                                     "--flash-attn", "on",
                                     "--cache-type-k", "q8_0", "--cache-type-v", "q8_0", "--prompt", "8", "--new", "1"],
                            data, env)}


def main() -> None:
    sweep_cli("tests/data/llamacpp/rotation_buffers.json", "rotation | n_ubatch", SHAPES, settings, measure,
              "benchmarks/llamacpp_rotation_sweep.py: shapes built by memviz.probe.gguf_build (Q8_0), q8_0 K and V "
              "caches, the rotation on and off (LLAMA_ATTN_ROT_DISABLE)")


if __name__ == "__main__":
    main()
