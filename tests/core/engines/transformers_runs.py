"""A tiny random transformers model run for real on the CPU: the cache it fills against memviz's KV estimate."""

import warnings

from memviz.core.arch import Architecture, from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.probe.runner import cache_tensors

TOKENS = 24  # within every tiny config's window: each layer that caches holds every token


def run_and_compare(build, config, dtype: str = "fp32") -> tuple[Architecture, object, int, int]:
    """Build `build(config)` in `dtype` (fp32 or bf16) with seed 0, run one forward of TOKENS tokens with a DynamicCache, and return
    (memviz's architecture, the model, the cache's bytes (keys, values, indexer keys, delta-net states), memviz's
    transformers KV)."""
    import torch
    import transformers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        model = build(config).to(torch.bfloat16 if dtype == "bf16" else torch.float32).eval()
    cache = transformers.DynamicCache(config=config)
    with torch.no_grad():
        model(torch.randint(3, 500, (1, TOKENS)), cache=cache, use_cache=True)
    held = sum(t.numel() * t.element_size() for t in cache_tensors(cache) if isinstance(t, torch.Tensor))
    a = from_hf_config(config.to_dict())
    e = estimate(a, Scenario(engine="transformers", weight_format=dtype, kv_format=dtype, context_tokens=TOKENS,
                             batch=1, device="cpu"))
    return a, model, held, e.kv_cache_required


def after_a_decode_step(config) -> tuple[Architecture, int, int]:
    """Run `config`'s causal LM (fp32) over TOKENS prompt tokens and one decoded token; return (memviz's
    architecture, the bytes of the distinct storages the cache's tensors hold, memviz's transformers KV at
    TOKENS + 1). A DynamicSlidingWindowLayer keeps a view of its last window - 1 tokens whose storage is the step's
    window-long concatenation: the storages count what stays allocated."""
    import torch
    import transformers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(config).eval()
    cache = transformers.DynamicCache(config=config)
    with torch.no_grad():
        model(torch.randint(3, 500, (1, TOKENS)), cache=cache, use_cache=True)
        model(torch.randint(3, 500, (1, 1)), cache=cache, use_cache=True)
    tensors = [t for layer in cache.layers for t in vars(layer).values() if isinstance(t, torch.Tensor) and t.ndim > 1]
    held = sum({id(t.untyped_storage()): t.untyped_storage().nbytes() for t in tensors}.values())
    a = from_hf_config(config.to_dict())
    e = estimate(a, Scenario(engine="transformers", weight_format="fp32", kv_format="fp32", context_tokens=TOKENS + 1,
                             batch=1, device="cpu"))
    return a, held, e.kv_cache_required


def assert_run_matches(config) -> None:
    """Run `config`'s causal LM (fp32): the cache holds memviz's KV to the byte, the model memviz's parameters (the
    routers' score-correction buffers included), and memviz read the type by its own rules."""
    import transformers

    from memviz.core.inventory import parameter_count

    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config)
    assert kv == held > 0
    stored = sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    assert parameter_count(a) == stored
    assert not any("not one memviz knows" in w for w in a.warnings)


def wrapped_language_model(model_type: str, towers: str) -> tuple[object, int, int]:
    """(the default config of the multimodal `model_type`, elements and bf16 bytes of the language model
    transformers builds inside it on the meta device: parameters and stored buffers, rotary frequencies apart, the
    tensors whose names match `towers` left out)."""
    import re

    import torch
    import transformers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type)
        with torch.device("meta"):
            model = transformers.AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
    stored = set(model.state_dict())
    named = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers()
                                              if n in stored and "inv_freq" not in n]
    language = [t for n, t in named if not re.search(towers, n)]
    return config, sum(t.numel() for t in language), sum(t.numel() * t.element_size() for t in language)


def transformers_weights(a: Architecture) -> int:
    """memviz's bf16 weights of `a`'s language model in transformers (its encoders apart)."""
    e = estimate(a.with_changes(encoders=()), Scenario(engine="transformers", weight_format="bf16", context_tokens=64,
                                                       device="cpu"))
    return e.bytes["weights"]
