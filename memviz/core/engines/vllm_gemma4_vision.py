"""Gemma 4's vision pass in vLLM's profile run, as vllm-project/vllm 0.34.0 makes it (read from its PyPI wheel:
`model_executor/models/gemma4_mm.py`, `Gemma4ForConditionalGeneration`), over transformers' Gemma4VisionEncoder
in the releases 0.34 installs (5.16.1 to 5.22: `models/gemma4/modeling_gemma4.py`).

- The item profiled: of the modalities the per-prompt limits leave, the one whose largest item has the most tokens
  (`get_mm_max_tokens_per_item`, `MultiModalBudget.get_modality_with_max_tokens`): a video of 32 frames
  (`_VIDEO_MAX_FRAMES`) of up to 70 soft tokens each and 8 more (its begin / end and timestamp tokens), 2,496 tokens,
  before an image of default_output_length (280) tokens, or of --mm-processor-kwargs max_soft_tokens, one of
  `SOFT_TOKEN_CHOICES` (`_SUPPORTED_SOFT_TOKENS`). Every frame is padded to 70 x pooling_kernel_size^2 patches
  (`video_processing_gemma4.py` `pad_to_max_patches`), every image to its tokens x k^2.
- The chunks (`_encoder_chunk`): frames (images) go through the tower in chunks of
  max(1, min(free / 2, total / 10) // (patches x 4 x position_embedding_size x 8)), free and total the device's
  memory as the pass starts (the CUDA total less the context, the weights and the rotary tables). The divisor
  sizes a one-hot transient the patch embedder no longer makes (transformers 5.16+ looks the positions up with
  `F.embedding`); the chunk is what it gives: all 32 frames of a video on an 80 GB GPU, 12 on an RTX 4090.
- A chunk's peak is in an encoder layer's MLP (`Gemma4VisionEncoderLayer`, `Gemma4VisionMLP`): hidden-wide the
  caller's inputs_embeds, the layer's input, the residual sum and the normed input; MLP-wide gelu(gate), up and
  their product; the boolean attention mask, a byte per patch pair (`create_bidirectional_mask`), and the 2-D
  rope's cos and sin, head_dim values each. Live-tensor accounting of transformers 5.25's tower (CPU, bfloat16 and
  float32, SDPA) gives exactly (3 hidden + 3 MLP + 2 head_dim) values + patches bytes a patch for the released
  widths (1,152 / 4,304 and 768 / 3,072, 630 and 2,520 patches), the fourth hidden-wide tensor being the caller's,
  made outside the measured encoder. A tower whose MLP is under twice its width peaks in its attention instead
  (about 9 hidden-wide values): no release is.
- Around the chunks: the batch's inputs, held through the pass (pixels, the (x, y) positions as int64, the padding
  flags), the outputs of the chunks before, and after the last one the outputs again as one tensor
  (`torch.cat`); an image chunk copies its pixels and positions (`torch.cat`) too. With mm_device_do_normalize
  (0.28+, on by default for Gemma 4: `supports_mm_device_do_normalize`) the pixels arrive as raw uint8, else in the
  model's dtype (`_postprocess_output`). What the pass returns, one row of the language model's width for each soft
  token, stays in the encoder cache through the language model's pass.
- The tower is transformers' own, its linear layers replaced by `ReplicatedLinear` (`recursive_replace_linear`,
  "replicate"), the projector `ReplicatedLinear` too: whole on every tensor-parallel rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from memviz.core.towers import VisionShape

VIDEO_FRAMES = 32
FRAME_SOFT_TOKENS = 70
#: a frame's begin / end of image and its timestamp tokens ("each frame <= 70 soft tokens + boi + eoi + ~6 ts")
FRAME_EXTRA_TOKENS = 8
VIDEO_ITEM_TOKENS = VIDEO_FRAMES * (FRAME_SOFT_TOKENS + FRAME_EXTRA_TOKENS)
#: the image sizes in soft tokens the processor takes (`_SUPPORTED_SOFT_TOKENS`)
SOFT_TOKEN_CHOICES = (70, 140, 280, 560, 1120)
#: hidden- and MLP-wide tensors a chunk holds at its peak, per patch (module docstring)
HELD_HIDDEN, HELD_MLP = 4, 3
#: int64 (x, y) position ids and the padding flag of one patch
POSITION_BYTES, PADDING_BYTES = 2 * 8, 1


def chunk_units(patches: int, free_bytes: float, total_bytes: float, positions: int) -> int:
    """Frames (images) one call of the tower takes (`_encoder_chunk`)."""
    budget = min(free_bytes // 2, total_bytes // 10)
    cost = patches * 4 * positions * 8
    return max(1, int(budget // cost)) if budget > 0 and cost > 0 else 1


@dataclass(frozen=True)
class Gemma4Pass:
    """The pass over `units` frames (images) of `patches` patches each, `chunk` at a time; the bytes as
    `vllm.EncoderPass` takes them."""

    modality: str
    items: int
    tokens_per_item: int
    units: int
    patches: int
    chunk: int
    peak_bytes: float
    kept_bytes: float
    input_bytes: float


def profiled_modality(v: VisionShape, image_limit: int, video_limit: int,
                      image_tokens: int | None = None) -> tuple[str, int] | None:
    """(modality, tokens of its largest item) the profile run encodes, an image `image_tokens` (None: the config's
    default); None when the limits leave neither."""
    image = image_tokens or v.tokens
    tokens = {m: n for m, n, limit in (("image", image, image_limit), ("video", VIDEO_ITEM_TOKENS, video_limit))
              if limit}
    return max(tokens.items(), key=lambda kv: (kv[1], kv[0]), default=None)


def vision_pass(v: VisionShape, modality: str, items: int, act_bytes: int, pixel_bytes: int,
                memory: tuple[float, float] | None, item_tokens: int | None = None) -> Gemma4Pass:
    """The profile run's pass over `items` items of `modality`, an image `item_tokens` (None: the config's default);
    `memory` (free, total) as it starts, None where no GPU is named (one chunk then)."""
    per_item, soft = (VIDEO_FRAMES, FRAME_SOFT_TOKENS) if modality == "video" else (1, item_tokens or v.tokens)
    units = items * per_item
    patches = soft * (v.patches // v.tokens)
    chunk = min(units, chunk_units(patches, *memory, v.positions)) if memory else units
    head = v.hidden // v.heads
    layer = patches * ((HELD_HIDDEN * v.hidden + HELD_MLP * v.mlp + 2 * head) * act_bytes + patches)
    if modality == "image":  # the chunk's pixels and positions, concatenated
        layer += patches * (v.pixels * pixel_bytes + POSITION_BYTES)
    out = patches * v.hidden * act_bytes
    full, last = divmod(units, chunk)
    calls = [(full - 1) * chunk * out + chunk * layer] if full else []
    if last:
        calls.append(full * chunk * out + last * layer)
    inputs = units * patches * (v.pixels * pixel_bytes + POSITION_BYTES + PADDING_BYTES)
    peak = inputs + max(max(calls), 2 * units * out)
    kept = units * soft * v.out * act_bytes
    held = units * patches * (v.pixels * pixel_bytes + POSITION_BYTES)
    tokens = VIDEO_ITEM_TOKENS if modality == "video" else soft
    return Gemma4Pass(modality, items, tokens, units, patches, chunk, peak, kept, held)
