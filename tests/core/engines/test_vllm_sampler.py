"""The sampler step of vLLM's profile run: in-place masking (FlashInfer's sampler, the Triton kernel and its buffer of
a vocabulary row per SM) against the PyTorch sort of releases before 0.17, whose CUDA sort holds index and alternate
buffers while it runs; the sampler vLLM 0.33 picks for a GPU."""

import pytest

from memviz.core.engines import get_engine
from memviz.core.engines.vllm_sampler import (
    IN_PLACE_BYTES_PER_LOGIT,
    default_sampler,
    release_runner,
    sampler_bytes,
    sort_bytes_per_logit,
    triton_buffer_bytes,
    v2_state_bytes,
)
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset


def test_the_sort_holds_its_outputs_and_temporaries_beside_the_logits():
    # 2 + 4 logits, 4 + 8 sorted values and indices, then the segmented sort's int64 sources and cub's alternates
    assert sort_bytes_per_logit(256) == 2 + 4 + 12 + 8 + 12
    assert sort_bytes_per_logit(1) == sort_bytes_per_logit(128) == 38
    # fewer than 128 rows are sorted as one: two int2 arrays, the sorted keys and cub's alternates
    assert sort_bytes_per_logit(64) == 2 + 4 + 12 + 8 + 8 + 4 + 12


def test_in_place_samplers_hold_the_logits_probabilities_and_noise():
    assert IN_PLACE_BYTES_PER_LOGIT == 14
    assert sampler_bytes("triton", 256, 151_936) == sampler_bytes("flashinfer", 256, 151_936) == 256 * 151_936 * 14


def test_the_triton_kernel_keeps_a_vocabulary_row_per_program():
    """min(SMs, requests) programs, rounded up to a power of two, at most one a SM: an H100's 132 SMs over 1,024
    requests keep 132 rows (80 MB for Qwen2.5's 152,064 logits); 5 requests keep 8 rows, 100 keep 128."""
    assert triton_buffer_bytes(132, 1024, 152_064) == 132 * 152_064 * 4 == 80_289_792
    assert triton_buffer_bytes(132, 5, 1000) == 8 * 1000 * 4
    assert triton_buffer_bytes(132, 100, 1000) == 128 * 1000 * 4
    assert triton_buffer_bytes(108, 1, 1000) == 1000 * 4
    assert triton_buffer_bytes(None, 256, 1000) == 0
    # 0.33 warms the Triton kernel beside FlashInfer's sampler too; releases before 0.21 did not
    assert sampler_bytes("triton", 256, 1000, 108) == sampler_bytes("flashinfer", 256, 1000, 108)
    assert sampler_bytes("flashinfer", 256, 1000, 108) - sampler_bytes("flashinfer-only", 256, 1000, 108) == 108 * 4000


def test_vllm_picks_flashinfer_on_cuda_8_0_to_12_1_and_triton_elsewhere():
    for key in ("a100-80g", "h100-80g", "rtx4090", "b200", "rtx5090", "dgx-spark"):
        assert default_sampler(get_gpu(key)) == "flashinfer", key
    for key in ("v100-32g", "t4", "p40", "mi300x"):  # Volta, Turing (held back in 0.33), Pascal, ROCm
        assert default_sampler(get_gpu(key)) == "triton", key
    assert default_sampler(None) == default_sampler(get_gpu("vram:24GiB")) == "flashinfer"


def _qwen_on(gpu: str, **options) -> tuple:
    """Qwen2.5-7B as vLLM up to 0.33 sizes it (profile-based, the V1 runner still there)."""
    a = get_preset("qwen2.5-7b").architecture()
    sc = Scenario(engine="vllm", gpu=gpu, context_tokens=8192, options={"extensible_kv_cache": False, **options})
    return a, sc


def test_the_triton_kernel_adds_its_buffer_to_the_profile_peak():
    """Qwen2.5-7B on an H100 under the V1 model runner: the same profile but the Triton kernel's 132 x 152,064 fp32
    buffer, which 0.33 warms with FlashInfer's sampler as with its own."""
    only, flash, triton = (estimate(*_qwen_on("h100-80g", sampler=s, model_runner="v1"))
                           for s in ("flashinfer-only", "flashinfer", "triton"))
    assert triton.bytes["activations"] == flash.bytes["activations"]
    assert flash.bytes["activations"] - only.bytes["activations"] == 132 * 152_064 * 4


