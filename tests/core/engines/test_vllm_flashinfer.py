"""FlashInfer's attention workspaces (`vllm_flashinfer`): where vLLM 0.34 runs FlashInfer, their sizes and what
they are taken from."""

from memviz.core.arch import from_hf_config
from memviz.core.engines.vllm_flashinfer import (
    WORKSPACE_BYTES,
    builder_workspace_bytes,
    runs_flashinfer,
    runs_flashinfer_mla,
)
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset
from memviz.core.units import GiB, MiB

LLAMA8 = get_preset("llama-3.1-8b").architecture()
PROFILED = {"extensible_kv_cache": False}


def _facts(gpu: str, options: dict | None = None, a=LLAMA8, **kw) -> dict:
    sc = Scenario(engine="vllm", gpu=gpu, context_tokens=8192, options=options or {}, **kw)
    return estimate(a, sc).engine_facts


def test_vllm_picks_flashinfer_on_compute_capability_10_only():
    assert runs_flashinfer(LLAMA8, (10, 0), 2, "auto") and runs_flashinfer(LLAMA8, (10, 3), 2, "auto")
    assert not runs_flashinfer(LLAMA8, (9, 0), 2, "auto") and not runs_flashinfer(LLAMA8, (12, 0), 2, "auto")
    assert runs_flashinfer(LLAMA8, (9, 0), 2, "FLASHINFER")
    assert not runs_flashinfer(LLAMA8, (10, 0), 4, "auto")  # FlashInfer takes 16-bit activations only
    assert not runs_flashinfer(LLAMA8, (10, 0), 2, "TRITON_ATTN")
    assert not runs_flashinfer(get_preset("deepseek-v3").architecture(), (10, 0), 2, "auto")  # MLA's own backends


def test_the_builders_workspace_is_the_floor_or_the_prefills_query_footprint():
    # Llama-3.1-8B: 32 query heads of 128; 16,384 batched tokens (a B200's default) need 1 GiB, 2,048 less than 394 MiB
    assert builder_workspace_bytes(LLAMA8, 1, 16384) == 16384 * 32 * 128 * 16 == 1 * GiB
    assert builder_workspace_bytes(LLAMA8, 1, 2048) == WORKSPACE_BYTES == 394 * MiB
    assert builder_workspace_bytes(LLAMA8, 2, 16384) == 0.5 * GiB  # the rank's 16 heads
    # Gemma 3's first layer slides: its group's builder sizes the shared workspace
    gemma = get_preset("gemma-3-27b").architecture()
    assert builder_workspace_bytes(gemma, 1, 16384) == 16384 * 32 * 128 * 16


def test_a_b200_takes_both_workspaces_from_a_measured_pool():
    on = _facts("b200")
    off = _facts("b200", {"attention_backend": "FLASH_ATTN"})
    assert on["attention_workspace_bytes"] == on["attention_workspace_in_budget_bytes"] == 1 * GiB + 394 * MiB
    assert off["attention_workspace_bytes"] == 0
    # the pool, measured after warm-up and capture, is short of both (in whole blocks)
    assert abs(off["kv_pool_bytes"] - on["kv_pool_bytes"] - (1 * GiB + 394 * MiB)) < on["kv_block_bytes"] + 2 * MiB * 32


def test_a_profile_sized_pool_leaves_the_builders_workspace_after_it():
    """The CUDA-graph estimate's capture makes the kernels' workspace (in the budget); the real initialize_kv_cache
    builds the builder's after the pool is sized; with no estimate, or a pool of kv_cache_memory_bytes, both after."""
    f = _facts("b200", PROFILED)
    assert f["attention_workspace_in_budget_bytes"] == 394 * MiB
    assert f["after_pool_bytes"] == 1 * GiB and f["graphs_after_pool_bytes"] == 0
    fixed = _facts("b200", PROFILED | {"kv_cache_memory_bytes": 100 * GiB})
    assert fixed["attention_workspace_in_budget_bytes"] == 0 and fixed["after_pool_bytes"] == 1 * GiB + 394 * MiB
    tight = _facts("b200", PROFILED, gpu_memory_utilization=0.995)
    assert "the FlashInfer attention workspaces" in tight["startup_risk"] and "enforce_eager" not in tight["startup_risk"]


def test_asked_for_elsewhere_the_kernels_workspace_follows_the_gpu():
    """XQA decode on Hopper (compute capability 9) makes the kernels' buffer; Ampere runs FlashInfer's own kernels."""
    hopper = _facts("h100-80g", {"attention_backend": "FLASHINFER"})
    assert hopper["attention_workspace_bytes"] == 8192 * 32 * 128 * 16 + 394 * MiB
    ampere = _facts("a100-80g", {"attention_backend": "FLASHINFER"})
    assert ampere["attention_workspace_bytes"] == 394 * MiB  # 2,048 batched tokens on an A100: the floor


def test_mla_decodes_with_flashinfer_mla_on_compute_capability_10():
    """DeepSeek-V3 on B200s: FLASHINFER_MLA's 128 MiB decode workspace, no metadata-builder workspace; none on
    H200s (FlashAttention MLA) nor for DeepSeek sparse attention (its sparse backends)."""
    v3 = get_preset("deepseek-v3").architecture()
    assert runs_flashinfer_mla(v3, (10, 0), 2) and not runs_flashinfer_mla(v3, (9, 0), 2)
    b200 = _facts("b200", a=v3, tp=8, weight_format="fp8-block")
    assert b200["attention_workspace_bytes"] == b200["attention_workspace_in_budget_bytes"] == 128 * MiB
    assert "FLASHINFER_MLA" in b200["attention_workspace_parts"]
    assert _facts("h200", a=v3, tp=8, weight_format="fp8-block")["attention_workspace_bytes"] == 0
    sparse = {"model_type": "deepseek_v32", "hidden_size": 7168, "num_hidden_layers": 4, "num_attention_heads": 128,
              "vocab_size": 129280, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
              "qk_nope_head_dim": 128, "v_head_dim": 128, "index_n_heads": 64, "index_head_dim": 128,
              "index_topk": 2048, "intermediate_size": 18432, "max_position_embeddings": 163840}
    assert not runs_flashinfer_mla(from_hf_config(sparse), (10, 0), 2)


def test_an_image_prefix_attended_both_ways_keeps_flashinfer_to_256_and_512_wide_heads():
    """Gemma 3 with its tower: TRITON_FLASHINFER (heads of 256: 4B / 12B) or FLASH_ATTN (the 27B's heads of 128);
    served as a language model only, plain FlashInfer whatever the width."""
    g12, g27 = get_preset("gemma-3-12b").architecture(), get_preset("gemma-3-27b").architecture()
    assert _facts("b200", a=g12)["attention_workspace_bytes"] == 16384 * 16 * 256 * 16 + 394 * MiB
    assert _facts("b200", a=g27)["attention_workspace_bytes"] == 0
    text_only = _facts("b200", {"language_model_only": True}, a=g27)
    assert text_only["attention_workspace_bytes"] == 16384 * 32 * 128 * 16 + 394 * MiB
