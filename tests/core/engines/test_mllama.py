"""Llama 3.2 Vision (mllama): its cross-attention layers against a tiny random model run for real on the CPU, and the
release's figures."""

import warnings

import pytest

from memviz.core.arch import CROSS, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from memviz.core.presets import get_preset

TOKENS = 24


def _tiny():
    import transformers

    return transformers.MllamaConfig(
        text_config=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=500, pad_token_id=0, cross_attention_layers=[1, 3]),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_global_layers=1,
                           attention_heads=4, image_size=28, patch_size=14, intermediate_layers_indices=[0, 1],
                           vision_output_dim=96))


@pytest.mark.parametrize("images", [0, 1, 2])
def test_the_cache_holds_each_images_vision_tokens_in_the_cross_attention_layers(images):
    """One forward of 24 tokens with 0, 1 or 2 images (4 tiles of (28 / 14)^2 + 1 = 5 patches each): the DynamicCache
    holds memviz's KV to the byte, and the model memviz's parameters, tower included."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from memviz.probe.runner import cache_tensors

    config = _tiny()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        model = transformers.MllamaForConditionalGeneration(config).eval()
    pictures = {}
    if images:
        pictures = dict(pixel_values=torch.randn(1, images, 4, 3, 28, 28), aspect_ratio_ids=torch.full((1, images), 6),
                        aspect_ratio_mask=torch.ones(1, images, 4, dtype=torch.long),
                        cross_attention_mask=torch.ones(1, TOKENS, images, 4, dtype=torch.long))
    cache = transformers.DynamicCache(config=config)
    with torch.no_grad():
        model(input_ids=torch.randint(3, 500, (1, TOKENS)), cache=cache, use_cache=True, **pictures)
    held = sum(t.numel() * t.element_size() for t in cache_tensors(cache) if isinstance(t, torch.Tensor))
    a = from_hf_config(config.to_dict())
    e = estimate(a, Scenario(engine="transformers", weight_format="fp32", kv_format="fp32", context_tokens=TOKENS,
                             device="cpu", options={"images": images}))
    assert a.cross_attention_tokens == 20 and a.layer_types == ("full", CROSS, "full", CROSS)
    assert e.kv_cache_required == held > 0
    assert parameter_count(a) + sum(x.parameters for x in a.encoders) == sum(p.numel() for p in model.parameters())
    assert not a.warnings


def test_llama_3_2_11b_vision_caches_32_layers_a_token_and_6404_tokens_an_image():
    """The release: 32 self-attention layers cache 131,072 bytes a token in bf16 (the seeds' 128 KiB); each of the 8
    cross-attention layers 6,404 vision tokens an image (4 tiles of 40 x 40 patches and a class token)."""
    a = get_preset("llama-3.2-11b-vision").architecture()
    e = estimate(a, Scenario(context_tokens=8192, batch=4))
    per_image = 8 * 6404 * 2 * 8 * 128 * 2
    assert e.kv_bytes_per_token == 131_072 and e.engine_facts["cross_attention_bytes_per_image"] == per_image
    assert e.bytes["kv_cache"] == 4 * (8192 * 131_072 + per_image)
    assert e.bytes["weights"] == 2 * 10_670_220_835  # the language model, the tower and its projector in bf16
    text_only = estimate(a, Scenario(context_tokens=8192, batch=4, options={"images": 0}))
    assert e.bytes["kv_cache"] - text_only.bytes["kv_cache"] == 4 * per_image
    assert "AutoModelForImageTextToText" in e.launch_command()


@pytest.mark.parametrize(("engine", "why"), [("vllm", "0.10.2 removed MllamaForConditionalGeneration"),
                                             ("llamacpp", "no architecture with cross-attention"),
                                             ("ollama", "its own engine")])
def test_engines_without_it_refuse_it(engine, why):
    a = get_preset("llama-3.2-11b-vision").architecture()
    with pytest.raises(InputError, match=why):
        estimate(a, Scenario(engine=engine, weight_format="Q4_K_M" if engine != "vllm" else "bf16",
                             kv_format="fp16", context_tokens=4096))


def test_malformed_cross_attention_layers_are_one_clear_error():
    cfg = {"model_type": "mllama", "text_config": {
        "model_type": "mllama_text_model", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 500, "cross_attention_layers": [1, 3]}}
    assert from_hf_config(cfg).cross_attention_tokens == 0  # no vision_config: a text-only MllamaForCausalLM
    cfg["text_config"]["cross_attention_layers"] = [1, 9]
    with pytest.raises(InputError, match="cross_attention_layers must be layer indices below 4"):
        from_hf_config(cfg)
    cfg["text_config"]["cross_attention_layers"] = "1"
    with pytest.raises(InputError, match="cross_attention_layers must be a list"):
        from_hf_config(cfg)
    cfg["text_config"]["cross_attention_layers"] = [1, 3]
    with pytest.raises(InputError, match="option images must be >= 0"):
        estimate(from_hf_config(cfg), Scenario(options={"images": -1}))


def test_the_markdown_report_states_the_image_cache_its_kv_holds():
    from memviz.core.report import to_markdown

    a = get_preset("llama-3.2-11b-vision").architecture()
    text = to_markdown(a, [Scenario(name="two images", context_tokens=8192, batch=4, options={"images": 2})])
    assert ("the KV cache holds 2 image(s) a sequence in the cross-attention layers (6,404 vision tokens, "
            f"{8 * 6404 * 2 * 8 * 128 * 2:,d} bytes an image; option images)") in text
