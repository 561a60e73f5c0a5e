"""vLLM's fused-MoE workspace, kept from the first MoE layer on (`vllm_moe_workspace`)."""

import pytest

from memviz.core.engines.vllm_moe_workspace import NONE, OUTPUT, moe_kernel_workspace, moe_workspace_bytes
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset
from memviz.core.units import MiB

QWEN3_MOE = get_preset("qwen3-30b-a3b").architecture()


def test_triton_experts_parts_for_a_model_narrower_than_its_hidden_size():
    """Qwen3-30B-A3B at 8,192 tokens: 8 experts of 768 beside a 2,048 hidden size, so both parts are 2,048 wide in
    bf16: 0.5 GiB; Mixtral's 14,336-wide experts at TP 2 take their 7,168 and 14,336."""
    assert moe_workspace_bytes(QWEN3_MOE, 8192, 768, 2048, 2) == 2 * 8192 * 8 * 2048 * 2 == 512 * MiB
    mixtral = get_preset("mixtral-8x7b").architecture()
    assert moe_workspace_bytes(mixtral, 8192, 7168, 4096, 2) == 8192 * 2 * (7168 + 14336) * 2


@pytest.mark.parametrize("runner", ["v1", "v2"])
def test_the_workspace_is_held_where_the_runners_profile_counts_it(runner):
    """V1: in the profile's peak beside the sampler step (Qwen3-30B-A3B's peak); V2: consumed memory, in the
    overhead; off (releases before 0.14), neither."""
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                  options={"model_runner": runner, "extensible_kv_cache": False})
    off = sc.with_changes(options={**dict(sc.options), "persistent_moe_workspace": False})
    on, freed = estimate(QWEN3_MOE, sc), estimate(QWEN3_MOE, off)
    assert on.engine_facts["moe_workspace_bytes"] == 512 * MiB and "moe_workspace_bytes" not in freed.engine_facts
    grown = on.devices[0].activations - freed.devices[0].activations
    consumed = on.devices[0].overhead - freed.devices[0].overhead
    assert (grown, consumed) == ((512 * MiB, 0) if runner == "v1" else (0, 512 * MiB))


def test_mxfp4_kernels_that_run_whole_hold_none_and_marlin_pads_its_sizes():
    """gpt-oss-20b's MXFP4 experts run gpt-oss's monolithic Triton kernels on an H100 (no workspace); on an A100
    Marlin takes them with each rank's intermediate rounded up to 128 (2,880 -> 2,944) and the hidden size to 256
    (-> 3,072)."""
    gpt_oss = get_preset("gpt-oss-20b").architecture()
    facts = {gpu: estimate(gpt_oss, Scenario(engine="vllm", gpu=gpu, weight_format="mxfp4",
                                             context_tokens=8192)).engine_facts for gpu in ("h100-80g", "a100-80g")}
    assert "moe_workspace_bytes" not in facts["h100-80g"]
    tokens = facts["a100-80g"]["max_num_batched_tokens"]
    assert facts["a100-80g"]["moe_workspace_bytes"] == tokens * 4 * (3072 + 2 * 2944) * 2


def test_a_dense_model_holds_none():
    e = estimate(get_preset("llama-3.1-8b").architecture(), Scenario(engine="vllm", gpu="h100-80g"))
    assert "moe_workspace_bytes" not in e.engine_facts


@pytest.mark.parametrize(("fmt", "capability", "ep", "mxfp4", "kind"), [
    ("bf16", (9, 0), False, None, "experts"),          # TritonExperts (oracle/unquantized.py)
    ("fp8-block", (9, 0), False, None, "experts"),     # "prefer Triton for TP" (oracle/fp8.py)
    ("fp8-block", (9, 0), True, None, "output"),       # "FI CUTLASS for EP": FlashInferExperts keep (M, K)
    ("fp8-block", (10, 0), False, None, "none"),       # FlashInfer TRT-LLM, monolithic first
    ("nvfp4", (10, 0), False, None, "none"),
    ("nvfp4", (12, 0), False, None, "output"),         # B12X / FlashInfer CUTLASS off SM100
    ("mxfp4", (9, 0), False, "TRITON", "none"),        # gpt-oss's monolithic Triton kernels
    ("mxfp4", (8, 0), False, "MARLIN", "experts"),
    ("gptq-int4", (8, 9), False, None, "experts"),     # MarlinExperts
])
def test_the_experts_class_vllms_oracle_picks_decides_what_it_keeps(fmt, capability, ep, mxfp4, kind):
    assert moe_kernel_workspace(fmt, capability, ep, mxfp4) == kind


def test_a_class_that_keeps_its_output_alone_holds_the_batch_rows():
    assert moe_workspace_bytes(QWEN3_MOE, 8192, 768, 2048, 2, OUTPUT) == 8192 * 2048 * 2
    assert moe_workspace_bytes(QWEN3_MOE, 8192, 768, 2048, 2, NONE) == 0
