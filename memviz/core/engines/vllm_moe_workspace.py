"""The fused-MoE experts' workspace in vLLM, which stays allocated once the first MoE layer has run
(vllm-project/vllm 0.34.0 and 0.19.0, read from their PyPI wheels).

`fused_moe/modular_kernel.py` `FusedMoEModularKernel._allocate_buffers` takes workspace13 (whose memory the fused
output shares) and workspace2 for the step's M tokens from the process-wide WorkspaceManager (`v1/worker/workspace.py`
`get_simultaneous`: one buffer, each part rounded up to 256 bytes, grown to the largest request and never freed). So
the profile run's experts' scratch is held from its first MoE layer on, through the later layers' attention and the
sampler step, and stays: vLLM 0.19 counts it in the profile's torch peak, 0.34 (`memory_profiling`: `total_consumed`)
as consumed memory. The layer's output (M x K, `torch.empty_like` of its input) comes beside it.

The parts (`workspace_shapes` of the experts class; N the rank's w1 rows, 2 x I for gated experts; K the hidden
size): M x topk x max(I, K) and M x topk x max(N, K) for TritonExperts (experts/triton_moe.py, what
`oracle/unquantized.py` picks for 16-bit experts, in place: no separate output), CutlassExpertsFp8 (cutlass_moe.py)
and MarlinExperts (marlin_moe.py). MXFP4 experts on gpt-oss's Triton kernels (Hopper) and FlashInfer's TRT-LLM
kernels (SM100) run as monolithic classes (`oracle/mxfp4.py`: "prefer Monolithic > Modular"), which hold no such
workspace.

vLLM 0.19's profile peaks on H100s (llm-d-planner's sweep, tests/data/published/vllm_logs.json) show it: DeepSeek-V2-Lite
1.93 GiB, Qwen3-30B-A3B 2.68, Qwen1.5-MoE-A2.7B 2.47, their sampler step plus this workspace (0.45, 0.50, 0.30 GiB);
memviz's transient experts' scratch left them 14-25 % under.

Releases: up to 0.13 at least, 16-bit experts ran `fused_experts` (fused_moe.py `fused_experts_impl`), whose caches are
allocated and freed in each layer: option `persistent_moe_workspace` off.
"""

from __future__ import annotations

from memviz.core.arch import Architecture

ALIGN_BYTES = 256


def _aligned(n_bytes: float) -> float:
    return -(-n_bytes // ALIGN_BYTES) * ALIGN_BYTES


def moe_workspace_bytes(a: Architecture, tokens: int, intermediate: int, hidden: int, act_bytes: float) -> float:
    """The persistent experts' workspace for `tokens` tokens (M), `intermediate` the rank's intermediate size (I) and
    `hidden` the experts' input width (K) as the kernel holds them."""
    rows = tokens * a.experts_per_token
    w1_rows = 2 * intermediate if a.mlp_gated else intermediate
    return _aligned(rows * max(intermediate, hidden) * act_bytes) + _aligned(rows * max(w1_rows, hidden) * act_bytes)
