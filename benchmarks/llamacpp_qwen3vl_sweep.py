"""llama.cpp's compute buffer for Qwen3-VL's language model (its deepstack layers widen the input embedding),
measured with a real llama.cpp: each shape is a Qwen3-VL config (text and vision) built by memviz's GGUF builder as
llama.cpp's converter writes the `qwen3vl` architecture (F16, random weights), run by `memviz probe --engine
llamacpp` over micro-batches and flash attention on / off, and the buffers llama.cpp printed are kept. `--write PATH`
stores them as tests/data/llamacpp/qwen3vl_buffers.json does; docs/llamacpp-accuracy.md carries the table.

    python benchmarks/llamacpp_qwen3vl_sweep.py [--write tests/data/llamacpp/qwen3vl_buffers.json]
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llamacpp_mla_sweep import measure, sweep_cli  # noqa: E402


def _qwen3vl(hidden: int, deepstack: int, vocab: int = 4096, layers: int = 4) -> dict:
    """A Qwen3-VL of `layers` decoder layers (heads of 128, two KV heads), its vision tower's deepstack mergers
    feeding the first `deepstack` layers (Qwen3-VL-8B's config: 3)."""
    text = {"model_type": "qwen3_vl_text", "vocab_size": vocab, "hidden_size": hidden, "intermediate_size": 2 * hidden,
            "num_hidden_layers": layers, "num_attention_heads": hidden // 128, "num_key_value_heads": 2,
            "head_dim": 128, "max_position_embeddings": 8192, "tie_word_embeddings": False,
            "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [24, 20, 20],
                                "mrope_interleaved": True}}
    vision = {"model_type": "qwen3_vl", "hidden_size": 64, "depth": 4, "num_heads": 2, "intermediate_size": 128,
              "out_hidden_size": hidden, "deepstack_visual_indexes": list(range(deepstack)), "patch_size": 16}
    return {"model_type": "qwen3_vl", "text_config": text, "vision_config": vision}


SHAPES = {"h1024-deepstack1": _qwen3vl(1024, 1), "h1024-deepstack3": _qwen3vl(1024, 3),
          "h2048-deepstack3": _qwen3vl(2048, 3),
          # Qwen3-VL's 151,936-token vocabulary, where the output's logits decide the buffer
          "h1024-deepstack3-vocab151936": _qwen3vl(1024, 3, vocab=151936)}
#: (context, n_ubatch, flash attention) for `llamacpp_mla_sweep.measure` (F16 files, 4,096 cells)
SETTINGS = list(itertools.product((4096,), (256, 512), ("on", "off")))


def main() -> None:
    sweep_cli("tests/data/llamacpp/qwen3vl_buffers.json", "context | n_ubatch | flash attention", SHAPES,
              lambda name: SETTINGS, measure,
              "benchmarks/llamacpp_qwen3vl_sweep.py: Qwen3-VL configs built by memviz.probe.gguf_build (F16, random "
              "weights) as the qwen3vl architecture")


if __name__ == "__main__":
    main()
