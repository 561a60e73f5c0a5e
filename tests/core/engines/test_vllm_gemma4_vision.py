"""Gemma 4's vision pass in vLLM 0.34's profile run (`vllm_gemma4_vision`): the video item, the chunks
`_encoder_chunk` gives, the chunk's peak, and where the engine puts it."""

import pytest

from memviz.core.engines.vllm_gemma4_vision import VIDEO_ITEM_TOKENS, chunk_units, profiled_modality, vision_pass
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset
from memviz.core.towers import vision_shape

GB = 10**9
FRAME_PATCHES = 70 * 9  # a video frame: 70 soft tokens of 3 x 3 patches
ONE_HOT_FRAME = FRAME_PATCHES * 4 * 10240 * 8  # `_encoder_chunk`'s cost of a frame: 206,438,400 bytes


def _tower(preset: str = "gemma-4-31b"):
    return vision_shape(get_preset(preset).architecture().encoders[0])


def _facts(preset: str = "gemma-4-31b", **scenario) -> dict:
    sc = Scenario(**{"engine": "vllm", "gpu": "h100-80g", "context_tokens": 8192, **scenario})
    return estimate(get_preset(preset).architecture(), sc).engine_facts


def test_the_released_towers_read_with_their_position_table():
    v = _tower()
    assert (v.patches, v.tokens, v.hidden, v.mlp, v.out, v.pixels, v.heads, v.positions) == (
        2520, 280, 1152, 4304, 5376, 768, 16, 10240)


def test_a_chunk_is_what_a_tenth_of_the_gpu_or_half_the_free_memory_holds_of_the_one_hot_it_sizes_for():
    assert chunk_units(FRAME_PATCHES, 40 * GB, 85 * GB, 10240) == 85 * GB // 10 // ONE_HOT_FRAME == 41
    assert chunk_units(FRAME_PATCHES, 4 * GB, 85 * GB, 10240) == 2 * GB // ONE_HOT_FRAME == 9  # half the free
    assert chunk_units(FRAME_PATCHES, 0.1 * GB, 85 * GB, 10240) == 1
    assert chunk_units(FRAME_PATCHES, -1.0, 85 * GB, 10240) == 1


def test_vllm_profiles_one_video_of_32_frames_before_an_image():
    v = _tower()
    assert profiled_modality(v, 999, 999) == ("video", VIDEO_ITEM_TOKENS) == ("video", 32 * 78)
    assert profiled_modality(v, 999, 0) == ("image", 280)
    assert profiled_modality(v, 0, 0) is None


def test_one_chunk_holds_the_inputs_and_the_layer_peak_of_every_frame():
    """32 frames in one call: the uint8 pixels, int64 positions and padding flags of every patch; at the MLP four
    hidden-wide and three MLP-wide bf16 tensors, cos and sin, and a mask byte per patch pair. What stays for the
    language model's pass: 70 soft tokens a frame in its 5,376-wide space."""
    p = vision_pass(_tower(), "video", 1, 2, 1, (40 * GB, 85 * GB))
    n = 32 * FRAME_PATCHES
    assert (p.units, p.patches, p.chunk) == (32, 630, 32)
    assert p.peak_bytes == n * (768 + 16 + 1) + n * ((4 * 1152 + 3 * 4304 + 2 * 72) * 2 + 630)
    assert p.kept_bytes == 32 * 70 * 5376 * 2
    assert p.input_bytes == n * (768 + 16)


def test_later_chunks_hold_the_outputs_of_those_before():
    """Three videos, 96 frames, 41 a call: the second call holds the first's 41 outputs beside its own peak."""
    p = vision_pass(_tower(), "video", 3, 2, 1, (40 * GB, 85 * GB))
    layer = FRAME_PATCHES * ((4 * 1152 + 3 * 4304 + 2 * 72) * 2 + 630)
    out = FRAME_PATCHES * 1152 * 2
    assert (p.units, p.chunk) == (96, 41)
    inputs = 96 * FRAME_PATCHES * (768 + 16 + 1)
    assert p.peak_bytes == inputs + max(41 * out + 41 * layer, 82 * out + 14 * layer)
    one_call = vision_pass(_tower(), "video", 3, 2, 1, None)
    assert one_call.chunk == 96 and one_call.peak_bytes == inputs + 96 * layer


def test_an_image_chunk_copies_its_pixels_and_positions():
    p = vision_pass(_tower(), "image", 2, 2, 2, None)
    patches = 2520
    layer = patches * ((4 * 1152 + 3 * 4304 + 2 * 72) * 2 + patches) + patches * (768 * 2 + 16)
    assert p.peak_bytes == 2 * patches * (768 * 2 + 16 + 1) + 2 * layer


def test_the_engine_sizes_the_pass_by_the_memory_the_weights_leave():
    """Gemma-4-31B: on an H100 a tenth of the GPU holds 41 frames; on a 24 GB RTX 4090, 12; the pass's peak is in
    the profile's activations and the facts."""
    h100 = _facts(options={"max_num_batched_tokens": 2048})["encoder_profile"]
    assert (h100["modality"], h100["items"], h100["tokens_per_item"], h100["chunk"], h100["chunk_unit"]) == (
        "video", 1, 2496, 32, "frames")
    assert h100["peak_bytes"] == vision_pass(_tower(), "video", 1, 2, 1, None).peak_bytes
    small = _facts("gemma-4-26b-a4b", gpu="rtx-4090", tp=2, weight_format="fp8", context_tokens=4096)
    total = get_gpu("rtx-4090").cuda_total_bytes
    assert small["encoder_profile"]["chunk"] == total // 10 // ONE_HOT_FRAME == 12
    # the 26B in fp8 fills an RTX 5090 but 7 GB: half of what is free binds, 11 frames where a tenth of it holds 16
    full = _facts("gemma-4-26b-a4b", gpu="rtx5090", weight_format="fp8", context_tokens=4096)["encoder_profile"]
    assert full["chunk"] == 11 < get_gpu("rtx5090").cuda_total_bytes // 10 // ONE_HOT_FRAME == 16


