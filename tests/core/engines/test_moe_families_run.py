"""The MoE decoders of 2025-26 that memviz reads with their own rules (Solar Open, EXAONE 4.0 and K-EXAONE,
HY 3, Trinity's AFMoE, MiMo-V2-Flash, Flint, Sarvam, Laguna, A.X-K1, Kolibri-1, Beam, Hunyuan-A13B, Cohere's MoE;
Param2-MoE, MiniCPM5-MoE, Ergo, Kolibri 1.1 and LongCat-Flash of transformers 5.25),
run for real as tiny random transformers models on the CPU: the cache transformers fills holds memviz's KV to the
byte, and the model holds memviz's parameters (transformers 5.24's modeling files of each type)."""

import warnings

import pytest

from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import assert_run_matches

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

S, F = "sliding_attention", "full_attention"
BASE = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
            num_key_value_heads=2, head_dim=16, moe_intermediate_size=16, num_experts_per_tok=2, pad_token_id=0,
            bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
SHAPES = {
    "solar_open": dict(n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=0),
    "exaone4": dict(sliding_window=32, sliding_window_pattern=4),
    "exaone_moe": dict(num_experts=4, num_shared_experts=1, sliding_window=32, layer_types=[S, S, S, F]),
    "hy_v3": dict(num_experts=4, num_shared_experts=1, mlp_layer_types=["dense", "sparse", "sparse", "sparse"]),
    "afmoe": dict(num_experts=4, num_shared_experts=2, num_dense_layers=1, sliding_window=32,
                  global_attn_every_n_layers=2),
    # the sliding layers with twice the KV heads and sinks, K and V of different widths
    "mimo_v2_flash": dict(n_routed_experts=4, head_dim=24, v_head_dim=16, sliding_window=32,
                          layer_types=[F, S, S, F], mlp_layer_types=["dense", "sparse", "sparse", "sparse"]),
    # sinks in every layer, an ungated shared expert, the first two layers dense
    "flint": dict(num_experts=4, shared_expert_intermediate_size=32, sliding_window=32, layer_types=[F, F, S, F]),
    # the released configs' names (SarvamMoEConfig / SarvamMLAConfig attribute_map); head_dim, which the released
    # MLA config sets to kv_lora_rank + qk_rope_head_dim, is left to the config class
    "sarvam_moe": dict(num_experts=4, num_shared_experts=1, first_k_dense_replace=1, use_qk_norm=True,
                       use_qkv_bias=True),
    "sarvam_mla": dict(num_experts=4, num_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=32,
                       q_lora_rank=48, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16, head_dim=None,
                       num_key_value_heads=None),
    # more query heads in the global layers, the softplus gate, a shared expert, the first layer dense
    "laguna": dict(num_experts=4, shared_expert_intermediate_size=32, sliding_window=32, layer_types=[F, S, S, S],
                   num_attention_heads_per_layer=[8, 4, 4, 4], mlp_layer_types=["dense", "sparse", "sparse", "sparse"]),
    # DeepSeek-V3 with a norm on the experts' output
    "axk1": dict(n_routed_experts=4, n_shared_experts=1, kv_lora_rank=32, q_lora_rank=48, qk_rope_head_dim=8,
                 qk_nope_head_dim=16, v_head_dim=16, head_dim=None, num_key_value_heads=None, n_group=1, topk_group=1,
                 mlp_layer_types=["dense", "sparse", "sparse", "sparse"]),
    # four norms a layer, experts with a shared one in every layer, three sliding layers in four
    "kolibri1": dict(num_local_experts=4, shared_expert_intermediate_size=32, sliding_window=32,
                     layer_types=[S, S, S, F]),
    # a gated attention output with a bias per head, four norms a layer, dense layers first, no shared expert
    "beam": dict(num_experts=4, sliding_window=32, layer_types=[S, S, S, F], n_group=1, topk_group=1,
                 mlp_layer_types=["dense", "sparse", "sparse", "sparse"]),
    # experts and one shared MLP of intermediate_size in every layer, q/k norms, a float32 router
    "hunyuan_v1_moe": dict(num_experts=4, moe_topk=2, moe_intermediate_size=None),
    # one bias-free norm a layer, a dense leading layer of its own width, a shared expert, three sliding layers in four
    "cohere2_moe": dict(num_experts=4, num_shared_experts=1, first_k_dense_replace=1, prefix_dense_intermediate_size=48,
                        sliding_window=32, moe_intermediate_size=None),
    # transformers 5.25: GLM-4.5's decoder under the release's names (num_experts, num_shared_experts, use_qkv_bias)
    "param2moe": dict(num_experts=4, num_shared_experts=2, use_qkv_bias=True, first_k_dense_replace=1),
    # q_gate_proj's queries and output gate, DeepSeek-V3's experts, a dense first layer
    "minicpm5_moe": dict(n_routed_experts=4, n_shared_experts=1, mlp_layer_types=["dense", "sparse", "sparse", "sparse"]),
    # float32 embedding, norms and residual gates, relu2 experts each with a float32 norm, sliding / NoPE full layers
    "ergo": dict(num_experts=4, first_dense_intermediate_size=80, shared_intermediate_size=32, sliding_window=32,
                 global_attention_every_n_layers=2),
    # an indexed full layer every fifth, the second reading the first's K/V, two dense leading layers
    "kolibri1_1": dict(num_hidden_layers=10, num_experts=4, shared_expert_intermediate_size=32, sliding_window=33,
                       mlp_only_intermediate_size=48, index_num_heads=2),
    # two MLA attentions and MLPs a decoder layer (cache layers 2i, 2i + 1), a shortcut MoE with zero experts
    "longcat_flash": dict(num_hidden_layers=None, num_layers=3, n_routed_experts=4, zero_expert_num=2,
                          kv_lora_rank=32, q_lora_rank=48, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16,
                          head_dim=8, num_key_value_heads=None, router_bias=True),  # head_dim: the rope width
}


