"""A llama.cpp mmproj file read as the encoders libmtmd loads: exact sizes, the tower's widths, clear errors."""

import pytest

from memviz.core.arch import Architecture
from memviz.core.engines.llamacpp_mtmd import GEMMA3, GEMMA4, QWEN3, mtmd_buffers, projector
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.importers.gguf_file import read_gguf, read_mmproj
from memviz.core.presets import get_preset
from memviz.core.towers import AUDIO, VISION, vision_shape
from memviz.core.units import MiB
from tests.core.importers.files import write_gguf_model, write_mmproj


def test_a_qwen3_vl_mmproj_is_sized_with_its_deepstack_mergers(tmp_path):
    path = tmp_path / "mmproj.gguf"
    elements, nbytes = write_mmproj(path, "qwen3vl_merger", 1024, 4096, 16, 2560, 16,
                                    deepstack=(False, True, False, True, True))
    (e,) = read_mmproj(path)
    assert (e.modality, e.parameters, e.stored_bytes, e.file) == (VISION, elements, nbytes, str(path))
    v = vision_shape(e)
    assert projector(e) == QWEN3 and (v.hidden, v.mlp, v.out, v.deepstack, v.heads) == (1024, 4096, 2560, 3, 16)
    assert mtmd_buffers((e,), flash=True).device_bytes / MiB == pytest.approx(322.49, abs=0.006)  # Qwen3-VL-4B's


def test_gemma3_and_a_projector_memviz_does_not_size(tmp_path):
    write_mmproj(tmp_path / "g.gguf", "gemma3", 1152, 4304, 16, 2560, 14, image=896)
    (e,) = read_mmproj(tmp_path / "g.gguf")
    assert projector(e) == GEMMA3 and vision_shape(e).side_patches == 64
    assert mtmd_buffers((e,), flash=True).device_bytes / MiB == pytest.approx(121.25, abs=0.006)
    elements, _ = write_mmproj(tmp_path / "p.gguf", "pixtral", 1024, 4096, 16, 5120, 16, audio=True)
    vision, audio = read_mmproj(tmp_path / "p.gguf")
    assert vision.family == "mmproj pixtral" and not vision.shape and vision.parameters == elements
    assert audio.modality == AUDIO and audio.parameters == 64 * 32 and audio.stored_bytes == 64 * 32 * 2
    assert mtmd_buffers((vision, audio), flash=True) is None


def test_a_gemma4_mmproj_pools_three_by_three_without_a_scale_factor_key(tmp_path):
    """Gemma 4 E2B / E4B's tower as the converter writes it (no clip.vision.projector.scale_factor: libmtmd's
    default 3 x 3 pooling, 224-pixel image_size that the warm-up ignores): libmtmd measured 101.27 MiB with flash
    attention and 276.77 without for its 768 x 768 warm-up."""
    write_mmproj(tmp_path / "g4.gguf", "gemma4v", 768, 3072, 12, 2560, 16, image=224)
    (e,) = read_mmproj(tmp_path / "g4.gguf")
    v = vision_shape(e)
    assert projector(e) == GEMMA4 and (v.hidden, v.mlp, v.heads, v.patches // v.tokens) == (768, 3072, 12, 9)
    on, off = mtmd_buffers((e,), flash=True), mtmd_buffers((e,), flash=False)
    assert on.warmup_side_px == 768 and on.device_bytes / MiB == pytest.approx(101.27, abs=0.006)
    assert off.device_bytes / MiB == pytest.approx(276.77, abs=0.006)


def test_an_mmproj_replaces_the_encoders_and_counts_its_stored_bytes(tmp_path):
    """Beside an imported GGUF (format "stored") the mmproj's own bytes are the encoder's weights; its compute
    buffer joins the activations and the launch command names the file."""
    lm, mm = tmp_path / "lm.gguf", tmp_path / "mmproj.gguf"
    write_gguf_model(lm)
    _, nbytes = write_mmproj(mm, "qwen2.5vl_merger", 1280, 3420, 16, 256, 14)
    a = read_gguf(lm)
    sc = Scenario(weight_format="stored", engine="llamacpp", context_tokens=1024, gpu="rtx4090",
                  options=(("mmproj", True),))
    bare, with_mmproj = estimate(a, sc), estimate(a.with_changes(encoders=read_mmproj(mm)), sc)
    assert with_mmproj.bytes["weights"] - bare.bytes["weights"] == nbytes
    added = with_mmproj.bytes["activations"] - bare.bytes["activations"]
    assert added / MiB == pytest.approx(704.79, abs=0.006)  # Qwen2.5-VL's tower: the out width does not move it
    assert f"--mmproj {mm}" in with_mmproj.launch_command()
    again = Architecture.from_dict(a.with_changes(encoders=read_mmproj(mm)).to_dict())
    assert again.encoders == read_mmproj(mm)


def test_a_preset_architecture_keeps_its_encoders_without_a_file():
    a = get_preset("gemma-3-27b").architecture()
    assert Architecture.from_dict(a.to_dict()).encoders == a.encoders and not a.encoders[0].file


def test_wrong_files_are_one_clear_error(tmp_path):
    lm, mm = tmp_path / "lm.gguf", tmp_path / "mmproj.gguf"
    write_gguf_model(lm)
    write_mmproj(mm, "qwen3vl_merger", 64, 128, 4, 64, 16)
    with pytest.raises(InputError, match="not an mmproj file"):
        read_mmproj(lm)
    with pytest.raises(InputError, match="an mmproj file"):
        read_gguf(mm)
    (tmp_path / "bad.gguf").write_bytes(b"GGUF" + b"\x00" * 8)
    with pytest.raises(InputError):
        read_mmproj(tmp_path / "bad.gguf")
    write_mmproj(tmp_path / "wide.gguf", "qwen3vl_merger", 64, 128, 4, 64, 16, image=1 << 30)
    with pytest.raises(InputError, match="image_size of 1,073,741,824 is beyond any real encoder"):
        read_mmproj(tmp_path / "wide.gguf")


def test_a_gemma4_towers_count_is_the_converters_mmproj():
    """convert_hf_to_gguf.py --mmproj (llama.cpp 0c1e570) wrote 54,276,608 elements for this config's tower (Gemma 4's
    default 768-wide vision config cut to 4 blocks, the embedder into a 256-wide language model): memviz's count
    from the config."""
    from memviz.core.arch import from_hf_config

    cfg = {"model_type": "gemma4", "text_config": {
        "model_type": "gemma4_text", "hidden_size": 256, "intermediate_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 64, "vocab_size": 262144,
        "layer_types": ["full_attention"], "hidden_size_per_layer_input": 0},
        "vision_config": {"model_type": "gemma4_vision", "num_hidden_layers": 4}}
    (e,) = from_hf_config(cfg).encoders
    assert e.parameters == 54_276_608 and projector(e) == GEMMA4
