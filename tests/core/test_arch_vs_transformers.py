"""Parameter counts of every model type memviz knows against what transformers itself builds from the same
config (each type's default configuration, on the meta device: no memory, no download). Rotary frequency
buffers and attention masks are not weights and are left out on both sides; the differences named in
ALLOWED are memviz's documented simplifications."""

import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from memviz.core.arch import KNOWN_MODEL_TYPES, from_hf_config  # noqa: E402
from memviz.core.errors import InputError  # noqa: E402
from memviz.core.inventory import parameter_count  # noqa: E402

#: model type -> elements memviz leaves out on purpose
ALLOWED = {
    "apertus": 4 * 32,  # xIELU's two learned scalars and two constants per layer
}
NOT_WEIGHTS = ("inv_freq", "rotary", "causal_mask", "masked_bias", "embed_scale")
#: fields a default configuration lacks for transformers to build it: Lfm2MoeConfig has no default layer_types
#: (Lfm2MoeDecoderLayer indexes them): one attention layer in four over the default 32 layers
#: NemotronConfig, HunYuan's and Ministral's configs leave num_key_value_heads / head_dim None, which their attention
#: divides by
#: Dots1Config leaves n_routed_experts, n_shared_experts and num_experts_per_tok None, which Dots1NaiveMoe sizes its
#: experts and routes with: the released dots.llm1's 128, 2 and 6, its first layer dense
#: DbrxAttentionConfig has no rope_theta, which DbrxAttention reads
BUILDABLE = {"lfm2_moe": {"layer_types": ["conv", "conv", "full_attention", "conv"] * 8},
             "dots1": {"n_routed_experts": 128, "n_shared_experts": 2, "first_k_dense_replace": 1,
                       "num_experts_per_tok": 6},
             "nemotron": {"num_key_value_heads": 8}, "hunyuan_v1_dense": {"head_dim": 128},
             "hunyuan_v1_moe": {"head_dim": 128}, "ministral": {"head_dim": 128},
             "dbrx": {"attn_config": {"rope_theta": 10_000.0}}}


def _reference(model_type: str) -> tuple[dict, int, int]:
    """(the default config, its elements, their bytes built in bf16: the modules a class keeps float32 stay so)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model(model_type, **BUILDABLE.get(model_type, {}))
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    stored = set(model.state_dict())  # non-persistent buffers (GPTBigCode's causal mask) are no checkpoint weights
    tensors = list(model.parameters()) + [b for n, b in model.named_buffers()
                                          if n in stored and not any(k in n for k in NOT_WEIGHTS)]
    return config.to_dict(), sum(t.numel() for t in tensors), sum(t.numel() * t.element_size() for t in tensors)


def _elements_built_from(cfg: dict) -> int:
    """Elements of the causal LM transformers builds from the config dict `cfg` on the meta device: parameters and
    stored buffers (the routers' e_score_correction_bias), rotary frequencies and masks apart."""
    from transformers import AutoConfig, AutoModelForCausalLM

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**cfg))
    stored = set(model.state_dict())
    return sum(p.numel() for p in model.parameters()) + sum(b.numel() for n, b in model.named_buffers()
                                                            if n in stored and not any(k in n for k in NOT_WEIGHTS))


#: wrappers whose vision tower transformers builds with timm (Gemma 3n's MobileNetV5; AutoModelForCausalLM builds
#: Gemma 3n's wrapper, towers included): checked with timm where it is installed, without it below
TIMM_TOWERS = {"gemma3n"}
#: known types transformers builds only inside a multimodal wrapper (no causal-LM class): checked with it below
WRAPPED_ONLY = {"gemma3", "muse_glimmer_text", "cosmos3_edge_text", "mllama_text_model", "molmo2_text",
                "muse_spark_text", "step3p5", "mistral_large4_text", "chameleon",
                "emu3_text_model", "voxtral_realtime_text"}  # tests/core/engines/test_muse_spark.py, test_step3p5.py,
#: test_mistral_large4.py, test_chameleon.py; tests/core/test_towers.py (Emu3, Voxtral Realtime)


#: known types transformers 5.25 has no class for, whose releases ship their own modeling code: counted by hand
#: against that code and the release's card (tests/core/engines/test_bailing_moe.py)
RELEASE_CODE_ONLY = {"bailing_moe", "bailing_moe_v2"}


