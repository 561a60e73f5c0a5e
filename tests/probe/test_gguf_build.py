"""Offline GGUF files: names llama.cpp expects, the cache's size limit, clear refusals."""

import os
from pathlib import Path

import gguf
import pytest

from memviz.core.arch import from_hf_config, load_config
from memviz.core.errors import InputError
from memviz.core.gguf_names import FUSED_QKV
from memviz.core.importers.gguf_file import read_gguf
from memviz.core.presets import get_preset
from memviz.probe import gguf_build
from tests.conftest import needs_llamacpp

CONFIGS = Path(__file__).parents[1] / "data" / "llamacpp" / "configs"


@pytest.mark.parametrize("name", ["llama-gqa", "qwen2-tied", "gemma2-swa", "qwen3moe", "dots3", "bailing-moe-v2",
                                  "bailing-moe"])
def test_f16_file_reads_back_as_the_same_model(tmp_path, name):
    """dots3's file (conversion/dots3.py's keys: per-layer heads, the sliding layers' MLA lengths, the indexer's
    layers) reads back with its per-layer geometry; Ling 2.0's (bailingmoe2) with its q/k norms, score bias, leading
    dense layer and shared expert."""
    a = from_hf_config(load_config(CONFIGS / f"{name}.json"), name=name)
    path = gguf_build.write_f16(a, tmp_path / "m.gguf")
    back = read_gguf(path)
    for field in ("hidden_size", "num_layers", "num_heads", "num_kv_heads", "head_dim", "intermediate_size",
                  "vocab_size", "tie_word_embeddings", "num_experts", "layer_types", "sliding_window", "layer_heads",
                  "layer_kv_lora_ranks", "layer_nope_dims", "indexer_layers", "shared_expert_intermediate_size",
              "model_type", "qk_norm", "router_score_bias", "moe_layers"):
        assert getattr(back, field) == getattr(a, field), field
    names = {t.name for t in gguf.GGUFReader(str(path)).tensors}
    query = "blk.0.attn_q_b.weight" if a.is_mla else "blk.0.attn_qkv.weight" if a.model_type in FUSED_QKV else \
        "blk.0.attn_q.weight"
    assert query in names and ("output.weight" in names) is not a.tie_word_embeddings


def test_refuses_what_the_disk_cannot_hold(tmp_path):
    with pytest.raises(InputError, match="GB on disk"):
        gguf_build.build(get_preset("llama-3.1-405b").architecture(), "Q4_K_M", tmp_path)
    assert not list(tmp_path.iterdir())


def test_unsupported_architecture_is_named(tmp_path):
    with pytest.raises(InputError, match="not supported"):
        gguf_build.build(get_preset("gpt2").architecture(), "Q8_0", tmp_path)


def test_cache_drops_the_oldest_files_past_its_limit(tmp_path):
    for i, size in enumerate((300, 300, 300)):
        f = tmp_path / f"old{i}.gguf"
        f.write_bytes(b"x" * size)
        os.utime(f, (i, i))
    gguf_build._trim(tmp_path, 700)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old1.gguf", "old2.gguf"]


def test_a_source_reused_for_another_mix_counts_as_used(tmp_path):
    """The F16 source a second mix is quantized from is the newest file after it: the trim keeps it."""
    needs_llamacpp()
    a = from_hf_config(load_config(CONFIGS / "llama-gqa.json"), name="llama-gqa").with_changes(num_layers=2)
    gguf_build.build(a, "Q8_0", tmp_path)
    (f16,) = tmp_path.glob("*-F16.gguf")
    os.utime(f16, (0, 0))
    q4 = gguf_build.build(a, "Q4_0", tmp_path)
    assert f16.stat().st_mtime > 0 and q4.is_file()


def test_deepseek_ocr_is_written_and_read_back_as_deepseek2_ocr(tmp_path, monkeypatch):
    """A DeepSeek-V2 without a latent is llama.cpp's deepseek2-ocr (conversion/deepseek.py `DeepseekV2Model` with
    is_ocr: q / k / v per head, no kv_lora_rank key); an Unlimited-OCR file's window is metadata llama.cpp ignores
    (its full multi-head attention caches every token)."""
    a = from_hf_config(load_config(CONFIGS / "deepseek-ocr.json"), name="deepseek-ocr")
    path = gguf_build.write_f16(a, tmp_path / "m.gguf")
    reader = gguf.GGUFReader(str(path))
    assert bytes(reader.fields["general.architecture"].parts[-1]).decode() == "deepseek2-ocr"
    assert "deepseek2-ocr.attention.kv_lora_rank" not in reader.fields
    names = {t.name for t in reader.tensors}
    assert {"blk.1.attn_k.weight", "blk.1.ffn_gate_shexp.weight", "blk.0.ffn_gate.weight"} <= names
    back = read_gguf(path)
    assert (back.model_type, back.is_mla, back.num_kv_heads, back.head_dim) == ("deepseek_v2", False, 10, 128)
    assert back.shared_expert_intermediate_size == 2 * 896 and back.moe_layers == (False, True, True)

    written = gguf_build._metadata

    def with_window(w, arch_a, arch):  # what the converter adds for Unlimited-OCR's sliding_window_size
        written(w, arch_a, arch)
        w.add_sliding_window(128)

    monkeypatch.setattr(gguf_build, "_metadata", with_window)
    unlimited = read_gguf(gguf_build.write_f16(a, tmp_path / "unlimited.gguf"))
    assert unlimited.sliding_window is None and set(unlimited.layer_types) == {"full"}
