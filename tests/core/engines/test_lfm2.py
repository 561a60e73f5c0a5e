"""LFM2, LFM2-MoE and LFM3: short-convolution layers beside a few attention layers. Parameters and the cache transformers
fills, run for real (tiny random models, CPU), to the element and the byte; the released LFM2-1.2B config against its
card; vLLM's state pages and llama.cpp's RS rows from their source; the importer's spellings and refusals (the live
llama.cpp runs are in tests/probe/test_llamacpp_live.py)."""

import warnings

import pytest

from memviz.core.arch import FULL, LINEAR, SHORTCONV, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import active_parameter_count, parameter_count
from tests.core.engines.transformers_runs import run_and_compare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
            num_key_value_heads=2, conv_L_cache=3, layer_types=["conv", "full_attention", "conv", "conv"])
MOE = dict(moe_intermediate_size=32, num_experts=4, num_experts_per_tok=2, num_dense_layers=1)
LFM3_IDS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)  # Lfm3Config's defaults lie beyond a tiny vocabulary
#: LiquidAI/LFM2-1.2B's config.json (the fields memviz reads, as released: block_ff_dim, full_attn_idxs, no
#: tie_word_embeddings): 1.17B parameters, as its model card gives them
LFM2_1_2B = dict(model_type="lfm2", architectures=["Lfm2ForCausalLM"], hidden_size=2048, num_hidden_layers=16,
                 num_attention_heads=32, num_key_value_heads=8, block_ff_dim=12288, block_auto_adjust_ff_dim=True,
                 block_ffn_dim_multiplier=1.0, block_multiple_of=256, conv_L_cache=3, conv_bias=False, conv_dim=2048,
                 full_attn_idxs=[2, 5, 8, 10, 12, 14], vocab_size=65536, max_position_embeddings=128000)


@pytest.mark.parametrize(("model_type", "changes", "dtype"), [
    ("lfm2", {}, "fp32"), ("lfm2", {"conv_bias": True, "tie_word_embeddings": False}, "bf16"),
    ("lfm2", {"block_ffn_dim_multiplier": 1.5, "block_multiple_of": 64}, "fp32"), ("lfm2_moe", MOE, "fp32"),
    ("lfm3", LFM3_IDS, "fp32"), ("lfm3", {**LFM3_IDS, "use_sandwich_norm": False, "use_attention_gate": False}, "bf16")])
def test_the_cache_transformers_fills_is_memviz_kv_and_state(model_type, changes, dtype):
    """The convolution's last conv_L_cache inputs over hidden channels in the model's dtype (no recurrent state), the
    attention layer's K and V: memviz's transformers cache to the byte, its parameters exact."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type, **{**TINY, **changes})
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config, dtype)
    assert a.linear_mixer == SHORTCONV and a.layer_types == (LINEAR, FULL, LINEAR, LINEAR)
    assert kv == held > 0
    stored = sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for n, b in model.named_buffers() if "expert_bias" in n)
    assert parameter_count(a) == stored


def test_lfm3_slides_and_gates_as_its_config_class_builds_it():
    """Lfm3Config's own layer kinds (convolutions, a full layer and a sliding one in every four), the sandwich norms
    and the per-head sigmoid gate: the cache and the parameters of a tiny real run; llama.cpp 0c1e570 does not run
    LFM3, vLLM 0.34 does (model_executor/models/lfm3.py: LFM2's ShortConv state beside full and sliding layers)."""
    fields = {k: v for k, v in {**TINY, **LFM3_IDS}.items() if k != "layer_types"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("lfm3", **{**fields, "num_hidden_layers": 8, "sliding_window": 32})
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config)
    assert a.layer_kinds_text() == "5 × short convolution, 2 × full, 1 × sliding (32 tokens)"
    assert kv == held > 0 and parameter_count(a) == sum(p.numel() for p in model.parameters())
    assert from_hf_config({**fields, "model_type": "lfm3", "num_hidden_layers": 8}).layer_types == a.layer_types
    with pytest.raises(InputError, match="no such architecture"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q8_0", context_tokens=64))
    f = estimate(a, Scenario(engine="vllm", context_tokens=64, gpu="l4")).engine_facts
    # groups of the fewest layers of a kind (one sliding layer): 5 + 2 + 1
    assert f["linear_state_layer_kind"] == "short convolution" and f["kv_groups"] == 8


def test_lfm2_1_2b_counts_as_published_and_as_transformers_builds_it():
    a = from_hf_config(LFM2_1_2B)
    fields = {k: v for k, v in LFM2_1_2B.items() if k not in ("model_type", "architectures")}
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model("lfm2", **fields))
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) == 1_170_340_608
    assert a.intermediate_size == 8192 and a.tie_word_embeddings and not a.warnings  # 2/3 of 12,288
    assert a.layer_kinds_text() == "10 × short convolution, 6 × full"
    assert active_parameter_count(a) == parameter_count(a)


