"""vLLM's MTP speculative decoding: the draft layers' weights on the last stage, one more full-attention layer's cache
each (which regroups a hybrid model's pool), the grammar mask's 1 + k rows, and the log's speculative config."""

import pytest

from memviz.core.engines.vllm_cudagraphs import (
    LAYER_GRAPH_BYTES,
    MOE_LAYER_GRAPH_BYTES,
    SHARED_EXPERT_GRAPH_BYTES,
    capture_sizes,
)
from memviz.core.engines.vllm_mtp import draft_layers, head_bytes, last_full_layer
from memviz.core.engines.vllm_sampler import v2_state_bytes
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.formats import get_weight_format
from memviz.core.importers.vllm_log import vllm_scenario
from memviz.core.presets import get_preset
from memviz.core.tensor_table import tensor_table


def _pair(preset: str, tokens: int, **kw):
    a = get_preset(preset).architecture()
    base = Scenario(engine="vllm", **kw)
    return a, estimate(a, base), estimate(a, base.with_changes(options={"num_speculative_tokens": tokens}))


def _last_layer_bytes(a, weight_format: str) -> float:
    tt = tensor_table(a, get_weight_format(weight_format))
    return float(tt.nbytes[tt.layer == a.num_layers - 1].sum())


def test_qwen35_mtp_adds_a_full_attention_layer_and_regroups_the_hybrid_pool():
    """Qwen3.5-35B-A3B on an H200, 3 draft tokens: Qwen3_5MultiTokenPredictor's one decoder layer (as the model's
    last, full attention with its experts), fc (2H x H) and three norms; its cache makes 11 full-attention layers
    beside 30 delta-net ones, so groups of 11 (the delta-net's three groups padded to 33), and a request keeps three
    more state pages in each delta-net layer (`MambaSpec` num_speculative_blocks)."""
    a, off, on = _pair("qwen3.5-35b-a3b", 3, gpu="h200", context_tokens=65536)
    assert a.mtp_layers == 0 and draft_layers(a) == 1  # vLLM's default: getattr(config, "mtp_num_hidden_layers", 1)
    drafted = _last_layer_bytes(a, "bf16") + head_bytes(a, 1, 2)
    assert head_bytes(a, 1, 2) == 2 * 2048 * 2048 * 2 + 3 * 2048 * 2
    assert on.bytes["weights"] - off.bytes["weights"] == pytest.approx(drafted, abs=1)
    assert on.engine_facts["drafter"] == {"method": "mtp", "layers": 1, "num_speculative_tokens": 3,
                                          "weight_bytes": int(drafted), "state_layers": 30}
    assert last_full_layer(a) == 39
    block = off.engine_facts["block_size"]  # 1,088 tokens: the delta-net state's page
    one_layer = -(-65536 // block) * block * 2 * 2 * 256 * 2  # whole blocks x K and V of 2 heads of 256 in bf16
    drafted_pages = 30 * 3 * block * 2 * 256 * 2 * 2  # each delta-net layer: a state page more a drafted token
    assert on.kv_cache_required - off.kv_cache_required == one_layer + drafted_pages
    words = -(-a.output_rows // 32)
    state = v2_state_bytes(1024, a.output_rows, 4) - v2_state_bytes(1024, a.output_rows)
    assert state == 1024 * 3 * words * 4
    # 4-token decode steps: the FULL decode graphs of 1 and 2 tokens hold no whole request, so two fewer graphs of
    # the model's 40 MoE layers with a shared expert are captured, measured or estimated
    graphs = on.engine_facts["cudagraph_bytes"] - off.engine_facts["cudagraph_bytes"]
    assert graphs == -2 * 40 * (LAYER_GRAPH_BYTES + MOE_LAYER_GRAPH_BYTES + SHARED_EXPERT_GRAPH_BYTES)
    profiled = {"extensible_kv_cache": False}
    estimated = [estimate(a, off.scenario.with_changes(options=profiled | o)).engine_facts["cudagraph_bytes"]
                 for o in ({}, {"num_speculative_tokens": 3})]
    assert estimated[1] - estimated[0] == graphs
    assert on.bytes["overhead"] - off.bytes["overhead"] == pytest.approx(state + graphs, abs=1)
    groups_off = off.engine_facts["kv_blocks"], on.engine_facts["kv_blocks"]
    pool_off, pool_on = off.engine_facts["kv_pool_bytes"], on.engine_facts["kv_pool_bytes"]
    # a block step spans 11 layers' pages instead of 10: fewer blocks from a pool of nearly the same size
    assert groups_off[1] == pytest.approx(groups_off[0] * pool_on / pool_off * 10 / 11, rel=1e-3)
    assert "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'" in on.launch_command()


def test_deepseek_mtp_keeps_its_eh_proj_whole_on_every_rank():
    """DeepSeekMultiTokenPredictorLayer's eh_proj is a plain nn.Linear: 2 x 7,168 x 7,168 bf16 values on each of the
    8 ranks, beside an eighth of the MoE decoder layer."""
    a, off, on = _pair("deepseek-v3", 1, gpu="h200", weight_format="fp8-block", context_tokens=4096, tp=8)
    assert draft_layers(a) == a.mtp_layers == 1
    assert head_bytes(a, 8, 2) == 2 * 7168 * 7168 * 2 + 3 * 7168 * 2
    extra = on.bytes["weights"] - off.bytes["weights"]
    assert extra == pytest.approx(on.engine_facts["drafter"]["weight_bytes"], abs=1)
    experts = 256 * 3 * 7168 * 2048 / 8  # an eighth of the MoE layer's routed experts in FP8 (block scales aside)
    assert head_bytes(a, 8, 2) + experts < extra < head_bytes(a, 8, 2) + experts * 1.1
    assert on.kv_cache_required - off.kv_cache_required == off.kv_cache_required // 61  # one more latent layer


def test_mtp_is_refused_for_a_model_without_mtp_layers():
    a = get_preset("llama-3.1-8b").architecture()
    with pytest.raises(InputError, match="needs the model's own MTP layers"):
        estimate(a, Scenario(engine="vllm", gpu="h100-80g", options={"num_speculative_tokens": 2}))


def test_the_log_reader_takes_mtp_and_eagle3_from_the_engine_config_and_refuses_other_methods():
    a = get_preset("qwen3.5-35b-a3b").architecture()
    line = ("INFO [core.py:123] Initializing a V1 LLM engine (v0.33.0) with config: model='/m', "
            "speculative_config=SpeculativeConfig(method='mtp', model='/m', num_spec_tokens=4), tokenizer=/m\n")
    assert dict(vllm_scenario(line, a, "h200").options)["num_speculative_tokens"] == 4
    args = "non-default args: {'model': '/m', 'speculative_config': {'num_speculative_tokens': 2, 'method': 'mtp'}}\n"
    assert dict(vllm_scenario(args, a, "h200").options)["num_speculative_tokens"] == 2
    eagle3 = dict(vllm_scenario(line.replace("'mtp'", "'eagle3'"), a, "h200").options)
    assert (eagle3["speculative_method"], eagle3["num_speculative_tokens"]) == ("eagle3", 4)
    with pytest.raises(InputError, match="ngram"):
        vllm_scenario(line.replace("'mtp'", "'ngram'"), a, "h200")
    assert "num_speculative_tokens" not in dict(vllm_scenario(line.replace(
        "SpeculativeConfig(method='mtp', model='/m', num_spec_tokens=4)", "None"), a, "h200").options)


def test_speculative_decode_steps_are_captured_as_whole_requests():
    """VllmConfig._set_cudagraph_sizes with 1 + k tokens a request: the ceiling grows to 2 x max_num_seqs x q, and the
    uniform decode batches of 1, 2, 4, 8, ... requests x q are captured beside the token grid."""
    assert capture_sizes(4, 8192, query_len=4) == [1, 2, 4, 8, 16, 24, 32]
    assert capture_sizes(256, 2048) == capture_sizes(256, 2048, query_len=1)
    sizes = capture_sizes(1024, 8192, query_len=3)
    assert sizes[-1] == 512 and 504 in sizes and 3 * 8 in sizes and 3 * 168 in sizes


def test_mtp_16bit_counts_the_draft_layer_in_bf16_and_needs_an_mtp_drafter():
    """Qwen3.5-35B-A3B in NVFP4 with one MTP layer: 0.45 GiB as NVFP4, 1.57 GiB in bf16 (what the published NVFP4
    checkpoints load, tests/core/test_published_logs.py); the option alone, or beside an EAGLE-3 drafter, is an error."""
    a = get_preset("qwen3.5-35b-a3b").architecture()
    sc = Scenario(engine="vllm", gpu="h200", weight_format="nvfp4", context_tokens=8192)
    quantized = estimate(a, sc.with_changes(options={"num_speculative_tokens": 2}))
    bf16 = estimate(a, sc.with_changes(options={"num_speculative_tokens": 2, "mtp_16bit": True}))
    assert round(quantized.engine_facts["drafter"]["weight_bytes"] / 2**30, 2) == 0.45
    assert round(bf16.engine_facts["drafter"]["weight_bytes"] / 2**30, 2) == 1.57
    assert bf16.bytes["weights"] - quantized.bytes["weights"] == pytest.approx(
        bf16.engine_facts["drafter"]["weight_bytes"] - quantized.engine_facts["drafter"]["weight_bytes"], abs=1)
    for options in ({"mtp_16bit": True}, {"mtp_16bit": True, "num_speculative_tokens": 2, "speculative_method": "eagle3",
                                          "draft_intermediate_size": 8192}):
        with pytest.raises(InputError, match="mtp_16bit"):
            estimate(a, sc.with_changes(options=options))
