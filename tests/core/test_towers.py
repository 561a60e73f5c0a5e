"""Multimodal encoders: their parameters against the modules transformers builds from the same configs (meta
device: no memory, no download), and what each engine loads of them."""

import json
import warnings

import pytest

from memviz.core.arch import Architecture, from_config_path, from_hf_config
from memviz.core.engines.vllm import encoder_items
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from memviz.core.presets import get_preset
from memviz.core.towers import AUDIO, VISION, most_tokens, vision_shape

#: published configs' encoders (their sources in the presets) and what transformers' converter writes for Gemma 4
SIGLIP_896 = {"model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
              "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": False}
SMALL_TEXT = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, vocab_size=1000, head_dim=64)


def _configs():
    """(name, transformers config) for each encoder family memviz counts, defaults and variants."""
    from transformers import (
        AutoConfig,
        Gemma3Config,
        Gemma4AudioConfig,
        Gemma4Config,
        Gemma4TextConfig,
        Gemma4VisionConfig,
        Glm4vMoeConfig,
        Idefics2Config,
        InternVLConfig,
        Lfm2VlConfig,
        Llama4Config,
        LlavaConfig,
        Mistral3Config,
        Qwen3VLConfig,
        SmolVLMConfig,
    )

    names = ("gemma3", "llava", "llava_next", "llava_onevision", "mistral3", "llama4", "internvl", "idefics3", "smolvlm",
             "glm4v", "glm46v", "glmga", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe",
             "paligemma", "shieldgemma2", "cohere2_vision", "lfm2_vl", "llava_next_video", "lighton_ocr", "exaone4_5",
             "hyperclovax_vision_v2", "paddleocr_vl", "glm_ocr", "cosmos3_omni", "mllama", "idefics2", "minicpmv4_6", "minicpmv4_7",
             "minicpm_ocr", "vipllava", "video_llava", "mistral_large4", "molmo2", "fuyu", "got_ocr2", "qianfan_ocr",
             "video_llama_3", "deepseek_vl", "lfm3_vl", "kimi_k25", "aria", "ovis2", "muse_glimmer",
             "minimax_m3_vl", "hy_v4_vl", "step3p7", "muse_spark", "granite_docling",
             "deepseek_vl_hybrid", "unlimited_ocr", "llava_onevision1_5", "ovis2_5")
    # aya_vision: its default SigLIP (1,152 wide, 14 heads) does not build; a variant below
    out = [(t, AutoConfig.for_model(t)) for t in names]
    on_device = Gemma4VisionConfig(use_clipped_linears=True)  # convert_gemma4_weights.py _ON_DEVICE_VISION_CONFIG
    large = Gemma4VisionConfig(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16,
                               num_key_value_heads=16, head_dim=72, global_head_dim=72, standardize=True)
    out += [
        ("gemma4 E2B-like (vision + audio)", Gemma4Config(text_config=Gemma4TextConfig(**SMALL_TEXT),
                                                          vision_config=on_device, audio_config=Gemma4AudioConfig())),
        ("gemma4 26B-like", Gemma4Config(text_config=Gemma4TextConfig(**SMALL_TEXT), vision_config=large)),
        ("gemma3 896px", Gemma3Config(text_config=dict(hidden_size=5376, num_hidden_layers=2, vocab_size=1000),
                                      vision_config=SIGLIP_896)),
        ("llava two feature layers", LlavaConfig(text_config=dict(model_type="llama", **SMALL_TEXT),
                                                 vision_feature_layer=[-2, -5], multimodal_projector_bias=False)),
        ("llava siglip", LlavaConfig(text_config=dict(model_type="llama", **SMALL_TEXT),
                                     vision_config={**SIGLIP_896, "num_hidden_layers": 3, "vision_use_head": True})),
        ("mistral3 biased 3x3 merge", Mistral3Config(
            text_config=dict(model_type="mistral", **SMALL_TEXT), multimodal_projector_bias=True, spatial_merge_size=3,
            vision_config=dict(model_type="pixtral", hidden_size=512, intermediate_size=1024, num_hidden_layers=3,
                               num_attention_heads=8))),
        ("qwen3_vl deepstack", Qwen3VLConfig(text_config=SMALL_TEXT, vision_config=dict(
            depth=5, hidden_size=256, intermediate_size=512, num_heads=4, deepstack_visual_indexes=[1, 2, 3],
            out_hidden_size=256, num_position_embeddings=1024))),
        ("internvl rms, q/k norms, biased, pooled by a LayerNorm", InternVLConfig(
            text_config=dict(model_type="qwen2", **SMALL_TEXT), vision_config=dict(
                hidden_size=320, intermediate_size=640, num_hidden_layers=2, num_attention_heads=5, norm_type="rms_norm",
                use_qk_norm=True, attention_bias=True, use_mean_pooling=False, image_size=224, patch_size=[14, 14]))),
        ("smolvlm 384 px, 3 x 3 shuffle", SmolVLMConfig(
            text_config=dict(model_type="llama", **SMALL_TEXT), scale_factor=3, vision_config=dict(
                hidden_size=1152, intermediate_size=4304, num_hidden_layers=2, image_size=384, patch_size=14))),
        ("glm4v_moe (GLM-4.5V's wrapper)", Glm4vMoeConfig(text_config=dict(
            SMALL_TEXT, moe_intermediate_size=128, n_routed_experts=4, num_experts_per_tok=2, first_k_dense_replace=1),
            vision_config=dict(depth=2, hidden_size=256, intermediate_size=512, out_hidden_size=256, num_heads=4))),
        ("lfm2_vl without norm or bias, 1,024 positions", Lfm2VlConfig(
            text_config=dict(model_type="lfm2", **SMALL_TEXT), projector_use_layernorm=False, projector_bias=False,
            downsample_factor=3, vision_config=dict(model_type="siglip2_vision_model", hidden_size=256,
                                                    intermediate_size=512, num_hidden_layers=2, num_patches=1024,
                                                    num_attention_heads=4))),
        ("idefics2 980 px, a smaller resampler", Idefics2Config(
            vision_config=dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=3, image_size=980,
                               patch_size=14),
            perceiver_config=dict(resampler_n_latents=32, resampler_depth=2, resampler_n_heads=8, resampler_head_dim=64,
                                  num_key_value_heads=2))),
        ("minicpmv4_6 two merges, a 2 x 3 window", AutoConfig.for_model("minicpmv4_6", merger_times=2, vision_config=dict(
            hidden_size=256, intermediate_size=512, num_hidden_layers=3, num_attention_heads=4, image_size=448,
            patch_size=14, window_kernel_size=[2, 3]))),
        ("vipllava three feature layers", AutoConfig.for_model(
            "vipllava", text_config=dict(model_type="llama", **SMALL_TEXT), vision_feature_layer=[-2, -5, 6])),
        ("video_llava two feature layers, no bias", AutoConfig.for_model(
            "video_llava", text_config=dict(model_type="llama", **SMALL_TEXT), vision_feature_layer=[-2, -3],
            multimodal_projector_bias=False)),
        ("aya_vision 3 x 3 shuffle, its own SwiGLU width", AutoConfig.for_model(
            "aya_vision", text_config=dict(model_type="cohere2", **SMALL_TEXT), downsample_factor=3,
            alignment_intermediate_size=1024, vision_config=dict(model_type="siglip_vision_model", hidden_size=256,
                                                                 intermediate_size=512, num_hidden_layers=2,
                                                                 num_attention_heads=4, vision_use_head=False))),
        ("molmo2 grouped pooling over three layers", AutoConfig.for_model(
            "molmo2", text_config=dict(SMALL_TEXT, head_dim=64), vision_config=dict(
                hidden_size=256, intermediate_size=512, num_hidden_layers=3, num_attention_heads=4,
                num_key_value_heads=2, head_dim=64, attention_bias=False, num_position_embeddings=100),
            adapter_config=dict(hidden_size=256, num_attention_heads=4, num_key_value_heads=1, head_dim=64,
                                vision_feature_layer=[-1, -2, -3], intermediate_size=384, mlp_bias=True,
                                text_hidden_size=SMALL_TEXT["hidden_size"]))),
        ("fuyu 16-pixel patches, one channel", AutoConfig.for_model(
            "fuyu", text_config=dict(model_type="persimmon", **SMALL_TEXT), patch_size=16, num_channels=1)),
        ("unlimited_ocr: a small SAM with its own downsampling, a narrower CLIP", AutoConfig.for_model(
            "unlimited_ocr", vision_config=dict(
                sam_config=dict(hidden_size=128, mlp_dim=256, num_hidden_layers=4, num_attention_heads=4, image_size=256,
                                window_size=7, global_attn_indexes=[1, 3], output_channels=64,
                                downsample_channels=[96, 192]),
                encoder_config=dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                                    image_size=112, patch_size=14)))),
        ("got_ocr2 small, windows of 7, two global layers", AutoConfig.for_model(
            "got_ocr2", text_config=dict(model_type="qwen2", **SMALL_TEXT), vision_config=dict(
                hidden_size=128, mlp_dim=256, num_hidden_layers=4, num_attention_heads=4, image_size=256,
                window_size=7, global_attn_indexes=[1, 3], output_channels=64, qkv_bias=False))),
        ("lfm3_vl: its own layer kinds and kernel, no projector bias", AutoConfig.for_model(
            "lfm3_vl", projector_bias=False, projector_hidden_size=512, vision_config=dict(
                hidden_size=128, intermediate_size=256, num_hidden_layers=3, num_attention_heads=4,
                num_key_value_heads=2, layer_types=["full_attention", "conv", "full_attention"], conv_kernel_size=5,
                spatial_merge_size=3, temporal_patch_size=1))),
        ("ovis2 hidden_stride 2, biases", AutoConfig.for_model(
            "ovis2", text_config=dict(model_type="qwen2", **SMALL_TEXT), hidden_size=SMALL_TEXT["hidden_size"],
            vision_config=dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                               hidden_stride=2, qkv_bias=True, mlp_bias=True, vocab_size=1024))),
        *((f"granite_docling: two mergers, {name}", AutoConfig.for_model(
            "granite_docling", density_router_hidden_size=router, pad_token_id=0,
            text_config=dict(SMALL_TEXT, pad_token_id=0, bos_token_id=1, eos_token_id=2), vision_config=dict(
                hidden_size=128, intermediate_size=256, num_hidden_layers=4, num_attention_heads=4, image_size=128,
                out_hidden_size=SMALL_TEXT["hidden_size"], scale_factor=2, deepstack_visual_indexes=[1, 2],
                use_fine_route=fine))) for name, router, fine in (("the coarse path only", None, False),
                                                                   ("a density router", 64, True))),
        ("llava_onevision1_5 3 x 3 merge, 16-pixel patches", AutoConfig.for_model(
            "llava_onevision1_5", text_config=dict(model_type="qwen3", **SMALL_TEXT), vision_config=dict(
                depth=2, hidden_size=256, intermediate_size=512, num_heads=8, patch_size=16, spatial_merge_size=3,
                out_hidden_size=SMALL_TEXT["hidden_size"]))),
        ("ovis2_5 a 3 x 3 merge, 448 px, a smaller visual vocabulary", AutoConfig.for_model(
            "ovis2_5", text_config=dict(model_type="qwen3", **SMALL_TEXT), vision_config=dict(
                hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4, image_size=448,
                patch_size=14, spatial_merge_size=3, vocab_size=4096, num_visual_indicator_tokens=5))),
        ("llama4 small", Llama4Config(
            text_config=dict(SMALL_TEXT, intermediate_size_mlp=512, num_local_experts=2),
            vision_config=dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                               image_size=336, patch_size=14, projector_input_dim=512, projector_output_dim=512,
                               vision_output_dim=512))),
    ]
    return out