@pytest.mark.parametrize("model_type", sorted(set(KNOWN_MODEL_TYPES) - WRAPPED_ONLY - RELEASE_CODE_ONLY))
def test_memviz_counts_what_transformers_builds(model_type):
    """Elements, and bytes in bf16: memviz's transformers weights (the language model, every tensor bf16 but those
    the class keeps float32, `WIDE_KINDS`) equal the model's."""
    from memviz.core.estimate import Scenario, estimate

    if model_type in TIMM_TOWERS:
        pytest.importorskip("timm")  # transformers builds their vision tower with timm (TimmWrapperModel)
    cfg, reference, nbytes = _reference(model_type)  # every type memviz knows must exist in the transformers tested
    try:
        a = from_hf_config(cfg)
    except InputError as exc:  # default configs that are not models (no experts per token, heads not dividing)
        assert model_type in ("deepseek_v2", "glm4_moe"), exc
        return
    towers = sum(e.parameters for e in a.encoders) if model_type in TIMM_TOWERS else 0  # built with the wrapper
    assert reference - towers - parameter_count(a) == ALLOWED.get(model_type, 0)
    language_model = a.with_changes(encoders=())
    weights = estimate(language_model, Scenario(engine="transformers", weight_format="bf16", context_tokens=64,
                                                device="cpu")).bytes["weights"]
    assert nbytes - 2 * towers - weights == 2 * ALLOWED.get(model_type, 0)


#: Gemma 4's text decoders as transformers' converter defines them (huggingface/transformers 0f3f0632
#: src/transformers/models/gemma4/convert_gemma4_weights.py `_VARIANTS`): per-layer embeddings and KV sharing (E2B,
#: E4B), a double-wide MLP in the sharing layers (E2B), V taken from K with fewer KV heads in the full layers (31B,
#: 26B-A4B), a dense MLP beside 128 experts (26B-A4B)
_SLIDING, _FULL = "sliding_attention", "full_attention"
GEMMA4_VARIANTS = {
    "e2b": dict(hidden_size=1536, hidden_size_per_layer_input=256, intermediate_size=4 * 1536, num_hidden_layers=35,
                layer_types=([_SLIDING] * 4 + [_FULL]) * 7, num_attention_heads=8, num_key_value_heads=1,
                attention_k_eq_v=False, num_kv_shared_layers=20, use_double_wide_mlp=True),
    "e4b": dict(hidden_size=2560, hidden_size_per_layer_input=256, intermediate_size=4 * 2560, num_hidden_layers=42,
                layer_types=([_SLIDING] * 5 + [_FULL]) * 7, num_attention_heads=8, num_key_value_heads=2,
                global_head_dim=512, attention_k_eq_v=False, num_kv_shared_layers=18),
    "31b": dict(hidden_size=5376, hidden_size_per_layer_input=0, intermediate_size=4 * 5376, num_hidden_layers=60,
                layer_types=([_SLIDING] * 5 + [_FULL]) * 10, num_attention_heads=32, num_key_value_heads=16,
                num_global_key_value_heads=4, attention_k_eq_v=True, sliding_window=1024),
    "26b-a4b": dict(hidden_size=2816, hidden_size_per_layer_input=0, intermediate_size=2112, num_hidden_layers=30,
                    layer_types=([_SLIDING] * 5 + [_FULL]) * 5, num_attention_heads=16, num_key_value_heads=8,
                    num_global_key_value_heads=2, attention_k_eq_v=True, enable_moe_block=True, num_experts=128,
                    moe_intermediate_size=704, top_k_experts=8, sliding_window=1024),
}


@pytest.mark.parametrize("variant", sorted(GEMMA4_VARIANTS))
def test_gemma4_variants_count_what_transformers_builds(variant):
    """Read as the published config.json writes them (global_head_dim, num_global_key_value_heads) and as
    transformers 5.24 writes them back (per_layer_config): both give transformers' own count, to the element."""
    from transformers import AutoModelForCausalLM, Gemma4TextConfig

    kw = GEMMA4_VARIANTS[variant]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = Gemma4TextConfig(**kw)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    reference = sum(p.numel() for p in model.parameters())
    reference += sum(b.numel() for n, b in model.named_buffers() if not any(k in n for k in NOT_WEIGHTS))
    published = {"model_type": "gemma4_text", "vocab_size": 262_144, "head_dim": 256, **kw}
    assert parameter_count(from_hf_config(published)) == reference
    assert parameter_count(from_hf_config(config.to_dict())) == reference


#: Kimi-K2's published shape (moonshotai/Kimi-K2-Instruct config.json: model_type "kimi_k2", architectures
#: DeepseekV3ForCausalLM; the same widths in every K2 release): 1.03T parameters, 32B active per the model card
KIMI_K2 = dict(model_type="kimi_k2", architectures=["DeepseekV3ForCausalLM"], vocab_size=163840, hidden_size=7168,
               intermediate_size=18432, num_hidden_layers=61, num_attention_heads=64, num_key_value_heads=64,
               q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
               n_routed_experts=384, num_experts_per_tok=8, n_shared_experts=1, moe_intermediate_size=2048,
               first_k_dense_replace=1, n_group=1, topk_group=1, tie_word_embeddings=False)


