"""The sampler step of vLLM's profile run and the sampler state its model runner keeps (vllm-project/vllm 0.33.0).

Two model runners: V1's (`v1/worker/gpu_model_runner.py`) and V2's (`v1/worker/gpu/model_runner.py`), which 0.33 runs
unless told `VLLM_USE_V2_MODEL_RUNNER=0` (`VllmConfig.use_v2_model_runner`: every generating model since 0.29; before
that only the architectures of `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES`, from Qwen3 in 0.22; never before 0.22). Option
`model_runner`, `V2_RUNNER_SINCE` for the log reader.

V1's `_dummy_sampler_run`: one row of logits per dummy request, top-k and top-p both set, so the top-k / top-p step
runs in full. Bytes a logit (one vocabulary entry of one request) at the step's peak, by the sampler that runs (option
`sampler`):

- "flashinfer", "triton" and "flashinfer-only": the logits in the model dtype, their fp32 copy (`Sampler.forward`),
  the softmax probabilities and the exponential noise of `random_sample` (`topk_topp_sampler.py`): 2 + 4 + 4 + 4.
  vLLM's Triton kernel (from 0.17: `topk_topp_triton.py` `apply_top_k_top_p_triton`) masks the fp32 logits in place
  and adds its buffer (`_TRITON_BUFFER_CACHE`, kept for later steps): one fp32 vocabulary row per program,
  min(SMs, requests) programs, rounded up to a power of two and capped at the SM count (`triton_buffer_bytes`; 80 MB
  for a 152K vocabulary on an H100's 132 SMs). With FlashInfer's sampler, 0.33's `_dummy_sampler_run` samples a
  second time with a seeded generator to warm the native path (from 0.21, vllm-project/vllm PR #41375), which runs
  the Triton kernel: its buffer is then allocated too. "flashinfer-only" is FlashInfer's step alone, as releases
  before 0.21 profiled it (a log reader's choice for them; no 0.33 setting gives it). vLLM 0.33 takes FlashInfer's
  sampler where `flashinfer_sampler_supported` allows it: CUDA, compute capability 8.0 to 12.1
  (`FlashInferBackend.supports_compute_capability`, which leaves Turing out until a FlashInfer fix lands) and more
  than 16 SMs; elsewhere, or with `VLLM_USE_FLASHINFER_SAMPLER=0`, the Triton kernel (`default_sampler`).
- "sort" (releases before 0.17 without FlashInfer's sampler, the default from 0.11.1, vllm-project/vllm PR #26859:
  `apply_top_k_top_p` sorts the logits, `logits.sort(dim=-1)`): the logits and their fp32 copy, the sorted values
  (fp32) and indices (int64), and what PyTorch's CUDA sort holds while it runs (pytorch/pytorch
  aten/src/ATen/native/cuda/SortStable.cu, commit 061531e): from 128 rows `segmented_sort_pairs` fills int64 source
  indices (8) and cub's segmented radix sort takes temporary storage for a second copy of the keys and values
  (4 + 8: `at::cuda::cub::segmented_sort_pairs` passes plain pointers, so cub allocates its alternate buffers);
  below 128 rows `segmented_sort_pairs_by_full_sort` sorts (value, row and index) pairs globally: two int2 arrays
  (8 + 8), the sorted keys (4) and cub's alternates (4 + 8); one row sorts alone (`segmented_sort_large_segments`: a
  row of int64 source indices and cub's alternates, as from 128 rows). The masks and probabilities after the sort are
  smaller than this peak. Checked against a vLLM 0.10.2 start-up found in an index without its repository, which
  prints its profile's parts (Qwen3-235B-A22B FP8 on eight L40S, 256 dummy requests x 151,936 logits, "FlashInfer is
  not available. Falling back to the PyTorch-native implementation"): "1.4 GiB for peak activation"; this rule gives
  1.38 GiB for the sort and 0.02 for the hidden states beside it.

V2's `_dummy_sampler_run` (`v1/worker/gpu/sample/sampler.py` `Sampler`): in 0.33 a default pass over the model-dtype
logits, then a pass with `SamplingParams.for_sampler_warmup()` (top-k 50, top-p 0.9, penalties, logit bias, logprobs),
which copies the logits to fp32 (`apply_sampling_params`; the logits processors, temperature and min-p work in place)
and samples them: with FlashInfer's sampler (`flashinfer_sample`, top-k as a tensor, so FlashInfer 0.7.2's
`top_k_top_p_sampling_from_logits` masks into a new fp32 tensor and takes its softmax: 4 + 4), 2 + 4 + 4 + 4 bytes a
logit and no Triton buffer; with the Triton kernel (`apply_top_k_top_p`, in place on the fp32 copy, then
`gumbel_sample`, whose per-block maxima are small), 2 + 4 and the kernel's buffer. Releases 0.22 to 0.32 made the
default pass only ("the sampler may skip top_k, top_p, and logprobs"): the logits alone, 2 bytes a logit (sampler
"greedy"). V2 has no sort. Its sampler keeps state for every request slot from the model's loading on, which vLLM's
profile counts as consumed memory (`memory_profiling`: `total_consumed`), on the last pipeline stage:
`PenaltiesState.output_bin_counts` (max_num_seqs x vocabulary int32: "can be very large, taking up GBs"), its
`prompt_bin_mask` and `StructuredOutputsWorker.grammar_bitmask` (max_num_seqs x ceil(vocabulary / 32) int32 each):
`v2_state_bytes`, 0.52 GiB for Llama-3.1-8B's 128,256 entries at 1,024 sequences.
"""