def test_encoders_count_what_transformers_builds():
    """Every parameter of the wrapper outside its language model and output layer is an encoder's or its
    projector's, and memviz counts each family's to the element."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    for name, config in _configs():  # every family in the transformers the tests run with (5.24)
        with warnings.catch_warnings(), torch.device("meta"):
            warnings.simplefilter("ignore")
            model = transformers.AutoModelForImageTextToText.from_config(config)
        language = {id(p) for m in (model.get_decoder(), model.get_output_embeddings()) for p in m.parameters()}
        reference = sum(p.numel() for p in model.parameters() if id(p) not in language)
        a = from_hf_config(config.to_dict())
        assert sum(e.parameters for e in a.encoders) == reference, name
        assert not [w for w in a.warnings if "encoder" in w], name


def test_vl_language_models_are_read_as_the_decoders_they_are():
    """Qwen2.5-VL's text model is Qwen2's (q/k/v biases), Qwen3-VL's Qwen3's (q/k norms), GLM-4.1V's GLM-4's (q/k/v
    always biased): exact against transformers."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    for model_type in ("qwen2_5_vl", "qwen2_vl", "qwen3_vl", "glm4v"):
        config = transformers.AutoConfig.for_model(model_type)
        with warnings.catch_warnings(), torch.device("meta"):
            warnings.simplefilter("ignore")
            model = transformers.AutoModelForImageTextToText.from_config(config)
        language = sum(p.numel() for m in (model.get_decoder(), model.get_output_embeddings()) for p in m.parameters())
        a = from_hf_config(config.to_dict())
        assert parameter_count(a) == language, model_type
        assert not a.warnings, a.warnings


def test_gemma3_27b_holds_its_published_total():
    """Gemma-3-27B's language model (27.01B) and its SigLIP tower with the projector (0.42B): the 27.4B the
    checkpoint's page gives for google/gemma-3-27b-it."""
    a = get_preset("gemma-3-27b").architecture()
    assert [(e.modality, e.family) for e in a.encoders] == [(VISION, "siglip_vision_model")]
    assert parameter_count(a) + a.encoders[0].parameters == pytest.approx(27.4e9, abs=0.05e9)


def _weights(a: Architecture, **scenario) -> int:
    return estimate(a, Scenario(weight_format="bf16", context_tokens=4096, **scenario)).devices[0].weights


def test_each_engine_loads_what_it_loads():
    """transformers and vLLM load the tower with the language model (vLLM leaves it out with
    --language-model-only, and keeps Gemma 4's whole on every TP rank: transformers' tower with replicated linear
    layers); llama.cpp's model file holds none of it."""
    a = get_preset("gemma-4-26b-a4b").architecture()
    text = a.with_changes(encoders=())
    tower_bytes = 2 * sum(e.parameters for e in a.encoders)
    assert _weights(a, engine="transformers") - _weights(text, engine="transformers") == tower_bytes
    assert _weights(a, engine="vllm") - _weights(text, engine="vllm") == tower_bytes
    assert _weights(a, engine="vllm", tp=2) - _weights(text, engine="vllm", tp=2) == tower_bytes
    assert _weights(a, engine="vllm", options={"language_model_only": True}) == _weights(text, engine="vllm")
    assert _weights(a, engine="llamacpp") == _weights(text, engine="llamacpp")
    mmproj = dict(weight_format="Q4_K_M", kv_format="fp16", context_tokens=4096)
    on = estimate(a, Scenario(engine="llamacpp", options={"mmproj": True}, **mmproj))
    off = estimate(a, Scenario(engine="llamacpp", **mmproj))
    assert on.devices[0].weights - off.devices[0].weights == tower_bytes
    assert on.launch_command("gemma-4-26b-a4b-Q4_K_M.gguf").split("--mmproj ")[1].startswith(
        "mmproj-gemma-4-26b-a4b-Q4_K_M-f16.gguf")
    ollama = estimate(a, Scenario(engine="ollama", **mmproj))  # Ollama passes the model's projector by default
    assert ollama.engine_facts["encoders_place"] == "device"
    partial = estimate(a, Scenario(engine="ollama", gpu_layers=10, **mmproj))  # --no-mmproj-offload
    whole = estimate(text, Scenario(engine="ollama", gpu_layers=10, **mmproj))
    assert partial.engine_facts["encoders_place"] == "host"
    assert partial.host.weights - whole.host.weights == tower_bytes
    fp8 = estimate(a, Scenario(engine="vllm", weight_format="fp8", context_tokens=4096)).devices[0].weights
    fp8_text = estimate(text, Scenario(engine="vllm", weight_format="fp8", context_tokens=4096)).devices[0].weights
    assert fp8 - fp8_text == tower_bytes  # quantized releases leave the towers at 16 bits


def test_the_estimate_says_where_the_encoders_are():
    a = get_preset("gemma-3-27b").architecture()
    held = estimate(a, Scenario(engine="vllm", context_tokens=4096))
    assert any("weights include the vision encoder" in n for n in held.notes)
    left = estimate(a, Scenario(engine="vllm", context_tokens=4096, options={"language_model_only": True}))
    assert any("vision encoder" in n and "not loaded" in n for n in left.notes)
    assert left.launch_command("google/gemma-3-27b-it").endswith("--language-model-only")
    assert "--language-model-only" not in held.launch_command("google/gemma-3-27b-it")


def test_an_encoder_memviz_cannot_count_is_named():
    cfg = {"model_type": "kimi_vl", "text_config": {"model_type": "deepseek_v3", **SMALL_TEXT},
           "vision_config": {"model_type": "moonvit", "hidden_size": 1152}}
    a = from_hf_config(cfg)
    assert not a.encoders
    assert any("vision encoder (moonvit) is not counted" in w for w in a.warnings)


def test_encoders_survive_a_session_and_bad_rows_are_refused():
    a = get_preset("gemma-4-26b-a4b").architecture()
    assert Architecture.from_dict(a.to_dict()).encoders == a.encoders
    bad = a.to_dict()
    bad["encoders"] = [["vision", "x", -3]]
    with pytest.raises(InputError, match="encoder"):
        Architecture.from_dict(bad)
    bad["encoders"] = [["vision"]]
    with pytest.raises(InputError, match="encoders must be"):
        Architecture.from_dict(bad)
    assert AUDIO != VISION


def test_a_malformed_vision_config_is_one_clear_error():
    cfg = {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", **SMALL_TEXT},
           "vision_config": {**SIGLIP_896, "hidden_size": "wide"}}
    with pytest.raises(InputError, match="hidden_size"):
        from_hf_config(cfg)


def test_reports_name_the_encoders():
    from memviz.core import report

    a = get_preset("gemma-3-27b").architecture()
    scenarios = [Scenario(engine="vllm", context_tokens=4096), Scenario(engine="llamacpp", weight_format="Q4_K_M")]
    md = report.to_markdown(a, scenarios)
    assert "Encoders beside the language model (parameters): vision 423,060,336 (siglip_vision_model)" in md
    data = __import__("json").loads(report.to_json(a, scenarios))
    assert data["encoder_parameters"] == {"vision": 423_060_336}
    assert [s["engine_facts"]["encoders_place"] for s in data["scenarios"]] == ["device", ""]
    for bad in ({"deepstack_visual_indexes": 7}, {"depth": 2.5}):
        cfg = {"model_type": "qwen3_vl", "text_config": {"model_type": "qwen3_vl_text", **SMALL_TEXT},
               "vision_config": {"model_type": "qwen3_vl_vision", **bad}}
        with pytest.raises(InputError, match="vision/audio config"):
            from_hf_config(cfg)
    cfg = {"model_type": "gemma4", "text_config": {"model_type": "gemma4_text", **SMALL_TEXT},
           "audio_config": {"model_type": "gemma4_audio", "subsampling_conv_channels": "ab"}}
    with pytest.raises(InputError, match="vision/audio config"):
        from_hf_config(cfg)
    cfg = {"model_type": "internvl", "downsample_ratio": 0, "text_config": {"model_type": "qwen2", **SMALL_TEXT},
           "vision_config": {"model_type": "internvl_vision"}}
    with pytest.raises(InputError, match="vision/audio config"):
        from_hf_config(cfg)


#: Qwen2.5-VL-7B-Instruct's config as transformers 4.49 printed it in github.com/xorbitsai/inference issue #2880
#: (fields at their class defaults left out, the vision encoder's among them)
QWEN25_VL_7B = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "hidden_act": "silu", "hidden_size": 3584,
    "intermediate_size": 18944, "max_position_embeddings": 128000, "max_window_layers": 28, "model_type": "qwen2_5_vl",
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "use_sliding_window": False, "vocab_size": 152064,
    "vision_config": {"hidden_size": 1280, "in_chans": 3, "model_type": "qwen2_5_vl", "spatial_patch_size": 14,
                      "tokens_per_second": 2},
}