@pytest.mark.parametrize("model_type", sorted(SHAPES))
def test_the_cache_and_weights_transformers_builds_are_memviz_figures(model_type):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fields = {k: v for k, v in {**BASE, **SHAPES[model_type]}.items() if v is not None}
        config = transformers.AutoConfig.for_model(model_type, **fields)
    assert_run_matches(config)


def test_the_released_sarvam_names_count_as_transformers_reads_them():
    """sarvam-30b / sarvam-105b's config.json name the shared experts `num_shared_experts` and the q/k/v bias
    `use_qkv_bias`; transformers maps them (SarvamMoEConfig / SarvamMLAConfig attribute_map), and so does memviz."""
    from memviz.core.arch import from_hf_config

    for model_type in ("sarvam_moe", "sarvam_mla"):
        fields = {k: v for k, v in {**BASE, **SHAPES[model_type]}.items() if v is not None}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = transformers.AutoConfig.for_model(model_type, **fields)
        released = {**fields, "model_type": model_type}
        assert parameter_count(from_hf_config(released)) == parameter_count(from_hf_config(config.to_dict()))


def test_hunyuan_a13b_per_layer_lists_read_as_their_one_value():
    """Hunyuan-A13B's config.json lists moe_topk, moe_intermediate_size and num_shared_expert per layer (llama.cpp's
    converter asserts they agree); read so, it counts what transformers builds from the single values."""
    from memviz.core.arch import from_hf_config
    from memviz.core.errors import InputError

    fields = {k: v for k, v in {**BASE, **SHAPES["hunyuan_v1_moe"]}.items() if v is not None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = transformers.AutoConfig.for_model("hunyuan_v1_moe", **fields).to_dict()
    n = fields["num_hidden_layers"]
    released = {**built, "moe_topk": [2] * n, "moe_intermediate_size": [96] * n, "num_shared_expert": [1] * n}
    assert parameter_count(from_hf_config(released)) == parameter_count(from_hf_config(built))
    with pytest.raises(InputError, match="moe_topk must be the same in every layer"):
        from_hf_config({**released, "moe_topk": [2, 2, 1, 2]})


def test_a_cohere2_moe_config_without_layer_kinds_reads_as_its_config_class_derives_them():
    """first_k_dense_replace (which Cohere2MoeConfig pops) places the dense layers and their own window pattern."""
    from memviz.core.arch import from_hf_config

    fields = {k: v for k, v in {**BASE, **SHAPES["cohere2_moe"], "num_hidden_layers": 6}.items() if v is not None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = transformers.AutoConfig.for_model("cohere2_moe", **fields)
    a = from_hf_config({**fields, "model_type": "cohere2_moe"})
    assert [t.split("_")[0] for t in built.layer_types] == list(a.layer_types)
    assert [k == "sparse" for k in built.mlp_layer_types] == list(a.moe_layers)
    assert parameter_count(a) == parameter_count(from_hf_config(built.to_dict()))


@pytest.mark.parametrize("model_type", sorted(SHAPES))
def test_a_bf16_load_keeps_what_memviz_counts_float32(model_type):
    """Built in bf16 as loading builds it, each model keeps the modules its class names in
    `_keep_in_fp32_modules_strict` float32 (routers, their score biases, sinks): its bytes are memviz's bf16 weights
    (the transformers engine's `WIDE_KINDS`)."""
    from memviz.core.arch import from_hf_config
    from memviz.core.estimate import Scenario, estimate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fields = {k: v for k, v in {**BASE, **SHAPES[model_type]}.items() if v is not None}
        config = transformers.AutoConfig.for_model(model_type, **fields)
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    stored = sum(p.numel() * p.element_size() for p in model.parameters())
    stored += sum(b.numel() * b.element_size() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    e = estimate(from_hf_config(config.to_dict()), Scenario(engine="transformers", weight_format="bf16",
                                                            context_tokens=64, device="cpu"))
    assert e.bytes["weights"] == stored


def test_dbrx_runs_as_memviz_reads_its_nested_config():
    """DBRX's d_model / n_heads / n_layers and its attn_config / ffn_config (DbrxConfig): a fused Wqkv, weight-only
    LayerNorms, a bias-free router and gated experts; its cache and parameters as memviz reads them."""
    config = transformers.DbrxConfig(d_model=64, n_heads=4, n_layers=2, vocab_size=512, max_seq_len=256,
                                     attn_config=dict(kv_n_heads=2, rope_theta=10_000.0, clip_qkv=8.0),
                                     ffn_config=dict(ffn_hidden_size=32, moe_num_experts=4, moe_top_k=2),
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2)
    assert_run_matches(config)
