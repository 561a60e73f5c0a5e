"""llama.cpp's compute buffer with flash attention over the feed-forward's width: ggml-alloc keeps 4 hidden rows a
token beside a gated MLP wider than two hidden widths, 3 beside one of one to two, 2 beside one exactly as wide
(`LlamaCpp._ffn_hidden_rows`). Checked against a real llama.cpp (tests/data/llamacpp/ffn_width_buffers.json, made by
benchmarks/llamacpp_ffn_width_sweep.py on this project's CPU: Llama shapes of 3-32 layers)."""

import json
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.engines import llamacpp
from memviz.core.estimate import Scenario, estimate
from memviz.core.units import MiB

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "ffn_width_buffers.json").read_text())


def _error(case: dict) -> float:
    a = from_hf_config(DATA["shapes"][case["shape"]], name=case["shape"])
    e = estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="Q8_0", kv_format="fp16",
                             context_tokens=case["context"],
                             options={"n_ubatch": case["ubatch"], "flash_attn": case["flash_attn"]}))
    return (e.bytes["activations"] / MiB - case["compute_mib"]) / case["compute_mib"]


def _ratio(case: dict) -> float:
    shape = DATA["shapes"][case["shape"]]
    return shape["intermediate_size"] / shape["hidden_size"]


def _vocab(case: dict) -> int:
    return DATA["shapes"][case["shape"]]["vocab_size"]


@pytest.mark.parametrize("case", [c for c in DATA["cases"] if _vocab(c) == 4096],
                         ids=lambda c: f"{c['shape']}-{c['ubatch']}")
def test_compute_buffer_exact_at_every_feed_forward_width(case):
    """Within 0.15 % (the printed 0.01 MiB) where the feed-forward stage decides (an MLP at least a hidden row wide); an
    MLP of half a hidden width lets another stage decide, 6.2 % above memviz's."""
    assert abs(_error(case)) <= (0.0015 if _ratio(case) >= 1 else 0.07)


def test_every_layer_count_and_width_step_is_covered():
    shapes = [s for s in DATA["shapes"].values() if s["vocab_size"] == 4096]
    assert {s["num_hidden_layers"] for s in shapes} >= {3, 4, 8, 32}
    ratios = {s["intermediate_size"] / s["hidden_size"] for s in shapes}
    assert any(r <= 1 for r in ratios) and any(1 < r <= 2 for r in ratios) and any(r > 2 for r in ratios)


def test_the_single_width_rule_misses_the_narrow_mlps(monkeypatch):
    """What the rule fixes: 4 hidden rows whatever the width is 9-33 % above llama.cpp at one to two hidden widths."""
    monkeypatch.setattr(llamacpp.LlamaCpp, "_ffn_hidden_rows", staticmethod(lambda a, where, rotated=False: 4.0))
    narrow = [c for c in DATA["cases"] if 1 <= _ratio(c) <= 2 and _vocab(c) == 4096]
    assert len(narrow) >= 10 and min(_error(c) for c in narrow) > 0.08


def test_the_logits_stage_is_exact_beside_wide_mlps_and_short_beside_narrow_ones():
    """Vocabularies of 16-64 hidden widths (the logits' stage decides), Llama-3-8B's widths among them: exact beside
    MLPs wider than two hidden widths; beside one to two widths ggml-alloc leaves the logits above 0-5 more hidden
    rows, which memviz does not model (docs/engines.md): -13 % at most."""
    wide = [c for c in DATA["cases"] if _vocab(c) > 4096 and _ratio(c) > 2]
    narrow = [c for c in DATA["cases"] if _vocab(c) > 4096 and _ratio(c) <= 2]
    assert len(wide) >= 6 and max(abs(_error(c)) for c in wide) <= 0.0015
    assert len(narrow) >= 4 and all(-0.14 <= _error(c) <= 0.0015 for c in narrow)
