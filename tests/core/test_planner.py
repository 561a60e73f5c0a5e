"""The planner: its fit is `estimate`'s on every candidate, its top choice is what a hand check of the grid
gives (seed model, dense, MoE, MLA), and an impossible request names the closest candidate."""

import pytest

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import capacity_bytes, needed_bytes, within
from memviz.core.gpus import get_gpu
from memviz.core.plan_report import nothing_fits, over_pct, plan_json, plan_markdown
from memviz.core.planner import Hardware, Requirements, parse_hardware, plan
from memviz.core.presets import get_preset


def _plan(preset, gpus, context=8192, concurrency=1, **kw):
    return plan(get_preset(preset).architecture(), parse_hardware(gpus, kw.pop("nodes", 1), kw.pop("host", None)),
                Requirements(context, concurrency, **kw))


def _fits(a, sc, gpu, headroom=0.05):
    est = estimate(a, sc)
    return within(needed_bytes(est), capacity_bytes(gpu, sc, a) * (1 - headroom))


@pytest.mark.parametrize(("preset", "gpus", "nodes"), [("llama-3.1-70b", "h100-80gx8", 1), ("deepseek-v3", "h100-80gx8", 2),
                                                       ("qwen3-30b-a3b", "rtx4090x2", 1)])
def test_fit_agrees_with_estimate_on_every_candidate(preset, gpus, nodes):
    p = _plan(preset, gpus, nodes=nodes)
    assert p.ranked and p.considered == len(p.ranked) + len(p.rejected)
    for c in (*p.ranked, *p.rejected):
        est = estimate(p.architecture, c.scenario)
        assert needed_bytes(est) == c.needed_bytes
        assert (c.problem == "") == _fits(p.architecture, c.scenario, c.hardware.gpu)


def test_seed_model_on_an_h100_runs_unquantized():
    """Everything fits 80 GB: the reference format wins, and of those the fastest bound."""
    p = _plan("seed-hypothetical", "h100-80g")
    best = p.ranked[0]
    assert best.quality.loss_pct == 0 and best.scenario.weight_format == "bf16"
    assert best.decode_tokens_per_s_max == max(c.decode_tokens_per_s_max for c in p.ranked if c.quality.loss_pct == 0)


def test_dense_70b_on_two_4090s_is_the_best_gguf_that_fits():
    """By hand: 2 × 24 GB holds no 8-, 6- or 5-bit 70B (Q5_K_M needs 24.96 GiB on the first GPU even with a q8_0
    cache); Q4_K_M (+1.20 % on Llama-2-70B) does with a q8_0 cache: llama.cpp's split gives the first GPU layers 0-40
    and the second 41-79 with the output (`llamacpp_split`), 21.46 and 21.34 GiB with two 8K sequences, inside 95 %
    of the 23.64 GiB CUDA reports on the card (22.46); an f16 cache (22.66 GiB) is not."""
    a = get_preset("llama-3.1-70b").architecture()
    gpu = get_gpu("rtx4090")
    base = Scenario(engine="llamacpp", context_tokens=8192, batch=2, pp=2)
    for wf in ("Q8_0", "Q6_K", "Q5_K_M"):
        assert not _fits(a, base.with_changes(weight_format=wf), gpu)
        assert not _fits(a, base.with_changes(weight_format=wf, kv_format="q8_0"), gpu)
    assert not _fits(a, base.with_changes(weight_format="Q4_K_M", kv_format="fp16"), gpu)
    assert _fits(a, base.with_changes(weight_format="Q4_K_M", kv_format="q8_0"), gpu)
    best = _plan("llama-3.1-70b", "rtx4090x2", concurrency=2).ranked[0].scenario
    assert (best.engine, best.weight_format, best.kv_format, best.pp) == ("llamacpp", "Q4_K_M", "q8_0", 2)