def test_qwen25_vl_7b_holds_its_published_total():
    """Its language model (7.62B, Qwen2's decoder) and its vision encoder with the merger (0.68B, the encoder
    config's defaults): the 8.29B the checkpoint's page gives for Qwen/Qwen2.5-VL-7B-Instruct."""
    a = from_hf_config(QWEN25_VL_7B)
    assert a.model_type == "qwen2" and not a.warnings
    assert parameter_count(a) + a.encoders[0].parameters == pytest.approx(8.29e9, abs=0.005e9)


def test_qwen3_vision_shape_survives_a_session_and_old_rows_load():
    a = get_preset("qwen3.5-35b-a3b").architecture()
    (e,) = a.encoders
    # 16,777,216 pixels: 16,384 tokens of 2 x 2 patches, each 3 x 2 x 16 x 16 pixel values, 32 pixels a token's
    # side; a video item: 2 frames of 25,165,824 / 2 pixels, one temporal patch of 12,288 tokens; 16 heads
    assert e.shape == (65536, 16384, 1152, 4304, 2048, 0, 1536, 32, 12288, 1, 4, 2, 16, 0)
    assert Architecture.from_dict(a.to_dict()).encoders == a.encoders
    old = a.to_dict()
    old["encoders"] = [row[:3] for row in old["encoders"]]  # a session written before the shape
    assert Architecture.from_dict(old).encoders[0].shape == ()
    old["encoders"] = [[*row, list(e.shape[:6])] for row in old["encoders"]]  # ... and before the pixel values
    assert vision_shape(Architecture.from_dict(old).encoders[0]) == vision_shape(e)


def test_gemma3_vision_shape_is_one_896_pixel_crop():
    """vLLM profiles Gemma 3 with pan-and-scan off: one 896 x 896 crop an image, 64 x 64 patches of 14 x 14 x 3
    pixel values, pooled into the config's 256 tokens of the language model's width."""
    (e,) = get_preset("gemma-3-27b").architecture().encoders
    assert e.shape == (4096, 256, 1152, 4304, 5376, 0, 588, 0, 0, 0, 4, 2, 16, 64)  # one size, no video
    cfg = {"model_type": "gemma3", "mm_tokens_per_image": 64, "text_config": {"model_type": "gemma3_text", **SMALL_TEXT},
           "vision_config": {"model_type": "siglip_vision_model", "image_size": 448, "patch_size": 14}}
    assert from_hf_config(cfg).encoders[0].shape[:2] == (1024, 64)


def test_vllm_keeps_gemma3n_towers_whole_on_every_rank():
    """vLLM builds Gemma 3n's vision and audio towers with transformers' AutoModel (timm's MobileNet, the conformer):
    no tensor-parallel layers, so each rank holds them whole."""
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.Gemma3nConfig().to_dict())
    assert [e.family for e in a.encoders] == ["gemma3n_vision", "gemma3n_audio"]
    towers = 2 * sum(e.parameters for e in a.encoders)
    assert _weights(a, engine="vllm", tp=2) - _weights(a.with_changes(encoders=()), engine="vllm", tp=2) == towers


def test_vllm_profiles_the_vision_tower_over_the_largest_images_first():
    """vLLM 0.33 `profile_run`: max(1, min(budget // tokens, seqs x max_model_len // tokens)) images of 16,384
    tokens through the tower, their outputs kept while the language model's pass runs; the published start-up line
    "budget of 65536 tokens, and profiled with 4 image items" (Qwen3.6-35B-A3B at 65,536 batched tokens) is the
    item count's check. Under --language-model-only there is no encoder pass."""
    a = get_preset("qwen3.5-35b-a3b").architecture()

    def activations(**options):
        sc = Scenario(engine="vllm", gpu="rtx5090", context_tokens=131072, weight_format="nvfp4", kv_format="fp8",
                      options={"max_num_seqs": 1, "max_num_batched_tokens": 8192, **options})
        return estimate(a, sc).devices[0].activations

    text_only = activations(language_model_only=True)
    # one image: the block's input, the residual sum, the normed input, the position embeddings, fc1 and its
    # activation in bf16, the pixel values as raw uint8 (mm_device_do_normalize)
    tower = 65536 * ((4 * 1152 + 2 * 4304) * 2 + 1536)
    assert activations() == max(text_only + 16384 * 2048 * 2, tower) == tower
    served = {"max_num_batched_tokens": 65536, "max_num_seqs": 256, "max_model_len": 131072}
    assert encoder_items(16384, served) == 4
    assert encoder_items(16384, {**served, "max_num_batched_tokens": 8192}) == 1
    assert encoder_items(1024, {**served, "max_num_seqs": 2, "max_model_len": 2048}) == 4  # 2 a prompt x 2 requests


def test_vllm_passes_gemma3_images_through_siglip():
    """Gemma 3 on vLLM: budget // 256 crops through SigLIP in one batch (32 at 8,192 batched tokens, 8 at 2,048);
    with few sequences that pass, not the language model's, sets the profile's peak."""
    a = get_preset("gemma-3-27b").architecture()

    def activations(**options):
        sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=32768,
                      options={"max_num_seqs": 64, "max_num_batched_tokens": 8192, **options})
        return estimate(a, sc).devices[0].activations

    crops = 32 * 4096  # patches: the patch embeddings, the layer's input, the residual, the normed input, fc1 and
    # its activation in bf16, the pixel values as uint8 (mm_device_do_normalize), in bf16 without it
    assert activations() == crops * ((4 * 1152 + 2 * 4304) * 2 + 588) > activations(language_model_only=True)
    assert activations(mm_device_do_normalize=False) == crops * (4 * 1152 + 2 * 4304 + 588) * 2
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=32768,
                  options={"max_num_seqs": 4, "max_num_batched_tokens": 8192, "limit_image": 2})
    assert estimate(a, sc).engine_facts["encoder_profile"]["items"] == 8  # 4 sequences x 2 images a prompt
    assert encoder_items(256, {"max_num_batched_tokens": 2048, "max_num_seqs": 256, "max_model_len": 32768}) == 8


def test_vllm_profiles_what_max_pixels_and_the_limits_leave():
    """--mm-processor-kwargs max_pixels shrinks the image item (1,003,520 pixels: 980 tokens of 32 x 32), but the
    video item (12,288 tokens) is then the largest, and vLLM profiles it; with videos limited to 0 the pass is
    8,192 // 980 = 8 images. The launch command carries both settings."""
    a = get_preset("qwen3.5-35b-a3b").architecture()

    def run(**options):
        sc = Scenario(engine="vllm", gpu="rtx5090", context_tokens=131072, weight_format="nvfp4", kv_format="fp8",
                      options={"max_num_seqs": 4, "max_num_batched_tokens": 8192, **options})
        return estimate(a, sc)

    assert run().engine_facts["encoder_profile"]["modality"] == "image"
    video = run(mm_max_pixels=1_003_520).engine_facts["encoder_profile"]
    assert (video["modality"], video["items"], video["tokens_per_item"]) == ("video", 1, 12288)
    est = run(mm_max_pixels=1_003_520, limit_video=0)
    image = est.engine_facts["encoder_profile"]
    assert (image["modality"], image["items"], image["tokens_per_item"]) == ("image", 8, 980)
    assert image["peak_bytes"] == 8 * 980 * 4 * ((4 * 1152 + 2 * 4304) * 2 + 1536)
    assert est.launch_command("Qwen/Qwen3.6-35B-A3B").endswith(
        """--mm-processor-kwargs '{"max_pixels": 1003520}' --limit-mm-per-prompt '{"video": 0}'""")
    assert most_tokens(211, 1) == 210  # 211 is prime: 1 x 211 is past vLLM's aspect ratio of 200


@pytest.mark.parametrize(("preset", "options", "words"), [
    ("gemma-3-27b", {"mm_max_pixels": 1_000_000}, "Qwen-VL image processors"),
    ("llama-3.1-8b", {"mm_max_pixels": 1_000_000}, "Qwen-VL image processors"),
    ("qwen3.5-35b-a3b", {"mm_max_pixels": 1000}, "less than one token of 32 x 32 pixels"),
    ("qwen3.5-35b-a3b", {"limit_image": 0, "limit_video": 0}, "language_model_only"),
    ("gemma-3-27b", {"limit_image": 0}, "language_model_only"),
])
def test_impossible_multimodal_settings_are_one_clear_error(preset, options, words):
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, options=options)
    a = get_preset(preset).architecture()
    with pytest.raises(InputError, match=words):
        estimate(a, sc)
    if a.encoders:  # without its towers vLLM has nothing for these settings to act on, and takes them
        estimate(a, sc.with_changes(options={**options, "language_model_only": True}))


def _folder(tmp_path, config: dict, **files: dict):
    (tmp_path / "config.json").write_text(json.dumps(config))
    for name, body in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(body))
    return from_config_path(tmp_path)


def test_a_folders_processor_configs_size_the_largest_inputs(tmp_path):
    """vLLM reads the image and video processors beside config.json: their max_pixels / size.longest_edge decide
    the largest image and video item, as transformers saves them (one file each, or processor_config.json with a
    section each)."""
    cfg = get_preset("qwen3.5-35b-a3b").config
    small = {"size": {"longest_edge": 1_003_520, "shortest_edge": 65_536}}
    (e,) = _folder(tmp_path, cfg, preprocessor_config=small,
                   video_preprocessor_config={"size": {"longest_edge": 4_194_304}}).encoders
    assert vision_shape(e).tokens == 980 and vision_shape(e).video_tokens == 2048  # 4,194,304 / 2 frames / 32^2
    (tmp_path / "preprocessor_config.json").unlink()
    (tmp_path / "video_preprocessor_config.json").unlink()
    (tmp_path / "processor_config.json").write_text(json.dumps({"image_processor": {"max_pixels": 2_007_040}}))
    assert vision_shape(from_config_path(tmp_path).encoders[0]).tokens == 1960
    assert from_config_path(tmp_path / "config.json").encoders == from_config_path(tmp_path).encoders


def test_gemma3_with_pan_and_scan_profiles_four_crops_and_the_image(tmp_path):
    """vLLM's largest Gemma 3 dummy is 896 wide and 4 x 896 tall; pan-and-scan cuts it into 4 crops (at most
    pan_and_scan_max_num_crops), which go through SigLIP with the whole image: 5 x 256 tokens."""
    cfg = get_preset("gemma-3-27b").config
    (e,) = _folder(tmp_path, cfg, preprocessor_config={"do_pan_and_scan": True}).encoders
    assert e.shape[:2] == (5 * 4096, 5 * 256)
    (e,) = _folder(tmp_path, cfg, preprocessor_config={"do_pan_and_scan": None}).encoders
    assert e.shape[:2] == (4096, 256)


