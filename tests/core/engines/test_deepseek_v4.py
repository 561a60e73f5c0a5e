"""DeepSeek-V4 (compressed sparse and heavily compressed attention over a K=V window, hyper-connections, hash
routing) read by its own rules: parameters against transformers 5.24's own model, the cache of tiny random models run
for real on the CPU against memviz's transformers KV to the byte, and the released DeepSeek-V4-Flash-Base config."""

import warnings

import numpy as np
import pytest

from memviz.core.arch import SLIDING, from_hf_config
from memviz.core.engines import get_engine
from memviz.core.estimate import Scenario, estimate, inputs
from memviz.core.formats import get_kv_format
from memviz.core.inventory import Role, active_parameter_count, build_inventory, parameter_count
from memviz.core.kv import KVLayout, compressed_cache_bytes, kv_cache_bytes
from memviz.core.presets import get_preset

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = dict(vocab_size=512, hidden_size=256, moe_intermediate_size=128, num_hidden_layers=5, num_attention_heads=4,
            head_dim=128, q_lora_rank=64, n_routed_experts=4, num_experts_per_tok=2, sliding_window=16, o_groups=2,
            o_lora_rank=64, index_n_heads=2, index_head_dim=32, index_topk=8, compress_ratios=[0, 4, 128, 4, 0],
            qk_rope_head_dim=32, num_hash_layers=2, compress_rate_hca=16)


def tiny_config(**changes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.DeepseekV4Config(**{**TINY, **changes})


def flash():
    """The released config.json (its source in the preset)."""
    return dict(get_preset("deepseek-v4-flash-base").config)


def run(cfg, dtype, batch: int, tokens: int) -> tuple[int, int]:
    """Prefill `tokens` per sequence, then decode one token: the bytes the cache's storages hold after each."""
    from memviz.probe.runner import cache_tensors, storage_bytes

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype).eval()  # as from_pretrained: fp32 kept
    cache = transformers.DynamicCache(config=cfg)
    ids = torch.randint(3, 500, (batch, tokens))
    with torch.no_grad():
        model(ids, cache=cache, use_cache=True)
        prefill = storage_bytes(cache_tensors(cache))
        model(ids[:, :1], cache=cache, use_cache=True)
    return prefill, storage_bytes(cache_tensors(cache))


