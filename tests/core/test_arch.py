import json

import pytest

from memviz.core.arch import FULL, SLIDING, from_config_path, from_hf_config
from memviz.core.errors import InputError
from memviz.core.presets import get_preset


def test_explicit_head_dim_wins_over_hidden_over_heads():
    a = get_preset("gemma-7b").architecture()  # 3072 / 16 = 192, but head_dim is 256
    assert a.head_dim == 256
    q3 = get_preset("qwen3-8b").architecture()
    assert q3.head_dim == 128 and q3.qk_norm


def test_missing_kv_heads_means_mha():
    a = get_preset("pythia-1.4b").architecture()
    assert a.num_kv_heads == a.num_heads == 16


def test_falcon_multi_query_has_one_kv_head():
    assert get_preset("falcon-7b").architecture().num_kv_heads == 1


def test_gemma2_alternates_sliding_and_full():
    a = get_preset("gemma-2-9b").architecture()
    assert a.layer_types[:4] == (SLIDING, FULL, SLIDING, FULL)
    assert a.sliding_window == 4096


def test_gemma3_nested_text_config_and_five_to_one_pattern():
    a = get_preset("gemma-3-27b").architecture()
    assert a.num_layers == 62 and a.hidden_size == 5376
    assert a.layer_types[:6] == (SLIDING,) * 5 + (FULL,)
    assert a.layer_types.count(FULL) == 10


def test_gpt_oss_layer_types_are_kept_per_layer():
    a = get_preset("gpt-oss-20b").architecture()
    assert a.layer_types[:2] == (SLIDING, FULL) and a.sliding_window == 128


def test_mistral_v01_slides_everywhere_and_qwen_without_use_sliding_window_does_not():
    assert set(get_preset("mistral-7b-v0.1").architecture().layer_types) == {SLIDING}
    q = get_preset("qwen2.5-7b").architecture()
    assert set(q.layer_types) == {FULL} and q.sliding_window is None


def test_deepseek_v3_mla_moe_and_dense_first_layers():
    a = get_preset("deepseek-v3").architecture()
    assert a.is_mla and a.kv_lora_rank == 512 and a.qk_rope_head_dim == 64
    assert a.moe_layers[:4] == (False, False, False, True)
    assert a.num_experts == 256 and a.experts_per_token == 8


def test_unknown_model_type_works_with_warning():
    cfg = {"model_type": "brandnew", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
           "intermediate_size": 4096, "vocab_size": 1000}
    a = from_hf_config(cfg)
    assert a.num_kv_heads == 8
    assert any("brandnew" in w for w in a.warnings)
    assert any("multi-head" in w for w in a.warnings)


def test_config_path_file_and_folder(tmp_path):
    cfg = get_preset("llama-3.2-1b").config
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert from_config_path(tmp_path) == from_config_path(tmp_path / "config.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"model_type": "llama", "hidden_size": 64}), "missing"),
        (json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 0, "num_attention_heads": 4,
                     "vocab_size": 10}), "positive"),
        (json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 10**12, "num_attention_heads": 4,
                     "vocab_size": 10}), "up to 4,096"),  # a corrupt GGUF block_count once exhausted memory here
        (json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 3, "vocab_size": 10}), "multiple"),
        (json.dumps({"model_type": "llama", "hidden_size": "big", "num_hidden_layers": 2, "num_attention_heads": 4,
                     "vocab_size": 10}), "integer"),
    ],
)
def test_bad_configs_raise_input_error(tmp_path, content, message):
    f = tmp_path / "config.json"
    f.write_text(content)
    with pytest.raises(InputError, match=message):
        from_config_path(f)


def test_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no config.json"):
        from_config_path(tmp_path / "absent")


def test_round_trip_and_with_changes():
    a = get_preset("gemma-2-9b").architecture()
    assert type(a).from_dict(a.to_dict()) == a
    b = a.with_changes(num_layers=4)
    assert b.layer_types == (SLIDING, FULL, SLIDING, FULL)
    with pytest.raises(InputError):
        a.with_changes(num_kv_heads=5)


def test_a_fifo_deeply_nested_or_huge_config_is_one_error(tmp_path):
    import os

    from memviz.core.arch import load_config
    from memviz.core.errors import InputError

    fifo = tmp_path / "fifo" / "config.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (17 * 2**20))
    for path, needle in ((fifo, "not a regular file"), (nested, "not valid JSON"), (huge, "a few kilobytes")):
        with pytest.raises(InputError, match=needle):
            load_config(path)