@pytest.mark.parametrize("body", ["{not json", json.dumps({"max_pixels": "large"}), json.dumps([1, 2])])
def test_a_malformed_processor_config_is_one_clear_error(tmp_path, body):
    (tmp_path / "config.json").write_text(json.dumps(get_preset("qwen3.5-35b-a3b").config))
    (tmp_path / "preprocessor_config.json").write_text(body)
    with pytest.raises(InputError, match="preprocessor_config.json|max_pixels"):
        from_config_path(tmp_path)


def test_vllm_profiles_qwen25_vl_on_a_video_as_long_as_max_model_len_allows():
    """Qwen2.5-VL's video item is up to 14 frames of the largest image (16,384 tokens each 2 frames): vLLM 0.33
    profiles as many as max_model_len holds, at least 2 frames, and that item, not the image, once it holds more
    (video on a tie). Its blocks hold 4 hidden-wide tensors and the gated MLP's 3 x 3,420."""
    a = from_hf_config(QWEN25_VL_7B)
    (e,) = a.encoders
    assert e.shape == (65536, 16384, 1280, 3420, 3584, 0, 1176, 28, 0, 7, 4, 3, 16, 0)

    def item(max_model_len, **options):
        sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=min(max_model_len, 4096),
                      options={"max_model_len": max_model_len, **options})
        ep = estimate(a, sc).engine_facts["encoder_profile"]
        return ep["modality"], ep["items"], ep["tokens_per_item"], ep["peak_bytes"]

    assert item(8192)[:3] == ("video", 1, 16384)  # 2 frames, tied with the image
    assert item(32768)[:3] == ("video", 1, 32768)  # 4 frames
    modality, items, tokens, peak = item(128000)
    assert (modality, items, tokens) == ("video", 1, 7 * 16384)  # 14 frames
    assert peak == 7 * 16384 * 4 * ((4 * 1280 + 3 * 3420) * 2 + 1176)  # 13.6 GiB
    assert item(128000, limit_video=0)[:3] == ("image", 1, 16384)
    qwen2 = {"model_type": "qwen2_vl", "text_config": {"model_type": "qwen2", **SMALL_TEXT},
             "vision_config": {"embed_dim": 1280, "mlp_ratio": 4, "hidden_size": 3584, "depth": 2}}
    # Qwen2-VL's blocks: fc1 / QuickGELU / fc2 of 4 x 1,280 and three hidden-wide tensors
    assert from_hf_config(qwen2).encoders[0].shape == (65536, 16384, 1280, 5120, 3584, 0, 1176, 28, 0, 7, 3, 2, 16,
                                                          0)


def test_transformers_launch_loads_the_towers_it_counts():
    """A model whose encoders are counted is loaded by AutoModelForImageTextToText (its ...ForConditionalGeneration);
    AutoModelForCausalLM would load Llama 4's language model alone, and has no class for Qwen2.5-VL's wrapper."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES as causal
    vl = estimate(get_preset("gemma-3-27b").architecture(), Scenario(context_tokens=4096))
    assert "model = AutoModelForImageTextToText.from_pretrained(" in vl.launch_command("google/gemma-3-27b-it")
    text = estimate(get_preset("llama-3.1-8b").architecture(), Scenario(context_tokens=4096))
    assert "model = AutoModelForCausalLM.from_pretrained(" in text.launch_command()
    assert "qwen2_5_vl" not in causal and causal["llama4"] == "Llama4ForCausalLM"
    assert hasattr(transformers, "AutoModelForImageTextToText")


def test_transformers_launch_names_an_auto_class_that_maps_each_wrapper():
    """For every wrapper type of the transformers the tests run with whose default config memviz reads with its
    encoders counted, the launch's auto class maps that type (models/auto/modeling_auto.py): the audio models
    (Qwen2-Audio, Voxtral, GLM-ASR, Qwen3-ASR, the Flamingos, ...) are no image-text-to-text models, and GLM-Image,
    which only AutoModel maps (to GlmImageModel, headless), loads with GlmImageForConditionalGeneration."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.auto import modeling_auto as auto

    from memviz.core.engines.transformers import auto_class
    mappings = {"AutoModelForImageTextToText": auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
                "AutoModelForMultimodalLM": auto.MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES,
                "AutoModelForSeq2SeqLM": auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES}
    checked = []
    for model_type, config_class in transformers.CONFIG_MAPPING.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                cfg = config_class().to_dict()
            except Exception:  # noqa: BLE001 - configs that need arguments to exist
                continue
            try:
                a = from_hf_config(cfg)
            except InputError:
                continue
        if a.loader:  # a class no auto class maps the type to (GLM-Image's head, a Qwen-Omni thinker)
            assert hasattr(transformers, a.loader) and auto_class(a) == a.loader, model_type
        elif a.encoders:
            assert model_type in mappings[auto_class(a)], (model_type, auto_class(a))
        checked.append(model_type)
    assert {"qwen2_audio", "voxtral", "audioflamingo3", "glmasr", "qwen3_asr", "gemma3", "qwen2_5_vl",
            "glm_image"} <= set(checked)


def test_a_qwen_omni_checkpoint_is_read_as_its_thinker():
    """Qwen2.5-Omni's config holds its thinker (text, images and audio in, text out: what vLLM serves) beside the
    talker and token2wav: memviz reads the thinker, its language model (Qwen2's decoder), its vision tower
    (Qwen2.5-VL's) and its audio encoder equal to transformers' build, the speech generator named as uncounted, and
    the launch command loads the thinker's own class (as transformers' docstring does)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("qwen2_5_omni")
        with torch.device("meta"):
            thinker = transformers.Qwen2_5OmniThinkerForConditionalGeneration(config.thinker_config)
    d = config.to_dict()  # the default text config says tied, the thinker's untied (transformers follows the
    d["thinker_config"]["text_config"]["tie_word_embeddings"] = False  # thinker's); released configs agree
    a = from_hf_config(d)
    language = sum(p.numel() for m in (thinker.get_decoder(), thinker.get_output_embeddings()) for p in m.parameters())
    visual = sum(p.numel() for n, p in thinker.named_parameters() if n.startswith("model.visual."))
    audio = sum(p.numel() for n, p in thinker.named_parameters() if n.startswith("model.audio_tower."))
    assert (a.model_type, parameter_count(a), [e.parameters for e in a.encoders]) == ("qwen2", language, [visual, audio])
    assert any("read as its thinker" in w and "talker, token2wav" in w for w in a.warnings)
    assert not any("encoder" in w and "not counted" in w for w in a.warnings)
    command = estimate(a, Scenario(context_tokens=4096)).launch_command("Qwen/Qwen2.5-Omni-7B")
    assert "Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(\"Qwen/Qwen2.5-Omni-7B\"" in command
    assert Architecture.from_dict(a.to_dict()).loader == "Qwen2_5OmniThinkerForConditionalGeneration"


def test_a_malformed_minicpmv_window_is_one_clear_error():
    cfg = {"model_type": "minicpmv4_6", "text_config": {"model_type": "qwen3", **SMALL_TEXT},
           "vision_config": {"model_type": "minicpmv4_6_vision", "window_kernel_size": "2x2"}}
    with pytest.raises(InputError, match="window_kernel_size must be two positive whole numbers"):
        from_hf_config(cfg)
    cfg["vision_config"]["window_kernel_size"] = (2, 2)  # a tuple, as a config object holds it
    assert from_hf_config(cfg).encoders[0].family == "minicpmv4_6_vision"


def test_vipllavas_released_key_for_its_feature_layers():
    """VipLLaVA's released configs (llava-hf/vip-llava-7b-hf) name the list vision_feature_layers."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.AutoConfig.for_model("vipllava").to_dict()
    five = from_hf_config(cfg).encoders[0].parameters
    cfg["vision_feature_layers"] = cfg.pop("vision_feature_layer")[:2]
    vh, th = cfg["vision_config"]["hidden_size"], cfg["text_config"]["hidden_size"]
    assert five - from_hf_config(cfg).encoders[0].parameters == 3 * vh * (2 + th)  # the norm's and linear_1's rows


@pytest.mark.parametrize("audio", [{}, {"num_mel_bins": 80, "downsample_hidden_size": 256, "encoder_layers": 4}])
def test_the_qwen3_omni_audio_encoder_counts_what_transformers_builds(audio):
    """Qwen3-Omni's thinker's audio encoder (Whisper's blocks behind three stride-2 convolutions over the mel bins,
    two projections), at its default and with other mel bins, channels and depth."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.qwen3_omni_moe.modeling_qwen3_omni_moe import Qwen3OmniMoeAudioEncoder

    from memviz.core.towers import omni_audio

    config = transformers.Qwen3OmniMoeThinkerConfig(audio_config=audio).audio_config
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        encoder = Qwen3OmniMoeAudioEncoder(config)
    assert omni_audio(config.to_dict()) == sum(p.numel() for p in encoder.parameters())


def _on_meta(model_type: str, build: str, **fields):
    """(transformers' config of `model_type` with `fields`, the model class `build` names built from it on the meta
    device: no memory, no download)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type, **fields)
        with torch.device("meta"):
            maker = getattr(transformers, build)
            model = maker.from_config(config) if build.startswith("Auto") else maker(config)
    return config, model


@pytest.mark.parametrize(("vision", "vq"), [
    ({}, {}), ({"depth": 3, "mlp_ratio": 2.0, "num_hidden_layers": 2},
               {"channel_multiplier": [1, 2, 4], "base_channels": 64, "num_res_blocks": 1, "embed_dim": 16,
                "num_embeddings": 512, "latent_channels": 128, "double_latent": True})])
def test_janus_counts_its_tower_aligner_generation_path_and_vq_vae(vision, vq):
    """JanusModel: the vision tower, its aligner and the image generation path (codebook embedding, aligner, head),
    and the VQ-VAE that draws generated images (encoder, codebook, decoder: 71,883,403 parameters at the default,
    named and uncounted before), as transformers builds them, at the default and another shape."""
    import re

    config, model = _on_meta("janus", "AutoModelForImageTextToText", vision_config=vision, vq_config=vq)
    built = sum(p.numel() for n, p in model.named_parameters() if not re.search(r"language_model|lm_head|vqmodel", n))
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [
        ("janus_vision_model", built), ("janus_vqgan", sum(p.numel() for p in model.model.vqmodel.parameters()))]
    assert not [w for w in a.warnings if "not counted" in w]


