"""The estimate against 15 real transformers runs on an NVIDIA H200 (tests/data/probe/transformers_cuda_h200.jsonl:
`bash benchmarks/cuda_check.sh` on 2026-11-29, torch 2.11.0+cu130, transformers 5.17.0, driver 580.159.04;
random-initialised presets in bf16, B 1 / 8, prompts of 1,024 and 8,192 tokens + 16 new; docs/accuracy-cuda.md).
Where the file decides (weights, KV) the estimate is exact; activations within 7 %; the peak, with the
measured non-torch memory and allocator reserve as constants, within 7 %."""

import json
from pathlib import Path

import pytest

from memviz.core.estimate import Scenario, estimate
from memviz.core.gpus import GPUS
from memviz.core.presets import get_preset

RECORDED = Path(__file__).parents[1] / "data" / "probe" / "transformers_cuda_h200.jsonl"
HOLDOUT = RECORDED.with_name("transformers_cuda_h200_holdout.jsonl")  # recorded after the constants were set


def _runs(path: Path = RECORDED) -> list[tuple[str, dict, dict]]:
    runs, argv, env = [], [], {}
    for line in path.read_text().splitlines():
        msg = json.loads(line)
        if msg["event"] == "start":
            argv = msg["argv"]
        elif msg["event"] == "env":
            env = msg
        elif msg["event"] == "result":
            runs.append((argv[argv.index("--preset") + 1], env, msg))
    return runs


RUNS = _runs()


def test_recording_holds_fifteen_h200_runs():
    assert len(RUNS) == 15
    assert {env["device_name"] for _, env, _ in RUNS} == {"NVIDIA H200"}


@pytest.mark.parametrize(("preset", "env", "res"), RUNS,
                         ids=[f"{p}-B{r['scenario']['batch']}-{r['context_tokens']}" for p, _, r in RUNS])
def test_estimate_against_h200_run(preset, env, res):
    m = res["measured"]
    e = estimate(get_preset(preset).architecture(), Scenario.from_dict(res["scenario"]))
    assert e.bytes["weights"] == pytest.approx(m["weights"], rel=1e-4)
    assert e.bytes["kv_cache"] == m["kv_cache"]
    assert e.bytes["activations"] == pytest.approx(m["activations"], rel=0.07)
    assert e.total == pytest.approx(m["peak"], rel=0.07)


@pytest.mark.parametrize(("preset", "env", "res"), _runs(HOLDOUT), ids=[p for p, _, _ in _runs(HOLDOUT)])
def test_estimate_against_runs_made_after_the_constants(preset, env, res):
    """Four more models (Llama-3.2-3B, Qwen3-8B, DeepSeek-V2-Lite with MLA, Mixtral-8x7B), 4 × 4,096 + 16 tokens,
    recorded after the CUDA constants above were fixed: the peak within 5 %, KV exact (MLA's latent cache)."""
    m = res["measured"]
    e = estimate(get_preset(preset).architecture(), Scenario.from_dict(res["scenario"]))
    assert e.bytes["kv_cache"] == m["kv_cache"]
    assert e.total == pytest.approx(m["peak"], rel=0.05)


def test_bitsandbytes_nf4_on_cuda():
    """Llama-3.2-3B quantized to NF4 by bitsandbytes 0.50.2 while loading, 4 × 2,048 + 16 tokens on the H200: the
    packed weights to 13 kB of 2.37 GB (the absmax layout), KV exact, the peak within 5 %."""
    (preset, _, res), = _runs(RECORDED.with_name("transformers_cuda_h200_bnb_nf4.jsonl"))
    m = res["measured"]
    e = estimate(get_preset(preset).architecture(), Scenario.from_dict(res["scenario"]))
    assert res["scenario"]["weight_format"] == "bnb-nf4"
    assert abs(e.bytes["weights"] - m["weights"]) < 16 * 1024
    assert e.bytes["kv_cache"] == m["kv_cache"]
    assert e.total == pytest.approx(m["peak"], rel=0.05)


def test_h200_total_is_what_cuda_reported():
    info = json.loads(next(line for line in (RECORDED.parent / "cuda_h200_env.json").read_text().splitlines()))
    assert GPUS["h200"].cuda_total == info["mem_get_info_total"]
    assert GPUS["h200"].memory_bytes == info["nvml_total"]