@pytest.mark.parametrize("preset", ["qwen3-30b-a3b", "deepseek-v2-lite"])  # MoE; MoE with MLA
def test_moe_and_mla_top_choice_is_the_lowest_loss_that_fits(preset):
    """By hand: walk every (engine, weights, KV) at one GPU in order of evidence tier and loss; the first that fits."""
    from memviz.core.planner import GRID
    from memviz.core.quality import quality

    a = get_preset(preset).architecture()
    gpu = get_gpu("rtx4090")
    from memviz.core.inventory import parameter_count

    params = parameter_count(a) / 1e9
    grid = []
    for engine, (weights, kvs) in GRID.items():
        for wf in weights:
            for kv in kvs:
                q = quality(a, wf, kv, params)
                grid.append((q.tier, round(q.loss_pct or 0, 3), engine, wf, kv))
    p = _plan(preset, "rtx4090")
    best = p.ranked[0]
    for tier, loss, engine, wf, kv in sorted(grid):
        sc = Scenario(engine=engine, weight_format=wf, kv_format=kv, context_tokens=8192)
        if _fits(a, sc, gpu):
            assert (best.quality.tier, round(best.quality.loss_pct or 0, 3)) == (tier, loss)
            assert best.scenario.weight_format == wf
            break


def test_nothing_fits_names_the_closest_and_by_how_much():
    p = _plan("llama-3.1-405b", "rtx4090")
    assert not p.ranked
    c = p.closest()
    assert c.needed_bytes > c.budget_bytes and over_pct(c) > 0
    msg = nothing_fits(p)
    assert "nothing fits" in msg and c.label() in msg and f"{over_pct(c):+.1f} %" in msg
    assert plan_json(p, None, 5)["closest"]["over_budget_pct"] == pytest.approx(over_pct(c))


def test_offload_uses_host_ram_and_has_a_slower_bound():
    p = _plan("llama-3.1-70b", "rtx4090", host=128 * 2**30)
    from memviz.core.speed import HOST_READ_BYTES_PER_S

    off = [c for c in p.ranked if c.offloaded]
    assert off and all(c.host_bytes <= 128 * 2**30 for c in off)
    for c in off:  # the host's layers alone, read from host memory, bound each step (the input embedding's
        # rows are looked up, not read: 2 % of the host bytes here)
        assert c.decode_tokens_per_s_max < 1.05 * HOST_READ_BYTES_PER_S[c.scenario.engine] / c.estimate.host.weights


def test_a_moe_model_in_llamacpp_keeps_every_layer_and_moves_the_last_layers_experts():
    """As llama-server's --fit places it (engines/llamacpp_fit.py): the fewest layers' experts in host RAM."""
    from memviz.core.engines.llamacpp_fit import FitPlacement
    from memviz.core.gpus import get_gpu

    a = get_preset("qwen3-30b-a3b").architecture()
    p = plan(a, parse_hardware("rtx4090", 1, 64 * 2**30), Requirements(32768, 1), engines=("llamacpp",))
    q8 = next(c for c in p.ranked if c.scenario.weight_format == "Q8_0" and c.scenario.kv_format == "fp16")
    assert q8.offloaded and q8.scenario.gpu_layers is None and "experts of 19 layers in host RAM" in q8.label()
    assert "-ot 'blk" in q8.launch_command() and q8.estimate.host_read_bytes > 0
    one_fewer = FitPlacement(experts_from=a.num_layers - 18).options(a)
    more_on_gpu = q8.scenario.with_changes(options={**q8.scenario.engine_options, **one_fewer})
    assert not _fits(a, more_on_gpu, get_gpu("rtx4090"))


def test_limits_filter_and_say_why():
    p = _plan("llama-3.1-8b", "rtx4090", min_tokens_per_s=100, max_quality_loss_pct=0.5)
    assert p.ranked and all(c.decode_tokens_per_s_max >= 100 and c.quality.loss_pct <= 0.5 for c in p.ranked)
    problems = {c.problem.split(" ")[0] for c in p.rejected}
    assert {"decode", "no", "quality"} <= problems  # each limit says which one refused the candidate