def test_an_unknown_model_type_is_read_as_the_architecture_its_config_names():
    """Kimi-K2's own model_type, built by DeepseekV3ForCausalLM (as vLLM resolves it): memviz reads it with
    DeepSeek-V3's rules and counts what transformers builds."""
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    from memviz.core.inventory import active_parameter_count

    a = from_hf_config(KIMI_K2)
    fields = {k: v for k, v in KIMI_K2.items() if k not in ("model_type", "architectures")}
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = DeepseekV3ForCausalLM(DeepseekV3Config(**fields))
    reference = sum(p.numel() for p in model.parameters())
    reference += sum(b.numel() for n, b in model.named_buffers() if not any(k in n for k in NOT_WEIGHTS))
    assert a.model_type == "deepseek_v3" and parameter_count(a) == reference
    assert active_parameter_count(a) == pytest.approx(32e9, rel=0.02)
    assert any("read as 'deepseek_v3'" in w for w in a.warnings)


#: released configs of MoE families memviz reads with their own rules, with the totals their model cards state
#: (parameters, active parameters): the fields as published in each repository's config.json on the Hugging Face Hub
_TRINITY_NANO = dict(model_type="afmoe", architectures=["AfmoeForCausalLM"], vocab_size=200192, hidden_size=1024,
                     intermediate_size=3072, moe_intermediate_size=256, num_hidden_layers=56, num_attention_heads=8,
                     num_key_value_heads=2, head_dim=128, num_dense_layers=2, num_experts=128, num_experts_per_tok=8,
                     num_shared_experts=1, global_attn_every_n_layers=4, sliding_window=2048, mup_enabled=True,
                     tie_word_embeddings=False)
