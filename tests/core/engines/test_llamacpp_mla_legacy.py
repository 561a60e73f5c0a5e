"""MLA files converted before llama.cpp split attn_kv_b, against a real llama.cpp (tests/data/llamacpp/
mla_legacy_buffers.json, made by benchmarks/llamacpp_mla_legacy.py with llama.cpp 0c1e570 on this project's CPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_names import gguf_name, gguf_tensors
from memviz.core.importers.gguf_file import read_gguf
from memviz.probe.gguf_build import write_f16

DATA = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "mla_legacy_buffers.json").read_text())


def _estimate(case: dict):
    a = from_hf_config(case["config"], name="mla").with_changes(mla_kv_b_unsplit=case["legacy_file"])
    return estimate(a, Scenario(engine="llamacpp", device="cpu", weight_format="F16", kv_format="fp16",
                                context_tokens=case["context"], options={"flash_attn": case["flash_attn"]}))


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"{c['shape']}-{c['legacy_file']}-{c['context']}-"
                                                              f"fa{c['flash_attn']}")
def test_a_legacy_file_caches_k_and_v_per_head_and_a_current_one_the_latent(case):
    assert _estimate(case).bytes["kv_cache"] == case["kv_bytes"]


def test_the_legacy_per_head_path_compute_buffer_within_twelve_percent():
    errors = [_estimate(c).bytes["activations"] / c["compute_bytes"] - 1 for c in DATA["cases"] if c["legacy_file"]]
    assert len(errors) >= 8 and max(abs(e) for e in errors) <= 0.12


def test_a_gguf_without_key_length_mla_is_read_as_legacy(tmp_path):
    """The file decides: no key_length_mla and an attn_kv_b tensor; the reader says what it means."""
    config = DATA["cases"][0]["config"]
    for legacy in (True, False):
        path = write_f16(from_hf_config(config, name="mla").with_changes(mla_kv_b_unsplit=legacy), tmp_path / f"{legacy}.gguf")
        a = read_gguf(path)
        names = {t.name for t in a.stored}
        assert a.mla_kv_b_unsplit == legacy and ("blk.0.attn_kv_b.weight" in names) == legacy
        assert ("blk.0.attn_k_b.weight" in names) != legacy
        assert any("predates llama.cpp's MLA cache" in w for w in a.warnings) == legacy
        assert {gguf_name(t, a) for t in gguf_tensors(a)} == names
