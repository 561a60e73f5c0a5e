"""HY-V4 (transformers 5.24 hy_v4, llama.cpp's hy_v4, vLLM's models/hy_v4): MLA with a gated output and a sink per
head, DeepSeek sparse attention whose "shared" layers reuse the last full layer's selection, hyper-connections without
DeepSeek-V4's comb mix; checked against transformers' own model and a real run of it."""

import json
import warnings
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.engines.transformers import EAGER_ONLY
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import build_inventory, parameter_count

CONFIG = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "configs" / "hy-v4.json").read_text())


def test_reading():
    a = from_hf_config(CONFIG)
    assert (a.is_mla, a.attn_output_gate, a.attention_sinks, a.hyper_streams, a.hyper_comb) == (True, True, True, 4,
                                                                                              False)
    assert a.indexer_layers == (True, True, False, True) and not a.warnings
    assert a.moe_layers == (False, True, True, True)
    hc = [t for t in build_inventory(a) if t.name == "model.layers.0.attn_hc.fn"]
    assert hc[0].shape == (2 * 4, 4 * 512)  # pre and post mixes of four streams
    assert "hy_v4" in EAGER_ONLY  # HYV4PreTrainedModel._supports_sdpa = False
    # HYV4Config's default selection: layer 0 and every fourth from layer 1 own an indexer
    default = from_hf_config({k: v for k, v in CONFIG.items() if k != "indexer_types"} | {"num_hidden_layers": 6,
                             "mlp_layer_types": ["dense"] + ["sparse"] * 5})
    assert default.indexer_layers == (True, True, False, False, False, True)


def test_kv_per_token_in_each_engine():
    """The latent (128 + 32) in every layer and the indexer's key (64) in the three full layers: in the cache's format
    in transformers (DynamicIndexedLayer) and llama.cpp (`llama_kv_cache_dsa`), the key as FP8 with an fp32 scale in
    vLLM (DeepseekV32IndexerCache: 68 bytes)."""
    a = from_hf_config(CONFIG)
    per_token = {engine: estimate(a, Scenario(engine=engine, kv_format=kv, context_tokens=4096,
                                              gpu="h200")).kv_bytes_per_token
                 for engine, kv in (("transformers", "bf16"), ("llamacpp", "fp16"), ("vllm", "bf16"))}
    assert per_token == {"transformers": 4 * 320 + 3 * 128, "llamacpp": 4 * 320 + 3 * 128, "vllm": 4 * 320 + 3 * 68}


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_cache_and_weights_of_a_real_run(dtype):
    """A tiny HY-V4 built by transformers and run: the cache it fills (latent and indexer keys) is memviz's KV; in
    bf16 the router, its score bias, the hyper-connections, the indexer's head weights and key norm, the sinks and the
    LM head stay float32 (`_keep_in_fp32_modules_strict`), as memviz's weights count them."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tests.core.engines.transformers_runs import run_and_compare

    fields = {k: v for k, v in CONFIG.items() if k not in ("model_type", "architectures", "torch_dtype")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("hy_v4", **fields, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config, dtype)
    assert kv == held > 0
    with warnings.catch_warnings():  # built in the dtype, as loading does (a cast afterwards would narrow them all)
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=getattr(torch, {"fp32": "float32",
                                                                                            "bf16": "bfloat16"}[dtype]))
    stored = sum(p.numel() * p.element_size() for p in model.parameters())
    stored += sum(b.numel() * b.element_size() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    e = estimate(a, Scenario(engine="transformers", weight_format=dtype, kv_format=dtype, context_tokens=24,
                             device="cpu"))
    assert e.bytes["weights"] == stored
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    assert torch.float32 in {p.dtype for p in model.parameters()}