from __future__ import annotations

from memviz.core.gpus import ENTERED, GPU

SAMPLERS = ("flashinfer", "triton", "sort", "flashinfer-only", "greedy")
RUNNERS = ("v2", "v1")
#: the samplers each model runner has
RUNNER_SAMPLERS = {"v1": ("flashinfer", "triton", "sort", "flashinfer-only"),
                   "v2": ("flashinfer", "triton", "flashinfer-only", "greedy")}
#: releases whose V2 runner is the default for every generating model; from 0.22 to 0.28 only for the architectures of
#: `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES` in each release's vllm/config/vllm.py, here by their model types
#: (Qwen3ForCausalLM: qwen3, LlamaForCausalLM: llama, MistralForCausalLM: mistral, DeepseekV2ForCausalLM:
#: deepseek_v2, Qwen2MoeForCausalLM: qwen2_moe, GraniteMoeForCausalLM: granitemoe, DeepseekV4ForCausalLM: deepseek_v4)
V2_RUNNER_SINCE = (0, 29)
V2_RUNNER_TYPES = {
    (0, 22): frozenset({"qwen3"}),
    (0, 23): frozenset({"llama", "mistral", "qwen3"}),
    (0, 24): frozenset({"qwen3", "deepseek_v2", "qwen2_moe", "granitemoe", "llama", "mistral"}),
    (0, 25): frozenset({"deepseek_v2", "qwen2_moe", "granitemoe"}),
    (0, 26): frozenset({"deepseek_v2", "granitemoe", "qwen2_moe"}),
    (0, 27): frozenset({"deepseek_v2", "granitemoe", "qwen2_moe"}),
    (0, 28): frozenset({"deepseek_v2", "deepseek_v4", "granitemoe", "qwen2_moe"}),
}
#: the release whose V2 profile samples with the warm-up parameters (top-k, top-p) after its default pass
V2_WARMUP_PASS_SINCE = (0, 33)
#: the samplers whose profile step allocates the Triton kernel's buffer
TRITON_BUFFER_SAMPLERS = ("flashinfer", "triton")
#: compute capabilities FlashInfer's sampler runs on in vLLM 0.33 (`FlashInferBackend.supports_compute_capability`)
FLASHINFER_CAPABILITIES = ((8, 0), (12, 1))
#: the fewest SMs FlashInfer 0.7's multi-CTA top-k masking runs on: more than 16 (`flashinfer_sampler_supported`)
FLASHINFER_MIN_SMS = 17
#: model-dtype logits, their fp32 copy, probabilities and noise (V1); logits, fp32 copy, FlashInfer's mask and softmax (V2)
IN_PLACE_BYTES_PER_LOGIT = 2 + 4 + 4 + 4
#: V2 with the Triton kernel: the logits and their fp32 copy, masked in place; V2's default pass alone: the logits
V2_TRITON_BYTES_PER_LOGIT, LOGITS_ONLY_BYTES_PER_LOGIT = 2 + 4, 2
#: logits (2 + 4) and the sort's outputs (fp32 values, int64 indices) beside its temporaries
_SORT_KEPT = 2 + 4 + 4 + 8
SEGMENTED_SORT_MIN_ROWS = 128  # SortStable.cu: `nsegments < 128` sorts all rows as one


def sort_bytes_per_logit(requests: int) -> int:
    """Peak bytes a logit while PyTorch's CUDA sort orders `requests` rows of logits (module docstring)."""
    if 1 < requests < SEGMENTED_SORT_MIN_ROWS:
        return _SORT_KEPT + 8 + 8 + 4 + 4 + 8
    return _SORT_KEPT + 8 + 4 + 8