@pytest.mark.parametrize("changes", [{}, {"vision_config": {"depth": 4, "hidden_size": 256, "num_heads": 4,
                                                             "intermediate_size": 512, "image_size": 512,
                                                             "patch_size": 14, "attention_bias": False},
                                          "vq_config": {"embed_dim": 64, "num_embeddings": 128,
                                                        "latent_channels": 256}}])
def test_glm_image_counts_its_vision_encoder_and_its_vq_codebook(changes):
    """GlmImageModel's visual tower (a ViT with a position per patch of its largest image, 1.16B parameters at the
    default: 11 % of the checkpoint, named and uncounted before) and vqmodel (its codebook and the two 1x1
    convolutions), as transformers 5.24 builds them, at the default and a small variant."""
    config, model = _on_meta("glm_image", "GlmImageForConditionalGeneration", **changes)
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [
        ("glm_image_vision", sum(p.numel() for p in model.model.visual.parameters())),
        ("glm_image_vqmodel", sum(p.numel() for p in model.model.vqmodel.parameters()))]
    assert parameter_count(a) + sum(e.parameters for e in a.encoders) == sum(p.numel() for p in model.parameters())
    assert not a.warnings


@pytest.mark.parametrize("vq", [{}, {"base_channels": 64, "channel_multiplier": [1, 2, 4], "num_res_blocks": 1,
                                     "attn_resolutions": [1, 2], "hidden_size": 128, "latent_channels": 8,
                                     "embed_dim": 6, "codebook_size": 512, "temporal_downsample_factor": 2,
                                     "double_latent": True}])
def test_emu3_counts_its_language_model_and_its_vq_vae(vq):
    """Emu3: Llama's decoder (read as what it is, warned before) and the VQ-VAE that encodes images and draws
    generated ones (Emu3VQVAE: 270,740,287 parameters at the default, 3 % of the checkpoint, named and uncounted
    before), as transformers builds them at the default and another shape; llama.cpp has no Emu3 architecture."""
    from memviz.core.errors import InputError

    config, model = _on_meta("emu3", "Emu3ForConditionalGeneration", vq_config=vq,
                             vocabulary_map={"<image>": 8711, "<|image token|>": 8711})
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [
        ("emu3_vqgan", sum(p.numel() for p in model.model.vqmodel.parameters()))]
    assert parameter_count(a) + a.encoders[0].parameters == sum(p.numel() for p in model.parameters())
    assert not a.warnings
    with pytest.raises(InputError, match="no such architecture"):
        estimate(a, Scenario(engine="llamacpp", context_tokens=4096))


DOTS3_SMALL = {"vision_config": {"num_hidden_layers": 6, "pyramid_num_routed": [-1, -1, 4, 8, -1, 16],
                                 "embed_dim": 256, "num_heads": 4, "intermediate_size": 512,
                                 "moe_intermediate_size": 128, "adapter_in_dim": 256, "use_bias": True},
               "audio_config": {"whisper_config": {"d_model": 256, "encoder_attention_heads": 4, "encoder_layers": 2,
                                                   "encoder_ffn_dim": 512, "num_mel_bins": 80},
                                "attention_bias": False, "downsample_hidden_size": 96, "whisper_adapter_in_dim": 256}}


@pytest.mark.parametrize("changes", [{}, DOTS3_SMALL])
def test_dots3_counts_its_vision_and_audio_towers(changes):
    """Dots3NoteVisionModel (a pyramid of routed experts in its last blocks, the merger) and Dots3NoteAudioModel
    (its convolution stem, layers and adapter): 6,871,277,312 and 886,199,680 parameters at the default, 2.7 % of
    the checkpoint, named and uncounted before; exact as transformers builds them at the default and a small shape,
    given in the release's own keys (embed_dim, num_heads, use_bias, pyramid_num_routed; a Whisper-style
    whisper_config and whisper_adapter_in_dim), read from transformers' layout and from the release's."""
    config, model = _on_meta("dots3_note", "Dots3NoteForConditionalGeneration", **changes)
    built = [sum(p.numel() for p in tower.parameters()) for tower in (model.model.vision_tower, model.model.audio_tower)]
    for source in (config.to_dict(), {**config.to_dict(), **changes}):  # transformers' keys; the release's
        a = from_hf_config(source)
        assert [e.parameters for e in a.encoders] == built and not a.warnings


@pytest.mark.parametrize("changes", [{}, {"audio_config": {"num_mel_bins": 128, "num_hidden_layers": 2, "hidden_size": 256,
                                                           "intermediate_size": 512, "num_attention_heads": 4,
                                                           "max_source_positions": 300},
                                          "audio_merge_size": 2, "projector_bias": False}])
def test_moss_transcribe_diarize_counts_its_whisper_encoder_and_projector(changes):
    """MossTranscribeDiarizeAudioModel (Whisper's encoder with learned positions) and its projector over
    audio_merge_size stacked frames: 312,463,360 parameters at the default, a third of the model, named and
    uncounted before; exact as transformers builds them at the default and a small shape."""
    config, model = _on_meta("moss_transcribe_diarize", "AutoModelForCausalLM", **changes)
    towers = sum(p.numel() for n, p in model.named_parameters() if "audio_tower" in n or "multi_modal_projector" in n)
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("moss_transcribe_diarize_audio", towers)]
    assert not a.warnings


_SMALL_WHISPER = {"num_mel_bins": 80, "hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 2,
                  "num_attention_heads": 4, "max_source_positions": 300}
_SMALL_WHISPER_OLD_NAMES = {"num_mel_bins": 80, "d_model": 256, "encoder_ffn_dim": 1024, "encoder_layers": 2,
                            "encoder_attention_heads": 4, "max_source_positions": 300}


@pytest.mark.parametrize(("model_type", "build", "small"), [
    ("qwen2_audio", "Qwen2AudioForConditionalGeneration", {"audio_config": _SMALL_WHISPER_OLD_NAMES}),
    ("voxtral", "VoxtralForConditionalGeneration", {"audio_config": _SMALL_WHISPER}),
    ("audioflamingo3", "AudioFlamingo3ForConditionalGeneration", {"audio_config": _SMALL_WHISPER,
                                                                   "projector_bias": False}),
    ("musicflamingo", "MusicFlamingoForConditionalGeneration", {"audio_config": {
        **_SMALL_WHISPER, "model_type": "musicflamingo_encoder"}}),
    ("glmasr", "GlmAsrForConditionalGeneration", {"audio_config": {**_SMALL_WHISPER, "num_key_value_heads": 2}}),
    ("qwen3_asr", "Qwen3ASRForConditionalGeneration", {"audio_config": {
        "d_model": 256, "encoder_ffn_dim": 512, "encoder_layers": 2, "encoder_attention_heads": 4,
        "downsample_hidden_size": 64, "output_dim": 2048}})])
@pytest.mark.parametrize("shape", ["default", "small"])
def test_whisper_style_audio_models_count_their_encoder_and_projector(model_type, build, small, shape):
    """Qwen2-Audio, Voxtral, Audio Flamingo 3, Music Flamingo, GLM-ASR and Qwen3-ASR: the audio encoder and the
    projector after it (319M to 664M parameters at the defaults, named and uncounted before), exact as transformers
    builds them at the default and a small shape (Qwen2-Audio's in Whisper's field names)."""
    config, model = _on_meta(model_type, build, **(small if shape == "small" else {}))
    towers = sum(p.numel() for n, p in model.named_parameters() if "audio_tower" in n or "multi_modal_projector" in n)
    cfg = config.to_dict()
    releases = [cfg] + ([{**cfg, "audio_config": {**cfg["audio_config"], "model_type": "musicflamingo_encoder"}}]
                        if model_type == "musicflamingo" else [])  # MusicFlamingoConfig's own encoder name
    for release in releases:
        a = from_hf_config(release)
        assert [e.parameters for e in a.encoders] == [towers] and not a.warnings


@pytest.mark.parametrize("small", [{}, {
    "audio_config": {"hidden_size": 512, "intermediate_size": 1536, "num_hidden_layers": 3, "num_attention_heads": 8,
                     "head_dim": 48, "num_mel_bins": 80},
    "text_config": {"hidden_size": 640, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
                    "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000, "tie_word_embeddings": False},
    "downsample_factor": 2, "tie_word_embeddings": False}])
def test_voxtral_realtime_counts_its_streaming_encoder_and_its_time_conditioned_decoder(small):
    """Voxtral Realtime: its causal Whisper-style encoder (rotary, RMSNorms, heads of head_dim wider than the width,
    a gated MLP) and projector, 995,561,216 parameters at the default (22 % of the model: named and uncounted
    before), and its language model, Mistral's with a hidden -> 32 -> hidden MLP per layer scaling a norm by the time
    conditioning (read Llama-style before, -0.15 %): both exact as transformers builds them at the default and a small
    shape."""
    config, model = _on_meta("voxtral_realtime", "VoxtralRealtimeForConditionalGeneration", **small)
    towers = sum(p.numel() for n, p in model.named_parameters() if "audio_tower" in n or "multi_modal_projector" in n)
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("voxtral_realtime_encoder", towers)]
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) - towers and not a.warnings