_MIMO_PATTERN = [0] + [1] * 4 + ([0] + [1] * 5) * 7 + [0]  # hybrid_layer_pattern: full at 0, 5, 11, ..., 47
RELEASED = {
    # meituan-longcat/LongCat-Flash-Chat: "560 billion total parameters", "18.6B-31.3B (~27B on average)" active
    # (memviz's active count sends all 12 routed slots to real experts: 31.4B)
    "longcat-flash-chat": (dict(model_type="longcat_flash", architectures=["LongcatFlashForCausalLM"],
                                vocab_size=131072, hidden_size=6144, ffn_hidden_size=12288, expert_ffn_hidden_size=2048,
                                num_layers=28, num_attention_heads=64, kv_lora_rank=512, q_lora_rank=1536,
                                qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, n_routed_experts=512,
                                zero_expert_num=256, moe_topk=12, max_position_embeddings=131072), 560e9, 27e9),
    # upstage/Solar-Open-100B: "102.6B total, 12B active"
    "solar-open-100b": (dict(model_type="solar_open", architectures=["SolarOpenForCausalLM"], vocab_size=196608,
                             hidden_size=4096, intermediate_size=10240, moe_intermediate_size=1280,
                             num_hidden_layers=48, num_attention_heads=64, num_key_value_heads=8, head_dim=128,
                             n_routed_experts=128, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=0,
                             tie_word_embeddings=False), 102.6e9, 12e9),
    # LGAI-EXAONE/EXAONE-4.0-32B: 32.0B
    "exaone-4.0-32b": (dict(model_type="exaone4", architectures=["Exaone4ForCausalLM"], vocab_size=102400,
                            hidden_size=5120, intermediate_size=27392, num_hidden_layers=64, num_attention_heads=40,
                            num_key_value_heads=8, head_dim=128, sliding_window=4096, sliding_window_pattern=4,
                            tie_word_embeddings=False), 32.0e9, 32.0e9),
    # arcee-ai/Trinity-Nano-Preview (6B, 1B active), Trinity-Mini (26B, 3B active), Trinity-Large (400B, 13B active)
    "trinity-nano": (_TRINITY_NANO, 6e9, 1e9),
    "trinity-mini": ({**_TRINITY_NANO, "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 1024,
                      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 4}, 26e9, 3e9),
    "trinity-large": ({**_TRINITY_NANO, "hidden_size": 3072, "intermediate_size": 12288, "moe_intermediate_size": 3072,
                       "num_attention_heads": 48, "num_dense_layers": 6, "num_experts": 256, "num_experts_per_tok": 4,
                       "num_hidden_layers": 60, "num_key_value_heads": 8, "sliding_window": 4096}, 400e9, 13e9),
    # XiaomiMiMo/MiMo-V2-Flash (309B total, 15B active), in the released field names vLLM 0.33 reads
    "mimo-v2-flash": (dict(model_type="mimo_v2_flash", architectures=["MiMoV2FlashForCausalLM"], vocab_size=152576,
                           hidden_size=4096, intermediate_size=16384, moe_intermediate_size=2048, num_hidden_layers=48,
                           num_attention_heads=64, num_key_value_heads=4, swa_num_attention_heads=64,
                           swa_num_key_value_heads=8, head_dim=192, v_head_dim=128, swa_head_dim=192,
                           swa_v_head_dim=128, n_routed_experts=256, num_experts_per_tok=8,
                           hybrid_layer_pattern=_MIMO_PATTERN, moe_layer_freq=[0] + [1] * 47, sliding_window_size=128,
                           add_swa_attention_sink_bias=True, tie_word_embeddings=False), 309e9, 15e9),
}


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_released_configs_count_what_transformers_builds_and_their_cards_state(name):
    from transformers import AutoConfig, AutoModelForCausalLM

    from memviz.core.inventory import active_parameter_count

    published, total, active = RELEASED[name]
    fields = {k: v for k, v in published.items() if k not in ("model_type", "architectures")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model(published["model_type"], **fields)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    reference = sum(p.numel() for p in model.parameters())
    reference += sum(b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    a = from_hf_config(published)
    assert parameter_count(a) == reference and not a.warnings
    assert parameter_count(a) == pytest.approx(total, rel=0.03)
    assert active_parameter_count(a) == pytest.approx(active, rel=0.2)  # cards round the active count to 1B


def test_apertus_1p5_text_with_a_pruned_head_counts_what_transformers_builds():
    """Apertus 1.5's language model (Apertus1p5TextForCausalLM): Apertus' decoder, its released LM head pruned to
    `output_vocab_size` rows; logits take that width."""
    from transformers import AutoConfig, AutoModelForCausalLM

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model("apertus1p5_text", num_hidden_layers=2, output_vocab_size=131072)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    a = from_hf_config(config.to_dict())
    assert (a.model_type, a.output_rows, a.vocab_size) == ("apertus", 131072, config.vocab_size)
    assert sum(p.numel() for p in model.parameters()) - parameter_count(a) == 2 * 2  # xIELU's scalars (ALLOWED)
    assert model.lm_head.out_features == a.output_rows
    with pytest.raises(InputError, match="output_vocab_size"):
        from_hf_config({**config.to_dict(), "output_vocab_size": config.vocab_size + 1})


@pytest.mark.parametrize("gating", [True, "per-element", False])
def test_laguna_with_its_own_heads_per_layer_counts_what_transformers_builds(gating):
    """Laguna (LagunaAttention): more query heads in its global layers than in its sliding ones
    (`num_attention_heads_per_layer`, K/V heads shared), the softplus gate's projection one value a head or one a head
    channel (any `gating` but True / "per-head", False included, builds the per-channel one), a leading dense layer,
    experts with a shared one and a routing bias."""
    from transformers import AutoConfig, AutoModelForCausalLM

    fields = dict(num_hidden_layers=8, num_attention_heads=48, num_attention_heads_per_layer=[64, 48, 48, 48] * 2,
                  layer_types=["full_attention", "sliding_attention", "sliding_attention", "sliding_attention"] * 2,
                  gating=gating, mlp_layer_types=["dense"] + ["sparse"] * 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model("laguna", **fields)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    reference = sum(p.numel() for p in model.parameters())
    reference += sum(b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    a = from_hf_config(config.to_dict())
    assert parameter_count(a) == reference and not a.warnings
    assert (a.num_heads, a.layer_num_heads(1), a.head_gate) == (64, 48, 1 if gating is True else 128)
    with pytest.raises(InputError, match="per-layer head counts"):
        from_hf_config({**config.to_dict(), "num_attention_heads_per_layer": [64, 44] * 4})


@pytest.mark.parametrize("model_type, read_as", [("mistral4", "deepseek_v2"), ("hy_v4_vl", "hy_v4"),
                                                  ("muse_glimmer", "muse_glimmer_text"),
                                                  ("cosmos3_edge", "cosmos3_edge_text"), ("glm_ocr", "glm4"),
                                                  ("mllama", "mllama_text_model"), ("molmo2", "molmo2_text")])
def test_language_models_read_as_the_decoders_they_are_built_of(model_type, read_as):
    """Mistral 4 (DeepSeek-V3's MLA and experts behind DeepSeek-V2's bias-free router), HY-V4-VL's language model
    (HYV4Model itself), Muse Glimmer's (Gemma 2's four norms, Afmoe's output gate, scaleless q/k norms), Cosmos3
    Edge's (Llama's decoder with an ungated relu2 MLP), GLM-OCR's (GLM-4's) and Llama 3.2 Vision's (cross-attention
    layers with q/k norms and two gates, 8 more embedding rows), Molmo 2's (Qwen3's q/k norms, additional_vocab_size
    more embedding rows): memviz's count equals the language model transformers builds from the default config (its
    vision tower aside), where read as a Llama-style decoder they were 0.8 %, 1.4 % and 5.1 % short, 27 % over,
    0.01 %, 0.0004 % and 0.007 % short."""
    import re

    from transformers import AutoConfig, AutoModelForImageTextToText

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model(model_type)
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
    stored = set(model.state_dict())
    named = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers()
                                              if n in stored and not any(k in n for k in NOT_WEIGHTS)]
    language_model = sum(t.numel() for n, t in named if not re.search(r"vision|visual|multi_modal|projector", n))
    a = from_hf_config(config.to_dict())
    assert a.model_type == read_as and parameter_count(a) == language_model


@pytest.mark.parametrize("audio", [{}, {"hidden_size": 256, "intermediate_size": 384, "num_blocks": 2,
                                       "num_attention_heads": 4, "time_reduction": 4, "nemo_conv_channels": 64,
                                       "nemo_final_size": 20, "ext_pw_out_channel": 256,
                                       "depthwise_separable_out_channel": 256, "depthwise_multiplier": 2,
                                       "kernel_size": 5, "bias_max_distance": 100, "bias_symmetric": True,
                                       "downsample_rate": 2}])
def test_phi4_multimodals_language_model_is_phi3s(audio):
    """Phi4MultimodalConfig is Phi3Config and its layers Phi3DecoderLayer: read as phi3, memviz's count equals the
    model transformers builds but its image and audio embedders (model.embed_tokens_extend): the image embedder
    (SigLIP with its head, separators, projections) and the audio embedder (the conformer and its two projector
    pairs; named and uncounted before: 8.8 % of the model) counted as built, also for a second audio shape."""
    from transformers import AutoConfig, AutoModelForCausalLM

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model("phi4_multimodal", audio_config=audio)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    language = sum(p.numel() for n, p in model.named_parameters() if "embed_tokens_extend" not in n)
    a = from_hf_config(config.to_dict())
    assert a.model_type == "phi3" and parameter_count(a) == language
    assert not [w for w in a.warnings if "not one memviz knows" in w]
    image, speech = (sum(p.numel() for n, p in model.named_parameters() if f"embed_tokens_extend.{part}" in n)
                     for part in ("image_embed", "audio_embed"))
    assert [(e.family, e.parameters) for e in a.encoders] == [("phi4_multimodal_vision", image),
                                                              ("phi4_multimodal_audio", speech)]
    assert not [w for w in a.warnings if "not counted" in w]


def test_arias_language_model_reads_its_own_expert_keys():
    """AriaTextConfig names its top-k moe_topk and its shared experts moe_num_shared_experts (each as wide as a routed
    one, AriaSharedExpertsMLP); llama.cpp has no Aria architecture (conversion/__init__.py TEXT_MODEL_MAP)."""
    from transformers import AutoConfig

    from memviz.core.estimate import Scenario, estimate

    cfg = AutoConfig.for_model("aria").to_dict()
    a = from_hf_config(cfg)
    assert (a.model_type, a.num_experts, a.experts_per_token) == ("aria_text", 8, 2)
    assert a.shared_expert_intermediate_size == 2 * a.moe_intermediate_size
    with pytest.raises(InputError, match="no such architecture"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=1024))


def test_molmo2_variants_language_model():
    """Molmo 2's text config may norm q / k over all heads (qk_norm_type "olmo") and bias q / k / v."""
    from transformers import AutoConfig, AutoModelForImageTextToText

    config = AutoConfig.for_model("molmo2", text_config=dict(
        hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=64, vocab_size=1000, additional_vocab_size=64, qk_norm_type="olmo", attention_bias=True),
        adapter_config=dict(text_hidden_size=256))
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = AutoModelForImageTextToText.from_config(config)
    reference = sum(p.numel() for m in (model.get_decoder(), model.get_output_embeddings()) for p in m.parameters())
    a = from_hf_config(config.to_dict())
    assert parameter_count(a) == reference and a.vocab_size == 1064


#: Gemma 3n's released text decoders (google/gemma-3n-E2B-it and -E4B-it config.json text_config: 30 and 35 layers,
#: MLPs of 8,192 and 16,384, the last 10 and 15 layers sharing K/V), and a MatFormer slice with per-layer MLP widths
GEMMA3N_VARIANTS = {
    "e2b": dict(num_hidden_layers=30, intermediate_size=[8192] * 30, num_kv_shared_layers=10),
    "e4b": dict(num_hidden_layers=35, intermediate_size=[16384] * 35, num_kv_shared_layers=15),
    "mixed": dict(num_hidden_layers=10, intermediate_size=[8192] * 5 + [4096] * 5, num_kv_shared_layers=5,
                  laurel_rank=32, altup_num_inputs=3, hidden_size=1024),
}


@pytest.mark.parametrize("variant", sorted(GEMMA3N_VARIANTS))
def test_gemma3n_text_variants_count_what_transformers_builds(variant):
    """AltUp, Laurel, per-layer embeddings, KV-sharing layers without K/V projections, per-layer MLP widths: the
    count equals Gemma3nForCausalLM's, to the element."""
    from transformers import AutoModelForCausalLM, Gemma3nTextConfig

    config = Gemma3nTextConfig(**GEMMA3N_VARIANTS[variant])
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    reference = sum(p.numel() for p in model.parameters())
    a = from_hf_config(config.to_dict())
    assert parameter_count(a) == reference and a.model_type == "gemma3n_text" and not a.warnings
    assert sum(map(a.layer_caches_kv, range(a.num_layers))) == config.num_hidden_layers - config.num_kv_shared_layers


@pytest.mark.parametrize("audio", [{}, dict(hidden_size=1024, conf_num_hidden_layers=4, conf_num_attention_heads=4,
                                            sscp_conv_channel_size=[64, 16], input_feat_size=80, conf_conv_kernel_size=7,
                                            sscp_conv_kernel_size=[[3, 3], [5, 5]],
                                            sscp_conv_stride_size=[[2, 2], [2, 3]], vocab_size=64)])
def test_gemma3n_wrapper_reads_its_language_model_and_counts_its_audio_and_vision(audio):
    """The language model as Gemma3nTextConfig's; the conformer audio encoder and its embedder to the element, built
    apart, and the vision tower: MobileNetV5's count for the architecture the config names (the wrapper builds it with
    timm, checked where timm is installed: tests/core/test_towers.py) and its embedder, built apart."""
    from transformers import Gemma3nAudioConfig, Gemma3nConfig, Gemma3nTextConfig
    from transformers.models.gemma3n import modeling_gemma3n

    from memviz.core.towers import timm_tower

    config = Gemma3nConfig(audio_config=Gemma3nAudioConfig(**audio))
    with torch.device("meta"):
        audio_parts = (modeling_gemma3n.Gemma3nAudioEncoder(config.audio_config),
                       modeling_gemma3n.Gemma3nMultimodalEmbedder(config.audio_config, config.text_config))
        vision_embedder = modeling_gemma3n.Gemma3nMultimodalEmbedder(config.vision_config, config.text_config)
    wrapper = from_hf_config(config.to_dict())
    text = from_hf_config(Gemma3nTextConfig().to_dict())
    assert parameter_count(wrapper.with_changes(encoders=())) == parameter_count(text)
    vision = timm_tower(config.vision_config.to_dict(), "") + sum(p.numel() for p in vision_embedder.parameters())
    assert [(e.modality, e.family, e.parameters) for e in wrapper.encoders] == [
        ("vision", "gemma3n_vision", vision),
        ("audio", "gemma3n_audio", sum(p.numel() for m in audio_parts for p in m.parameters()))]
    assert not [w for w in wrapper.warnings if "encoder" in w]


#: configs as released checkpoints write them, without the fields memviz must default as the class does
LLAMA_LAYOUT_VARIANTS = {
    "smollm3 without tie_word_embeddings": ("smollm3", dict(hidden_size=256, intermediate_size=512,
                                                            num_hidden_layers=4, num_attention_heads=4,
                                                            num_key_value_heads=2, vocab_size=130_000)),
    "minicpm3 (MLA) without tie_word_embeddings": ("minicpm3", dict(num_hidden_layers=2, vocab_size=1000)),
    "granitemoeshared with a shared MLP": ("granitemoeshared", dict(
        hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=384, vocab_size=1000)),
    "vaultgemma without tie_word_embeddings": ("vaultgemma", dict(num_hidden_layers=2, vocab_size=1000)),
}


@pytest.mark.parametrize("variant", sorted(LLAMA_LAYOUT_VARIANTS))
def test_llama_layout_types_default_as_their_classes(variant):
    """SmolLM3, MiniCPM3 and VaultGemma tie their embeddings unless told (their configs' defaults); GraniteMoeShared's
    shared MLP sits beside the experts: counts equal the transformers build of the config as written."""
    from transformers import AutoConfig, AutoModelForCausalLM

    model_type, fields = LLAMA_LAYOUT_VARIANTS[variant]
    config = AutoConfig.for_model(model_type, **fields)
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = AutoModelForCausalLM.from_config(config)
    written = {k: v for k, v in config.to_dict().items() if k != "tie_word_embeddings"}
    a = from_hf_config(written)
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) and not a.warnings


def test_every_encoder_only_type_is_refused():
    """Each masked-LM type of transformers 5.24 that memviz does not model as a decoder is refused from its default
    configuration, without `architectures` (an embedding model names only its base class)."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    from memviz.core.arch import ENCODER_TYPES

    others = {"bart", "mbart", "mvp", "reformer"}  # encoder-decoders (is_encoder_decoder) and Reformer's LSH decoder
    assert set(MODEL_FOR_MASKED_LM_MAPPING_NAMES) - set(KNOWN_MODEL_TYPES) - others == ENCODER_TYPES
    for model_type in sorted(ENCODER_TYPES):
        cfg = {**AutoConfig.for_model(model_type).to_dict(), "architectures": None}
        with pytest.raises(InputError, match="an encoder model"):
            from_hf_config(cfg)


def test_types_that_generate_no_text_are_refused():
    """Towers, dual encoders, speech and retrieval encoders, Q-Formers (`NON_GENERATIVE_TYPES`), read before as
    warned Llama-style decoders: each is refused from its default configuration, and none has a class transformers
    5.24 generates text with."""
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto as auto

    from memviz.core.arch import NON_GENERATIVE_TYPES

    generating = (set(auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | set(auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)
                  | set(auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)
                  | set(auto.MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES))
    assert not NON_GENERATIVE_TYPES & generating
    for model_type in sorted(NON_GENERATIVE_TYPES):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cfg = AutoConfig.for_model(model_type).to_dict()
        with pytest.raises(InputError, match="generates no text|an encoder"):
            from_hf_config(cfg)


def test_speech_image_and_encoder_decoder_parts_are_refused():
    """Speech, music and image generators, the parts of encoder-decoders and of BLT, DiffusionGemma's block-diffusion
    encoder-decoder and Evolla's protein-text model (`_NOT_TEXT_DECODERS`): read before as warned Llama-style decoders,
    their figures -90 % (VITS) to +302 % of transformers' builds; each is refused from its default configuration in
    one line naming what it is, and no type transformers 5.24 registers is left read as an unknown Llama-style
    decoder (the last, Granite Docling's, PaddleOCR-VL's and Cohere Compass's language models, are read as Granite's,
    ERNIE 4.5's and Cohere2's)."""
    import transformers

    from memviz.core.arch import _NOT_TEXT_DECODERS

    for model_type in sorted(_NOT_TEXT_DECODERS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cfg = transformers.AutoConfig.for_model(model_type).to_dict()
        with pytest.raises(InputError, match=r"^\w+: .*; memviz estimates decoder LLMs that generate text$"):
            from_hf_config(cfg)
    read_unknown = set()
    for model_type, config_class in transformers.CONFIG_MAPPING.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                a = from_hf_config(config_class().to_dict())
            except Exception:  # noqa: BLE001 - refused, or no default configuration
                continue
        if any("not one memviz knows" in w for w in a.warnings):
            read_unknown.add(model_type)
    assert read_unknown == set()


def test_every_type_transformers_registers_estimates_on_every_engine_or_is_refused_in_one_line():
    """Each type transformers registers that memviz reads, from its default configuration, estimates on transformers,
    vLLM and llama.cpp, with and without a GPU named, or is refused with an InputError: never a traceback. Voxtral
    Realtime's decoder (its norms' time-conditioning MLP) crashed llama.cpp's tensor naming; llama.cpp 0c1e570 has
    no architecture for it."""
    import transformers

    from memviz.core.estimate import Scenario, estimate

    crashed = []
    for model_type, config_class in transformers.CONFIG_MAPPING.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                a = from_hf_config(config_class().to_dict())
            except Exception:  # noqa: BLE001 - refused (test above), or no default configuration
                continue
        for engine, fmt in (("transformers", "bf16"), ("vllm", "bf16"), ("llamacpp", "Q4_K_M")):
            for gpu in (None, "h100-80g"):
                try:
                    estimate(a, Scenario(engine=engine, gpu=gpu, weight_format=fmt, context_tokens=4096))
                except InputError:
                    pass
                except Exception as e:  # noqa: BLE001 - what the test looks for
                    crashed.append((model_type, engine, gpu, repr(e)[:120]))
    assert crashed == []


def test_glm_images_language_model_is_glm4s_with_a_head_over_image_tokens():
    """GlmImageTextModel is GLM-4's decoder (four norms a layer, fused gate / up, q/k/v biased) and its LM head has
    vision_vocab_size rows, the image tokens it generates: read Llama-style it counted 7.8 % too many (a head of
    vocab_size rows, two norms a layer); its vision encoder and VQ codebook are counted (tests/core/test_towers.py)."""
    import re

    from transformers import AutoConfig
    from transformers.models.glm_image.modeling_glm_image import GlmImageForConditionalGeneration

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = AutoConfig.for_model("glm_image")
        with torch.device("meta"):
            model = GlmImageForConditionalGeneration(config)
    language_model = sum(p.numel() for n, p in model.named_parameters() if not re.search(r"visual|vqmodel", n))
    a = from_hf_config(config.to_dict())
    assert a.model_type == "glm4" and a.output_vocab_size == 16512
    assert parameter_count(a) == language_model
    assert [e.family for e in a.encoders] == ["glm_image_vision", "glm_image_vqmodel"] and not a.warnings


@pytest.mark.parametrize("written", [{}, {"num_experts": 16, "num_shared_experts": 1, "use_qkv_bias": True,
                                          "tie_word_embeddings": False}])
def test_param2_moe_reads_as_glm4_moe_with_its_own_defaults_and_names(written):
    """Param2-MoE (transformers 5.25: Param2MoeConfig(Glm4MoeConfig), built by Glm4MoeForCausalLM): a config that
    leaves fields out takes Param2's defaults (tied embeddings, q/k norms, a dense first layer of 9,216, 64 experts of
    2,048, two shared ones), not
    GLM-4.5's, and the release's own names (num_experts, num_shared_experts, use_qkv_bias) are read: the count equals
    transformers' build from the same few fields. Read before as an unknown Llama-style decoder with a warning."""
    cfg = {"model_type": "param2moe", "vocab_size": 1024, "hidden_size": 256, "num_hidden_layers": 4,
           "num_attention_heads": 4, "num_key_value_heads": 2, **written}
    a = from_hf_config(cfg)
    assert a.model_type == "glm4_moe" and not a.warnings
    assert parameter_count(a) == _elements_built_from(cfg)


