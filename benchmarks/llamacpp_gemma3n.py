"""llama.cpp's buffers for Gemma 3n (its `gemma3n` architecture: AltUp's four streams, Laurel, per-layer inputs, the
last layers reusing K/V), measured with a real llama.cpp: each shape is built by memviz's GGUF builder (F16, random
weights, quantized to Q8_0 by llama.cpp), run by `memviz probe --engine llamacpp` at a context of 2,048 over two
sequences, micro-batches of 512 (and 256) and flash attention on / off, and the buffers llama.cpp printed are kept.
The shapes keep what llama.cpp fixes (20 caching layers, 4 streams, Laurel rank 64, per-layer width 256) and vary
hidden, MLP width, layers and head width around E2B's and E4B's (their widths with a vocabulary of 2,048).
`--write PATH` stores them as tests/data/llamacpp/gemma3n_buffers.json does.

    python benchmarks/llamacpp_gemma3n.py [--write tests/data/llamacpp/gemma3n_buffers.json] [--data DIR]
"""

from __future__ import annotations

from llamacpp_mla_sweep import probe_buffers, sweep_cli  # this folder: run as a script


def _layers(n: int) -> dict:
    """n layers, every fifth full attention, all but the first 20 reusing K/V (llama.cpp's fixed split)."""
    return {"num_hidden_layers": n, "num_kv_shared_layers": n - 20,
            "layer_types": ["full_attention" if i % 5 == 4 else "sliding_attention" for i in range(n)]}


_BASE = {"model_type": "gemma3n_text", "vocab_size": 2048, "vocab_size_per_layer_input": 2048, "hidden_size": 512,
         "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 128, "intermediate_size": 2048,
         "hidden_size_per_layer_input": 256, "sliding_window": 256, "laurel_rank": 64, "altup_num_inputs": 4,
         "max_position_embeddings": 8192, **_layers(22)}


def _shape(**changes) -> dict:
    return {**_BASE, **changes}


_H1024 = {"hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2}
SHAPES = {
    "base": _shape(), "L26": _shape(**_layers(26)), "L30": _shape(**_layers(30)),
    "h768": _shape(hidden_size=768, num_attention_heads=6), "h1024": _shape(**_H1024),
    "h1536": _shape(hidden_size=1536, num_attention_heads=12, num_key_value_heads=2),
    "h2048": _shape(hidden_size=2048, num_attention_heads=16, num_key_value_heads=2),
    "I1024": _shape(intermediate_size=1024), "I3072": _shape(intermediate_size=3072),
    "I4096": _shape(intermediate_size=4096), "I6144": _shape(intermediate_size=6144),
    "I8192": _shape(intermediate_size=8192), "h1024-I4096": _shape(**_H1024, intermediate_size=4096),
    "h1024-I6144": _shape(**_H1024, intermediate_size=6144), "h1024-I8192": _shape(**_H1024, intermediate_size=8192),
    "h2048-I8192-hd256": _shape(hidden_size=2048, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
                                intermediate_size=8192),
    "L30-h1024": _shape(**_H1024, **_layers(30)), "hd256": _shape(head_dim=256, num_key_value_heads=2),
    "E2B-widths": _shape(hidden_size=2048, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
                         intermediate_size=8192, sliding_window=512, **_layers(30)),
    "E4B-widths": _shape(hidden_size=2048, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
                         intermediate_size=16384, sliding_window=512, **_layers(35)),
}
SETTINGS = [(512, "on"), (512, "off")]
SMALL_BATCH = ("base", "E2B-widths")  # also at n_ubatch 256


def measure(config: dict, ubatch: int, flash: str, data: str) -> dict:
    return {"ubatch": ubatch, "flash_attn": flash, **probe_buffers(config, [
        "--weights", "Q8_0", "--context", "2048", "--parallel", "2", "--ubatch", str(ubatch), "--flash-attn", flash,
        "--prompt", "24", "--new", "2"], data)}


def main() -> None:
    sweep_cli("tests/data/llamacpp/gemma3n_buffers.json", "n_ubatch | flash attention", SHAPES,
              lambda name: SETTINGS + ([(256, "on"), (256, "off")] if name in SMALL_BATCH else []), measure,
              "benchmarks/llamacpp_gemma3n.py: shapes built by memviz.probe.gguf_build (F16, random weights) and "
              "quantized to Q8_0 by llama.cpp, context 2,048 over 2 sequences")


if __name__ == "__main__":
    main()