@pytest.mark.parametrize(("model_type", "build", "tower", "small"), [
    ("fun_asr_nano", "FunAsrNanoForConditionalGeneration", ("audio_tower", "multi_modal_projector"), {
        "audio_config": {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 5,
                         "num_timestamp_prediction_layers": 2, "num_mel_bins": 40, "num_stacked_frames": 3,
                         "fsmn_kernel_size": 5, "num_attention_heads": 4},
        "adaptor_config": {"hidden_size": 1024, "intermediate_size": 256, "num_hidden_layers": 1,
                           "projector_hidden_size": 512}}),
    ("omniasr", "OmniASRForConditionalGeneration", ("audio_tower", "multi_modal_projector"), {
        "audio_config": {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 3, "conv_dim": [64, 96, 128],
                         "conv_kernel": [10, 3, 2], "conv_stride": [5, 2, 2], "conv_bias": False,
                         "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 8, "num_attention_heads": 4},
        "text_config": {"hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
                        "num_key_value_heads": 8, "vocab_size": 1000}}),
    ("cosmos3_edge", "Cosmos3EdgeForConditionalGeneration", (".visual.", ".projector."), {
        "vision_config": {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
                          "patch_size": 14, "num_patches": 64, "spatial_merge_size": 3}, "projector_hidden_size": 1000})])
@pytest.mark.parametrize("shape", ["default", "small"])
def test_asr_encoders_and_cosmos3_edges_tower_count_what_transformers_builds(model_type, build, tower, small, shape):
    """Fun-ASR-Nano's SAN-M encoder (its first block over stacked frames, FSMN memories, two normed outputs) and
    adaptor (233,741,920 parameters with it at the default: 28 % of the model), OmniASR's wav2vec 2.0 encoder and
    projector (319,635,968: 20 %), Cosmos3 Edge's SigLIP 2 tower and patch merger (489,342,704: 20 %): named and
    uncounted before, each exact as transformers builds it at the default and a small shape, the language model
    too."""
    config, model = _on_meta(model_type, build, **(small if shape == "small" else {}))
    towers = sum(p.numel() for n, p in model.named_parameters() if any(part in n for part in tower))
    a = from_hf_config(config.to_dict())
    assert [e.parameters for e in a.encoders] == [towers] and not a.warnings
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) - towers


_GRANITE4_SIGLIP = {"hidden_act": "gelu_pytorch_tanh", "hidden_size": 1152, "image_size": 384, "intermediate_size": 4304,
                    "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
                    "patch_size": 16}


@pytest.mark.parametrize("changes", [
    {"vision_config": _GRANITE4_SIGLIP, "downsample_rate": "4/8", "deepstack_layer_map": [[-19, 9], [-13, 6], [-7, 3],
                                                                                         [-1, 0]]},
    {"downsample_rate": "1/2", "deepstack_layer_map": [[1, 0]],
     "vision_config": {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 64, "patch_size": 8},
     "qformer_config": {"num_hidden_layers": 2, "intermediate_size": 512, "cross_attention_frequency": 2}}])
def test_granite4_vision_counts_its_tower_and_window_qformer_projectors(changes):
    """Granite4VisionModel: the SigLIP or CLIP tower, the image newline and a window Q-Former downsampler per deepstack
    pair and per spatial offset (594,367,424 parameters for a 384-pixel SigLIP so400m tower with four deepstack pairs
    and 4/8 windows: named and uncounted before), and its language model read as Granite's, exact as transformers
    builds them for that shape and a small CLIP one with a two-layer Q-Former."""
    config, model = _on_meta("granite4_vision", "Granite4VisionForConditionalGeneration", **changes)
    towers = sum(p.numel() for n, p in model.named_parameters() if "language_model" not in n and "lm_head" not in n)
    a = from_hf_config(config.to_dict())
    assert [e.parameters for e in a.encoders] == [towers] and not a.warnings
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) - towers


@pytest.mark.parametrize("rate", ["4:8", "0/8", "four/8", None])
def test_granite4_vision_without_a_window_rate_is_one_input_error(rate):
    """A Granite 4 Vision config whose downsample_rate does not read "query_side/window_side": one InputError (the
    transformers class cannot build it either)."""
    cfg = {"model_type": "granite4_vision", "downsample_rate": rate, "deepstack_layer_map": [[-1, 0]],
           "vision_config": {"model_type": "siglip_vision_model"},
           "text_config": {"model_type": "granite4_vision_text", "hidden_size": 256, "num_hidden_layers": 2,
                           "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000}}
    with pytest.raises(InputError, match="downsample_rate"):
        from_hf_config(cfg)


@pytest.mark.parametrize(("architecture", "args"), [("mobilenetv5_300m_enc", {}), ("mobilenetv5_300m", {}),
                                                   ("mobilenetv5_base", {}), ("fastvit_mci3", {"inference_mode": True}),
                                                   ("fastvit_mci3", {"inference_mode": False}), ("fastvit_mci3", {})])
def test_timm_tower_counts_are_what_timm_builds(architecture, args):
    """Gemma 3n's and FastVLM's vision towers as timm builds them for transformers (create_model(name,
    num_classes=0, **model_args)): TIMM_PARAMETERS holds each named architecture's parameters (MobileNetV5 has no
    buffer; FastViTHD's BatchNorm statistics are buffers)."""
    torch = pytest.importorskip("torch")
    timm = pytest.importorskip("timm")
    from memviz.core.towers import timm_tower

    with torch.device("meta"):
        model = timm.create_model(architecture, pretrained=False, num_classes=0, **args)
    assert sum(p.numel() for p in model.parameters()) == timm_tower({"architecture": architecture, "model_args": args},
                                                                    "")
    assert architecture.startswith("fastvit") or not list(model.buffers())


def _timm_wrapper_parts(model_type: str, projector: str, **fields):
    """(the config, its projector's and its language model's parameters) of a wrapper whose vision tower transformers
    builds with timm: the parts built apart on the meta device, without timm."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import importlib

    module = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type, **fields)
        with torch.device("meta"):
            parts = (getattr(module, projector)(config), transformers.AutoModelForCausalLM.from_config(config.text_config))
    return config, *(sum(p.numel() for p in part.parameters()) for part in parts)


def test_fast_vlm_counts_its_fastvithd_tower_and_projector():
    """FastVLM (the default config: FastVLM-7B's widths): FastViTHD reparameterised (timm's fastvit_mci3 with
    inference_mode) and its two-linear projector, 146,576,480 parameters, named and uncounted before; the language
    model is Qwen2's. The tower is timm's (built with it where installed, above); the projector and the language model
    against transformers' build of the wrapper's parts."""
    config, projector, language = _timm_wrapper_parts("fast_vlm", "FastVlmMultiModalProjector")
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("timm_wrapper", 122_714_208 + projector)]
    assert parameter_count(a) == language and not a.warnings
    other = {**config.to_dict(), "vision_config": {**config.vision_config.to_dict(), "architecture": "fastvit_t8"}}
    assert any("timm_wrapper" in w and "not counted" in w for w in from_hf_config(other).warnings)


_PLM_VISION = {"architecture": "vit_pe_core_large_patch14_336", "model_args": {  # PE-L at 448 pixels, 23 blocks, no
    "embed_dim": 1024, "depth": 23, "img_size": [448, 448], "ref_feat_shape": [32, 32], "global_pool": "",  # pooling
    "use_post_transformer_norm": False, "init_values": 0.1}}  # head, as transformers' PerceptionLM tests build it
_PE_NAMES = ["vit_pe_core_tiny_patch16_384", "vit_pe_core_small_patch16_384", "vit_pe_core_base_patch16_224",
             "vit_pe_core_large_patch14_336", "vit_pe_core_gigantic_patch14_448", "vit_pe_lang_large_patch14_448",
             "vit_pe_lang_gigantic_patch14_448", "vit_pe_spatial_tiny_patch16_512", "vit_pe_spatial_small_patch16_512",
             "vit_pe_spatial_base_patch16_512", "vit_pe_spatial_large_patch14_448",
             "vit_pe_spatial_gigantic_patch14_448"]


@pytest.mark.parametrize(("architecture", "args"), [(name, {}) for name in _PE_NAMES] + [
    ("vit_pe_core_large_patch14_336", _PLM_VISION["model_args"]),
    ("vit_pe_core_large_patch14_336", {"embed_dim": 64, "img_size": [20, 20], "depth": 2, "global_pool": "",
                                       "use_post_transformer_norm": False, "init_values": 0.1, "ref_feat_shape": [1, 1]}),
    ("vit_pe_core_base_patch16_224", {"global_pool": "avg"}),
    ("vit_pe_core_base_patch16_224", {"class_token": False, "img_size": [224, 320]})])
def test_perception_encoder_vits_count_what_timm_builds(architecture, args):
    """timm's Perception Encoder ViTs (TimmWrapperModel: num_classes 0), named and with model_args: `pe_vit` equals
    timm 1.0.31's build for every name and for changed widths, depths, images, pooling and norms."""
    torch = pytest.importorskip("torch")
    timm = pytest.importorskip("timm")
    from memviz.core.towers import pe_vit

    with torch.device("meta"):
        model = timm.create_model(architecture, pretrained=False, num_classes=0, **args)
    assert pe_vit({"architecture": architecture, "model_args": args}) == sum(p.numel() for p in model.parameters())


def test_perception_lm_counts_its_perception_encoder_and_projector():
    """PerceptionLM with PE-L at 448 pixels (23 blocks): the tower, 291,415,040 parameters as timm 1.0.31 builds it
    (checked above where timm is installed) and the two-linear projector from model_args' embed_dim, named and
    uncounted before; the language model is Llama's. A tower memviz cannot read stays named and uncounted."""
    config, projector, language = _timm_wrapper_parts("perception_lm", "PerceptionLMMultiModalProjector",
                                                      vision_config=_PLM_VISION)
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("timm_wrapper", 291_415_040 + projector)]
    assert parameter_count(a) == language and not a.warnings
    for vision in ({**_PLM_VISION, "architecture": "vit_so400m_patch14_siglip_384"},
                   {**_PLM_VISION, "model_args": {**_PLM_VISION["model_args"], "qk_norm": True}}):
        assert "not counted" in " ".join(from_hf_config({**config.to_dict(), "vision_config": vision}).warnings)


def test_gemma3n_vision_of_another_architecture_is_named_not_counted():
    """A Gemma 3n config naming a timm tower memviz has no count of, or changing one with model_args, keeps the
    warning that names the uncounted tower."""
    transformers = pytest.importorskip("transformers")
    for vision in ({"architecture": "mobilenetv4_conv_small"}, {"model_args": {"drop_rate": 0.1}}):
        cfg = transformers.AutoConfig.for_model("gemma3n").to_dict()
        a = from_hf_config({**cfg, "vision_config": {**cfg["vision_config"], **vision}, "audio_config": None})
        assert [e.family for e in a.encoders] == []
        assert any("gemma3n_vision" in w and "not counted" in w for w in a.warnings)


_TINY_BLIP = {"vision_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                                "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
              "qformer_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 3,
                                 "num_attention_heads": 2, "cross_attention_frequency": 2, "vocab_size": 100,
                                 "max_position_embeddings": 64},
              "text_config": {"model_type": "opt", "hidden_size": 32, "ffn_dim": 64, "num_hidden_layers": 2,
                              "num_attention_heads": 2, "vocab_size": 100, "word_embed_proj_dim": 32,
                              "max_position_embeddings": 64},
              "num_query_tokens": 8}
