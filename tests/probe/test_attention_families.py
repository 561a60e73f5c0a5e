"""The probe runs every architecture family the presets cover (tiny random configs of each preset's real
config): the attention transformers chooses when the user does not (eager for Gemma-2, which has no SDPA
path), recorded in the result and used by its estimate."""

import json

import pytest

from memviz.core.presets import all_presets
from memviz.probe import runner

pytest.importorskip("transformers")

TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 512, "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 64, "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4,
        "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "kv_lora_rank": 32, "q_lora_rank": 32,
        "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16, "sliding_window": 32, "n_embd": 64,
        "n_layer": 2, "n_head": 4, "ffn_dim": 128, "word_embed_proj_dim": 64, "first_k_dense_replace": 1,
        "num_kv_heads": 2, "n_positions": 256, "max_position_embeddings": 256, "rope_scaling": None,
        "layer_types": None, "sliding_window_pattern": 2, "query_pre_attn_scalar": 16, "top_k_experts": 2,
        "global_head_dim": 32}
FAMILIES = {}
for key, preset in sorted(all_presets().items()):
    FAMILIES.setdefault(preset.config.get("model_type"), key)


def tiny(config: dict) -> dict:
    out = {k: TINY.get(k, v) for k, v in config.items()}
    out = {k: v for k, v in out.items() if v is not None}
    out.update(pad_token_id=0, bos_token_id=1, eos_token_id=2)  # within the tiny vocabulary
    if isinstance(out.get("text_config"), dict):
        out["text_config"] = tiny(out["text_config"])
    if "linear_num_value_heads" in out:  # Qwen3.5 / Qwen3-Next: three delta-net layers, then a full-attention one
        out.update(num_hidden_layers=4, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                   linear_value_head_dim=16)
    if "full_attn_idxs" in out:  # LFM2: the released indices lie beyond two layers; keep one attention layer
        out["full_attn_idxs"] = [1]
    if "cross_attention_layers" in out:  # Llama 3.2 Vision: likewise, one cross-attention layer of the two
        out["cross_attention_layers"] = [1]
    if out.get("model_type") == "deepseek_v4":  # every kind of layer, two output groups, a small indexer
        out.update(num_hidden_layers=4, compress_ratios=[0, 4, 128, 4], num_key_value_heads=1, o_groups=2,
                   o_lora_rank=16, index_n_heads=2, index_head_dim=16)
    if out.get("model_type") == "falcon":
        out.update(num_kv_heads=1, multi_query=True, new_decoder_architecture=False)
    if out.get("model_type") == "mamba2":  # heads x head width fill expand x hidden (Mamba2Config)
        out.update(num_heads=4, head_dim=32, n_groups=1, state_size=16, chunk_size=16)
    if out.get("model_type") == "jamba":  # an attention layer and experts among the tiny layers
        out.update(num_hidden_layers=4, attn_layer_period=2, attn_layer_offset=1, mamba_dt_rank=8)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_probe_runs_every_family_with_the_attention_transformers_picks(family, tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(tiny(dict(all_presets()[FAMILIES[family]].config))))
    rc = runner.main(["--config", str(path), "--device", "cpu", "--dtype", "fp32", "--prompt", "8", "--new", "2",
                      "--no-store"])
    messages = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert rc == 0, messages[-1]
    result = messages[-1]
    assert result["event"] == "result" and result["attention"] in ("sdpa", "eager")
    assert result["scenario"]["attention"] == result["attention"]
    if family == "gemma2":
        assert result["attention"] == "eager"


def test_no_sample_follows_the_result(capsys):
    runner.emit("start", pid=1, argv=[])
    runner.emit("sample", t_s=0.1, rss=1)
    runner.emit("result", partial=False)
    runner.emit("sample", t_s=0.2, rss=1)  # the sampler thread, a moment too late
    events = [json.loads(x)["event"] for x in capsys.readouterr().out.splitlines()]
    assert events == ["start", "sample", "result"]