def test_the_pass_sets_the_profile_peak_where_the_language_model_s_is_smaller():
    """One sequence of 2,048 batched tokens: the language model's pass (0.52 GiB) is below the video's (0.69 GiB),
    which is then the profile's peak."""
    a = get_preset("gemma-4-31b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                  options={"max_num_seqs": 1, "max_num_batched_tokens": 2048, "sampler": "triton"})
    est = estimate(a, sc)
    text = estimate(a, sc.with_changes(options={**dict(sc.options), "language_model_only": True}))
    assert est.devices[0].activations == est.engine_facts["encoder_profile"]["peak_bytes"] > text.devices[0].activations


def test_limits_that_leave_the_tower_no_input_are_refused():
    with pytest.raises(InputError, match="language_model_only"):
        _facts(options={"limit_image": 0, "limit_video": 0})
    assert _facts(options={"limit_video": 0})["encoder_profile"]["modality"] == "image"


def test_the_launch_command_says_when_pixels_are_normalised_on_the_host():
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, options={"mm_device_do_normalize": False})
    est = estimate(get_preset("gemma-4-31b").architecture(), sc)
    assert est.launch_command("google/gemma-4-31B-it").endswith("--no-mm-device-do-normalize")
    on = estimate(get_preset("gemma-4-31b").architecture(), sc.with_changes(options={}))
    assert "normalize" not in on.launch_command("google/gemma-4-31B-it")
    assert on.engine_facts["encoder_profile"]["peak_bytes"] < est.engine_facts["encoder_profile"]["peak_bytes"]


def test_gemma_multimodal_classes_hold_a_batch_of_per_layer_embeddings_from_load():
    """gemma3n_mm.py / gemma4_mm.py pre-allocate max_num_batched_tokens x layers x hidden_size_per_layer_input in
    the model's dtype for CUDA graphs, on every rank, --language-model-only too; "Model loading took" includes it.
    The text-only class has none. Gemma 3n's default config: 35 layers of 256, 8,192 tokens on an H100: 140 MiB, less
    KV pool by as much."""
    import warnings

    transformers = pytest.importorskip("transformers")
    from memviz.core.arch import from_hf_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = from_hf_config(transformers.Gemma3nConfig().to_dict())
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    buffer = 8192 * 35 * 256 * 2
    for options in ({}, {"language_model_only": True}):
        assert estimate(a, sc.with_changes(options=options)).engine_facts["per_layer_embedding_bytes"] == buffer
    text = estimate(a.with_changes(encoders=()), sc)
    assert text.engine_facts["per_layer_embedding_bytes"] == 0
    lm_only = estimate(a, sc.with_changes(options={"language_model_only": True}))
    assert lm_only.devices[0].overhead - text.devices[0].overhead == pytest.approx(buffer, rel=0.01)


def test_skip_mm_profiling_leaves_the_pass_out_of_the_budget_and_says_so():
    """--skip-mm-profiling (`MultiModalConfig.skip_mm_profiling`): the profile run is the language model's alone, as
    without the towers; the pass is still reported, marked as not reserved, and the launch command carries the
    flag."""
    a = get_preset("gemma-4-31b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    skipped = estimate(a, sc.with_changes(options={"skip_mm_profiling": True}))
    text = estimate(a, sc.with_changes(options={"language_model_only": True}))
    profiled = estimate(a, sc)
    assert skipped.devices[0].activations == text.devices[0].activations < profiled.devices[0].activations
    assert skipped.engine_facts["encoder_profile"]["skipped"] is True
    assert skipped.engine_facts["kv_pool_bytes"] > profiled.engine_facts["kv_pool_bytes"]
    assert skipped.launch_command("google/gemma-4-31B-it").endswith("--skip-mm-profiling")


def test_max_soft_tokens_sizes_the_image_item_vllm_profiles_once_videos_are_off():
    """--mm-processor-kwargs max_soft_tokens 1120: an image of 10,080 patches; the video (2,496 tokens) still outgrows
    it until limit_video=0; then 8,192 // 1,120 = 7 images, two a call on an H100 (a tenth of it over a 3.3 GB
    one-hot each). The launch command carries the kwarg; values the processor does not take are refused."""
    a = get_preset("gemma-4-31b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, options={"mm_max_soft_tokens": 1120})
    assert estimate(a, sc).engine_facts["encoder_profile"]["modality"] == "video"
    images = estimate(a, sc.with_changes(options={"mm_max_soft_tokens": 1120, "limit_video": 0}))
    ep = images.engine_facts["encoder_profile"]
    assert (ep["modality"], ep["items"], ep["tokens_per_item"], ep["chunk"]) == ("image", 7, 1120, 2)
    assert ep["peak_bytes"] == vision_pass(_tower(), "image", 7, 2, 1, (40 * GB, 85 * GB), 1120).peak_bytes
    assert '--mm-processor-kwargs \'{"max_soft_tokens": 1120}\'' in images.launch_command("google/gemma-4-31B-it")
    for bad in (100, 2240):
        with pytest.raises(InputError, match="70, 140, 280, 560, 1120"):
            estimate(a, sc.with_changes(options={"mm_max_soft_tokens": bad}))
    with pytest.raises(InputError, match="no Gemma 4 tower"):
        estimate(get_preset("llama-3.1-8b").architecture(), sc)