def test_minicpm5_moe_reads_its_gated_queries_and_class_defaults():
    """MiniCPM5-MoE (transformers 5.25): q_gate_proj makes the queries and the output gate, DeepSeek-V3's experts with
    their score bias and shared MLP, a dense first layer and 128-wide heads by its config class whatever
    hidden_size / num_attention_heads says: the count equals transformers' build from a config that leaves them out
    (read before as an unknown Llama-style decoder: no gate, no experts' bias, heads of 64 here)."""
    cfg = {"model_type": "minicpm5_moe", "vocab_size": 1024, "hidden_size": 256, "num_hidden_layers": 3,
           "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "moe_intermediate_size": 64,
           "n_routed_experts": 8, "num_experts_per_tok": 2}
    a = from_hf_config(cfg)
    assert (a.head_dim, a.moe_layers, a.attn_output_gate) == (128, (False, True, True), True) and not a.warnings
    assert parameter_count(a) == _elements_built_from(cfg)


_KOLIBRI1_1 = {"model_type": "kolibri1_1", "vocab_size": 1024, "hidden_size": 256, "num_hidden_layers": 10,
               "num_attention_heads": 8, "num_key_value_heads": 2, "index_num_heads": 4, "moe_intermediate_size": 64,
               "shared_expert_intermediate_size": 64, "num_experts": 8, "num_experts_per_tok": 2}


