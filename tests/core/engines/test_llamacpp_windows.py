"""llama.cpp keeps a sliding-window cache only for the architectures that build one (`LlamaCpp.runs_as`,
`SWA_TYPES`: 0c1e570's load_arch_hparams setting a swa_type); a Mistral, Phi-3 or Qwen2 config's window runs as
full attention there (checked against a real llama.cpp for the Mistral case: tests/probe/test_llamacpp_live.py)."""

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate

BASE = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
            num_key_value_heads=4, vocab_size=8192, sliding_window=256)
PER_CELL = 8 * 4 * 64 * 2 * 2  # eight layers, 4 KV heads of 64, K and V in f16


def kv(model_type, engine="llamacpp", **extra):
    a = from_hf_config({"model_type": model_type, **BASE, **extra})
    fmt = "Q4_K_M" if engine == "llamacpp" else "bf16"
    return estimate(a, Scenario(engine=engine, weight_format=fmt, context_tokens=4096)).bytes["kv_cache"]


@pytest.mark.parametrize(("model_type", "extra"), [("mistral", {}), ("phi3", {"pad_token_id": 0}),
                                                   ("qwen2", {"use_sliding_window": True, "max_window_layers": 0}),
                                                   ("starcoder2", {})])
def test_windows_llamacpp_does_not_build_are_cached_in_full(model_type, extra):
    assert kv(model_type, **extra) == 4096 * PER_CELL
    assert kv(model_type, "transformers", **extra) < 4096 * PER_CELL  # transformers keeps the window


def test_architectures_with_a_window_keep_it():
    """Gemma 2 (alternating) and Granite SWA (three layers in four): sliding layers take PAD(256 + 512, 256) cells."""
    assert kv("gemma2", head_dim=64) == (4 * 4096 + 4 * 768) * PER_CELL // 8
    assert kv("granite_swa") == (2 * 4096 + 6 * 768) * PER_CELL // 8