_BLIP_CLASSES = {"blip-2": "Blip2ForConditionalGeneration", "instructblip": "InstructBlipForConditionalGeneration",
                 "instructblipvideo": "InstructBlipVideoForConditionalGeneration"}


@pytest.mark.parametrize("shape", ["default", "tiny"])
@pytest.mark.parametrize("model_type", sorted(_BLIP_CLASSES))
def test_blip_wrappers_count_their_tower_qformer_and_projection(model_type, shape):
    """BLIP-2, InstructBLIP and InstructBLIP-Video: the EVA-style vision tower (a fused qkv with q / v biases), the
    query tokens, the Q-Former (InstructBLIP's with the instruction's feed-forward and embeddings) and the projection
    into the language model: 1,091,705,088 and 1,172,226,816 parameters at the defaults, named and uncounted before;
    exact as transformers builds them at the default and a tiny shape."""
    config, model = _on_meta(model_type, _BLIP_CLASSES[model_type], **(_TINY_BLIP if shape == "tiny" else {}))
    towers = sum(p.numel() for n, p in model.named_parameters() if "language_model" not in n)
    a = from_hf_config(config.to_dict())
    assert [e.parameters for e in a.encoders] == [towers] and not a.warnings
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) - towers


@pytest.mark.parametrize("model_type", ["blip-2", "instructblip"])
def test_blip_elements_kept_float32_are_what_transformers_loads_so(model_type, tmp_path):
    """A tiny BLIP-2 and InstructBLIP saved and loaded: in float16 transformers keeps BLIP-2's query tokens and
    Q-Former float32 and InstructBLIP's query tokens (`_keep_in_fp32_modules`), in bfloat16 nothing; memviz's float32
    count is the float16 load's, and its transformers weights hold the encoders' bytes as each load holds them (a
    GPTQ checkpoint on CUDA loads in float16, a bf16 one in bfloat16)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cls = getattr(transformers, _BLIP_CLASSES[model_type])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type, **_TINY_BLIP)
        cls(config).save_pretrained(tmp_path)
        loads = {dtype: [p for n, p in cls.from_pretrained(tmp_path, dtype=dtype).named_parameters()
                         if "language_model" not in n] for dtype in (torch.float16, torch.bfloat16)}
    a = from_hf_config(config.to_dict())
    (encoder,) = a.encoders
    assert encoder.float32_parameters == sum(p.numel() for p in loads[torch.float16] if p.dtype == torch.float32) > 0
    assert Architecture.from_dict(json.loads(json.dumps(a.to_dict()))).encoders == a.encoders  # a session keeps it
    assert not [p for p in loads[torch.bfloat16] if p.dtype == torch.float32]
    for weight_format, device, dtype in (("gptq-int4", "cuda", torch.float16), ("bf16", "cpu", torch.bfloat16)):
        held, alone = (estimate(arch, Scenario(engine="transformers", weight_format=weight_format, context_tokens=64,
                                               device=device)).bytes["weights"]
                       for arch in (a, a.with_changes(encoders=())))
        assert held - alone == sum(p.numel() * p.element_size() for p in loads[dtype]), weight_format


_SMALL_GRANITE_SPEECH = {
    "encoder_config": {"input_dim": 80, "num_layers": 2, "hidden_dim": 256, "num_heads": 4, "dim_head": 48,
                       "output_dim": 30, "context_size": 100, "max_pos_emb": 128, "conv_kernel_size": 7,
                       "conv_expansion_factor": 3, "feedforward_mult": 2},
    "projector_config": {"hidden_size": 128, "num_hidden_layers": 3, "num_attention_heads": 4, "intermediate_size": 256,
                         "cross_attention_frequency": 1, "encoder_hidden_size": 256},
    "window_size": 12, "downsample_rate": 3}
_SMALL_VIBEVOICE_ASR = {
    "acoustic_tokenizer_encoder_config": {"hidden_size": 32, "num_filters": 8, "downsampling_ratios": [2, 4],
                                          "depths": [1, 2, 1], "kernel_size": 5, "ffn_expansion": 2},
    "semantic_tokenizer_encoder_config": {"hidden_size": 48, "num_filters": 16, "downsampling_ratios": [3],
                                          "depths": [2, 1]}}


@pytest.mark.parametrize(("model_type", "build", "parts", "small"), [
    ("granite_speech", "GraniteSpeechForConditionalGeneration", ("model.encoder.", "model.projector."),
     _SMALL_GRANITE_SPEECH),
    ("granite_speech_plus", "GraniteSpeechPlusForConditionalGeneration", ("model.encoder.", "model.projector."),
     _SMALL_GRANITE_SPEECH),
    ("vibevoice_asr", "VibeVoiceAsrForConditionalGeneration", ("tokenizer_encoder.", "multi_modal_projector."),
     _SMALL_VIBEVOICE_ASR)])
@pytest.mark.parametrize("shape", ["default", "small"])
def test_speech_encoders_under_their_own_config_names_count_what_transformers_builds(model_type, build, parts, small,
                                                                                    shape):
    """Granite Speech (and Plus): the Conformer CTC encoder (its BatchNorm statistics held like weights) and the
    Q-Former projector under encoder_config / projector_config, 383,138,868 values at the default; VibeVoice-ASR: the
    acoustic and semantic tokenizer encoders and the two-path projector, 722,675,072. Read before as text models with
    no encoder and no warning; exact as transformers builds them at the default and a small shape."""
    config, model = _on_meta(model_type, build, **(small if shape == "small" else {}))
    stored = set(model.state_dict())
    tensors = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers() if n in stored]
    a = from_hf_config(config.to_dict())
    assert [e.parameters for e in a.encoders] == [sum(t.numel() for n, t in tensors if any(p in n for p in parts))]
    assert not a.warnings


def test_cohere_compass_counts_its_qwen3_vl_tower_and_reads_cohere2s_decoder():
    """Cohere Compass: the Qwen3-VL tower with its deepstack mergers (named and uncounted before) and the language
    model, Cohere2's decoder (read Llama-style with a warning before); exact against transformers' build of a config
    it can build (its default's rope_parameters lack the per-layer-type entries CohereCompassRotaryEmbedding reads)."""
    rope = {"full_attention": {"rope_type": "default", "rope_theta": 50000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}
    text = {**SMALL_TEXT, "num_key_value_heads": 2, "vocab_size": 1000, "tie_word_embeddings": False,
            "layer_types": ["sliding_attention", "full_attention"], "rope_parameters": rope}
    config, model = _on_meta("cohere_compass", "CohereCompassForConditionalGeneration", text_config=text,
                             tie_word_embeddings=False)
    tower = sum(p.numel() for n, p in model.named_parameters() if ".visual." in n)
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("cohere_compass_vision", tower)]
    assert a.model_type == "cohere2" and not a.warnings
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) - tower


def test_pp_chart2table_counts_got_ocr2s_tower():
    """PP-Chart2Table is GOT-OCR2's architecture (PPChart2TableConfig subclasses GotOcr2Config; transformers builds
    GotOcr2ForConditionalGeneration): its SAM tower and convolutional projector, 96,618,752 parameters at the
    default, named and uncounted before, exact."""
    config, model = _on_meta("pp_chart2table", "GotOcr2ForConditionalGeneration")
    tower = sum(p.numel() for n, p in model.named_parameters() if "vision_tower" in n or "multi_modal_projector" in n)
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("pp_chart2table_vision", tower)] and not a.warnings
    assert tower == 96_618_752 and parameter_count(a) == sum(p.numel() for p in model.parameters()) - tower


def test_a_vision_tower_named_by_a_string_is_named_as_not_counted():
    """LLaVA's original release layout (liuhaotian/llava-v1.5-7b, apple/FastVLM: its own code, the language model's
    fields at the top) names its tower by a string: the warning says it is not counted."""
    cfg = {"model_type": "llava_qwen2", "mm_vision_tower": "mobileclip_l_1024", "mm_hidden_size": 3072, **SMALL_TEXT}
    assert "its vision tower (mobileclip_l_1024, named by the config for the release's own code) is not counted" in \
        from_hf_config(cfg).warnings


def test_an_encoder_under_a_name_memviz_does_not_read_is_named():
    """A multimodal config's sub-config with a model_type memviz does not read (a new family's encoder_config) is
    named in a warning as not counted, never left out silently."""
    cfg = {"model_type": "new_speech_llm", "encoder_config": {"model_type": "new_speech_encoder", "hidden_size": 64},
           "text_config": {"model_type": "llama", **SMALL_TEXT}}
    assert "its encoder (new_speech_encoder) is not counted" in from_hf_config(cfg).warnings


_SMALL_NEMO_SPEECHLM = {
    "audio_config": {"asr_config": {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                                    "num_attention_heads": 4, "num_key_value_heads": 2, "num_mel_bins": 64,
                                    "subsampling_factor": 4},
                     "diarization_config": {
                         "audio_config": {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
                                          "num_attention_heads": 4, "num_mel_bins": 64, "subsampling_factor": 4},
                         "head_config": {"hidden_size": 96, "num_speakers": 4, "audio_hidden_size": 128,
                                         "subsampling_factor": 4},
                         "streaming_config": {"num_speakers": 4, "subsampling_factor": 4}}},
    "word_timestamp_config": {"hidden_size": 256, "intermediate_size": 128, "num_hidden_layers": 1,
                              "num_attention_heads": 4, "vocab_size": 100, "blank_token_id": 99, "upsampling_factor": 3}}