def test_kolibri1_1_reads_its_layouts_kv_sharing_and_dense_leaders():
    """Kolibri 1.1 (transformers 5.25): every fifth layer indexed (full, a weightless indexer), the others sliding;
    by Kolibri1_1Config's default `kv_source_layers` the second indexed layer reads the first's K/V (no k/v
    projections, no k norm, no cache); two dense leading layers of `mlp_only_intermediate_size` (3,584) and 128-wide
    heads by default: the count equals transformers' build from a config that leaves them out (read before as an
    unknown Llama-style decoder), and the sharing layer caches nothing."""
    a = from_hf_config(_KOLIBRI1_1)
    assert parameter_count(a) == _elements_built_from(_KOLIBRI1_1) and not a.warnings
    assert (a.head_dim, a.intermediate_size, a.moe_layers[:3]) == (128, 3584, (False, False, True))
    assert a.kv_sources == (0, 1, 2, 3, 4, 5, 6, 7, 8, 4)
    assert [a.layer_caches_kv(i) for i in (4, 9)] == [True, False]


@pytest.mark.parametrize("sources, problem", [([0, 1, 2, 3, 4, 5, 6, 7, 8, 8], "layer 9"),
                                               ([0, 0, 2, 3, 4, 5, 6, 7, 8, 9], "layer 1"),
                                               ([0, 1, 2], "each of the 10 layers")])
def test_kolibri1_1_kv_sources_it_cannot_have_are_one_line(sources, problem):
    """As Kolibri1_1Config.validate_architecture: an indexed layer reading a sliding one, a sliding layer reading
    another's K/V, a list of the wrong length: one InputError naming it."""
    with pytest.raises(InputError, match=f"kv_source_layers.*{problem}"):
        from_hf_config({**_KOLIBRI1_1, "kv_source_layers": sources})
