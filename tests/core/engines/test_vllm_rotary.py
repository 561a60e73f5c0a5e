"""The rotary tables vLLM 0.34 loads (`vllm_rotary`): rows per scaling type, width per head, one per distinct rope."""

import pytest

from memviz.core.arch import Architecture, Rope, from_hf_config
from memviz.core.engines.vllm_rotary import rotary_table_bytes, rotary_tables, table_positions, tables_label
from memviz.core.errors import InputError
from memviz.core.presets import get_preset

MiB = 2**20
LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
         "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072}


def _bytes(cfg: dict) -> float:
    return rotary_table_bytes(from_hf_config(cfg), 2)


def test_one_default_table_over_the_positions():
    # Llama-3.1-8B: cos and sin over 131,072 positions x 128 in bf16, the 32 MiB "Model loading took" shows
    assert rotary_table_bytes(get_preset("llama-3.1-8b").architecture(), 2) == 32 * MiB
    llama3 = {**LLAMA, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                                        "low_freq_factor": 1.0, "high_freq_factor": 4.0}}
    assert _bytes(llama3) == 32 * MiB  # llama3 scales frequencies, not the table's length


def test_gemma_3_holds_a_linear_table_for_its_full_layers_and_one_for_its_sliding_layers():
    # 131,072 x 256 x 2 bytes for the sliding layers' base, 8 x that for the full layers' linear scaling
    assert rotary_table_bytes(get_preset("gemma-3-4b").architecture(), 2) == 64 * MiB + 512 * MiB
    assert rotary_table_bytes(get_preset("gemma-3-27b").architecture(), 2) == 32 * MiB + 256 * MiB
    # Gemma 3 1B: no scaling, but the two bases are two tables
    assert rotary_table_bytes(get_preset("gemma-3-1b").architecture(), 2) == 2 * 32768 * 256 * 2


def test_rows_per_scaling_type():
    a = from_hf_config(LLAMA)
    assert table_positions(Rope(kind="linear", factor=4.0), a) == 4 * 131072
    assert table_positions(Rope(kind="yarn", factor=4.0, original_positions=32768), a) == 131072
    assert table_positions(Rope(kind="deepseek_yarn", factor=40.0, original_positions=4096), a) == 163840
    assert table_positions(Rope(kind="longrope", factor=1.0, original_positions=4096), a) == 4096 + 131072
    assert table_positions(Rope(kind="dynamic", factor=2.0), a) == 131072
    assert table_positions(Rope(sections=True), a) == 4 * 131072
    assert table_positions(Rope(kind="yarn", factor=2.0, sections=True), a) == 8 * 131072


def test_mrope_tables_by_decoder():
    # Qwen2-VL's legacy "mrope" type: the default rope with sections, 4x the positions; Qwen3-VL's decoder passes 1
    qwen2_vl = {**LLAMA, "model_type": "qwen2_vl", "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
    assert _bytes(qwen2_vl) == 4 * 131072 * 128 * 2
    qwen3_vl = {"model_type": "qwen3_vl", "text_config": {
        **LLAMA, "model_type": "qwen3_vl_text", "head_dim": 128,
        "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20]}}}
    assert _bytes(qwen3_vl) == 131072 * 128 * 2
    # Qwen3-Omni's thinker reads as Qwen3-MoE too, but its decoder keeps the default 4
    omni = {"model_type": "qwen3_omni_moe", "thinker_config": {"text_config": {
        **LLAMA, "model_type": "qwen3_omni_moe_text", "head_dim": 128, "num_experts": 8, "num_experts_per_tok": 2,
        "moe_intermediate_size": 768, "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20]}}}}
    assert "Omni" in from_hf_config(omni).loader and _bytes(omni) == 4 * 131072 * 128 * 2


def test_partial_rotary_and_proportional_widths():
    # Qwen3-Next rotates a quarter of its 256-wide heads
    assert rotary_table_bytes(get_preset("qwen3-next-80b-a3b").architecture(), 2) == 262144 * 64 * 2
    # Gemma 4's proportional rope fills the full layers' 512-wide heads; the sliding layers' default rope 256
    assert rotary_table_bytes(get_preset("gemma-4-26b-a4b").architecture(), 2) == 262144 * (512 + 256) * 2


def test_mla_rotates_the_rope_part_of_its_heads():
    assert rotary_table_bytes(get_preset("deepseek-v3").architecture(), 2) == 163840 * 64 * 2


def test_the_label_names_each_tables_positions_and_width():
    rows = [[n, w] for n, w, _ in rotary_tables(get_preset("gemma-3-4b").architecture(), 2)]
    assert tables_label(rows) == "2 tables: 131,072 and 1,048,576 positions x 256"
    assert tables_label([[262144, 256], [262144, 512]]) == "2 tables: 262,144 x 256 and 262,144 x 512 positions"
    assert tables_label([[131072, 128]]) == "1 table: 131,072 positions x 128"


def test_layers_rotating_alike_share_a_table():
    same = {"full_attention": {"rope_type": "default", "rope_theta": 500000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 500000.0}}
    cfg = {**LLAMA, "model_type": "olmo3", "sliding_window": 4096, "rope_parameters": same}
    assert _bytes(cfg) == 131072 * 128 * 2


def test_ropes_round_trip_through_a_session_and_old_sessions_open():
    a = get_preset("gemma-3-4b").architecture()
    assert Architecture.from_dict(a.to_dict()) == a
    old = a.to_dict()
    del old["ropes"]
    assert Architecture.from_dict(old).ropes == ()
    with pytest.raises(InputError, match="ropes"):
        Architecture.from_dict({**a.to_dict(), "ropes": [{"kind": "linear", "speed": 3}]})
    with pytest.raises(InputError, match="rope settings"):
        Architecture.from_dict({**a.to_dict(), "ropes": [{"kind": "linear", "factor": "8"}]})


@pytest.mark.parametrize("rope", [{"rope_type": "linear", "factor": -2}, {"partial_rotary_factor": 1.5},
                                  {"rope_type": "linear", "factor": float("inf")}, {"rope_type": "yarn", "factor": 1e12},
                                  {"rope_type": "linear", "factor": 2**20}, {"rope_theta": "ten thousand"},
                                  {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": -5}])
def test_impossible_rope_settings_are_refused(rope):
    with pytest.raises(InputError, match="rope settings"):
        from_hf_config({**LLAMA, "rope_scaling": rope})


def test_a_rope_scaling_that_is_not_an_object_is_refused():
    with pytest.raises(InputError, match="rope_scaling"):
        from_hf_config({**LLAMA, "rope_scaling": "linear"})


def test_legacy_gemma_3_reads_as_transformers_standardizes_it():
    transformers = pytest.importorskip("transformers")
    raw = get_preset("gemma-3-4b").config["text_config"]
    config = transformers.Gemma3TextConfig(**{k: v for k, v in raw.items() if k != "model_type"})
    assert from_hf_config(raw).ropes == from_hf_config(config.to_dict()).ropes