def test_glm4_moe_counts_what_transformers_builds():
    """A GLM-4.5-Air-shaped glm4_moe config: shared expert (n_shared x moe_intermediate), routers with an
    e_score_correction_bias, q/k/v bias without o_proj bias. transformers 5.24 built it on the meta device:
    106,852,245,504 parameters + 5,824 buffer elements (45 x 128 score biases, 64 rotary frequencies)."""
    from memviz.core.arch import from_hf_config
    from memviz.core.inventory import parameter_count

    cfg = {"model_type": "glm4_moe", "hidden_size": 4096, "num_hidden_layers": 46, "num_attention_heads": 96,
           "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 10944, "moe_intermediate_size": 1408,
           "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1,
           "vocab_size": 151552, "attention_bias": True, "tie_word_embeddings": False,
           "max_position_embeddings": 131072, "use_qk_norm": False}
    a = from_hf_config(cfg)
    assert not a.warnings
    assert parameter_count(a) == 106_852_245_504 + 5_824 - 64  # memviz leaves the rotary buffer out


@pytest.mark.parametrize("cfg, says", [
    ({"model_type": "future_hybrid", "full_attention_interval": 4}, "full_attention_interval"),
    ({"model_type": "minimax", "layer_types": ["linear_attention"] * 3 + ["full_attention"]},
     "3 of 4 layers are linear_attention"),
    ({"model_type": "zamba2", "layers_block_type": ["mamba", "hybrid", "mamba", "mamba"]}, "layers_block_type"),
    ({"model_type": "future_hybrid", "hybrid_override_pattern": "M-M*"}, "hybrid_override_pattern"),
    ({"model_type": "rwkv7"}, "built of recurrent layers"),
])
def test_recurrent_and_linear_attention_layers_are_refused_by_name(cfg, says):
    """A KV cache for every layer would be wrong for them: one clear error instead of a figure."""
    base = {"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "vocab_size": 151936}
    with pytest.raises(InputError, match=says):
        from_hf_config({**base, **cfg})


def test_attention_layer_kinds_stay_accepted():
    base = {"hidden_size": 256, "num_hidden_layers": 3, "num_attention_heads": 4, "vocab_size": 1000, "sliding_window": 64}
    a = from_hf_config({**base, "model_type": "llama",
                        "layer_types": ["sliding_attention", "full_attention", "chunked_attention"]})
    assert a.layer_types == (SLIDING, FULL, SLIDING)


@pytest.mark.parametrize("model_type, extra, expected", [
    ("cohere2", {"sliding_window_pattern": 4}, (SLIDING, SLIDING, SLIDING, FULL) * 2),
    ("olmo3", {}, (SLIDING, SLIDING, SLIDING, FULL) * 2),
    ("exaone4", {"sliding_window_pattern": "LLLG"}, (SLIDING, SLIDING, SLIDING, FULL) * 2),
    ("exaone4", {"sliding_window_pattern": 2}, (SLIDING, FULL) * 4),
])
def test_configs_without_layer_types_follow_their_windows_pattern(model_type, extra, expected):
    """As transformers' Cohere2Config / Olmo3Config / Exaone4Config build layer_types when the file has none."""
    base = {"hidden_size": 256, "num_hidden_layers": 8, "num_attention_heads": 4, "vocab_size": 1000,
            "sliding_window": 128, "model_type": model_type}
    assert from_hf_config({**base, **extra}).layer_types == expected


def test_layer_types_that_is_not_a_list_is_one_clear_error():
    """Found by the hostile-config test on the gpt-oss-120b preset: an integer crashed len()."""
    cfg = dict(get_preset("gpt-oss-120b").config, layer_types=-1)
    with pytest.raises(InputError, match="layer_types must be a list"):
        from_hf_config(cfg)


def test_glm4_moe_lite_is_mla_with_its_own_head_widths_and_listed_dense_layers():
    """Glm4MoeLiteConfig (GLM-4.7-Flash): MLA whose 20 heads do not divide the hidden size, experts in the layers
    mlp_layer_types marks "sparse" (default: every layer but the first), one shared expert, router score bias."""
    cfg = {"model_type": "glm4_moe_lite", "hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 20,
           "num_key_value_heads": 20, "vocab_size": 1000, "intermediate_size": 10240, "moe_intermediate_size": 1536,
           "n_routed_experts": 64, "n_shared_experts": 1, "num_experts_per_tok": 4, "kv_lora_rank": 512,
           "q_lora_rank": 768, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256}
    a = from_hf_config(cfg)
    assert a.is_mla and (a.head_dim, a.v_head_dim, a.num_kv_heads) == (256, 256, 20) and not a.warnings
    assert a.moe_layers == (False, True, True, True) and a.shared_expert_intermediate_size == 1536
    assert from_hf_config({**cfg, "mlp_layer_types": ["dense", "dense", "sparse", "dense"]}).moe_layers == (
        False, False, True, False)
    with pytest.raises(InputError, match="mlp_layer_types"):
        from_hf_config({**cfg, "mlp_layer_types": ["sparse"]})


@pytest.mark.parametrize("cfg, what", [
    ({"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 768, "num_hidden_layers": 12,
      "num_attention_heads": 12, "vocab_size": 30522}, "an encoder model"),
    ({"model_type": "t5", "is_encoder_decoder": True, "d_model": 512, "num_layers": 6, "num_heads": 8,
      "vocab_size": 32128}, "an encoder-decoder model"),
    # sentence-transformers/all-MiniLM-L6-v2 and intfloat/multilingual-e5-large: embedding models name their base
    # class, no head (read as Llama-style decoders before: +25 %)
    ({"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 384, "num_hidden_layers": 6,
      "num_attention_heads": 12, "intermediate_size": 1536, "vocab_size": 30522}, "bert: an encoder model"),
    ({"model_type": "xlm-roberta", "architectures": ["XLMRobertaModel"], "hidden_size": 1024, "num_hidden_layers": 24,
      "num_attention_heads": 16, "intermediate_size": 4096, "vocab_size": 250002}, "xlm-roberta: an encoder model"),
])
def test_encoders_and_encoder_decoders_are_refused_with_one_line(cfg, what):
    """bert-base-uncased's and t5-small's config.json fields: read as Llama-style decoders they were 25 % off."""
    with pytest.raises(InputError, match=what):
        from_hf_config(cfg)


def test_starcoder_is_read_with_its_single_kv_head():
    """bigcode/starcoder's config.json (GPTBigCodeForCausalLM, multi_query): 15.5B parameters as its card says, one
    K/V head of 128 in 40 layers, 20,480 bytes a token in bf16 (transformers' GPTBigCodeAttention caches K and V
    of that one head)."""
    from memviz.core.formats import get_kv_format
    from memviz.core.inventory import parameter_count
    from memviz.core.kv import kv_bytes_per_token

    a = from_hf_config({"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "n_embd": 6144,
                        "n_head": 48, "n_inner": 24576, "n_layer": 40, "n_positions": 8192, "multi_query": True,
                        "vocab_size": 49152, "activation_function": "gelu_pytorch_tanh"})
    assert not a.warnings
    assert parameter_count(a) == pytest.approx(15.5e9, rel=0.005)
    assert kv_bytes_per_token(a, get_kv_format("bf16")) == 20_480


def test_bloom_holds_its_published_size():
    """bigscience/bloom's config.json (hidden 14,336, 70 layers, 112 heads, 250,880 tokens): 176B parameters, as its
    card says; memviz leaves out only the embedding LayerNorm (28,672 values)."""
    from memviz.core.inventory import parameter_count

    a = from_hf_config({"architectures": ["BloomForCausalLM"], "model_type": "bloom", "hidden_size": 14336,
                        "n_layer": 70, "n_head": 112, "vocab_size": 250880})
    assert not a.warnings and a.tie_word_embeddings
    assert parameter_count(a) == pytest.approx(176.2e9, rel=0.002)


@pytest.mark.parametrize("patch,message", [
    (dict(hybrid_layer_pattern=[0, 1]), "hybrid_layer_pattern has 2 entries for 4 layers"),
    (dict(moe_layer_freq=[0, 1, 1]), "moe_layer_freq has 3 entries for 4 layers"),
    (dict(hybrid_layer_pattern="LLLG"), "hybrid_layer_pattern must be a list"),
    (dict(swa_head_dim=64), "sliding layers with their own query heads or head widths"),
])
def test_a_malformed_mimo_v2_layout_is_one_clear_error(patch, message):
    mimo = dict(model_type="mimo_v2_flash", vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=4,
                num_attention_heads=4, num_key_value_heads=2, head_dim=24, v_head_dim=16, n_routed_experts=4,
                num_experts_per_tok=2, moe_intermediate_size=16, hybrid_layer_pattern=[0, 1, 1, 0],
                moe_layer_freq=[0, 1, 1, 1], sliding_window_size=32)
    assert from_hf_config(mimo).layer_kv_heads(1) == 4  # the sliding layers' twice as many
    with pytest.raises(InputError, match=message):
        from_hf_config({**mimo, **patch})


def test_mlp_layer_types_decide_the_expert_layers_of_any_type():
    """transformers 5 writes each layer's feed-forward kind for the DeepSeek-V3 descendants; any kind but "dense"
    holds experts (DeepSeek-V4 names them "moe" and "hash_moe"), whatever the type."""
    cfg = dict(model_type="some_new_moe", vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=4,
               num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
               moe_intermediate_size=16, mlp_layer_types=["dense", "sparse", "moe", "hash_moe"])
    assert from_hf_config(cfg).moe_layers == (False, True, True, True)
    with pytest.raises(InputError, match="mlp_layer_types"):
        from_hf_config({**cfg, "mlp_layer_types": ["dense"]})


def test_every_per_layer_field_survives_a_json_round_trip():
    """Sessions and the probe's child builder carry architectures as JSON: every tuple field comes back a tuple
    (Laguna's per-layer heads, MiniMax-M3's indexer layers, DeepSeek-V4's ratios), so an estimate of the read-back
    architecture equals the original's."""
    import json
    from pathlib import Path

    from memviz.core.arch import Architecture, from_hf_config

    configs = Path(__file__).parents[1] / "data" / "llamacpp" / "configs"
    for name in ("laguna", "minimax-m3", "hy-v4", "deepseek-v4"):
        a = from_hf_config(json.loads((configs / f"{name}.json").read_text()))
        back = Architecture.from_dict(json.loads(json.dumps(a.to_dict())))
        assert back == a and hash(back) == hash(a), name


def test_laguna_per_layer_heads_follow_a_layer_count_and_give_way_to_a_typed_head_count():
    import json
    from pathlib import Path

    from memviz.core.arch import from_hf_config

    a = from_hf_config(json.loads((Path(__file__).parents[1] / "data" / "llamacpp" / "configs" / "laguna.json")
                                  .read_text()))
    assert a.with_changes(num_layers=8).layer_heads == (8, 4, 4, 4) * 2
    uniform = a.with_changes(num_heads=4)
    assert uniform.layer_heads == () and uniform.layer_num_heads(0) == 4


def test_a_dbrx_config_with_malformed_nested_configs_is_one_clear_error():
    base = dict(model_type="dbrx", d_model=256, n_heads=4, n_layers=2, vocab_size=1000)
    with pytest.raises(InputError, match="attn_config and ffn_config must be objects"):
        from_hf_config({**base, "attn_config": "x"})
    a = from_hf_config({**base, "ffn_config": {"ffn_act_fn": "gelu", "moe_num_experts": 4, "moe_top_k": 2}})
    assert a.hidden_act == "silu" and a.num_experts == 4 and a.experts_per_token == 2


@pytest.mark.parametrize("layer_types", [None, ["sliding_attention", "full_attention"] * 2,
                                         ["sliding_attention", "mlp", "full_attention", "mlp"]])
def test_dory_is_refused_for_its_looped_section_not_read_as_a_llama_or_called_linear_attention(layer_types):
    """NVIDIA's Dory (transformers 5.25 modeling_dory.py) runs its middle layers n_recurrent_loops times, each loop
    with caches of its own: neither a Llama-style reading nor the linear-attention refusal says what it is."""
    from memviz.core.arch import from_hf_config

    cfg = {"model_type": "dory", "hidden_size": 2560, "num_hidden_layers": 4, "num_attention_heads": 16,
           "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 131072, "n_recurrent_loops": 2,
           **({"layer_types": layer_types} if layer_types else {})}
    with pytest.raises(InputError, match=r"dory: its layers hold nGPT-style layers .* n_recurrent_loops"):
        from_hf_config(cfg)


@pytest.mark.parametrize(("cfg", "says"), [
    ({"model_type": "blt", "vocab_size": 260}, "byte patches"),  # BltConfig: the widths sit in its sub-configs
    ({"model_type": "xglm", "d_model": 1024, "num_layers": 24, "attention_heads": 16, "ffn_dim": 4096,
      "vocab_size": 256008}, "XGLMDecoderLayer"),
    ({"model_type": "reformer", "hidden_size": 256, "num_attention_heads": 12, "attention_head_size": 64,
      "vocab_size": 320}, "LSH"),
    ({"model_type": "trocr", "d_model": 1024, "decoder_layers": 12, "decoder_attention_heads": 16,
      "vocab_size": 50265}, "image encoder"),
])
def test_types_without_the_standard_fields_are_refused_for_what_they_are(cfg, says):
    """transformers 5.25's default configs of these types (their fields as there) stopped the reader at a missing
    field ("config is missing hidden_size ...") instead of saying what the model is."""
    from memviz.core.arch import from_hf_config

    with pytest.raises(InputError, match=f"{cfg['model_type']}: its layers hold .*{says}"):
        from_hf_config(cfg)
