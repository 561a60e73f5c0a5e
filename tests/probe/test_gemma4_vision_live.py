"""Gemma 4's vision encoder (transformers' Gemma4VisionEncoder, which vLLM 0.34 runs) against the live tensors of
a real pass: the chunk peak `vllm_gemma4_vision` charges a patch, less the caller's inputs_embeds (made before the
measured call)."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers.models.gemma4")

from memviz.core.engines.vllm_gemma4_vision import HELD_HIDDEN, HELD_MLP  # noqa: E402
from tests.probe.live_tensors import LiveTensors  # noqa: E402

pytestmark = pytest.mark.slow  # runs a real tower


def _live_peak(hidden: int, mlp: int, heads: int, patches: int, frames: int, dtype) -> int:
    from transformers import AutoModel
    from transformers.models.gemma4 import Gemma4VisionConfig

    cfg = Gemma4VisionConfig(hidden_size=hidden, intermediate_size=mlp, num_hidden_layers=2, num_attention_heads=heads,
                             num_key_value_heads=heads, head_dim=hidden // heads, global_head_dim=hidden // heads)
    tower = AutoModel.from_config(cfg, dtype=dtype, attn_implementation="sdpa").eval()
    side = int((patches * 0.9) ** 0.5)  # a padded frame, as the processor pads it to its most patches
    positions = torch.full((frames, patches, 2), -1, dtype=torch.long)
    ys, xs = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
    positions[:, : side * side, 0], positions[:, : side * side, 1] = xs.flatten(), ys.flatten()
    padding = (positions == -1).all(dim=-1)
    embeds = torch.randn(frames, patches, hidden, dtype=dtype)
    with torch.inference_mode(), LiveTensors() as live:
        tower.encoder(inputs_embeds=embeds, attention_mask=~padding, pixel_position_ids=positions)
    return live.peak_bytes


@pytest.mark.parametrize(("hidden", "mlp", "heads", "patches", "dtype"), [
    (768, 3072, 12, 630, "bfloat16"),  # Gemma 4 E2B / E4B's tower, a video frame
    (1152, 4304, 16, 630, "bfloat16"),  # 26B-A4B / 31B's
    (1152, 4304, 16, 2520, "bfloat16"),  # an image of 280 soft tokens
    (768, 3072, 12, 630, "float32"),
])
def test_the_chunk_peak_per_patch_is_the_towers_own(hidden, mlp, heads, patches, dtype):
    act = 4 if dtype == "float32" else 2
    frames = 2
    per_patch = ((HELD_HIDDEN - 1) * hidden + HELD_MLP * mlp + 2 * (hidden // heads)) * act + patches
    assert _live_peak(hidden, mlp, heads, patches, frames, getattr(torch, dtype)) == pytest.approx(
        frames * patches * per_patch, rel=1e-4)
