"""The sampler step of vLLM's profile run (vllm-project/vllm 0.33.0 v1/worker/gpu_model_runner.py
`_dummy_sampler_run`): one row of logits per dummy request, top-k and top-p both set, so the top-k / top-p step runs in
full.

Bytes a logit (one vocabulary entry of one request) at the step's peak, by the sampler that runs (option `sampler`):

- "flashinfer" (vLLM's default on CUDA) and "triton" (`VLLM_USE_FLASHINFER_SAMPLER=0`, or a GPU FlashInfer does not
  support, from 0.17: `topk_topp_triton.py` `apply_top_k_top_p_triton` masks the fp32 logits in place): the logits in
  the model dtype, their fp32 copy (`Sampler.forward`), the softmax probabilities and the exponential noise of
  `random_sample` (`topk_topp_sampler.py`): 2 + 4 + 4 + 4. The Triton kernel's buffer (`_TRITON_BUFFER_CACHE`, at most
  one fp32 vocabulary row per SM, about 80 MiB for a 152K vocabulary on an H100) is not counted.
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
"""

from __future__ import annotations

SAMPLERS = ("flashinfer", "triton", "sort")
#: model-dtype logits, their fp32 copy, probabilities and noise
IN_PLACE_BYTES_PER_LOGIT = 2 + 4 + 4 + 4
#: logits (2 + 4) and the sort's outputs (fp32 values, int64 indices) beside its temporaries
_SORT_KEPT = 2 + 4 + 4 + 8
SEGMENTED_SORT_MIN_ROWS = 128  # SortStable.cu: `nsegments < 128` sorts all rows as one


def sort_bytes_per_logit(requests: int) -> int:
    """Peak bytes a logit while PyTorch's CUDA sort orders `requests` rows of logits (module docstring)."""
    if 1 < requests < SEGMENTED_SORT_MIN_ROWS:
        return _SORT_KEPT + 8 + 8 + 4 + 4 + 8
    return _SORT_KEPT + 8 + 4 + 8


def sampler_bytes(sampler: str, requests: int, vocab_rows: int) -> float:
    """Bytes the sampler step holds for `requests` rows of `vocab_rows` logits."""
    per_logit = sort_bytes_per_logit(requests) if sampler == "sort" else IN_PLACE_BYTES_PER_LOGIT
    return float(requests * vocab_rows * per_logit)
