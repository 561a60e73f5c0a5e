"""MiniMax-M3 (transformers 5.24 minimax_m3_vl_text, llama.cpp's minimax-m3, vLLM's models/minimax_m3): leading dense
layers, then experts with a shared one and the block-sparse layers' indexer, whose key each engine caches its own
way; the released configs' legacy field names."""

import json
import warnings
from pathlib import Path

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_mixes import gguf_tensor_type
from memviz.core.inventory import active_parameter_count, build_inventory, parameter_count

CONFIG = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "configs" / "minimax-m3.json").read_text())
#: MiniMaxM3VLTextConfig's defaults (transformers 5.24: the released widths, 60 layers) in the released configs'
#: legacy names, three dense layers first as in every published MiniMax-M3 sparse_attention_freq / moe_layer_freq
LEGACY = dict(model_type="minimax_m3_vl_text", architectures=["MiniMaxM3SparseForCausalLM"], vocab_size=200064,
              hidden_size=6144, intermediate_size=3072, dense_intermediate_size=12288, shared_intermediate_size=3072,
              num_hidden_layers=60, num_attention_heads=64, num_key_value_heads=4, head_dim=128, rotary_dim=64,
              num_local_experts=128, num_experts_per_tok=4, max_position_embeddings=524288, tie_word_embeddings=False,
              sparse_attention_config={"sparse_attention_freq": [0] * 3 + [1] * 57, "sparse_num_index_heads": 4,
                                       "sparse_index_dim": 128, "sparse_block_size": 128, "sparse_topk_blocks": 16,
                                       "sparse_local_block": 1},
              moe_layer_freq=[0] * 3 + [1] * 57)


def test_the_legacy_names_read_as_the_layer_kinds_transformers_derives():
    flat = {k: v for k, v in LEGACY.items() if k not in ("sparse_attention_config", "moe_layer_freq")}
    flat.update(layer_types=["full_attention"] * 3 + ["minimax_m3_sparse"] * 57,
                mlp_layer_types=["dense"] * 3 + ["sparse"] * 57, index_n_heads=4, index_head_dim=128)
    a = from_hf_config(LEGACY)
    assert a == from_hf_config(flat) and not a.warnings
    assert a.indexer_layers == a.moe_layers == (False,) * 3 + (True,) * 57 and a.block_indexer
    assert a.layer_kinds_text() == "3 × full, 57 × full with indexer"  # the sparse layers attend to selected blocks


def test_released_widths_count_what_transformers_builds_and_llamacpp_names():
    """Parameters equal transformers' own model on the meta device (the routing bias is a buffer there); llama.cpp
    names a 60-layer MiniMax-M3 LLM_TYPE_428B_A23B (src/models/minimax-m3.cpp `load_arch_hparams`)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    fields = {k: v for k, v in LEGACY.items() if k not in ("model_type", "architectures")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model("minimax_m3_vl_text", **fields)
        with torch.device("meta"):
            model = transformers.AutoModelForCausalLM.from_config(config)
    reference = sum(p.numel() for p in model.parameters())
    reference += sum(b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    a = from_hf_config(LEGACY)
    assert parameter_count(a) == reference
    assert parameter_count(a) == pytest.approx(428e9, rel=0.01)
    assert active_parameter_count(a) == pytest.approx(23e9, rel=0.1)


def test_the_indexer_in_the_sparse_layers_only_its_projections_f32_in_every_mix():
    a = from_hf_config(CONFIG)
    kinds = {(t.layer, t.kind) for t in build_inventory(a) if t.kind.startswith("indexer")}
    assert {layer for layer, _ in kinds} == {1, 2, 3}
    projections = [t for t in build_inventory(a) if t.kind in ("indexer_q", "indexer_k_proj")]
    assert {gguf_tensor_type(mix, t, a) for mix in ("Q4_K_M", "Q8_0", "F16") for t in projections} == {"F32"}


def test_kv_per_token_in_each_engine():
    """Per layer K and V of 4 heads of 128 (bf16: 2,048 bytes), and in the 57 sparse layers the indexer's key of 128:
    in the cache's format in transformers (MiniMaxM3VLSparseCacheLayer.idx_keys); with a V row of 128 beside it in
    llama.cpp (`llama_kv_cache_msa`'s second cache allocates V); in bfloat16 whatever the cache's format in vLLM,
    whose FP8 cache halves the rest (1,024 bytes a layer)."""
    a = from_hf_config(LEGACY)
    per_token = {(engine, kv): estimate(a, Scenario(engine=engine, kv_format=kv, context_tokens=8192,
                                                    gpu="h200", tp=8 if engine == "vllm" else 1)).kv_bytes_per_token
                 for engine, kv in (("transformers", "bf16"), ("llamacpp", "fp16"), ("vllm", "bf16"), ("vllm", "fp8"))}
    assert per_token == {("transformers", "bf16"): 60 * 2048 + 57 * 256, ("llamacpp", "fp16"): 60 * 2048 + 57 * 512,
                         ("vllm", "bf16"): 60 * 2048 + 57 * 256, ("vllm", "fp8"): 60 * 1024 + 57 * 256}


def test_vllm_takes_blocks_of_one_sparse_block():
    """MINIMAX_M3_SPARSE and the indexer accept pages of 128 tokens only (vllm/models/minimax_m3/common)."""
    a = from_hf_config(LEGACY)
    facts = estimate(a, Scenario(engine="vllm", context_tokens=131072, gpu="h200", tp=8)).engine_facts
    assert facts["block_size"] == 128


def test_a_sparse_layer_is_not_refused_as_recurrent_and_bad_fields_are():
    assert from_hf_config(CONFIG).model_type == "minimax_m3_vl_text"
    with pytest.raises(InputError, match="sparse_attention_config"):
        from_hf_config({**CONFIG, "sparse_attention_config": [0, 1]})
    with pytest.raises(InputError, match="sparse_attention_freq"):
        from_hf_config({**CONFIG, "sparse_attention_config": {"sparse_attention_freq": "all"}})
