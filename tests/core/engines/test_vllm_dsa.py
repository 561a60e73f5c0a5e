"""DeepSeek sparse attention's top-k index buffers in vLLM 0.34 (`memviz.core.engines.vllm_dsa`): the model's
logical buffer of max_num_batched_tokens x index_topk int32, and per group of layers sharing an indexer's selection a
decode workspace of min(max_num_batched_tokens, max_num_seqs x decode tokens) + 1 rows of index_topk + 1 int32
(vllm v1/attention/backends/mla/index_group.py `SparseMLAIndexGroupBuilder.register_layer`)."""

from dataclasses import replace

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.engines.vllm_dsa import index_buffer_bytes
from memviz.core.estimate import Scenario, estimate
from memviz.core.log_check import logged_weights

transformers = pytest.importorskip("transformers")


def deepseek_v32():
    return from_hf_config(transformers.AutoConfig.for_model("deepseek_v32").to_dict())


def test_every_indexer_layer_has_a_decode_workspace_beside_the_batch_of_indices():
    a = deepseek_v32()
    assert a.indexer_topk == 2048 and all(a.indexer_layers) and a.num_layers == 61
    got = index_buffer_bytes(a, range(61), max_tokens=8192, max_seqs=1024, decode_tokens=1, act_bytes=2)
    assert got == 8192 * 2048 * 4 + 61 * 1025 * 2049 * 4  # 0.54 GiB
    # a decode step of 1 + 3 speculative tokens; rows capped by the batch
    assert index_buffer_bytes(a, range(61), 8192, 1024, 4, 2) == 8192 * 2048 * 4 + 61 * 4097 * 2049 * 4
    assert index_buffer_bytes(a, range(61), 2048, 1024, 4, 2) == 2048 * 2048 * 4 + 61 * 2049 * 2049 * 4


def test_layers_reusing_a_selection_share_its_group_but_a_stage_opens_one_at_its_first_layer():
    """GLM-5's "shared" layers (indexer_types) register in the group of the indexer before them; a pipeline stage
    that starts at one opens a group there (`register_layer`: `self.current_group is None`)."""
    kinds = ["full", "shared", "shared", "full"] * 4
    cfg = transformers.AutoConfig.for_model("glm_moe_dsa", num_hidden_layers=16, indexer_types=kinds).to_dict()
    a = from_hf_config(cfg)
    workspace = 1025 * 2049 * 4
    logical = 8192 * 2048 * 4
    assert index_buffer_bytes(a, range(16), 8192, 1024, 1, 2) == logical + 8 * workspace
    assert index_buffer_bytes(a, range(1, 8), 8192, 1024, 1, 2) == logical + 4 * workspace  # layers 1, 3, 4 and 7


def test_models_that_build_no_shared_group_hold_none():
    a = from_hf_config(transformers.AutoConfig.for_model("deepseek_v3").to_dict())
    assert index_buffer_bytes(a, range(a.num_layers), 8192, 1024, 1, 2) == 0


def test_hy_v4s_sparse_layers_each_build_a_workspace_of_the_batchs_rows():
    """HYV4MLAAttention passes no builder: each sparse layer's own takes the logical buffer's rows
    (`SparseMLACommonImpl.__init__`), whatever max_num_seqs and its "shared" indexer layers."""
    cfg = transformers.AutoConfig.for_model("hy_v4", num_hidden_layers=9).to_dict()
    a = from_hf_config(cfg)
    assert a.indexer_layers.count(True) == 3
    assert index_buffer_bytes(a, range(9), 8192, 1024, 1, 2) == 8192 * 2048 * 4 + 9 * 8193 * 2049 * 4
    assert index_buffer_bytes(a, range(9), 8192, 16, 1, 2) == index_buffer_bytes(a, range(9), 8192, 1024, 1, 2)


def test_the_buffers_are_counted_in_the_overhead_and_in_what_the_model_loading_took():
    """The same model with half the selection: the overhead falls by the buffers' difference, the profiled pool
    grows by it (to a block), and vLLM's "Model loading took" reading (`logged_weights`) counts them."""
    a = deepseek_v32()
    half = replace(a, indexer_topk=1024)
    sc = Scenario(engine="vllm", weight_format="fp8", gpu="h200", tp=8, context_tokens=8192,
                  options=(("extensible_kv_cache", False),))
    full_e, half_e = estimate(a, sc), estimate(half, sc)
    s = full_e.engine_facts
    expected = index_buffer_bytes(a, range(61), s["max_num_batched_tokens"], s["max_num_seqs"], 1, 2)
    assert s["sparse_index_buffer_bytes"] == expected
    diff = expected - half_e.engine_facts["sparse_index_buffer_bytes"]
    assert full_e.devices[0].overhead - half_e.devices[0].overhead == pytest.approx(diff, abs=1)
    pool = half_e.engine_facts["kv_pool_bytes"] - s["kv_pool_bytes"]
    assert abs(diff - pool) < s["kv_block_bytes"]
    assert logged_weights(full_e) - full_e.bytes["weights"] == s["rotary_table_bytes"] + expected


@pytest.mark.parametrize("model_type", ["glm_moe_dsa", "mistral_large4_text"])
@pytest.mark.parametrize("extra", [{"index_topk_freq": 4}, {"index_topk_freq": 3, "index_skip_topk_offset": 0},
                                   {"index_topk_pattern": "FSSFFSFSSSFF"}])
def test_a_config_without_indexer_types_takes_the_schedule_transformers_derives(model_type, extra):
    """index_topk_freq / index_skip_topk_offset / index_topk_pattern, as the configs' __post_init__ turns them into
    indexer_types (the raw config.json memviz reads has no indexer_types)."""
    cls = transformers.AutoConfig.for_model(model_type, num_hidden_layers=12, **extra)
    raw = {k: v for k, v in cls.to_dict().items() if k != "indexer_types"} | extra
    assert from_hf_config(raw).indexer_layers == tuple(k == "full" for k in cls.indexer_types)


def test_glm5_on_compute_capability_10_asks_for_a_16_bit_cache_by_name():
    """vLLM 0.34 makes GLM-5's "auto" cache FP8 on SM10x (`GlmMoeDsaForCausalLM.verify_and_update_config`): the
    command that reproduces a bf16 estimate names bfloat16; on Hopper "auto" is bf16 and goes unsaid."""
    a = from_hf_config(transformers.AutoConfig.for_model("glm_moe_dsa").to_dict())
    b200 = estimate(a, Scenario(engine="vllm", weight_format="fp8", gpu="b200", tp=8, context_tokens=8192))
    h200 = estimate(a, Scenario(engine="vllm", weight_format="fp8", gpu="h200", tp=8, context_tokens=8192))
    assert "--kv-cache-dtype bfloat16" in b200.launch_command()
    assert "--kv-cache-dtype" not in h200.launch_command()
    fp8 = estimate(a, Scenario(engine="vllm", weight_format="fp8", gpu="b200", tp=8, kv_format="fp8",
                               context_tokens=8192))
    assert "--kv-cache-dtype fp8" in fp8.launch_command() and fp8.kv_bytes_per_token < b200.kv_bytes_per_token
