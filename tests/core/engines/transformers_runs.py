"""A tiny random transformers model run for real on the CPU: the cache it fills against memviz's KV estimate."""

import warnings

from memviz.core.arch import Architecture, from_hf_config
from memviz.core.estimate import Scenario, estimate

TOKENS = 24  # within every tiny config's window: each layer that caches holds every token


def run_and_compare(build, config) -> tuple[Architecture, object, int, int]:
    """Build `build(config)` with seed 0, run one forward of TOKENS tokens with a DynamicCache, and return
    (memviz's architecture, the model, the cache's bytes (keys, values, indexer keys), memviz's transformers KV)."""
    import torch
    import transformers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        model = build(config).eval()
    cache = transformers.DynamicCache(config=config)
    with torch.no_grad():
        model(torch.randint(3, 500, (1, TOKENS)), cache=cache, use_cache=True)
    tensors = [getattr(layer, n, None) for layer in cache.layers for n in ("keys", "values", "indexer_keys")]
    held = sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))
    a = from_hf_config(config.to_dict())
    e = estimate(a, Scenario(engine="transformers", weight_format="fp32", kv_format="fp32", context_tokens=TOKENS,
                             batch=1, device="cpu"))
    return a, model, held, e.kv_cache_required