def test_each_engine_keeps_the_convolution_state_as_its_source_does():
    """Per convolution layer and sequence: transformers keeps conv_L_cache columns in the model's dtype
    (LinearAttentionLayer), llama.cpp kernel - 1 columns in F32 (hparams n_embd_r = n_embd x (l_cache - 1)), vLLM
    kernel - 1 columns in the model's dtype over hidden / tp channels (`short_conv_state_shape`), padded to the
    attention page (8 KV heads x 64 x K, V x 2 bytes a token: 16 tokens hold it, and the block is 0.34's default 64)
    and kept twice with prefix caching."""
    a = from_hf_config(LFM2_1_2B)
    facts = {engine: estimate(a, Scenario(engine=engine, context_tokens=4096, gpu="h100-80g")).engine_facts
             for engine in ("transformers", "llamacpp", "vllm")}
    assert facts["transformers"]["linear_state_bytes_per_layer_sequence"] == 2048 * 3 * 2
    assert facts["llamacpp"]["linear_state_bytes_per_layer_sequence"] == 2048 * 2 * 4
    assert facts["vllm"]["linear_state_bytes_per_layer_sequence"] == 2 * 64 * 8 * 64 * 2 * 2
    assert {f["linear_state_layer_kind"] for f in facts.values()} == {"short convolution"}
    # a width no released LFM2 has, to reach the rule (ShortConv splits in_proj and the convolution over ranks)
    with pytest.raises(InputError, match=r"short convolution's 2052 channels divisible by tp \(8\)"):
        estimate(a.with_changes(linear_v_head_dim=2052), Scenario(engine="vllm", tp=8, context_tokens=4096))


def test_the_gguf_metadata_llamacpp_writes_reads_back():
    """conversion/lfm2.py writes KV heads per layer (0 for a convolution), shortconv.l_cache and the feed-forward
    width already adjusted; LFM2-MoE its leading dense layers."""
    from memviz.core.importers.gguf_file import config_from_gguf

    kv = [0, 0, 8, 0, 0, 8]
    meta = {"general.architecture": "lfm2moe", "lfm2moe.block_count": 6, "lfm2moe.embedding_length": 1024,
            "lfm2moe.attention.head_count": 16, "lfm2moe.attention.head_count_kv": kv,
            "lfm2moe.feed_forward_length": 3584, "lfm2moe.expert_feed_forward_length": 896,
            "lfm2moe.expert_count": 8, "lfm2moe.expert_used_count": 2, "lfm2moe.leading_dense_block_count": 2,
            "lfm2moe.shortconv.l_cache": 3, "lfm2moe.vocab_size": 4096}
    cfg, warnings_ = config_from_gguf(meta, set())
    a = from_hf_config(cfg)
    assert a.layer_types == (LINEAR, LINEAR, FULL, LINEAR, LINEAR, FULL) and a.num_kv_heads == 8
    assert a.intermediate_size == 3584 and a.moe_layers == (False, False, True, True, True, True)
    assert a.linear_conv_kernel == 3 and not [w for w in warnings_ if "head_count_kv" in w]
    with pytest.raises(InputError, match="shortconv.l_cache"):
        config_from_gguf({**meta, "lfm2moe.shortconv.l_cache": 1}, set())
    with pytest.raises(InputError, match="head_count_kv per layer"):
        config_from_gguf({**meta, "lfm2moe.attention.head_count_kv": 8}, set())


@pytest.mark.parametrize(("changes", "message"), [
    ({"layer_types": ["conv", "mamba", "conv", "conv"]}, "'conv' or 'full_attention'"),
    ({"conv_L_cache": 0}, "conv_L_cache"),
    ({"full_attn_idxs": "2,5"}, "full_attn_idxs"),
])
def test_a_config_that_cannot_describe_the_model_is_refused(changes, message):
    cfg = {"model_type": "lfm2", **TINY, **changes}
    if "full_attn_idxs" in changes:
        cfg.pop("layer_types")
    with pytest.raises(InputError, match=message):
        from_hf_config(cfg)
