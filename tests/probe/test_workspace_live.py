"""The activation formula against what PyTorch really keeps alive during a transformers prefill.

The probe's CPU figure is RSS, which glibc's retained heap inflates by 20-90 % over the tensors; here the
formula meets the allocator-independent truth: the live tensor storages op by op (tests/probe/live_tensors.py)."""

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from memviz.core.arch import load_config  # noqa: E402
from tests.probe.live_tensors import estimated, live_prefill  # noqa: E402

pytestmark = pytest.mark.slow  # runs a real model

DATA = Path(__file__).parents[1] / "data" / "probe"


@pytest.mark.parametrize("family", ["llama_gqa", "mistral_swa", "mixtral_moe", "gpt2", "qwen3_5_deltanet", "qwen3_next_moe",
                                    "kimi_linear_kda",
                                    "lfm2_shortconv", "falcon_h1_parallel",
                                    "granite_hybrid_moe", "granite_hybrid_dense", "nemotron_h_moe",
                                    "minimax_m3_sparse", "gemma3n_altup", "gemma4_per_layer"])
@pytest.mark.parametrize(("batch", "prompt"), [(2, 256), (4, 1024)])
def test_prefill_activations_match_live_tensors(family, batch, prompt):
    cfg = load_config(DATA / f"{family}.json")
    measured, _ = live_prefill(cfg, "fp32", "sdpa", batch, prompt)
    assert estimated(cfg, "fp32", "sdpa", batch, prompt)["activations"] == pytest.approx(measured, rel=0.10)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("family", ["mamba_falcon", "mamba_wide_state", "mamba2_pure", "jamba_moe"])
@pytest.mark.parametrize(("batch", "prompt"), [(2, 256), (1, 2048)])
def test_mamba_prefill_matches_live_tensors(family, dtype, batch, prompt):
    """transformers' reference scan holds three float32 discretisations of the whole prompt (`mamba_workspace`):
    measured -1.0 / +0.9 % (Falcon-Mamba, d_state 16) and -0.5 / +0.2 % (Mamba, d_state 64) in fp32 / bf16; Mamba2
    blocks alone run Granite-4.0-H's chunked scan (`mamba2_workspace`): -2.7 / -0.4 %; Jamba's Mamba layers the
    Mamba scan beside its attention and experts: +0.3 ... +1.1 %. transformers picks its own attention (None: none
    for the Mamba models, sdpa for Jamba)."""
    cfg = load_config(DATA / f"{family}.json")
    measured, held = live_prefill(cfg, dtype, None, batch, prompt)
    e = estimated(cfg, dtype, None, batch, prompt)
    assert e["activations"] == pytest.approx(measured, rel=0.03)
    assert e["kv_cache"] == held


#: a MoE block with a shared expert, two layers of 8 heads of 32: Qwen2-MoE runs its shared expert first, GLM-4.5 after
#: its routed ones, from a float32 router whose weights make the weighted expert outputs float32
_MOE = dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=2, head_dim=32,
            vocab_size=4096, intermediate_size=512, max_position_embeddings=8192, moe_intermediate_size=256,
            num_experts_per_tok=4)
SHARED_EXPERT_MOE = {
    "qwen2_moe": dict(_MOE, model_type="qwen2_moe", shared_expert_intermediate_size=512, num_experts=8),
    "glm4_moe": dict(_MOE, model_type="glm4_moe", n_shared_experts=2, n_routed_experts=8, first_k_dense_replace=0),
}


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("family", sorted(SHARED_EXPERT_MOE))
def test_a_shared_expert_runs_beside_the_routed_ones_output(family, dtype):
    """transformers runs a MoE block's shared expert and its routed experts one after the other, the first one's output
    kept while the second runs (`activations.SHARED_EXPERT_FIRST`), and a float32 router's weights promote the weighted
    expert outputs to float32 (integrations/moe.py `grouped_mm_experts_forward`). 2 x 2,048 tokens (fp32) and 2 x 1,024
    (bf16): -6.7 / -7.0 % (Qwen2-MoE) and -2.9 / -3.2 % (GLM-4.5), where the sum of both peaks said +12.3 / +11.9 %
    and +21.8 / +3.8 %."""
    cfg = SHARED_EXPERT_MOE[family]
    prompt = 2048 if dtype == "fp32" else 1024
    measured, _ = live_prefill(cfg, dtype, "sdpa", 2, prompt)
    assert estimated(cfg, dtype, "sdpa", 2, prompt)["activations"] == pytest.approx(measured, rel=0.08)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize(("batch", "prompt"), [(2, 256), (4, 1024)])
def test_deepseek_v4_eager_prefill_matches_live_tensors(dtype, batch, prompt):
    """DeepSeek-V4 runs eager only in transformers 5.24: the scores over the prompt and the compressed entries, in
    float32 through the sinks whatever the model's dtype, and the residual's four streams (a window-only layer,
    compressed sparse layers with their indexer, a heavily compressed layer: data/probe/deepseek_v4_compressed.json).
    Over hidden 512-1,024, 4-8 heads of 128-256 and prompts of 256-2,048 the formula stays within -12.6 ... +12.1 %
    of the live tensors (docs/engines.md); here within 13 %."""
    cfg = load_config(DATA / "deepseek_v4_compressed.json")
    measured, _ = live_prefill(cfg, dtype, None, batch, prompt)  # eager: transformers' only path for DeepSeek-V4
    assert estimated(cfg, dtype, None, batch, prompt)["activations"] == pytest.approx(measured, rel=0.13)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_minimax_m3_block_sparse_prefill_matches_live_tensors(attention, dtype):
    """MiniMax-M3's block-sparse layers build a mask over every head, query and key (`block_sparse_mask_workspace`)
    under SDPA too; the cache holds the indexer's keys beside K and V (data/probe/minimax_m3_sparse.json): the
    workspace within 7 % (-6.3 ... +1.2 % over 1-4 sequences of 256-2,048 tokens and 8-16 heads), the cache exact."""
    cfg = load_config(DATA / "minimax_m3_sparse.json")
    measured, held = live_prefill(cfg, dtype, attention, 2, 1024)
    bytes_ = estimated(cfg, dtype, attention, 2, 1024)
    assert bytes_["kv_cache"] == held
    assert bytes_["activations"] == pytest.approx(measured, rel=0.07)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize(("batch", "prompt"), [(2, 256), (4, 1024)])
def test_hy_v4_eager_prefill_matches_live_tensors(dtype, batch, prompt):
    """HY-V4 runs eager only in transformers 5.24: its scores turn float32 through the float32 sinks, its sparse
    attention fills a top-k mask beside the causal one, its indexer scores every key in float32 over its heads
    (data/probe/hy_v4_indexed.json). Over 1-4 sequences of 256-2,048 tokens, 8-16 heads, fp32 and bf16 the formula
    stays within -3.0 ... +7.3 % of the live tensors; the cache (latent and indexer keys) exact."""
    cfg = load_config(DATA / "hy_v4_indexed.json")
    measured, held = live_prefill(cfg, dtype, None, batch, prompt)  # eager: transformers' only path for HY-V4
    bytes_ = estimated(cfg, dtype, None, batch, prompt)
    assert bytes_["kv_cache"] == held
    assert bytes_["activations"] == pytest.approx(measured, rel=0.08)
