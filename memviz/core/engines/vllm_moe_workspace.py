"""The fused-MoE experts' workspace in vLLM, which stays allocated once the first MoE layer has run
(vllm-project/vllm 0.34.0 and 0.19.0, read from their PyPI wheels).

`fused_moe/modular_kernel.py` `FusedMoEModularKernel._allocate_buffers` takes workspace13 (whose memory the fused
output shares) and workspace2 for the step's M tokens from the process-wide WorkspaceManager (`v1/worker/workspace.py`
`get_simultaneous`: one buffer, each part rounded up to 256 bytes, grown to the largest request and never freed). So
the profile run's experts' scratch is held from its first MoE layer on, through the later layers' attention and the
sampler step, and stays: vLLM 0.19 counts it in the profile's torch peak, 0.34 (`memory_profiling`: `total_consumed`)
as consumed memory. The layer's output (M x K, `torch.empty_like` of its input) comes beside it.

The parts depend on the experts class vLLM's oracle picks (`fused_moe/oracle/*.py`; `workspace_shapes`, N the rank's
w1 rows, 2 x I for gated experts, K the hidden size), `moe_kernel_workspace`:
- `EXPERTS`: M x topk x max(I, K) and M x topk x max(N, K): TritonExperts (experts/triton_moe.py; 16-bit experts,
  `oracle/unquantized.py`, and block FP8 under tensor parallelism on Hopper, `oracle/fp8.py` "prefer Triton for
  TP"), CutlassExpertsFp8 (cutlass_moe.py), MarlinExperts (marlin_moe.py: INT4, and MXFP4 off Hopper / SM100);
- `OUTPUT`: the output M x K alone, the kernel allocating its own scratch in each call: FlashInfer's CUTLASS experts
  (flashinfer_cutlass_moe.py `FlashInferExperts`: block FP8 under expert parallelism on Hopper, "FI CUTLASS for EP")
  and NVFP4's B12X / CUTLASS kernels off SM100;
- `NONE`: monolithic classes, which take no workspace from the manager (`oracle/mxfp4.py`, `oracle/fp8.py`: "prefer
  Monolithic > Modular"): FlashInfer's TRT-LLM kernels on SM100 (block FP8, NVFP4, MXFP4) and gpt-oss's MXFP4 Triton
  kernels on Hopper.

vLLM 0.19's profile peaks on H100s (llm-d-planner's sweep, tests/data/published/vllm_logs.json) show it: DeepSeek-V2-Lite
1.93 GiB, Qwen3-30B-A3B 2.68, Qwen1.5-MoE-A2.7B 2.47, their sampler step plus this workspace (0.45, 0.50, 0.30 GiB);
memviz's transient experts' scratch left them 14-25 % under.

Releases: up to 0.13 at least, 16-bit experts ran `fused_experts` (fused_moe.py `fused_experts_impl`), whose caches are
allocated and freed in each layer: option `persistent_moe_workspace` off.
"""

from __future__ import annotations

from memviz.core.arch import Architecture

ALIGN_BYTES = 256
#: what the experts' class takes from the WorkspaceManager (module docstring)
EXPERTS, OUTPUT, NONE = "experts", "output", "none"


def _aligned(n_bytes: float) -> float:
    return -(-n_bytes // ALIGN_BYTES) * ALIGN_BYTES


def moe_kernel_workspace(expert_format: str | None, capability: tuple[int, int] | None, expert_parallel: bool,
                         mxfp4_backend: str | None = None) -> str:
    """`EXPERTS`, `OUTPUT` or `NONE` for experts stored as `expert_format` (memviz's format name) on a GPU of that
    compute capability; `mxfp4_backend`: the MXFP4 experts' kernel (`vllm.mxfp4_moe_backend`)."""
    major = capability[0] if capability else None
    if expert_format == "mxfp4":
        return EXPERTS if mxfp4_backend == "MARLIN" else NONE
    if expert_format == "nvfp4":
        return NONE if major == 10 else OUTPUT
    if expert_format == "fp8-block" and major == 10:
        return NONE
    if expert_format == "fp8-block" and major == 9 and expert_parallel:
        return OUTPUT
    return EXPERTS


def moe_workspace_bytes(a: Architecture, tokens: int, intermediate: int, hidden: int, act_bytes: float,
                        kind: str = EXPERTS) -> float:
    """The persistent experts' workspace for `tokens` tokens (M), `intermediate` the rank's intermediate size (I) and
    `hidden` the experts' input width (K) as the kernel holds them, for a class of that `kind`."""
    if kind == NONE:
        return 0.0
    if kind == OUTPUT:
        return _aligned(tokens * hidden * act_bytes)
    rows = tokens * a.experts_per_token
    w1_rows = 2 * intermediate if a.mlp_gated else intermediate
    return _aligned(rows * max(intermediate, hidden) * act_bytes) + _aligned(rows * max(w1_rows, hidden) * act_bytes)