def test_multi_node_commands_follow_the_engines():
    p = _plan("deepseek-v3", "h100-80gx8", nodes=2)
    vllm = next(c for c in (*p.ranked, *p.rejected) if c.scenario.engine == "vllm" and c.gpus_used == 16)
    assert "--distributed-executor-backend ray" in vllm.launch_command() and "--pipeline-parallel-size 2" in vllm.launch_command()
    lcpp = next(c for c in (*p.ranked, *p.rejected) if c.scenario.engine == "llamacpp" and c.gpus_used == 16)
    assert "--rpc NODE2:50052" in lcpp.launch_command()
    assert not any(c.scenario.engine == "transformers" and c.gpus_used > 8 for c in (*p.ranked, *p.rejected))


def test_markdown_is_a_report_section_with_sources():
    md = plan_markdown(_plan("llama-3.1-70b", "rtx4090x2", concurrency=2), "meta-llama/Llama-3.1-70B", 3)
    assert md.startswith("## Plan: Llama-3.1-70B") and "### Chosen" in md and "### Evidence" in md
    assert "llama-server" in md and "](https://github.com/ggml-org/llama.cpp" in md


@pytest.mark.parametrize("bad", [lambda: Requirements(8192, headroom=1.0), lambda: Requirements(8192, min_tokens_per_s=-1),
                                 lambda: Requirements(8192, max_quality_loss_pct=float("nan")),
                                 lambda: Hardware(get_gpu("rtx4090"), 1, nodes=0), lambda: parse_hardware(""),
                                 lambda: plan(get_preset("gpt2").architecture(), parse_hardware("rtx4090"),
                                              Requirements(512), ("tgi",))])
def test_bad_requests_are_input_errors(bad):
    with pytest.raises(InputError):
        bad()


def test_when_engines_refuse_everything_the_reason_is_said(monkeypatch):
    from memviz.core import planner

    def refuse(a, sc):
        raise InputError(f"{sc.engine} refuses this model")

    monkeypatch.setattr(planner, "estimate", refuse)
    p = _plan("llama-3.1-8b", "rtx4090")
    assert not p.ranked and not p.rejected and p.refusals
    assert nothing_fits(p).startswith("nothing can run") and "refuses this model" in nothing_fits(p)


def test_a_context_beyond_the_models_positions_is_bad_input():
    with pytest.raises(InputError, match="exceed GPT-2"):
        _plan("gpt2", "rtx4090", context=8192)


def test_a_checkpoint_is_planned_as_released_in_the_engines_that_load_it():
    """A BitNet release (packed ternary weights) is tried as stored in transformers, which loads it, and refused by
    vLLM, which has no BitNet quantization; the 16-bit and quantized grids are tried beside it, and llama.cpp's
    ternary types."""
    transformers = pytest.importorskip("transformers")
    from memviz.core.arch import from_hf_config

    cfg = {**transformers.AutoConfig.for_model("bitnet").to_dict(), "tie_word_embeddings": True,
           "quantization_config": {"quant_method": "bitnet"}}
    p = plan(from_hf_config(cfg), parse_hardware("rtx4090", 1, None), Requirements(2048, 1))
    released = [c for c in p.ranked if c.scenario.weight_format == "bitnet"]
    assert [c.scenario.engine for c in released] == ["transformers"]
    assert released[0].needed_bytes < min(c.needed_bytes for c in p.ranked
                                          if c.scenario.engine == "transformers" and c.scenario.weight_format == "bf16")
    assert any("no BitNet quantization" in reason for reason in p.refusals)
    ternary = {c.scenario.weight_format for c in (*p.ranked, *p.rejected) if c.scenario.engine == "llamacpp"}
    assert {"TQ2_0", "TQ1_0"} <= ternary  # llama.cpp's ternary types, tried for a ternary model