def test_the_v2_runner_samples_an_fp32_copy_and_keeps_a_row_of_counts_per_request_slot():
    """vLLM 0.33's V2 model runner: FlashInfer's step on the fp32 copy (2 + 4 + 4 + 4 bytes a logit, no Triton
    warm-up), the Triton kernel in place on it (2 + 4 and its buffer), 0.22-0.32's default pass alone (the logits);
    and its sampler state, an int32 count and two bits a vocabulary entry per request slot, in the overhead."""
    rows, vocab = 1024, 152_064  # an H100's default max_num_seqs
    flash, triton, greedy, v1 = (estimate(*_qwen_on("h100-80g", **o)) for o in (
        {}, {"sampler": "triton"}, {"sampler": "greedy"}, {"model_runner": "v1", "sampler": "flashinfer-only"}))
    steps = [e.engine_facts["profile_sampler"]["bytes"] for e in (flash, triton, greedy)]
    assert steps == [rows * vocab * 14, rows * vocab * 6 + 132 * vocab * 4, rows * vocab * 2]
    words = -(-vocab // 32)
    assert flash.engine_facts["sampler_state_bytes"] == v2_state_bytes(rows, vocab) == rows * (vocab * 4 + 2 * words * 4)
    assert "sampler_state_bytes" not in v1.engine_facts
    assert "+ the V2 model runner's sampler state (0.62 GiB)" in flash.component("overhead").formula
    assert "sampler state" not in v1.component("overhead").formula
    assert flash.bytes["overhead"] - v1.bytes["overhead"] == v2_state_bytes(rows, vocab)
    assert flash.bytes["activations"] == v1.bytes["activations"]  # FlashInfer's step costs the same under both
    with pytest.raises(InputError, match="V2 model runner has no 'sort'"):
        estimate(*_qwen_on("h100-80g", sampler="sort"))
    with pytest.raises(InputError, match="V1 model runner has no 'greedy'"):
        estimate(*_qwen_on("h100-80g", sampler="greedy", model_runner="v1"))


def test_the_model_runner_follows_the_release_and_the_architecture():
    """V2 for every model from 0.29, for the listed architectures from 0.22 (vllm/config/vllm.py
    DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES of each release), V1 before."""
    assert release_runner((0, 33, 0), "gemma3_text") == release_runner((0, 29, 0), "qwen2") == "v2"
    assert release_runner((0, 24, 0), "llama") == release_runner((0, 22, 0), "qwen3") == "v2"
    assert release_runner((0, 26, 0), "llama") == release_runner((0, 26, 0), "qwen2") == "v1"
    assert release_runner((0, 21, 0), "qwen3") == "v1"


def test_launch_names_the_sampler_only_where_it_is_not_the_gpus_own():
    vllm = get_engine("vllm")
    a, sc = _qwen_on("h100-80g", sampler="triton")
    assert vllm.launch_command(a, sc, "m").startswith("VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve")
    a, sc = _qwen_on("v100-32g")
    assert "FLASHINFER" not in vllm.launch_command(a, sc, "m")
    a, sc = _qwen_on("h100-80g")
    assert "FLASHINFER" not in vllm.launch_command(a, sc, "m")
    a, sc = _qwen_on("v100-32g", sampler="sort")  # a release's choice: its launch asks for the native path only
    assert "FLASHINFER" not in vllm.launch_command(a, sc, "m")


def test_flashinfer_on_a_gpu_it_does_not_run_on_is_refused():
    with pytest.raises(InputError, match="compute capability 8.0 to 12.1, the Tesla V100 32GB has 7.0"):
        estimate(*_qwen_on("v100-32g", sampler="flashinfer"))


def test_qwen3_235b_profile_on_vllm_0_10_2_sorts_1_38_gib():
    """The 0.10.2 start-up of the module docstring printed 1.4 GiB of peak activation for 256 dummy requests."""
    assert sampler_bytes("sort", 256, 151_936) / 2**30 == pytest.approx(1.376, abs=0.001)


def test_the_boolean_option_of_earlier_sessions_still_reads():
    vllm = get_engine("vllm")
    assert vllm.resolve({"flashinfer_sampler": False})["sampler"] == "sort"
    assert vllm.resolve({"flashinfer_sampler": "true"})["sampler"] == "flashinfer"
    assert vllm.resolve({})["sampler"] is None  # derived from the GPU (`default_sampler`)
    with pytest.raises(InputError, match="sampler must be one of"):
        vllm.resolve({"sampler": "bogus"})
