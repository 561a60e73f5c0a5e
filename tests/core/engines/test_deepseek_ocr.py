"""DeepSeek-OCR, DeepSeek-OCR 2 and Unlimited-OCR: DeepSeek-V2's experts under plain multi-head attention, read as
what they are (read Llama-style before, their shared experts missing: -2.6 %), and Unlimited-OCR's reference
sliding-window attention (R-SWA) cached for the whole context (read as a 128-token window before: its KV at 8,192
tokens 98 % short)."""

import json
import warnings
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import run_and_compare, wrapped_language_model

RELEASED = json.loads((Path(__file__).parents[2] / "data" / "deepseek_ocr_config.json").read_text())
CHECKPOINT = 3_336_106_240  # the released safetensors' parameters (the file's _source)
LANGUAGE_MODEL = 2_934_734_080  # less its SAM, CLIP, projector and separator tensors
KV_PER_TOKEN = 12 * 2 * 1280 * 2  # 12 layers, K and V of 10 heads x 128, bf16


def test_the_released_deepseek_ocr_config_counts_its_checkpoints_language_model():
    a = from_hf_config(RELEASED)
    assert a.model_type == "deepseek_v2" and a.kv_lora_rank is None and a.num_kv_heads == a.num_heads == 10
    assert parameter_count(a) == LANGUAGE_MODEL
    assert not any("not one memviz knows" in w for w in a.warnings)
    assert not a.warnings
    (tower,) = a.encoders  # DeepEncoder: SAM ViT-B, CLIP-L, the projector, the two separators
    assert tower.parameters == CHECKPOINT - LANGUAGE_MODEL
    e = estimate(a, Scenario(engine="vllm", context_tokens=8192, gpu="rtx4090"))
    assert e.kv_bytes_per_token == KV_PER_TOKEN


def test_a_latent_width_with_use_mla_false_is_plain_attention():
    """vLLM 0.33 `DeepseekV2DecoderLayer` builds DeepseekAttention when the rope and nope widths are 0, whatever
    kv_lora_rank says; a config saying use_mla false keeps its latent width unused."""
    language = {**RELEASED["language_config"], "kv_lora_rank": 512}
    a = from_hf_config({**RELEASED, "language_config": language})
    assert a.kv_lora_rank is None and parameter_count(a) == LANGUAGE_MODEL


@pytest.mark.parametrize("model_type", ["unlimited_ocr", "deepseek_ocr2"])
def test_the_language_models_transformers_builds(model_type):
    """transformers 5.24 builds DeepseekOcr2TextDecoderLayer (Unlimited-OCR's too): DeepSeek-V2's router and experts
    under LlamaAttention."""
    pytest.importorskip("torch")
    towers = r"vision|sam_model|projector|image_newline|view_seperator|view_separator"
    if model_type == "deepseek_ocr2":  # its default config leaves the experts per token unset
        pytest.importorskip("transformers")
        import torch
        import transformers

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = transformers.AutoConfig.for_model(model_type, text_config={"num_experts_per_tok": 6})
            layers = config.text_config.num_hidden_layers  # and builds its MLPs from mlp_layer_types, which it
            config.text_config.mlp_layer_types = ["dense"] + ["sparse"] * (layers - 1)  # leaves unset
            with torch.device("meta"):
                model = transformers.AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
        import re

        reference = sum(p.numel() for n, p in model.named_parameters() if not re.search(towers, n))
    else:
        config, reference, _ = wrapped_language_model(model_type, towers)
    a = from_hf_config(config.to_dict())
    assert a.model_type == "deepseek_v2" and parameter_count(a) == reference
    assert not any("not one memviz knows" in w for w in a.warnings)


def test_unlimited_ocr_caches_every_prompt_token_of_every_layer():
    """A tiny Unlimited-OCR's prompt fills UnlimitedOcrDynamicReferenceSlidingWindowLayer past its 8-token window:
    the prompt stays, as memviz's full-context cache holds it; the note says generated tokens keep a window."""
    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(
            "unlimited_ocr", text_config=dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=3,
                                              num_attention_heads=4, num_key_value_heads=4, moe_intermediate_size=32,
                                              n_routed_experts=4, num_experts_per_tok=2, sliding_window=8))
    a, _, held, kv = run_and_compare(transformers.AutoModelForImageTextToText.from_config, config)
    assert kv == held == 3 * 2 * 64 * 4 * 24  # 3 layers, K and V of 64 fp32 values, 24 prompt tokens
    assert any(w.startswith("reference sliding-window attention") and "last 8" in w for w in a.warnings)


def test_the_released_unlimited_ocr_layout_is_read_as_full_attention():
    """vLLM 0.33's UnlimitedOCRConfig reads DeepSeek-VL2's layout with the window in language_config
    (sliding_window_size); its blocks hold every token, R-SWA being a mask."""
    language = {**RELEASED["language_config"], "sliding_window_size": 128, "sliding_window": 128}
    a = from_hf_config({**RELEASED, "architectures": ["UnlimitedOCRForCausalLM"], "language_config": language})
    assert set(a.layer_types) == {"full"} and a.sliding_window is None
    e = estimate(a, Scenario(engine="transformers", context_tokens=4096, device="cpu"))
    assert e.kv_cache_required == 4096 * KV_PER_TOKEN


@pytest.mark.parametrize("width", ["sam", {"sam_vit_b": {"downsample_channels": "wide"}}, {"clip-l-14-224": {"layers": -1}}])
def test_a_malformed_deep_encoder_is_one_line(width):
    vision = {**RELEASED["vision_config"], "width": width}
    with pytest.raises(InputError, match="^vision/audio config"):
        from_hf_config({**RELEASED, "vision_config": vision})


def test_the_transformers_launch_says_the_release_loads_with_its_own_code():
    """transformers 5.24 registers no deepseek_vl_v2 type: DeepSeek-OCR's release loads with AutoModel and the code its
    auto_map names, which runs only when the user allows it; a text_config layout keeps transformers' own classes."""
    a = from_hf_config(RELEASED)
    assert (a.loader, a.remote_code) == ("AutoModel", "modeling_deepseekocr.DeepseekOCRForCausalLM")
    for allowed in (False, True):
        sc = Scenario(engine="transformers", context_tokens=4096, options=(("trust_remote_code", allowed),))
        launch = estimate(a, sc).launch_command("deepseek-ai/DeepSeek-OCR")
        assert "model = AutoModel.from_pretrained(" in launch and f"trust_remote_code={allowed})" in launch
        assert ("only with -o trust_remote_code=true" in launch) is not allowed
    nested = from_hf_config({**RELEASED, "language_config": None, "text_config": RELEASED["language_config"]})
    assert (nested.loader, nested.remote_code) == ("", "")