@pytest.mark.parametrize("shape", ["default", "small"])
def test_nemotron3_5_transcribe_counts_its_audio_path_and_its_float32_part(shape):
    """NeMo SpeechLM (Nemotron 3.5 Transcribe): the speech encoder, the Sortformer diarization model, the projector
    and the word-timestamp encoder and head (783,812,815 parameters at the default, named and uncounted before), of
    which the audio tower and projector (733,559,832) are float32 in a bfloat16 build, as
    `_keep_in_fp32_modules_strict` keeps them: exact at the default and a small shape."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("nemo_speechlm", **(_SMALL_NEMO_SPEECHLM if shape == "small" else {}))
        with torch.device("meta"):
            model = transformers.Nemotron3_5TranscribeForConditionalGeneration._from_config(config,
                                                                                          dtype=torch.bfloat16)
    audio = [p for n, p in model.named_parameters() if any(k in n for k in (
        "audio_tower", "multi_modal_projector", "word_timestamp"))]
    a = from_hf_config(config.to_dict())
    assert [(e.parameters, e.float32_parameters, e.float32_strict) for e in a.encoders] == [
        (sum(p.numel() for p in audio), sum(p.numel() for p in audio if p.dtype == torch.float32), True)]
    assert not a.warnings


_TINY_APERTUS = {
    "vision_config": {"base_channels": 32, "channel_multiplier": [1, 2], "num_res_blocks": 1, "attn_resolutions": [16],
                      "resolution": 32, "codebook_size": 64, "embed_dim": 8, "latent_channels": 16},
    "audio_config": {"num_filters": 4, "upsampling_ratios": [4, 2], "num_residual_layers": 2, "num_lstm_layers": 1,
                     "hidden_size": 16, "codebook_size": 8, "codebook_dim": 16, "compress": 2},
    "text_config": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                    "num_key_value_heads": 2, "vocab_size": 512}, "image_token_offset": 100, "audio_token_offset": 164}


@pytest.mark.parametrize("shape", ["default", "tiny"])
def test_apertus1p5_counts_its_tokenizers_held_float32_in_any_16_bit_load(shape, tmp_path):
    """Apertus 1.5's image tokenizer (Emu3.5's encode-only VQ-GAN: 218,153,984 parameters at the default) and audio
    tokenizer (WavTokenizer's SEANet encoder with its codebook buffers: 12,501,505 values), named and uncounted
    before, exact as transformers builds them; its class keeps both float32 in float16 and bfloat16 loads
    (`_keep_in_fp32_modules_strict`), as a tiny model saved and loaded both ways shows, and memviz's transformers
    weights hold their bytes as each load does."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    fields = _TINY_APERTUS if shape == "tiny" else {}
    config, model = _on_meta("apertus1p5", "Apertus1p5ForConditionalGeneration", **fields)
    stored = set(model.state_dict())
    tensors = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers() if n in stored]
    towers = [sum(t.numel() for n, t in tensors if part in n) for part in ("vision_tokenizer", "audio_tokenizer")]
    a = from_hf_config(config.to_dict())
    assert [(e.parameters, e.float32_parameters, e.float32_strict) for e in a.encoders] == [(n, n, True) for n in towers]
    assert Architecture.from_dict(json.loads(json.dumps(a.to_dict()))).encoders == a.encoders  # a session keeps it
    if shape == "default":
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transformers.Apertus1p5ForConditionalGeneration(config).save_pretrained(tmp_path)
        for dtype in (torch.float16, torch.bfloat16):
            loaded = transformers.Apertus1p5ForConditionalGeneration.from_pretrained(tmp_path, dtype=dtype)
            held = sum(t.numel() * t.element_size() for n, t in list(loaded.named_parameters()) + list(
                loaded.named_buffers()) if "tokenizer" in n and n in loaded.state_dict())
            weights, alone = (estimate(arch, Scenario(engine="transformers", context_tokens=64, device="cpu",
                                                      weight_format="fp16" if dtype == torch.float16 else "bf16"))
                              .bytes["weights"] for arch in (a, a.with_changes(encoders=())))
            assert weights - alone == held == 4 * sum(towers), dtype


@pytest.mark.parametrize("changes", [{}, {
    "vision_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "use_swiglu_ffn": True,
                      "video_temporal_patch_size": 2, "max_img_size": 256, "qkv_bias": False, "num_registers": 3},
    "downsample_ratio": 0.25, "projector_hidden_size": 128, "vision_hidden_size": 64,
    "text_config": {"num_nextn_predict_layers": 1}}])
def test_nemotron_h_omni_counts_its_radio_tower_and_projector(changes):
    """Nemotron-H Omni's C-RADIO tower (patch projections, positions of the largest image, cls and register tokens,
    layer-scaled blocks with a GELU or SwiGLU MLP), the final norm Megatron adds with MTP layers and the projector
    over pixel-shuffled features: 691,447,296 parameters at the default, named and uncounted before; exact as
    transformers builds them at the default and a small video / SwiGLU / MTP shape."""
    config, model = _on_meta("nemotron_h_omni", "NemotronH_Omni_Reasoning_V3", **changes)
    towers = sum(p.numel() for n, p in model.named_parameters() if not n.startswith("language_model"))
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("radio", towers)] and not a.warnings


@pytest.mark.parametrize("changes", [
    {"text_config": {"head_dim": 128}},
    {"text_config": {"head_dim": 64, "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8,
                     "intermediate_size": 3072, "num_hidden_layers": 2, "vocab_size": 1000},
     "vision_config": {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "max_image_size": 256, "spatial_merge_size": 4, "text_hidden_size": 1024}}])
def test_hunyuan_vl_counts_its_tower_and_merger_and_reads_its_text_model(changes):
    """HunYuan-VL: its ViT over positions of the largest image and the patch merger (two convolutions, a linear, the
    newline / begin / end / separator vectors, two RMSNorms): 471,369,200 parameters at the default, named and
    uncounted before; its language model HunYuan-Dense's (q / k norms), read Llama-style with a warning before; both
    exact as transformers builds them (the default given the head_dim its text config leaves unset) and at a small
    shape."""
    config, model = _on_meta("hunyuan_vl", "HunYuanVLForConditionalGeneration", **changes)
    towers = sum(p.numel() for n, p in model.named_parameters() if "language_model" not in n and "lm_head" not in n)
    a = from_hf_config(config.to_dict())
    assert [(e.family, e.parameters) for e in a.encoders] == [("hunyuan_vl_vision", towers)] and not a.warnings
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) - towers


@pytest.mark.parametrize("audio", [
    {"projection_hidden_size": 4096, "projection_bias": False},
    {"projection_hidden_size": 256, "projection_bias": True, "hidden_size": 128, "num_hidden_layers": 2,
     "num_attention_heads": 4, "intermediate_size": 256, "subsampling_factor": 4, "num_mel_bins": 128,
     "conv_kernel_size": 5, "subsampling_conv_channels": 32, "attention_bias": True, "convolution_bias": False}])
def test_nemotron_h_omni_counts_its_parakeet_audio_encoder_also_in_the_releases_field_names(audio):
    """Nemotron-H Omni's audio path: the Parakeet (FastConformer) encoder and its projector, 628,377,600 parameters
    at the default widths, exact as transformers builds them at two shapes; the release's own field names
    (llm_config, sound_config with model_type "parakeet" and without attention_bias, vit_hidden_size:
    NemotronH_Omni_Reasoning_V3_Config `_legacy_field_names`) read the same."""
    config, model = _on_meta("nemotron_h_omni", "NemotronH_Omni_Reasoning_V3", audio_config=audio)
    built = sum(p.numel() for n, p in model.named_parameters() if n.startswith(("audio_tower", "embed_audio")))
    d = config.to_dict()
    a = from_hf_config(d)
    assert [(e.family, e.parameters) for e in a.encoders][1:] == [("parakeet_encoder", built)] and not a.warnings
    release = {k: v for k, v in d.items() if k not in ("text_config", "audio_config", "vision_hidden_size")}
    release.update(llm_config=d["text_config"], vit_hidden_size=d["vision_hidden_size"],
                   sound_config={**{k: v for k, v in d["audio_config"].items() if k != "model_type"},
                                 "model_type": "parakeet"})
    if "attention_bias" not in audio:  # the release omits it; the class supplies False
        del release["sound_config"]["attention_bias"]
    r = from_hf_config(release)
    assert r.encoders == a.encoders and parameter_count(r) == parameter_count(a) and not r.warnings


def test_vllm_v1_keeps_the_dummy_images_on_the_gpu_through_its_profile():
    """V1's `profile_run` moves the dummy batch to the GPU before the encoder pass and holds it to the end (0.19 -
    0.24 `batched_dummy_mm_inputs`), in the model dtype: Gemma 3's 32 images of 4,096 patches x 3 x 14 x 14 values in
    bf16 beside the language model's pass and the sampler step; V2 frees them after the pass. vLLM 0.19 printed 3.99
    GiB for Gemma-3-27B's profile (memviz 3.79 without the images, 3.94 with them: test_published_logs). Those
    releases normalised the pixels on the host (no mm_device_do_normalize before 0.28); with it, uint8."""
    a = get_preset("gemma-3-27b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                  options={"extensible_kv_cache": False, "model_runner": "v1", "cold_compile": False,
                           "mm_device_do_normalize": False})
    facts = {runner: estimate(a, sc.with_changes(options={**dict(sc.options), "model_runner": runner})).engine_facts
             for runner in ("v1", "v2")}
    assert facts["v1"]["encoder_profile"]["items"] == 32
    assert facts["v1"]["encoder_profile"]["input_bytes"] == 32 * 4096 * 3 * 14 * 14 * 2
    raw = estimate(a, sc.with_changes(options={**dict(sc.options), "mm_device_do_normalize": True})).engine_facts
    assert raw["encoder_profile"]["input_bytes"] == 32 * 4096 * 3 * 14 * 14
    assert facts["v2"]["encoder_profile"]["input_bytes"] == 0


def test_vllm_qwen3_vl_holds_a_batch_of_deepstack_features_from_load():
    """Qwen3VLForConditionalGeneration allocates one max_num_batched_tokens x hidden tensor per deepstack level at
    load (qwen3_vl.py `__init__`): transformers' default Qwen3-VL, 3 levels of 4,096 at 8,192 tokens, 192 MiB in
    the overhead and the log check's "Model loading took"; none under --language-model-only (no tower) or for
    Qwen3.5, whose tower has no deepstack."""
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.Qwen3VLConfig().to_dict())
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    facts = estimate(a, sc).engine_facts
    assert facts["deepstack_buffer_bytes"] == 3 * 8192 * 4096 * 2
    assert estimate(a, sc.with_changes(options={"language_model_only": True})).engine_facts[
        "deepstack_buffer_bytes"] == 0
    assert estimate(get_preset("qwen3.5-35b-a3b").architecture(), sc).engine_facts["deepstack_buffer_bytes"] == 0