def test_parameters_are_transformers_own_for_its_default_and_the_released_flash_config():
    for fields in ({}, flash()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = transformers.AutoConfig.for_model("deepseek_v4", **{k: v for k, v in fields.items()
                                                                           if k != "model_type"})
            with torch.device("meta"):
                model = transformers.AutoModelForCausalLM.from_config(config)
        stored = sum(p.numel() for p in model.parameters()) + sum(  # the checkpoint's buffers: the routing bias
            b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n or "tid2eid" in n)
        a = from_hf_config(fields or config.to_dict())
        assert parameter_count(a) == stored
        assert not a.warnings


def test_the_released_flash_config_reads_as_its_card():
    """deepseek-ai/DeepSeek-V4-Flash-Base: 284B parameters, 13B activated (model card; the hash layers' token-id
    tables counted, not activated); 2 window-only layers, then
    compressed sparse (ratio 4, with the indexer) and heavily compressed (128) in turn; the 44th ratio is the MTP
    layer's."""
    a = from_hf_config(flash())
    assert round(parameter_count(a) / 1e9) == 284 and round(active_parameter_count(a) / 1e9) == 13
    assert a.compress_ratios[:4] == (0, 0, 4, 128) and a.compress_ratios[-1] == 4
    assert sum(a.indexer_layers) == a.compress_ratios.count(4) == 21 and a.compress_ratios.count(128) == 20
    assert set(a.layer_types) == {SLIDING} and a.sliding_window == 128 and a.num_kv_heads == 1
    assert a.hash_layers == (True,) * 3 + (False,) * 40


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("tokens", [12, 300, 301, 319])
def test_the_cache_transformers_fills_is_memviz_kv_to_the_byte(dtype, tokens):
    """Two sequences: the window (16) of K=V vectors (twice in the window-only layers), floor(T / m) compressed
    entries and the indexer's, the compressor buffers' storages: all the prompt's projections until the first decode
    step (the prefill transient), then the last step's; the overlap state with its float32 gate."""
    cfg = tiny_config()
    prefill, held = run(cfg, torch.float32 if dtype == "fp32" else torch.bfloat16, 2, tokens)
    a = from_hf_config(cfg.to_dict())
    after = Scenario(engine="transformers", weight_format=dtype, kv_format=dtype, context_tokens=tokens + 1, batch=2,
                     device="cpu")
    assert estimate(a, after).kv_cache_required == held
    before = Scenario(engine="transformers", weight_format=dtype, kv_format=dtype, context_tokens=tokens, batch=2,
                      device="cpu")
    x = inputs(a, before, np.asarray(tokens), np.asarray(2))
    engine, every = get_engine("transformers"), range(a.num_layers)
    assert engine.kv_bytes(x, every) + engine.kv_transient(x, every) == prefill


def test_compressed_entries_and_the_window_per_token_of_the_flash_config():
    """DeepSeek-V4-Flash in bf16 at 1M tokens: 43 windows of 128 K=V vectors of 512 and, per token, 512 x 2 / 4 +
    128 x 2 / 4 bytes in 21 layers and 512 x 2 / 128 in 20: 6.72 GiB a sequence where a full cache of one
    512-wide K and V per layer would hold 86 GiB."""
    a, bf16 = from_hf_config(flash()), get_kv_format("bf16")
    tokens = 1 << 20
    compressed = compressed_cache_bytes(a, bf16, tokens)
    assert compressed == 21 * (tokens // 4) * (512 + 128) * 2 + 20 * (tokens // 128) * 512 * 2
    assert kv_cache_bytes(a, bf16, tokens, KVLayout()) == compressed + 43 * 128 * 512 * 2
    assert round(kv_cache_bytes(a, bf16, tokens, KVLayout()) / 2**30, 2) == 6.72


@pytest.mark.parametrize("sequences, unified", [(1, True), (4, True), (4, False)])
def test_llamacpp_sizes_the_cache_as_llama_kv_cache_dsv4(sequences, unified):
    """ggml-org/llama.cpp 0c1e570 src/llama-kv-cache-dsv4.cpp: a stream per sequence even with a unified KV, each of
    n_ctx_seq cells; the window cache (K only) GGML_PAD(min(n_ctx_seq, 128 + n_ubatch), 256) cells in 43 layers; the
    CSA and indexer caches GGML_PAD(ceil(n_ctx_seq / 4), 256) cells in 21, the HCA cache GGML_PAD(ceil(n_ctx_seq /
    128), 256) in 20; F32 compressor states (2 planes x rows x width) per compressing layer and stream."""
    a, context = from_hf_config(flash()), 32_768
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=context,
                  batch=sequences, device="cpu", options=(("kv_unified", unified),))
    n_ctx_seq = context * sequences if unified else context
    pad = lambda n: -(-n // 256) * 256  # noqa: E731
    window = 43 * pad(min(n_ctx_seq, 128 + 512)) * 512 * 2
    csa = 21 * pad(-(-n_ctx_seq // 4)) * (512 + 128) * 2
    hca = 20 * pad(-(-n_ctx_seq // 128)) * 512 * 2
    states = 21 * 2 * 4 * (8 * 1024 + 8 * 256) + 20 * 2 * 4 * 128 * 512
    assert estimate(a, sc).kv_cache_required == sequences * (window + csa + hca + states)


def test_the_engines_say_what_they_cannot_run():
    """vLLM's DeepSeek-V4 pool is not modelled: one line, no figure; llama.cpp caches ratios 4 and 128 only."""
    from memviz.core.errors import InputError

    with pytest.raises(InputError, match="DeepSeek-V4"):
        estimate(from_hf_config(flash()), Scenario(engine="vllm", context_tokens=8192))
    with pytest.raises(InputError, match="ratios 4 and 128"):
        estimate(from_hf_config(tiny_config().to_dict()), Scenario(engine="llamacpp", weight_format="Q8_0",
                                                                     kv_format="q8_0", context_tokens=64))


def test_output_groups_of_zero_are_one_error_line():
    """o_groups divides the heads into the grouped output projection's groups: 0 is refused as bad input."""
    from memviz.core.errors import InputError

    with pytest.raises(InputError, match="o_groups must be at least 1"):
        from_hf_config({**flash(), "o_groups": 0})


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_weights_transformers_holds_are_memviz_weights(dtype):
    """The model as from_pretrained builds it: in bf16 the norms, hyper-connections, sinks and position biases stay
    float32, the routers' score bias is a float32 buffer and the hash layers' tid2eid an int64 one."""
    cfg = tiny_config()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32 if dtype == "fp32"
                                                              else torch.bfloat16)
    held = sum(p.numel() * p.element_size() for p in model.parameters()) + sum(
        b.numel() * b.element_size() for n, b in model.named_buffers() if "tid2eid" in n or "e_score" in n)
    sc = Scenario(engine="transformers", weight_format=dtype, kv_format=dtype, context_tokens=64, device="cpu")
    assert estimate(from_hf_config(cfg.to_dict()), sc).bytes["weights"] == held


def test_the_release_format_keeps_fp4_experts_beside_fp8_layers():
    """DeepSeek-V4-Flash's release (config: expert_dtype "fp4", quantization_config fp8 in 128 x 128 blocks): the
    routed experts MXFP4 (an fp4 value and 1/32 of an E8M0 scale a weight), the other linear layers FP8, the
    embedding and output bf16: 155.6 GB where fp8-block everywhere gives 285.5 GB; transformers on the CPU holds both
    dequantized to bf16 (no FP8 arithmetic, no MXFP4 kernels there)."""
    from memviz.core.formats import get_weight_format, weight_bytes

    cfg = {**flash(), "expert_dtype": "fp4", "quantization_config": {
        "activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "scale_fmt": "ue8m0",
        "weight_block_size": [128, 128]}}
    a = from_hf_config(cfg)
    assert a.native_format == "fp8-block-mxfp4-moe"
    release = weight_bytes(a, get_weight_format("fp8-block-mxfp4-moe"))
    experts = sum(t.numel for t in build_inventory(a) if t.role is Role.EXPERT)
    assert experts == 43 * 256 * 3 * 2048 * 4096
    fp8 = weight_bytes(a, get_weight_format("fp8-block"))
    assert release == fp8 - experts - experts // 128 // 128 * 4 + experts // 2 + experts // 32
    assert round(release / 1e9, 1) == 155.6
    cpu = estimate(a, Scenario(engine="transformers", weight_format="fp8-block-mxfp4-moe", context_tokens=4096,
                               device="cpu"))
    assert cpu.bytes["weights"] == estimate(a, Scenario(engine="transformers", weight_format="bf16",
                                                        context_tokens=4096, device="cpu")).bytes["weights"]