#: what each sampler's profile step holds, as the app and the CLI name it
SAMPLER_LABELS = {
    "flashinfer": "FlashInfer's sampler, then vLLM's Triton kernel warmed with its buffer (a vocabulary row per SM)",
    "triton": "vLLM's Triton kernel and its buffer (a vocabulary row per SM)",
    "flashinfer-only": "FlashInfer's sampler alone (releases before 0.21)",
    "sort": "the PyTorch sort of the logits (releases before 0.17)",
    "greedy": "the logits alone (V2 model runner of releases 0.22 to 0.32: no top-k / top-p in the profile)",
}
#: the same under the V2 model runner, where they differ
V2_SAMPLER_LABELS = {
    "flashinfer": "FlashInfer's sampler on an fp32 copy of the logits (V2 model runner: no Triton warm-up)",
    "flashinfer-only": "FlashInfer's sampler on an fp32 copy of the logits (V2 model runner: no Triton warm-up)",
    "triton": "vLLM's Triton kernel on an fp32 copy of the logits and its buffer (a vocabulary row per SM)",
}


def flashinfer_refusal(gpu: GPU | None) -> str | None:
    """Why vLLM 0.33 does not run FlashInfer's sampler on `gpu`, or None where it does (or the GPU is not known)."""
    if gpu is None or gpu.memory_source == ENTERED:
        return None
    if gpu.compute_capability is None:
        return f"FlashInfer's sampler runs on CUDA GPUs only, not the {gpu.label}"
    low, high = FLASHINFER_CAPABILITIES
    if not low <= gpu.compute_capability <= high:
        return (f"FlashInfer's sampler needs compute capability {low[0]}.{low[1]} to {high[0]}.{high[1]}, the "
                f"{gpu.label} has {gpu.compute_capability[0]}.{gpu.compute_capability[1]}")
    if gpu.sm_count is not None and gpu.sm_count < FLASHINFER_MIN_SMS:
        return f"FlashInfer's top-k masking needs more than 16 SMs, the {gpu.label} has {gpu.sm_count}"
    return None


def default_sampler(gpu: GPU | None) -> str:
    """The sampler vLLM 0.33 runs on `gpu` unless told otherwise."""
    return "triton" if flashinfer_refusal(gpu) else "flashinfer"


def triton_buffer_bytes(sm_count: int | None, requests: int, vocab_rows: int) -> int:
    """The Triton kernel's buffer (`apply_top_k_top_p_triton`): next_power_of_2(min(SMs, requests)) rows, at most
    one a SM, of fp32 logits; 0 where the SM count is not known."""
    if sm_count is None:
        return 0
    programs = min(sm_count, requests)
    return min(1 << (programs - 1).bit_length(), sm_count) * vocab_rows * 4


def release_runner(version: tuple[int, ...], model_type: str) -> str:
    """The model runner a vLLM release ran a model of `model_type` with by default."""
    if version[:2] >= V2_RUNNER_SINCE:
        return "v2"
    return "v2" if model_type in V2_RUNNER_TYPES.get(version[:2], ()) else "v1"


def sampler_label(sampler: str, runner: str) -> str:
    """What the sampler step holds, in words."""
    return (V2_SAMPLER_LABELS if runner == "v2" else {}).get(sampler) or SAMPLER_LABELS[sampler]


def sampler_bytes(sampler: str, requests: int, vocab_rows: int, sm_count: int | None = None,
                  runner: str = "v1") -> float:
    """Bytes the sampler step holds for `requests` rows of `vocab_rows` logits on a GPU of `sm_count` SMs, under the
    model runner `runner`."""
    if runner == "v2":
        per_logit = {"triton": V2_TRITON_BYTES_PER_LOGIT, "greedy": LOGITS_ONLY_BYTES_PER_LOGIT}.get(
            sampler, IN_PLACE_BYTES_PER_LOGIT)
        buffer = triton_buffer_bytes(sm_count, requests, vocab_rows) if sampler == "triton" else 0
        return float(requests * vocab_rows * per_logit + buffer)
    per_logit = sort_bytes_per_logit(requests) if sampler == "sort" else IN_PLACE_BYTES_PER_LOGIT
    buffer = triton_buffer_bytes(sm_count, requests, vocab_rows) if sampler in TRITON_BUFFER_SAMPLERS else 0
    return float(requests * vocab_rows * per_logit + buffer)


def v2_state_bytes(max_num_seqs: int, vocab: int, logits_per_request: int = 1) -> int:
    """The V2 model runner's sampler state (module docstring): penalties' output counts (int32 a vocabulary entry)
    and prompt bit mask, and the grammar bit mask of `logits_per_request` rows a request, for every request slot."""
    words = -(-vocab // 32)
    return max_num_seqs * (vocab * 4 + words * 4 + logits_per_request * words * 4)
