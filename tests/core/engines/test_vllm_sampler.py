"""The sampler step of vLLM's profile run: in-place masking (FlashInfer's sampler, the Triton kernel) against the
PyTorch sort of releases before 0.17, whose CUDA sort holds index and alternate buffers while it runs."""

import pytest

from memviz.core.engines import get_engine
from memviz.core.engines.vllm_sampler import IN_PLACE_BYTES_PER_LOGIT, sampler_bytes, sort_bytes_per_logit
from memviz.core.errors import InputError


def test_the_sort_holds_its_outputs_and_temporaries_beside_the_logits():
    # 2 + 4 logits, 4 + 8 sorted values and indices, then the segmented sort's int64 sources and cub's alternates
    assert sort_bytes_per_logit(256) == 2 + 4 + 12 + 8 + 12
    assert sort_bytes_per_logit(1) == sort_bytes_per_logit(128) == 38
    # fewer than 128 rows are sorted as one: two int2 arrays, the sorted keys and cub's alternates
    assert sort_bytes_per_logit(64) == 2 + 4 + 12 + 8 + 8 + 4 + 12


def test_in_place_samplers_hold_the_logits_probabilities_and_noise():
    assert IN_PLACE_BYTES_PER_LOGIT == 14
    assert sampler_bytes("triton", 256, 151_936) == sampler_bytes("flashinfer", 256, 151_936) == 256 * 151_936 * 14


def test_qwen3_235b_profile_on_vllm_0_10_2_sorts_1_38_gib():
    """The 0.10.2 start-up of the module docstring printed 1.4 GiB of peak activation for 256 dummy requests."""
    assert sampler_bytes("sort", 256, 151_936) / 2**30 == pytest.approx(1.376, abs=0.001)


def test_the_boolean_option_of_earlier_sessions_still_reads():
    vllm = get_engine("vllm")
    assert vllm.resolve({"flashinfer_sampler": False})["sampler"] == "sort"
    assert vllm.resolve({"flashinfer_sampler": "true"})["sampler"] == "flashinfer"
    assert vllm.resolve({})["sampler"] == "flashinfer"
    with pytest.raises(InputError, match="sampler must be one of"):
        vllm.resolve({"sampler": "bogus"})
