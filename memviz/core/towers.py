"""Encoders of multimodal checkpoints: the vision (and audio) towers beside the language model.

A multimodal config (Gemma 3 / 4, Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5, Mistral Small 3.x, Llama 4, LLaVA,
InternVL, Idefics3 / SmolVLM, GLM-4.1V / 4.5V, PaliGemma, ShieldGemma 2, Command A Vision, LFM2-VL, LightOnOCR,
EXAONE 4.5, HyperCLOVA X SEED Vision 2, PaddleOCR-VL, GLM-OCR, Cosmos3 Omni) holds its language model in
`text_config` (or at the top level) and each encoder in `vision_config` / `audio_config`. The encoders' weights are
loaded with the language model by transformers and by vLLM (unless `--language-model-only`); llama.cpp keeps them in
a separate mmproj file (`--mmproj`). Their parameter counts follow the modules of transformers 5.24
(`models/<family>/modeling_<family>.py`, named per function) and are checked against those modules instantiated on
the meta device (tests/core/test_towers.py); the projector that maps an encoder's output into the language model's
width counts with its encoder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from itertools import pairwise
from math import ceil, floor, isqrt
from typing import Any

from memviz.core.errors import InputError

VISION = "vision"
AUDIO = "audio"


@dataclass(frozen=True)
class Encoder:
    """One encoder tower with its projector: `parameters` elements in the checkpoint's dtype; `shape`, for the
    towers whose forward memviz sizes (`VisionShape`), their widths; for one read from a llama.cpp mmproj file,
    its tensors' stored bytes and the file; `float32_parameters`, those of its elements transformers keeps float32
    in a float16 model (the class's `_keep_in_fp32_modules`), and with `float32_strict` in a bfloat16 one too
    (`_keep_in_fp32_modules_strict`)."""

    modality: str  # VISION or AUDIO
    family: str  # the encoder config's model_type (siglip_vision_model, pixtral, qwen3_vl_vision, ...)
    parameters: int
    shape: tuple[int, ...] = ()  # VisionShape's fields, () where not sized
    stored_bytes: int = 0  # an mmproj file's tensors as stored (0: counted from the parameters)
    file: str = ""  # that file
    float32_parameters: int = 0  # of `parameters`, kept float32 by transformers
    float32_strict: bool = False  # in a bfloat16 model as well as a float16 one


#: Qwen3-VL's and Qwen3.5's released preprocessors cap an image at size.longest_edge = 16,777,216 pixels:
#: 16,384 tokens of 32 x 32 pixels (16-pixel patches, 2 x 2 merged), as vLLM's start-up lines show ("Encoder cache
#: will be initialized with a budget of 65536 tokens, and profiled with 4 image items" for Qwen3.6-35B-A3B with
#: 65,536 batched tokens); the image processor's class default (28 x 28 x 1,280) is not what those checkpoints use
QWEN3_VL_MAX_PIXELS = 16_777_216
#: ... and a clip at 25,165,824 pixels over its frames (video_preprocessor_config.json); vLLM's largest video item
#: is 2 frames sharing them (qwen3_vl.py `get_max_video_tokens`): one temporal patch of 12,288 tokens
QWEN3_VL_VIDEO_MAX_PIXELS = 25_165_824
#: Qwen2-VL's and Qwen2.5-VL's released preprocessors: max_pixels 12,845,056, 16,384 tokens of 28 x 28 pixels; vLLM
#: profiles a video of up to 14 frames of the image's size (qwen2_vl.py `_MAX_FRAMES_PER_VIDEO`)
QWEN2_VL_MAX_PIXELS = 12_845_056
QWEN2_VL_VIDEO_FRAMES = 14
#: the multimodal model types whose vision tower is Qwen3-VL's (Qwen3_5VisionModel is the same tower)
QWEN3_VISION_WRAPPERS = frozenset({"qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"})


@dataclass(frozen=True)
class VisionShape:
    """A vision tower's widths for sizing vLLM's pass over its largest inputs: patches and merged tokens of the
    largest image, hidden and MLP widths, the output width, the deepstack mergers' count (Qwen3-VL), the pixel
    values of one patch (channels x temporal patch x patch x patch), the side in pixels of one merged token (0 where
    the image size is fixed); the largest video item: tokens of one temporal patch (0: an image's, as Qwen2-VL and
    Qwen2.5-VL size frames with the image processor) and temporal patches at most (0: no video input); the
    hidden- and MLP-wide tensors a block holds at its peak in vLLM (0 and 0 where memviz does not size vLLM's pass,
    as for Gemma 4, whose shape serves llama.cpp's mmproj buffer); the attention heads; and, for a tower of one
    image size (Gemma 3's SigLIP), the patches along one side of that image (0 where images vary); for Gemma 4's
    tower, the rows of its position table per axis (position_embedding_size), by which vLLM chunks its pass (0 for
    the others)."""

    patches: int
    tokens: int
    hidden: int
    mlp: int
    out: int
    deepstack: int
    pixels: int
    unit: int
    video_tokens: int
    video_pairs: int
    held_hidden: int
    held_mlp: int
    heads: int = 16
    side_patches: int = 0
    positions: int = 0

    @property
    def vllm_sized(self) -> bool:
        """Whether memviz sizes vLLM's pass over this tower (`peak_bytes`)."""
        return self.held_hidden > 0

    def image_tokens(self, max_pixels: int | None = None) -> int:
        """Tokens of the largest image: the released preprocessor's, or, with the image processor's max_pixels
        set (vLLM's --mm-processor-kwargs), the most whole tokens within it, lowered until two factors within an
        aspect ratio of 200 make them (vllm 0.33 qwen2_vl.py `get_image_size_with_most_features`)."""
        if max_pixels is None:
            return self.tokens
        if not self.unit:
            raise InputError("this vision tower takes images of one fixed size; max_pixels does not change it")
        if max_pixels < self.unit ** 2:
            raise InputError(f"max_pixels {max_pixels:,d} is less than one token of {self.unit} x {self.unit} pixels")
        return most_tokens(max_pixels, self.unit)

    def peak_bytes(self, tokens: int, act_bytes: float, tp: int = 1, pixel_bytes: float | None = None) -> float:
        """Bytes the tower holds at its peak over a batch of `tokens` merged tokens (all items), in vLLM 0.33's ViT
        blocks, at the MLP's activation: `held_hidden` hidden-wide tensors and `held_mlp` MLP-wide ones (split over
        tensor-parallel ranks, mm_encoder_tp_mode "weights"), the pixel values and the deepstack features gathered
        so far. Qwen3-VL (qwen3_vl.py `Qwen3_VisionBlock`): the block's input the caller keeps, the residual sum,
        the normed input and the position embeddings in the encoder metadata; fc1's output and its activation.
        SigLIP (siglip.py `SiglipEncoderLayer`): the patch embeddings `SiglipEncoder` keeps in its list, the
        layer's input, the residual and the normed input. Qwen2.5-VL (qwen2_5_vl.py `Qwen2_5_VisionBlock`): the
        input, the attention output, the fused norm's residual and output; gate_up's two halves and their
        product. Qwen2-VL: three hidden-wide, fc1's output and its activation. The pixel values come in the
        model dtype (multimodal/processing/context.py `_postprocess_output` casts them), or `pixel_bytes` a value
        (raw uint8 under vLLM's mm_device_do_normalize), and stay on the device through the pass
        (gpu_model_runner.py `_get_mm_dummy_batch`)."""
        n = tokens * (self.patches // self.tokens)
        pixel = act_bytes if pixel_bytes is None else pixel_bytes
        blocks = n * ((self.held_hidden * self.hidden + self.held_mlp * self.mlp / tp) * act_bytes + self.pixels * pixel)
        return blocks + self.output_bytes(tokens, act_bytes) * self.deepstack / (1 + self.deepstack)

    def video_item_tokens(self, max_model_len: int, image_tokens: int) -> int:
        """Tokens of the largest video item (vllm 0.33 qwen2_vl.py `get_max_video_tokens`): as many temporal
        patches as max_model_len holds, at least one and at most `video_pairs` (Qwen2-VL: 14 frames); Qwen3-VL's is
        one (2 frames). A temporal patch of Qwen2-VL / Qwen2.5-VL has an image's tokens (`image_tokens`)."""
        per_pair = self.video_tokens or image_tokens
        return per_pair * max(1, min(self.video_pairs, max_model_len // per_pair))

    def output_bytes(self, tokens: int, act_bytes: float) -> float:
        """The encoder's output for `tokens` merged tokens: x the output width, once per merger."""
        return tokens * self.out * (1 + self.deepstack) * act_bytes


def most_tokens(max_pixels: int, unit: int) -> int:
    """Merged tokens of the largest image within `max_pixels` as vLLM builds its dummy (qwen2_vl.py
    `get_image_size_with_most_features`): max_pixels // unit^2, lowered until two factors within an aspect ratio of
    200 make them."""
    if max_pixels < unit ** 2:
        raise InputError(f"vision/audio config: one merged token of {unit:,d} x {unit:,d} pixels is larger than the "
                         f"largest image ({max_pixels:,d} pixels)")
    return next(n for n in range(max_pixels // unit ** 2, 0, -1) if _aspect(n) <= 200)


def _aspect(n: int) -> float:
    """The ratio of the closest pair of factors of `n`."""
    d = isqrt(n)
    while n % d:
        d -= 1
    return n // d / d


#: what sessions saved with a six-field shape lack: only Qwen3-VL / Qwen3.5 towers had one then, whose patches hold
#: 3 x 2 x 16 x 16 pixel values, whose tokens are 32 pixels a side, whose largest video item is one temporal patch
#: of 12,288 tokens, and whose blocks hold 4 hidden- and 2 MLP-wide tensors
_QWEN3_SHAPE_TAIL = (3 * 2 * 16 * 16, 32, QWEN3_VL_VIDEO_MAX_PIXELS // 2 // 32 ** 2, 1, 4, 2)


#: what sessions saved with a twelve-field shape lack: every tower sized then (Qwen2-VL, Qwen2.5-VL, Qwen3-VL,
#: Qwen3.5, Gemma 3's SigLIP) has 16 heads in its released configs, and Gemma 3's (the one with no `unit`) takes
#: 896-pixel images of 14-pixel patches
_RELEASED_HEADS = 16
_GEMMA3_SIDE_PATCHES = 896 // 14
#: what Gemma 4 shapes saved with fourteen fields lack: the position table of every released tower
#: (Gemma4VisionConfig's position_embedding_size, 10 x 1,024)
GEMMA4_VISION = "gemma4_vision"
_GEMMA4_POSITIONS = 10 * 1024


def vision_shape(e: Encoder) -> VisionShape | None:
    if len(e.shape) == 6:
        return VisionShape(*e.shape, *_QWEN3_SHAPE_TAIL)
    if len(e.shape) == 12:
        unit = e.shape[7]
        return VisionShape(*e.shape, _RELEASED_HEADS, 0 if unit else _GEMMA3_SIDE_PATCHES)
    if len(e.shape) == len(fields(VisionShape)) - 1:
        return VisionShape(*e.shape, _GEMMA4_POSITIONS if e.family == GEMMA4_VISION else 0)
    return VisionShape(*e.shape) if len(e.shape) == len(fields(VisionShape)) else None


def encoder_bytes(e: Encoder, weight_format: str) -> int:
    """An encoder's bytes in a checkpoint of `weight_format`: 16 bits a value (32 in an fp32 model) whatever the
    language model's format, as quantized releases leave the towers unquantized (their quantization configs exclude
    them) and llama.cpp's mmproj files are 16-bit; an mmproj file read whole, its tensors' stored bytes."""
    if e.stored_bytes:
        return e.stored_bytes
    return e.parameters * (4 if weight_format == "fp32" else 2)


def _lin(n_in: int, n_out: int, bias: bool = True) -> int:
    return n_in * n_out + (n_out if bias else 0)


def _get(cfg: dict[str, Any], key: str, default: Any) -> Any:
    value = cfg.get(key, default)
    return default if value is None else value


def _whole(cfg: dict[str, Any], key: str, default: int) -> int:
    value = _get(cfg, key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 1 << 24:
        raise InputError(f"vision/audio config: {key} must be a positive whole number, got {value!r}")
    return value


def _wholes(cfg: dict[str, Any], key: str, default: tuple[int, ...]) -> list[int]:
    """A list of positive whole numbers (at most 64 of them)."""
    value = _get(cfg, key, default)
    if not isinstance(value, (list, tuple)) or not 0 < len(value) <= 64:
        raise InputError(f"vision/audio config: {key} must be a list of whole numbers, got {value!r:.60}")
    return [_whole({key: v}, key, 1) for v in value]


def _count(cfg: dict[str, Any], key: str, default: int, below: int) -> int:
    """A whole number from 0 up to (not including) `below`: a count of layers or blocks that may be none."""
    value = _get(cfg, key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < below:
        raise InputError(f"vision/audio config: {key} must be a whole number from 0 to {below - 1:,d}, got {value!r:.40}")
    return value


def _vit_layer(h: int, inter: int, *, bias: bool = True, gated: bool = False, norm_bias: bool = True) -> int:
    """One pre-norm ViT block: two norms, q/k/v/o of h x h, an MLP of `inter` (gated: gate, up, down)."""
    mlp = (2 * _lin(h, inter, bias) if gated else _lin(h, inter, bias)) + _lin(inter, h, bias)
    return 2 * (2 * h if norm_bias else h) + 4 * _lin(h, h, bias) + mlp


def siglip(vc: dict[str, Any]) -> int:
    """SiglipVisionModel (siglip/modeling_siglip.py): Conv2d patch embedding with bias, a learned position per
    patch of the (image_size / patch_size)^2 grid, LayerNorm blocks with biased attention and fc1/fc2, the
    post_layernorm and, with vision_use_head (SiglipVisionConfig's default), the attention-pooling head."""
    patch = _whole(vc, "patch_size", 16)
    return _siglip_tower(vc, (_whole(vc, "image_size", 224) // patch) ** 2)


def siglip2(vc: dict[str, Any]) -> int:
    """Siglip2VisionModel (siglip2/modeling_siglip2.py): SigLIP's with a biased linear patch embedding (as many
    elements as the Conv2d) and num_patches learned positions."""
    return _siglip_tower(vc, _whole(vc, "num_patches", 256))


def _siglip_tower(vc: dict[str, Any], positions: int) -> int:
    h, inter = _whole(vc, "hidden_size", 768), _whole(vc, "intermediate_size", 3072)
    patch, channels = _whole(vc, "patch_size", 16), _whole(vc, "num_channels", 3)
    n = channels * patch * patch * h + h + positions * h
    n += _whole(vc, "num_hidden_layers", 12) * _vit_layer(h, inter) + 2 * h
    if _get(vc, "vision_use_head", True):  # SiglipMultiheadAttentionPoolingHead: probe, MHA, LayerNorm, MLP
        n += h + 4 * _lin(h, h) + 2 * h + _lin(h, inter) + _lin(inter, h)
    return n


def clip(vc: dict[str, Any], *, patch_embedding: bool = True, post_norm: bool = True) -> int:
    """CLIPVisionModel (clip/modeling_clip.py): class embedding, Conv2d patch embedding without bias, a learned
    position per patch plus the class token, pre- and post-LayerNorm around LayerNorm blocks as SigLIP's. DeepEncoder's
    CLIP (`_deep_encoder`) has no post-LayerNorm, and Unlimited-OCR's no patch embedding."""
    h, inter = _whole(vc, "hidden_size", 768), _whole(vc, "intermediate_size", 3072)
    patch, channels = _whole(vc, "patch_size", 32), _whole(vc, "num_channels", 3)
    grid = _whole(vc, "image_size", 224) // patch
    n = h + (channels * patch * patch * h if patch_embedding else 0) + (grid * grid + 1) * h + 2 * h
    return n + _whole(vc, "num_hidden_layers", 12) * _vit_layer(h, inter) + (2 * h if post_norm else 0)


def _conv3x3(channels: list[int]) -> int:
    """Bias-free 3x3 convolutions from each of `channels` to the next (SAM's strided downsampling after its neck)."""
    return sum(a * b * 9 for a, b in pairwise(channels))


def _conv(c_in: int, c_out: int, k: int) -> int:
    """A biased k x k Conv2d."""
    return c_in * c_out * k * k + c_out


def _conv1d(c_in: int, c_out: int, k: int) -> int:
    """A biased Conv1d of kernel k."""
    return c_in * c_out * k + c_out


def _vq_norm(c: int, quant: int = 0) -> int:
    """A VQ-GAN norm over c channels: a GroupNorm, and with `quant` channels Emu3's SpatialNorm (two 1x1 convs from
    the quantized latent beside it)."""
    return 2 * c + (2 * _conv(quant, c, 1) if quant else 0)


def _vq_resnet(c_in: int, c_out: int, quant: int = 0) -> int:
    """A VQ-GAN resnet block (ChameleonVQVAEEncoderResnetBlock, JanusVQVAEResnetBlock, Emu3VQVAEResnetBlock): a norm,
    a 3x3 conv, a norm, a 3x3 conv (`_vq_norm`), a 1x1 shortcut where the width changes."""
    return _vq_norm(c_in, quant) + _conv(c_in, c_out, 3) + _vq_norm(c_out, quant) + _conv(c_out, c_out, 3) + (
        _conv(c_in, c_out, 1) if c_in != c_out else 0)


def _vq_attention(c: int) -> int:
    """A VQ-GAN attention block: GroupNorm and four 1x1 convolutions (q, k, v, proj_out)."""
    return _vq_norm(c) + 4 * _conv(c, c, 1)


#: a VQ-GAN's resolution levels and resnet blocks a level, counted one by one: bounded before any loop (the
#: released ones have 4-5 levels of 2 blocks; a fuzzed num_res_blocks of 10**7 took minutes)
MAX_VQ_LEVELS, MAX_VQ_BLOCKS = 16, 64


def _vq_levels(vq: dict[str, Any], default: list[int]) -> tuple[list[int], int]:
    """(channel_multiplier, num_res_blocks) of a VQ-GAN config, within `MAX_VQ_LEVELS` and `MAX_VQ_BLOCKS`."""
    mult = _get(vq, "channel_multiplier", default)
    if not isinstance(mult, (list, tuple)) or not 0 < len(mult) <= MAX_VQ_LEVELS or not all(
            isinstance(m, int) and not isinstance(m, bool) and 0 < m <= 64 for m in mult):
        raise InputError(f"vision/audio config: channel_multiplier must list 1 to {MAX_VQ_LEVELS} whole numbers "
                         f"from 1 to 64, got {mult!r:.60}")
    blocks = _whole(vq, "num_res_blocks", 2)
    if blocks > MAX_VQ_BLOCKS:
        raise InputError(f"vision/audio config: num_res_blocks must be at most {MAX_VQ_BLOCKS}, got {blocks:,d}")
    return list(mult), blocks


def _vq_encoder(vq: dict[str, Any], attends: Callable[[int, int], bool], middle_attention: bool) -> tuple[int, int]:
    """(parameters, last width) of a VQ-GAN encoder: a 3x3 conv in; per resolution level num_res_blocks resnet
    blocks, an attention block after each where `attends(level, resolution)`, a strided 3x3 downsampling conv but
    after the last; two resnet blocks around an (optional) attention block in the middle; GroupNorm and a 3x3 conv
    out to latent_channels (twice that with double_latent)."""
    base, (mult, blocks) = _whole(vq, "base_channels", 128), _vq_levels(vq, [1, 1, 2, 2, 4])
    total, res, width = _conv(_whole(vq, "in_channels", 3), base, 3), _whole(vq, "resolution", 512), base
    for level, m in enumerate(mult):
        for _ in range(blocks):
            total += _vq_resnet(width, base * m) + (_vq_attention(base * m) if attends(level, res) else 0)
            width = base * m
        if level != len(mult) - 1:
            total, res = total + _conv(width, width, 3), res // 2
    total += 2 * _vq_resnet(width, width) + (_vq_attention(width) if middle_attention else 0)
    latent = _whole(vq, "latent_channels", 256)
    return total + 2 * width + _conv(width, 2 * latent if _get(vq, "double_latent", False) else latent, 3), width


def _vq_codebook(vq: dict[str, Any], embeddings: int, embed: int) -> int:
    """The codebook of num_embeddings x embed_dim and the 1x1 quant_conv and post_quant_conv around it."""
    latent, embed = _whole(vq, "latent_channels", 256), _whole(vq, "embed_dim", embed)
    return _whole(vq, "num_embeddings", embeddings) * embed + _conv(latent, embed, 1) + _conv(embed, latent, 1)


def chameleon_vqgan(vq: dict[str, Any]) -> int:
    """ChameleonVQVAE (chameleon/modeling_chameleon.py, transformers 5.24): the encoder (`_vq_encoder`: attention
    blocks at each of attn_resolutions and in the middle, with attn_type "vanilla"), the codebook and its two 1x1
    convs. The decoder is not part of it."""
    vanilla = _get(vq, "attn_type", "vanilla") == "vanilla"
    resolutions = set(_get(vq, "attn_resolutions", None) or ()) if vanilla else set()
    encoder, _ = _vq_encoder(vq, lambda level, res: res in resolutions, vanilla)
    return encoder + _vq_codebook(vq, 8192, 256)


def janus_vqgan(vq: dict[str, Any]) -> int:
    """JanusVQVAE (janus/modeling_janus.py, transformers 5.24): the encoder (`_vq_encoder`: attention blocks after
    each resnet block of the last level and in the middle), the codebook and its two 1x1 convs, and the decoder that
    draws generated images: a 3x3 conv in from latent_channels, the middle blocks, per level from the last
    num_res_blocks + 1 resnet blocks (attention after each at the last level) and a 3x3 upsampling conv but at the
    first, GroupNorm and a 3x3 conv out to out_channels."""
    mult, blocks = _vq_levels(vq, [1, 1, 2, 2, 4])
    last, base = len(mult) - 1, _whole(vq, "base_channels", 128)
    encoder, width = _vq_encoder(vq, lambda level, res: level == last, True)
    decoder = _conv(_whole(vq, "latent_channels", 256), width, 3) + 2 * _vq_resnet(width, width) + _vq_attention(width)
    for level in reversed(range(len(mult))):
        for _ in range(blocks + 1):
            decoder += _vq_resnet(width, base * mult[level]) + (_vq_attention(base * mult[level]) if level == last else 0)
            width = base * mult[level]
        decoder += _conv(width, width, 3) if level else 0
    decoder += 2 * width + _conv(width, _whole(vq, "out_channels", 3), 3)
    return encoder + _vq_codebook(vq, 16384, 8) + decoder


#: Apertus1p5VisionTokenizerConfig's defaults (transformers 5.24): Emu3.5's image tokenizer
_APERTUS_VQ = {"base_channels": 256, "resolution": 256, "num_res_blocks": 4, "attn_resolutions": [16],
               "channel_multiplier": [1, 1, 2, 2, 4], "latent_channels": 256}


def apertus1p5_vision_tokenizer(vq: dict[str, Any]) -> int:
    """Apertus1p5VisionTokenizerModel (apertus1p5/modeling_apertus1p5.py, transformers 5.24: Emu3.5's encode-only
    tokenizer): Chameleon's VQ-GAN encoder (`_vq_encoder`: attention blocks at attn_resolutions and in the middle), a
    biased 1x1 quant_conv to embed_dim and a bias-free linear scoring codebook_size codes; no decoder."""
    vq = {**_APERTUS_VQ, **{k: v for k, v in vq.items() if v is not None}}
    resolutions = set(_get(vq, "attn_resolutions", None) or ())
    encoder, _ = _vq_encoder(vq, lambda level, res: res in resolutions, True)
    embed = _whole(vq, "embed_dim", 256)
    return encoder + _conv(_whole(vq, "latent_channels", 256), embed, 1) + _whole(vq, "codebook_size", 131072) * embed


def _wav_conv(ac: dict[str, Any], c_in: int, c_out: int, k: int) -> int:
    """WavTokenizerConv1d: a biased Conv1d, weight-normed (a gain per output channel) or followed by a GroupNorm."""
    return _conv1d(c_in, c_out, k) + (c_out if _get(ac, "norm_type", "weight_norm") == "weight_norm" else 2 * c_out)


def wavtokenizer_encoder(ac: dict[str, Any]) -> int:
    """WavTokenizerEncoderModel (wavtokenizer/modeling_wavtokenizer.py, transformers 5.24; SEANet's encoder): a conv
    from the audio channels to num_filters, per downsampling ratio (upsampling_ratios reversed) num_residual_layers
    residual blocks (a residual_kernel_size conv to the width / compress and a 1x1 conv back, a 1x1 shortcut with
    use_conv_shortcut) and a strided conv doubling the width, num_lstm_layers LSTM layers at the last width, a conv to
    hidden_size; and the codebook its quantizer keeps as persistent buffers (embed and embed_avg of codebook_size x
    codebook_dim, cluster_size, inited), loaded like the weights."""
    filters, blocks = _whole(ac, "num_filters", 32), _count(ac, "num_residual_layers", 1, 65)
    ratios = _wholes(ac, "upsampling_ratios", (6, 5, 5, 4))
    if len(ratios) > 16:
        raise InputError(f"vision/audio config: WavTokenizer's upsampling_ratios list {len(ratios)} stages, more than 16")
    k, compress = _whole(ac, "residual_kernel_size", 3), _whole(ac, "compress", 2)
    n, width = _wav_conv(ac, _whole(ac, "audio_channels", 1), filters, _whole(ac, "kernel_size", 7)), filters
    for ratio in reversed(ratios):
        shortcut = _wav_conv(ac, width, width, 1) if _get(ac, "use_conv_shortcut", True) else 0
        n += blocks * (_wav_conv(ac, width, width // compress, k) + _wav_conv(ac, width // compress, width, 1) + shortcut)
        n, width = n + _wav_conv(ac, width, 2 * width, 2 * ratio), 2 * width
    n += _whole(ac, "num_lstm_layers", 2) * (8 * width * width + 8 * width)  # weights ih / hh, biases ih / hh
    n += _wav_conv(ac, width, _whole(ac, "hidden_size", 512), _whole(ac, "last_kernel_size", 7))
    codes = _whole(ac, "codebook_size", 4096)
    return n + 2 * codes * _whole(ac, "codebook_dim", 512) + codes + 1


def emu3_vqgan(vq: dict[str, Any]) -> int:
    """Emu3VQVAE (emu3/modeling_emu3.py, transformers 5.24), which draws Emu3's generated images: the encoder (a 3x3
    conv in; per level num_res_blocks resnet blocks, an attention block of hidden_size (q / k / v / out linears) and
    its GroupNorm after each at attn_resolutions' levels, a strided 3x3 conv but after the last; the middle block's
    two resnets around an attention block and its norm; GroupNorm and a 3x3 conv out; log2(temporal_downsample_factor)
    (4, 3, 3) Conv3d and num_res_blocks temporal resnets of BatchNorm3d and (3, 3, 3) Conv3d), the codebook and its
    (3, 1, 1) Conv3d quant convs, and the decoder (temporal resnets and (3, 3, 3) upsampling convs over the latent, a
    3x3 conv in, the middle and up blocks with SpatialNorms over the quantized latent, num_res_blocks + 1 resnets a
    level and a 3x3 upsampling conv but at the first, a SpatialNorm and a 3x3 conv out)."""
    base, (mult, blocks) = _whole(vq, "base_channels", 256), _vq_levels(vq, [1, 2, 2, 4])
    latent, embed, h = _whole(vq, "latent_channels", 4), _whole(vq, "embed_dim", 4), _whole(vq, "hidden_size", 1024)
    attends = set(_get(vq, "attn_resolutions", None) or ())
    out = 2 * latent if _get(vq, "double_latent", False) else latent
    times = int(_whole(vq, "temporal_downsample_factor", 4)).bit_length() - 1
    attention = 4 * _lin(h, h)

    def temporal(c: int) -> int:  # Emu3VQVAETemporalResnetBlock
        return 2 * (2 * c + c * c * 27 + c)

    def middle(c: int, quant: int) -> int:  # Emu3VQVAEMiddleBlock
        return 2 * _vq_resnet(c, c, quant) + attention + _vq_norm(c, quant)

    encoder, width = _conv(_whole(vq, "in_channels", 3), base, 3), base
    for level, m in enumerate(mult):
        for _ in range(blocks):
            encoder += _vq_resnet(width, base * m) + (attention + _vq_norm(base * m) if level in attends else 0)
            width = base * m
        encoder += _conv(width, width, 3) if level != len(mult) - 1 else 0
    encoder += middle(width, 0) + 2 * width + _conv(width, out, 3)
    encoder += times * (out * out * 36 + out) + blocks * temporal(out)
    decoder = blocks * temporal(latent) + times * (latent * latent * 27 + latent) + _conv(latent, width, 3)
    decoder += middle(width, embed)
    for level in reversed(range(len(mult))):
        for _ in range(blocks + 1):
            decoder += _vq_resnet(width, base * mult[level], embed) + (
                attention + _vq_norm(base * mult[level], embed) if level in attends else 0)
            width = base * mult[level]
        decoder += _conv(width, width, 3) if level else 0
    decoder += _vq_norm(width, embed) + _conv(width, _whole(vq, "out_channels", 3), 3)
    quant = latent * embed * 3 + embed + embed * latent * 3 + latent  # the two (3, 1, 1) Conv3d
    return encoder + _whole(vq, "codebook_size", 32768) * embed + quant + decoder


#: Dots3NoteVisionConfig.__post_init__'s default routed experts per block (pyramid_num_routed; -1: a dense MLP)
DOTS3_PYRAMID = [-1] * 25 + list(range(4, 65, 4)) + [64]


def _dots3_vision_experts(vc: dict[str, Any], layers: int) -> list[int]:
    """Routed experts of each dots3 vision block (0: dense): per_layer_config's num_local_experts where
    mlp_layer_types says "sparse" (transformers' layout), else the release's pyramid_num_routed."""
    kinds, listed = vc.get("mlp_layer_types"), vc.get("per_layer_config")
    if isinstance(kinds, list) and isinstance(listed, dict):
        own = {int(str(k)): o for k, o in listed.items() if str(k).isdigit() and isinstance(o, dict)}
        counts = [_whole(own.get(i, {}), "num_local_experts", _whole(vc, "num_local_experts", 64))
                  if kind == "sparse" else 0 for i, kind in enumerate(kinds)]
    else:
        counts = [max(int(c), 0) for c in _get(vc, "pyramid_num_routed", DOTS3_PYRAMID)]
    if len(counts) != layers:
        raise InputError(f"vision/audio config: dots3's vision blocks list {len(counts)} MLP kinds for {layers} blocks")
    return counts


def dots3_vision(vc: dict[str, Any]) -> int:
    """Dots3NoteVisionModel (dots3_note/modeling_dots3_note.py, transformers 5.24): a biased Conv2d patch embedding
    and its RMSNorm; blocks of two RMSNorms, a fused q/k/v and an output projection (biased with attention_bias),
    q / k RMSNorms of head_dim, and a gated MLP, or routed experts (gate_up / down of moe_intermediate_size, a float32
    router) in the pyramid's sparse blocks; a final RMSNorm; the merger (LayerNorm, a GELU MLP of adapter_in_dim x
    adapter_merge_size^2 to adapter_out_dim, biased)."""
    h = _whole(vc, "embed_dim", _whole(vc, "hidden_size", 1536))
    heads, layers = _whole(vc, "num_heads", _whole(vc, "num_attention_heads", 24)), _whole(vc, "num_hidden_layers", 42)
    bias, mlp_bias = bool(_get(vc, "use_bias", _get(vc, "attention_bias", False))), bool(_get(vc, "mlp_bias", False))
    inter, moe = _whole(vc, "intermediate_size", 4224), _whole(vc, "moe_intermediate_size", 2112)
    patch = _whole(vc, "patch_size", 14)
    attention = 2 * h + _lin(h, 3 * h, bias) + _lin(h, h, bias) + 2 * (h // heads)
    dense = 2 * _lin(h, inter, mlp_bias) + _lin(inter, h, mlp_bias)
    blocks = sum(attention + (experts * (3 * h * moe + h) if experts else dense)
                 for experts in _dots3_vision_experts(vc, layers))
    cin, merge = _whole(vc, "adapter_in_dim", 1536), _whole(vc, "adapter_merge_size", 2)
    merger = 2 * cin + _lin(cin * merge ** 2, cin * merge ** 2) + _lin(cin * merge ** 2, _whole(vc, "adapter_out_dim", 5120))
    return _lin(_whole(vc, "num_channels", 3) * patch * patch, h) + h + blocks + h + merger


def dots3_audio(ac: dict[str, Any]) -> int:
    """Dots3NoteAudioModel (transformers 5.24): a stem of three strided 3x3 Conv2d to downsample_hidden_size and a
    bias-free linear from downsample_hidden_size x ceil(feature_size / 8); layers of two RMSNorms, multi-head
    attention with q / v / o biased (attention_bias) and k not, and a biased gated MLP; a final RMSNorm; the adapter
    (LayerNorm, two biased linears to adapter_out_dim). The releases give the widths Whisper-style (whisper_config's
    d_model, encoder_attention_heads, encoder_layers, encoder_ffn_dim, num_mel_bins; whisper_adapter_in_dim / _out_dim),
    as Dots3NoteAudioConfig.__post_init__ reads them."""
    whisper = ac.get("whisper_config") or {}
    if not isinstance(whisper, dict):
        raise InputError("vision/audio config: dots3's whisper_config must be an object")
    h = _whole(whisper, "d_model", _whole(ac, "hidden_size", 1280))
    heads = _whole(whisper, "encoder_attention_heads", _whole(ac, "num_attention_heads", 20))
    inter = _whole(whisper, "encoder_ffn_dim", _whole(ac, "intermediate_size", 5120))
    layers = _whole(whisper, "encoder_layers", _whole(ac, "num_hidden_layers", 32))
    features = _whole(whisper, "num_mel_bins", _whole(ac, "feature_size", 128))
    down, bias = _whole(ac, "downsample_hidden_size", 480), bool(_get(ac, "attention_bias", True))
    stem = _conv(1, down, 3) + 2 * _conv(down, down, 3) + _lin(down * ((features + 7) // 8), h, False)
    layer = 2 * h + 3 * _lin(h, h, bias) + _lin(h, h, False) + _lin(h, 2 * inter) + _lin(inter, h)  # q, v, o; k
    if h % heads:
        raise InputError(f"vision/audio config: dots3's audio width {h} is not a whole number of {heads} heads")
    ain = _whole(ac, "whisper_adapter_in_dim", _whole(ac, "adapter_input_size", 1280))
    aout = _whole(ac, "whisper_adapter_out_dim", _whole(ac, "adapter_output_size", _whole(ac, "adapter_out_dim", 5120)))
    return stem + layers * layer + h + 2 * ain + _lin(ain, aout) + _lin(aout, aout)


def phi4mm_audio(ac: dict[str, Any], text_hidden: int) -> int:
    """Phi4MultimodalAudioEmbedding (phi4_multimodal/modeling_phi4_multimodal.py, transformers 5.24): the conformer
    Phi4MultimodalAudioModel (NeMo's striding subsampling: a 3x3 Conv2d, then per further halving a depthwise 3x3 and
    a 1x1 Conv2d, and a linear from nemo_conv_channels x nemo_final_size; a relative attention bias of
    2 x bias_max_distance (bias_max_distance symmetric) per head; num_blocks blocks of two macaron feed-forwards, biased
    attention, a convolution module (LayerNorm, a GLU pointwise Conv1d with its two biases, a depthwise separable
    Conv1d, a pointwise Conv1d) and two LayerNorms), and two biased projector pairs into the text model (speech,
    vision-speech)."""
    h, inter, heads = _whole(ac, "hidden_size", 1024), _whole(ac, "intermediate_size", 1536), _whole(ac, "num_attention_heads", 16)
    d = _whole(ac, "head_dim", h // heads)
    conv, halvings = _whole(ac, "nemo_conv_channels", 1024), _whole(ac, "time_reduction", 8).bit_length() - 1
    embed = _striding_subsampling(conv, 3, halvings, conv * _whole(ac, "nemo_final_size", 10), h)
    distance = _whole(ac, "bias_max_distance", 1000) * (1 if _get(ac, "bias_symmetric", False) else 2)
    ext, mult = _whole(ac, "ext_pw_out_channel", 1024), _whole(ac, "depthwise_multiplier", 1)
    feed_forward = 2 * h + _lin(h, 2 * inter) + _lin(inter, h)
    attention = 3 * _lin(h, heads * d) + _lin(heads * d, h)
    module = (2 * h + _lin(h, 2 * ext) + 2 * ext + h * mult * _whole(ac, "kernel_size", 3) + h * mult
              + _lin(h * mult, _whole(ac, "depthwise_separable_out_channel", 1024)) + _lin(h, ext))
    block = 2 * feed_forward + attention + module + 4 * h
    projectors = 2 * (_lin(h * _whole(ac, "downsample_rate", 1), text_hidden) + _lin(text_hidden, text_hidden))
    return embed + distance * heads + _whole(ac, "num_blocks", 24) * block + projectors


def glm_image_vision(vc: dict[str, Any]) -> int:
    """GlmImageVisionModel (glm_image/modeling_glm_image.py, transformers 5.24): a learned position per patch of the
    largest image ((image_size / patch_size)^2), a biased Conv2d patch embedding, `depth` pre-norm blocks of
    LayerNorms, a fused q/k/v and an output projection (biased with attention_bias) and a biased GELU MLP."""
    h, patch, inter = _whole(vc, "hidden_size", 1536), _whole(vc, "patch_size", 16), _whole(vc, "intermediate_size", 6144)
    positions = (_whole(vc, "image_size", 2048) // patch) ** 2
    bias = bool(_get(vc, "attention_bias", True))
    block = 4 * h + _lin(h, 3 * h, bias) + _lin(h, h, bias) + _lin(h, inter) + _lin(inter, h)
    return positions * h + _lin(_whole(vc, "in_channels", 3) * patch * patch, h) + _whole(vc, "depth", 40) * block


def glm_image_vq(vq: dict[str, Any]) -> int:
    """GlmImageVQVAE (transformers 5.24): the codebook and its two 1x1 convs (`_vq_codebook`); no encoder or
    decoder of its own."""
    return _vq_codebook({"latent_channels": 1536, **vq}, 16384, 2048)


def pixtral(vc: dict[str, Any]) -> int:
    """PixtralVisionModel (pixtral/modeling_pixtral.py): Conv2d patches without bias, RMSNorm ln_pre, blocks of
    RMSNorms, bias-free q/k/v/o and a gated MLP; positions are rotary (no table)."""
    h, inter = _whole(vc, "hidden_size", 1024), _whole(vc, "intermediate_size", 4096)
    patch, channels = _whole(vc, "patch_size", 16), _whole(vc, "num_channels", 3)
    layer = _vit_layer(h, inter, bias=False, gated=True, norm_bias=False)
    return channels * patch * patch * h + h + _whole(vc, "num_hidden_layers", 24) * layer


def qwen2_5_vision(vc: dict[str, Any], text_hidden: int) -> int:
    """Qwen2_5_VisionTransformerPretrainedModel (qwen2_5_vl/modeling_qwen2_5_vl.py): Conv3d patches without bias,
    RMSNorm blocks with a fused biased qkv, biased proj and a gated biased MLP; the patch merger's RMSNorm and
    two linears over spatial_merge_size^2 patches into out_hidden_size."""
    h, inter = _whole(vc, "hidden_size", 1280), _whole(vc, "intermediate_size", 3420)
    patch, t_patch = _whole(vc, "patch_size", 14), _whole(vc, "temporal_patch_size", 2)
    merged = h * _whole(vc, "spatial_merge_size", 2) ** 2
    out = _whole(vc, "out_hidden_size", text_hidden)
    n = _whole(vc, "in_channels", 3) * t_patch * patch * patch * h
    n += _whole(vc, "depth", 32) * _vit_layer(h, inter, gated=True, norm_bias=False)
    return n + h + _lin(merged, merged) + _lin(merged, out)


def exaone4_5_vision(vc: dict[str, Any], text_hidden: int) -> int:
    """Exaone4_5_VisionModel (exaone4_5/modular_exaone4_5.py): Qwen2.5-VL's tower whose fused biased qkv holds
    num_key_value_heads key and value heads of hidden / num_heads."""
    h, heads = _whole(vc, "hidden_size", 1280), _whole(vc, "num_heads", 16)
    kv = h // heads * _whole(vc, "num_key_value_heads", 8)
    return qwen2_5_vision(vc, text_hidden) - _whole(vc, "depth", 32) * (2 * h - 2 * kv) * (h + 1)


def llava_onevision1_5_vision(vc: dict[str, Any]) -> int:
    """LlavaOnevision15VisionModel (llava_onevision1_5/modular_llava_onevision1_5.py, transformers 5.25): Conv2d
    patches without bias, a class embedding and its rotary position (hidden / num_heads / 2), a pre-LayerNorm,
    `depth` blocks of LayerNorms, Qwen2.5-VL's fused biased qkv and proj and a biased fc1 / fc2; the merger
    (Qwen3-VL's: a LayerNorm before the shuffle, two biased linears over spatial_merge_size^2 patches into
    out_hidden_size)."""
    h, inter, heads = _whole(vc, "hidden_size", 1024), _whole(vc, "intermediate_size", 4096), _whole(vc, "num_heads", 16)
    patch = _whole(vc, "patch_size", 14)
    merged = h * _whole(vc, "spatial_merge_size", 2) ** 2
    n = _whole(vc, "in_channels", 3) * patch * patch * h + h + h // heads // 2 + 2 * h
    n += _whole(vc, "depth", 24) * _vit_layer(h, inter)
    return n + 2 * h + _lin(merged, merged) + _lin(merged, _whole(vc, "out_hidden_size", 4096))


def qwen2_vision(vc: dict[str, Any], text_hidden: int) -> int:
    """Qwen2VisionTransformerPretrainedModel (qwen2_vl/modeling_qwen2_vl.py): Conv3d patches without bias, blocks
    of embed_dim with LayerNorms, a fused biased qkv, biased proj and fc1/fc2 of mlp_ratio x embed_dim; the merger's
    LayerNorm and two linears over spatial_merge_size^2 patches into hidden_size (the language model's width)."""
    h = _whole(vc, "embed_dim", 1280)
    inter = int(h * float(_get(vc, "mlp_ratio", 4)))
    patch, t_patch = _whole(vc, "patch_size", 14), _whole(vc, "temporal_patch_size", 2)
    merged = h * _whole(vc, "spatial_merge_size", 2) ** 2
    n = _whole(vc, "in_channels", 3) * t_patch * patch * patch * h
    n += _whole(vc, "depth", 32) * _vit_layer(h, inter)
    return n + 2 * h + _lin(merged, merged) + _lin(merged, _whole(vc, "hidden_size", text_hidden))


def qwen3_vision(vc: dict[str, Any], text_hidden: int) -> int:
    """Qwen3VLVisionModel / Qwen3_5VisionModel (qwen3_vl/modeling_qwen3_vl.py, qwen3_5/modeling_qwen3_5.py):
    Conv3d patches with bias, a learned table of num_position_embeddings, LayerNorm blocks with a fused biased
    qkv and fc1/fc2; the merger (LayerNorm, two linears over spatial_merge_size^2 patches into out_hidden_size)
    and, Qwen3-VL only, one more merger per deepstack_visual_indexes entry, normalised after the shuffle."""
    h, inter = _whole(vc, "hidden_size", 1152), _whole(vc, "intermediate_size", 4304)
    patch, t_patch = _whole(vc, "patch_size", 16), _whole(vc, "temporal_patch_size", 2)
    merged = h * _whole(vc, "spatial_merge_size", 2) ** 2
    out = _whole(vc, "out_hidden_size", text_hidden)
    n = _whole(vc, "in_channels", 3) * t_patch * patch * patch * h + h
    n += _whole(vc, "num_position_embeddings", 2304) * h
    n += _whole(vc, "depth", 27) * _vit_layer(h, inter)
    merger = _lin(merged, merged) + _lin(merged, out)
    deepstack = len(_get(vc, "deepstack_visual_indexes", ()))
    return n + 2 * h + merger + deepstack * (2 * merged + merger)


def qwen3_vision_shape(vc: dict[str, Any], text_hidden: int, processors: dict[str, dict[str, Any]] | None = None
                       ) -> tuple[int, ...]:
    """`VisionShape` of a Qwen3-VL / Qwen3.5 tower at the largest image and video item its processors allow:
    max_pixels or size.longest_edge of the folder's image / video processor configs (Qwen2VLImageProcessor lets
    max_pixels override the size), else the released ones'."""
    merge, patch = _whole(vc, "spatial_merge_size", 2), _whole(vc, "patch_size", 16)
    processors = processors or {}
    image = _longest_edge(processors.get("image", {}), QWEN3_VL_MAX_PIXELS)
    video = _longest_edge(processors.get("video", {}), QWEN3_VL_VIDEO_MAX_PIXELS)
    tokens = most_tokens(image, patch * merge)
    deepstack = len(_get(vc, "deepstack_visual_indexes", ()))
    t_patch = _whole(vc, "temporal_patch_size", 2)
    pixels = _whole(vc, "in_channels", 3) * t_patch * patch * patch
    return (tokens * merge * merge, tokens, _whole(vc, "hidden_size", 1152), _whole(vc, "intermediate_size", 4304),
            _whole(vc, "out_hidden_size", text_hidden), deepstack, pixels, patch * merge,
            most_tokens(video // t_patch, patch * merge), 1, 4, 2, _whole(vc, "num_heads", 16), 0)


def qwen2_vision_shape(wrapper: str, vc: dict[str, Any], text_hidden: int,
                       processors: dict[str, dict[str, Any]]) -> tuple[int, ...]:
    """`VisionShape` of a Qwen2-VL / Qwen2.5-VL tower at the largest image its processor allows (max_pixels: the
    released 12,845,056 unless the folder's preprocessor says otherwise) and a video of up to 14 frames of that
    size (vllm 0.33 qwen2_vl.py `_MAX_FRAMES_PER_VIDEO`). Qwen2.5-VL's MLP is gated (gate_up merged, SiLU and
    multiply); Qwen2-VL's is fc1 / QuickGELU / fc2 of mlp_ratio x embed_dim."""
    merge, patch = _whole(vc, "spatial_merge_size", 2), _whole(vc, "patch_size", 14)
    t_patch = _whole(vc, "temporal_patch_size", 2)
    tokens = most_tokens(_longest_edge(processors.get("image", {}), QWEN2_VL_MAX_PIXELS), patch * merge)
    pixels = _whole(vc, "in_channels", 3) * t_patch * patch * patch
    pairs = -(-QWEN2_VL_VIDEO_FRAMES // t_patch)
    if wrapper == "qwen2_5_vl":
        h, mlp = _whole(vc, "hidden_size", 1280), _whole(vc, "intermediate_size", 3420)
        out, held = _whole(vc, "out_hidden_size", text_hidden), (4, 3)
    else:
        h = _whole(vc, "embed_dim", 1280)
        mlp, out, held = int(h * float(_get(vc, "mlp_ratio", 4))), _whole(vc, "hidden_size", text_hidden), (3, 2)
    return (tokens * merge * merge, tokens, h, mlp, out, 0, pixels, patch * merge, 0, pairs, *held,
            _whole(vc, "num_heads", 16), 0)


def _longest_edge(processor: dict[str, Any], default: int) -> int:
    """A Qwen-VL processor's pixel cap: max_pixels, else size.longest_edge, else `default`."""
    size = _get(processor, "size", {})
    value = _get(processor, "max_pixels", size.get("longest_edge", default) if isinstance(size, dict) else default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 << 10 <= value < 1 << 40:
        raise InputError(f"processor config: max_pixels / size.longest_edge must be a pixel count, got {value!r}")
    return value


def gemma3_vision_shape(cfg: dict[str, Any], vc: dict[str, Any], text_hidden: int,
                        processor: dict[str, Any] | None = None) -> tuple[int, ...]:
    """`VisionShape` of Gemma 3's SigLIP tower over the largest image as vLLM profiles it (model_executor/models/
    gemma3_mm.py): (image_size // patch_size)^2 patches a crop pooled into mm_tokens_per_image tokens of the
    language model's width, one crop an image with pan-and-scan off (the processor's default) and
    `gemma3_crops` + 1 with it on."""
    patch = _whole(vc, "patch_size", 14)
    size = _whole(vc, "image_size", 896)
    crops = 1 + gemma3_crops(size, processor or {})
    return (crops * (size // patch) ** 2, crops * _whole(cfg, "mm_tokens_per_image", 256), _whole(vc, "hidden_size", 1152),
            _whole(vc, "intermediate_size", 4304), text_hidden, 0, _whole(vc, "num_channels", 3) * patch * patch,
            0, 0, 0, 4, 2, _whole(vc, "num_attention_heads", 16), size // patch)


def gemma3_crops(image_size: int, processor: dict[str, Any]) -> int:
    """Pan-and-scan crops of vLLM's largest Gemma 3 dummy, an image_size-wide image pan_and_scan_max_num_crops
    times as tall (gemma3_mm.py `get_image_size_with_most_features`, `get_num_crops`); 0 with pan-and-scan off.
    The defaults are Gemma3Processor's (transformers models/gemma3/processing_gemma3.py)."""
    if not _get(processor, "do_pan_and_scan", False):
        return 0
    most = _whole(processor, "pan_and_scan_max_num_crops", 4)
    min_crop = _whole(processor, "pan_and_scan_min_crop_size", 256)
    width, height = image_size, image_size * most
    if height / width < float(_get(processor, "pan_and_scan_min_ratio_to_activate", 1.2)):
        return 0
    n = min(max(2, min(height // min_crop, floor(height / width + 0.5))), most)
    return 0 if min(width, ceil(height / n)) < min_crop else n


def _vision_shape(cfg: dict[str, Any], vc: dict[str, Any], text_hidden: int,
                  processors: dict[str, dict[str, Any]]) -> tuple[int, ...]:
    """The `VisionShape` fields of the towers whose pass memviz sizes; () for the others."""
    wrapper = cfg.get("model_type")
    if wrapper in QWEN3_VISION_WRAPPERS:
        return qwen3_vision_shape(vc, text_hidden, processors)
    if wrapper in ("qwen2_vl", "qwen2_5_vl"):
        return qwen2_vision_shape(wrapper, vc, text_hidden, processors)
    if wrapper == "gemma3" and vc.get("model_type") == "siglip_vision_model":
        return gemma3_vision_shape(cfg, vc, text_hidden, processors.get("image", {}))
    if wrapper == "gemma4" and vc.get("model_type") == GEMMA4_VISION:
        return gemma4_vision_shape(vc, text_hidden)
    return ()


def gemma4_vision_shape(vc: dict[str, Any], text_hidden: int) -> tuple[int, ...]:
    """`VisionShape` of Gemma 4's tower: images of default_output_length pooled tokens (the released processor's
    max_soft_tokens) of pooling_kernel_size^2 patches of patch_size pixels, pooled into the language model's width,
    and its position table; for llama.cpp's mmproj buffer (`llamacpp_mtmd`) and vLLM's pass (`vllm_gemma4_vision`,
    which holds its own tensors' count: none here)."""
    patch, pool = _whole(vc, "patch_size", 16), _whole(vc, "pooling_kernel_size", 3)
    tokens = _whole(vc, "default_output_length", 280)
    return (tokens * pool * pool, tokens, _whole(vc, "hidden_size", 768), _whole(vc, "intermediate_size", 3072),
            text_hidden, 0, 3 * patch * patch, patch * pool, 0, 0, 0, 0, _whole(vc, "num_attention_heads", 12), 0,
            _whole(vc, "position_embedding_size", _GEMMA4_POSITIONS))


def llama4_vision(vc: dict[str, Any]) -> int:
    """Llama4VisionModel (llama4/modeling_llama4.py): an unfolded linear patch embedding without bias, class
    embedding and positions (grid + 1), pre/post LayerNorms, LayerNorm blocks with biased q/k/v/o and
    fc1/fc2, the pixel-shuffle adapter (fc1: intermediate -> projector_input_dim, fc2: projector_output_dim^2)."""
    h, inter = _whole(vc, "hidden_size", 768), _whole(vc, "intermediate_size", 5632)
    patch, channels = _whole(vc, "patch_size", 14), _whole(vc, "num_channels", 3)
    grid = _whole(vc, "image_size", 448) // patch
    n = channels * patch * patch * h + h + (grid * grid + 1) * h + 4 * h
    n += _whole(vc, "num_hidden_layers", 34) * _vit_layer(h, inter)
    out_dim = _whole(vc, "projector_output_dim", 4096)
    return n + inter * _whole(vc, "projector_input_dim", 4096) + out_dim * out_dim


def mllama_tile_positions(vc: dict[str, Any]) -> int:
    """Positions of one Llama 3.2 Vision tile: its (image_size / patch_size)^2 patches and a class token
    (MllamaVisionModel.num_patches)."""
    return (_whole(vc, "image_size", 448) // _whole(vc, "patch_size", 14)) ** 2 + 1


def mllama_image_tokens(vc: dict[str, Any]) -> int:
    """Vision tokens one image puts in each cross-attention layer's cache: max_num_tiles x `mllama_tile_positions`
    (MllamaForConditionalGeneration._prepare_static_cache `cross_attention_cache_len`; the processor pads every image
    to max_num_tiles tiles). Llama-3.2-11B-Vision's 560-pixel tiles of 14-pixel patches: 4 x 1,601 = 6,404; absent
    fields take MllamaVisionConfig's defaults (448 pixels, 14, 4 tiles)."""
    return _whole(vc, "max_num_tiles", 4) * mllama_tile_positions(vc)


def mllama_vision(vc: dict[str, Any]) -> int:
    """MllamaVisionModel (mllama/modeling_mllama.py): a Conv2d patch embedding without bias, the class embedding,
    gated positions per patch and class token with a tile-position table per aspect ratio
    (MllamaPrecomputedPositionEmbedding), gated pre- and post-tile embeddings per aspect ratio
    (MllamaPrecomputedAspectRatioEmbedding), pre/post LayerNorms, num_hidden_layers LayerNorm blocks with bias-free
    q/k/v/o and a biased fc1/fc2, and num_global_layers more with two scalar gates each. Aspect ratio ids run to
    len(supported_aspect_ratios) (`max_aspect_ratio_id`, id 0 the padding), so each table has one row more."""
    h, inter = _whole(vc, "hidden_size", 1280), _whole(vc, "intermediate_size", 5120)
    patch, channels, tiles = _whole(vc, "patch_size", 14), _whole(vc, "num_channels", 3), _whole(vc, "max_num_tiles", 4)
    positions = mllama_tile_positions(vc)
    ratios = _get(vc, "supported_aspect_ratios", [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]])
    if not isinstance(ratios, list):
        raise InputError(f"vision/audio config: supported_aspect_ratios must be a list, got {ratios!r:.60}")
    rows = len(ratios) + 1
    n = channels * patch * patch * h + h + (1 + positions * h + rows * tiles * positions * h)
    n += 2 * (rows * tiles * h + 1) + 4 * h
    layer = 2 * 2 * h + 4 * h * h + _lin(h, inter) + _lin(inter, h)
    return n + _whole(vc, "num_hidden_layers", 32) * layer + _whole(vc, "num_global_layers", 8) * (layer + 2)


def idefics2_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """Idefics2's tower and connector (idefics2/modeling_idefics2.py): Idefics2VisionTransformer is SigLIP's without
    the pooling head (Idefics2VisionConfig's defaults: 224 pixels, patches of 32, 768 wide); Idefics2Connector a
    bias-free SwiGLU from the tower's width through the text model's intermediate_size into its width, then the
    perceiver resampler at the text width (Idefics2Config forces perceiver_config.hidden_size to it): resampler_n_latents
    learned latents, resampler_depth layers of three RMSNorms, grouped bias-free q/k/v/o (resampler_n_heads x
    resampler_head_dim, num_key_value_heads) and a SwiGLU of 4 x the width, and a final RMSNorm."""
    vh = _whole(vc, "hidden_size", 768)
    tower = siglip({"patch_size": 32, **vc, "vision_use_head": False})
    tc = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    inter = _whole(tc, "intermediate_size", 14336)
    pc = cfg.get("perceiver_config") if isinstance(cfg.get("perceiver_config"), dict) else {}
    heads, d = _whole(pc, "resampler_n_heads", 16), _whole(pc, "resampler_head_dim", 96)
    attention = th * heads * d * 2 + 2 * th * _whole(pc, "num_key_value_heads", 4) * d
    layer = 3 * th + attention + 3 * th * 4 * th
    perceiver = _whole(pc, "resampler_n_latents", 64) * th + _whole(pc, "resampler_depth", 3) * layer + th
    return tower + 2 * vh * inter + inter * th + perceiver


def minicpmv_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """MiniCPM-V 4.6's tower and merger (minicpmv4_6/modeling_minicpmv4_6.py; 4.7's and MiniCPM-OCR's are the same
    modules): SigLIP's blocks without the pooling head at MiniCPMV4_6VisionConfig's defaults (224 pixels, patches of
    16, 768 wide); the window-attention merger inserted after insert_layer_id (MiniCPMV4_6ViTWindowAttentionMerger:
    biased q/k/v/out, a LayerNorm, and an MLP over each window_kernel_size window of patches: LayerNorm and linears
    of window x hidden_size and window x intermediate_size); then merger_times MiniCPMV4_6DownsampleMLP (a LayerNorm
    and two biased linears over 4 x hidden_size, the last into the text width)."""
    h, inter = _whole(vc, "hidden_size", 768), _whole(vc, "intermediate_size", 3072)
    tower = siglip({"patch_size": 16, **vc, "vision_use_head": False})
    kernel = _get(vc, "window_kernel_size", [2, 2])
    if not (isinstance(kernel, (list, tuple)) and len(kernel) == 2 and all(isinstance(k, int) and k > 0 for k in kernel)):
        raise InputError(f"vision/audio config: window_kernel_size must be two positive whole numbers, got {kernel!r}")
    window = kernel[0] * kernel[1]
    merger = 4 * _lin(h, h) + 2 * h + 2 * window * h + _lin(window * h, window * inter) + _lin(window * inter, h)
    merged = 4 * h

    def downsample(out: int) -> int:
        return 2 * merged + _lin(merged, merged) + _lin(merged, out)

    times = _whole(cfg, "merger_times", 1)
    return tower + merger + (times - 1) * downsample(h) + downsample(th)


def molmo2_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """Molmo2VisionModel and Molmo2Adapter (transformers 5.24 modeling_molmo2.py): a learned position per patch, a
    biased linear patch embedding, pre-LayerNorm blocks with grouped attention (biased per attention_bias) and a biased
    fc1 / fc2 MLP, no final norm; the adapter's pooling attention reads the vision_feature_layer outputs side by side
    (their width into q / k / v, out to its own width), then a SwiGLU projector into text_hidden_size."""
    h, inter = _whole(vc, "hidden_size", 1152), _whole(vc, "intermediate_size", 4304)
    heads, kv = _whole(vc, "num_attention_heads", 16), _whole(vc, "num_key_value_heads", 16)
    hd, patch = _whole(vc, "head_dim", 72), _whole(vc, "patch_size", 14)
    bias = bool(_get(vc, "attention_bias", True))
    attention = _lin(h, heads * hd, bias) + 2 * _lin(h, kv * hd, bias) + _lin(heads * hd, h, bias)
    layer = 4 * h + attention + _lin(h, inter) + _lin(inter, h)
    positions = _whole(vc, "num_position_embeddings", 729)
    tower = positions * h + _lin(patch * patch * _whole(vc, "num_channels", 3), h) + _whole(vc, "num_hidden_layers", 25) * layer
    ad = cfg.get("adapter_config") if isinstance(cfg.get("adapter_config"), dict) else {}
    ah, a_inter = _whole(ad, "hidden_size", 1152), _whole(ad, "intermediate_size", 18944)
    a_heads, a_kv, a_hd = _whole(ad, "num_attention_heads", 16), _whole(ad, "num_key_value_heads", 16), _whole(ad, "head_dim", 72)
    a_bias, mlp_bias = bool(_get(ad, "attention_bias", True)), bool(_get(ad, "mlp_bias", False))
    pooled = ah * _feature_layers(ad, [-3, -9])
    pooling = _lin(pooled, a_heads * a_hd, a_bias) + 2 * _lin(pooled, a_kv * a_hd, a_bias) + _lin(a_heads * a_hd, ah, a_bias)
    projector = 2 * _lin(ah, a_inter, mlp_bias) + _lin(a_inter, _whole(ad, "text_hidden_size", th), False)
    return tower + pooling + projector


def sam_vision(vc: dict[str, Any]) -> int:
    """SAM's ViT with its neck (SamVisionEncoder in sam/modeling_sam.py; GotOcr2VisionEncoder in
    got_ocr2/modeling_got_ocr2.py): a biased Conv2d patch embedding, absolute positions over the patch grid
    (use_abs_pos), blocks of two LayerNorms, a fused q/k/v (qkv_bias) and a biased projection with relative positions
    per axis (use_rel_pos: 2 x size - 1 rows of head_dim, size the window in windowed blocks and the grid in
    global_attn_indexes' blocks), a biased MLP of mlp_dim; the neck's bias-free 1x1 and 3x3 convolutions to
    output_channels, each with a LayerNorm."""
    h, mlp, out = _whole(vc, "hidden_size", 768), _whole(vc, "mlp_dim", 3072), _whole(vc, "output_channels", 256)
    patch, grid = _whole(vc, "patch_size", 16), _whole(vc, "image_size", 1024) // _whole(vc, "patch_size", 16)
    head_dim, window = h // _whole(vc, "num_attention_heads", 12), _whole(vc, "window_size", 14)
    global_layers = set(_get(vc, "global_attn_indexes", [2, 5, 8, 11]))
    n = _whole(vc, "num_channels", 3) * patch * patch * h + h + (grid * grid * h if _get(vc, "use_abs_pos", True) else 0)
    layers = _whole(vc, "num_hidden_layers", 12)
    n_global = sum(1 for i in global_layers if isinstance(i, int) and 0 <= i < layers)
    n += layers * (4 * h + _lin(h, 3 * h, bool(_get(vc, "qkv_bias", True))) + _lin(h, h) + _lin(h, mlp) + _lin(mlp, h))
    if _get(vc, "use_rel_pos", True):  # per axis 2 x size - 1 rows: the grid in global blocks, the window elsewhere
        n += 2 * head_dim * (n_global * (2 * grid - 1) + (layers - n_global) * (2 * window - 1))
    return n + _sam_neck(h, out)


def _sam_neck(h: int, out: int) -> int:
    """SAM's neck: bias-free 1x1 and 3x3 convolutions from h to `out` channels, each followed by a LayerNorm."""
    return out * h + 2 * out + out * out * 9 + 2 * out


def got_ocr2_vision(vc: dict[str, Any], th: int) -> int:
    """GOT-OCR2's SAM tower (`sam_vision`) and GotOcr2MultiModalProjector: bias-free strided 3x3 convolutions to
    twice output_channels and to the text width, then a biased linear."""
    out = _whole(vc, "output_channels", 256)
    return sam_vision(vc) + _conv3x3([out, 2 * out, th]) + _lin(th, th)


def deep_encoder_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """DeepSeek-OCR's DeepEncoder as its release describes it (vision_config `model_name` "deeplip_b_l", widths per
    tower under `width`; the checkpoint's tensors: model.sam_model.*, model.vision_model.*, model.projector.*): SAM
    ViT-B (16-pixel patches over image_size, MLPs of 4 x width) and CLIP-L (`_deep_encoder`, its unused patch
    embedding stored too), the projector from input_dim to n_embed (projector_config)."""
    widths = vc.get("width") or {}
    sam, clip_l = widths.get("sam_vit_b") or {}, widths.get("clip-l-14-224") or {}
    sh, ch = _whole(sam, "width", 768), _whole(clip_l, "width", 1024)
    sam_vc = {"hidden_size": sh, "mlp_dim": 4 * sh, "num_hidden_layers": _whole(sam, "layers", 12),
              "num_attention_heads": _whole(sam, "heads", 12), "image_size": _whole(vc, "image_size", 1024),
              "global_attn_indexes": _get(sam, "global_attn_indexes", [2, 5, 8, 11])}
    clip_vc = {"hidden_size": ch, "intermediate_size": 4 * ch, "num_hidden_layers": _whole(clip_l, "layers", 24),
               "image_size": _whole(clip_l, "image_size", 224), "patch_size": _whole(clip_l, "patch_size", 14)}
    channels = [256, *_get(sam, "downsample_channels", [512, 1024])]
    pc = cfg.get("projector_config") or {}
    return _deep_encoder(sam_vc, channels, clip_vc, True) + _lin(_whole(pc, "input_dim", channels[-1] + ch),
                                                                 _whole(pc, "n_embed", th)) + 2 * th


def unlimited_ocr_vision(vc: dict[str, Any], th: int) -> int:
    """Unlimited-OCR's tower as transformers 5.24 builds it (modeling_unlimited_ocr.py UnlimitedOcrVisionModel:
    sam_config's SAM encoder, UnlimitedOcrSamVisionProj's two convolutions to its downsample_channels,
    encoder_config's CLIP-L fed by SAM's features, so without a patch embedding), the multi-modal projector from
    both towers' widths to the text width, image_newline and view_separator."""
    sam_vc, clip_vc = vc.get("sam_config") or {}, vc.get("encoder_config") or {}
    channels = [_whole(sam_vc, "output_channels", 256), *_get(sam_vc, "downsample_channels", [512, 1024])]
    tower = _deep_encoder(sam_vc, channels, clip_vc, False)
    return tower + _lin(channels[-1] + _whole(clip_vc, "hidden_size", 1024), th) + 2 * th


def _deep_encoder(sam_vc: dict[str, Any], channels: list[int], clip_vc: dict[str, Any], patch_embedding: bool) -> int:
    """DeepEncoder's towers: SAM (`sam_vision`, with its neck) and bias-free strided 3x3 convolutions through
    `channels`; CLIP (`clip`) without a post-LayerNorm, with or without its patch embedding."""
    h = _whole(clip_vc, "hidden_size", 1024)
    clip_l = {"hidden_size": h, "intermediate_size": _whole(clip_vc, "intermediate_size", 4 * h),
              "num_hidden_layers": _whole(clip_vc, "num_hidden_layers", 24), "image_size": _whole(clip_vc, "image_size", 224),
              "patch_size": _whole(clip_vc, "patch_size", 14)}  # CLIP-L's widths where the config names none
    return sam_vision(sam_vc) + _conv3x3(channels) + clip(clip_l, patch_embedding=patch_embedding, post_norm=False)


def deepseek_vl_hybrid_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """DeepseekVLHybridModel (deepseek_vl_hybrid/modeling_deepseek_vl_hybrid.py): SigLIP's tower (vision_config) and a
    high-resolution SAM tower (high_res_vision_config, `sam_vision`), a second SAM neck, DeepseekVLSamVisionProj's
    bias-free strided 3x3 convolutions to 2 x and 4 x output_channels, a scalar alpha; DeepseekVLHybridAligner: biased
    linears from each tower to half the text width and one over the text width."""
    hc = cfg.get("high_res_vision_config") or {}
    if not isinstance(hc, dict):
        raise InputError(f"vision/audio config: high_res_vision_config must be an object, got {hc!r:.60}")
    out, hh, vh = _whole(hc, "output_channels", 256), _whole(hc, "hidden_size", 768), _whole(vc, "hidden_size", 768)
    high_res = sam_vision(hc) + _sam_neck(hh, out) + _conv3x3([out, 2 * out, 4 * out]) + 1
    return siglip(vc) + high_res + _lin(vh, th // 2) + _lin(4 * out, th // 2) + _lin(th, th)


def lfm3_vl_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """Lfm3VlVisionModel (lfm3_vl/modeling_lfm3_vl.py): a bias-free linear patch embedding of channels x
    temporal_patch_size x patch^2 pixels, an RMSNorm, then LFM2-style blocks by `layer_types` (two RMSNorms, a
    bias-free SwiGLU of intermediate_size; a "conv" block's in_proj to 3 x hidden, depthwise conv_kernel_size^2
    spatial convolution and out_proj, an attention block's GQA q/k/v/o with q/k RMSNorms); Lfm3VlMultiModalProjector:
    a LayerNorm before merging spatial_merge_size^2 tokens, two linears (projector_bias) through projector_hidden_size."""
    h, inter = _whole(vc, "hidden_size", 1024), _whole(vc, "intermediate_size", 2560)
    heads, kv = _whole(vc, "num_attention_heads", 16), _whole(vc, "num_key_value_heads", 8)
    d, k = h // heads, _whole(vc, "conv_kernel_size", 3)
    pixels = _whole(vc, "in_channels", 3) * _whole(vc, "temporal_patch_size", 2) * _whole(vc, "patch_size", 16) ** 2
    kinds = _get(vc, "layer_types", ["conv", "conv", *["full_attention", "conv"] * 6])
    if not isinstance(kinds, list):
        raise InputError(f"vision/audio config: layer_types must be a list, got {kinds!r:.60}")
    block = 2 * h + 3 * h * inter
    conv = 3 * h * h + h * k * k + h * h
    attention = 2 * h * h + 2 * kv * d * h + 2 * d
    n = pixels * h + h + sum(block + (conv if kind == "conv" else attention) for kind in kinds)
    merged, inner = h * _whole(vc, "spatial_merge_size", 2) ** 2, _whole(cfg, "projector_hidden_size", 4096)
    bias = bool(_get(cfg, "projector_bias", True))
    return n + 2 * h + _lin(merged, inner, bias) + _lin(inner, th, bias)


def kimi_k25_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """Kimi_K25VisionModel (kimi_k25/modeling_kimi_k25.py, MoonViT): a biased Conv2d patch embedding, a learned
    pos_emb_height x pos_emb_width position grid (the time axis a sinusoidal buffer), LayerNorm blocks with biased
    q/k/v/proj and fc1/fc2, a final LayerNorm; Kimi_K25MultimodalProjection: a LayerNorm of projection_hidden_size,
    two biased linears over merge_kernel_size tokens merged (to itself, then the text width)."""
    h, inter = _whole(vc, "hidden_size", 1152), _whole(vc, "intermediate_size", 4304)
    patch, kernel = _whole(vc, "patch_size", 14), _get(vc, "merge_kernel_size", [2, 2])
    if not (isinstance(kernel, list) and len(kernel) == 2):
        raise InputError(f"vision/audio config: merge_kernel_size must be two numbers, got {kernel!r:.60}")
    grid = _whole(vc, "pos_emb_height", 64) * _whole(vc, "pos_emb_width", 64)
    n = 3 * patch * patch * h + h + grid * h + _whole(vc, "num_hidden_layers", 27) * _vit_layer(h, inter) + 2 * h
    merged = h * int(kernel[0]) * int(kernel[1])
    return n + 2 * _whole(cfg, "projection_hidden_size", h) + _lin(merged, merged) + _lin(merged, th)


def ovis2_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """Ovis2VisionModel (ovis2/modeling_ovis2.py, AIMv2): a biased Conv2d patch embedding, a learned position per
    patch, an RMSNorm, RMSNorm blocks with q/k/v/o (qkv_bias) and a SwiGLU (mlp_bias), a final RMSNorm; its visual
    tokenizer head (a bias-free linear from hidden x hidden_stride^2 to the visual vocabulary less its indicator
    tokens, a LayerNorm over them) and Ovis2VisualEmbeddingTable (the visual vocabulary x the wrapper's hidden_size)."""
    h, inter = _whole(vc, "hidden_size", 1024), _whole(vc, "intermediate_size", 2816)
    patch, stride = _whole(vc, "patch_size", 14), _whole(vc, "hidden_stride", 1)
    qkv, mlp = bool(_get(vc, "qkv_bias", False)), bool(_get(vc, "mlp_bias", False))
    grid = _whole(vc, "image_size", 224) // patch
    layer = 2 * h + 4 * _lin(h, h, qkv) + 2 * _lin(h, inter, mlp) + _lin(inter, h, mlp)
    n = _whole(vc, "num_channels", 3) * patch * patch * h + h + grid * grid * h + h
    n += _whole(vc, "num_hidden_layers", 24) * layer + h
    vocab = _whole(vc, "vocab_size", 16384)
    tokens = vocab - _whole(vc, "num_visual_indicator_tokens", 5)
    return n + h * stride * stride * tokens + 2 * tokens + vocab * _whole(cfg, "hidden_size", th)


def ovis2_5_vision(vc: dict[str, Any], th: int) -> int:
    """Ovis2_5VisionModel (ovis2_5/modular_ovis2_5.py, transformers 5.25; SigLIP-NaViT): a biased Conv2d patch
    embedding, a learned position per patch of the (image_size / patch_size)^2 grid, LayerNorm blocks with biased
    q/k/v/o and fc1 / fc2, a post-LayerNorm; Ovis2_5MultiModalProjector: the visual tokenizer (a bias-free linear from
    hidden x spatial_merge_size^2 to the visual vocabulary less its indicator tokens, a LayerNorm over them) and the
    bias-free visual embedding table (the visual vocabulary x the text width)."""
    h, inter = _whole(vc, "hidden_size", 1152), _whole(vc, "intermediate_size", 4304)
    patch, merge = _whole(vc, "patch_size", 16), _whole(vc, "spatial_merge_size", 2)
    grid = _whole(vc, "image_size", 512) // patch
    n = _whole(vc, "num_channels", 3) * patch * patch * h + h + grid * grid * h
    n += _whole(vc, "num_hidden_layers", 27) * _vit_layer(h, inter) + 2 * h
    vocab = _whole(vc, "vocab_size", 65536)
    tokens = vocab - _whole(vc, "num_visual_indicator_tokens", 4)
    return n + h * merge * merge * tokens + 2 * tokens + vocab * th


def muse_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """MuseGlimmerVisionModel / MuseSparkVisionModel (muse_glimmer/ and muse_spark/modeling_*.py): a bias-free linear
    patch embedding of 3 x patch_temporal x patch^2 pixels, a pos_emb_height x pos_emb_width position table, pre and
    post LayerNorms around LayerNorm blocks with biased q/k/v/proj and fc1/fc2 (windowed or full alike); the vision
    adapter's two bias-free linears (the wrapper's out_hidden_size to projector_hidden_size, and square) and the
    bias-free vision_projection into the text width."""
    h, inter = _whole(vc, "hidden_size", 1536), _whole(vc, "intermediate_size", 8960)
    pixels = 3 * _whole(vc, "patch_temporal", 2) * _whole(vc, "patch_size", 14) ** 2
    n = pixels * h + _whole(vc, "pos_emb_height", 32) * _whole(vc, "pos_emb_width", 32) * h + 4 * h
    n += _whole(vc, "num_hidden_layers", 50) * _vit_layer(h, inter)
    merged = _whole(cfg, "out_hidden_size", h * _whole(vc, "merge_size", 2) ** 2)
    inner = _whole(cfg, "projector_hidden_size", 4096)
    return n + merged * inner + inner * inner + inner * th


def minimax_m3_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """MiniMaxM3VLVisionModel (minimax_m3_vl/modeling_minimax_m3_vl.py): a bias-free Conv3d patch embedding of
    temporal_patch_size x patch^2 pixels, a pre-LayerNorm, LayerNorm blocks with biased q/k/v/o and fc1/fc2 (rotary
    positions: no table); MiniMaxM3VLMultiModalProjector: a biased two-linear MLP per patch through
    projector_hidden_size into the text width, then another from merged_hidden_size (spatial_merge_size^2 of them)."""
    h, inter = _whole(vc, "hidden_size", 1280), _whole(vc, "intermediate_size", 5120)
    pixels = _whole(vc, "num_channels", 3) * _whole(vc, "temporal_patch_size", 2) * _whole(vc, "patch_size", 14) ** 2
    n = pixels * h + 2 * h + _whole(vc, "num_hidden_layers", 32) * _vit_layer(h, inter)
    inner = _whole(cfg, "projector_hidden_size", 6144)
    merged = _whole(cfg, "merged_hidden_size", th * _whole(vc, "spatial_merge_size", 2) ** 2)
    return n + _lin(h, inner) + _lin(inner, th) + _lin(merged, inner) + _lin(inner, th)


def hy_v4_vision(vc: dict[str, Any]) -> int:
    """HYV4VLVisionModel (hy_v4_vl/modeling_hy_v4_vl.py): a biased Conv2d patch embedding, (max_image_size / patch)^2
    + 1 learned positions, LayerNorm blocks with biased q/k/v/o and fc1/fc2 (rotary positions beside); its patch
    merger: an RMSNorm, a biased spatial_merge_size-strided convolution to hidden x merge^2, a biased 1x1 convolution
    to out_hidden_size (the text width) and an image-newline vector."""
    h, inter = _whole(vc, "hidden_size", 1536), _whole(vc, "intermediate_size", 6144)
    patch, merge, out = _whole(vc, "patch_size", 16), _whole(vc, "spatial_merge_size", 2), _whole(vc, "out_hidden_size", 6144)
    positions = (_whole(vc, "max_image_size", 2048) // patch) ** 2 + 1
    n = _whole(vc, "num_channels", 3) * patch * patch * h + h + positions * h
    n += _whole(vc, "num_hidden_layers", 40) * _vit_layer(h, inter)
    merged = h * merge * merge
    return n + h + merged * h * merge * merge + merged + _lin(merged, out) + out


def step3p7_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """Step3p7VisionModel (step3p7/modeling_step3p7.py): a bias-free Conv2d patch embedding, a learned position per
    patch of the (image_size / patch)^2 grid, a pre-LayerNorm, LayerNorm blocks with biased q/k/v/o and fc1/fc2 and
    two layer scales, two biased stride-2 3x3 downsampling convolutions (to 2 x and 4 x hidden); the projector one
    linear from 4 x hidden to the text width (projector_bias)."""
    h, inter = _whole(vc, "hidden_size", 1536), _whole(vc, "intermediate_size", 8960)
    patch = _whole(vc, "patch_size", 14)
    n = _whole(vc, "num_channels", 3) * patch * patch * h + (_whole(vc, "image_size", 728) // patch) ** 2 * h + 2 * h
    n += _whole(vc, "num_hidden_layers", 47) * (_vit_layer(h, inter) + 2 * h)
    n += 2 * h * h * 9 + 2 * h + 4 * h * 2 * h * 9 + 4 * h
    return n + _lin(4 * h, th, bool(_get(cfg, "projector_bias", False)))


def muse_spark_audio(ac: dict[str, Any]) -> int:
    """MuseSparkAudioModel (muse_spark/modeling_muse_spark.py): stages of a biased linear patch embedding (the previous
    stage's width x patch_sizes[i], one channel before the first) with an RMSNorm, then depths[i] blocks of a biased
    depthwise causal convolution of conv_kernel_size taps, an RMSNorm and a biased MLP of mlp_ratio x width; a final
    RMSNorm, a biased projection to out_hidden_size (the text width) and an RMSNorm over it."""
    stages = [_get(ac, key, default) for key, default in (("hidden_sizes", [256, 512, 1024, 2048]),
                                                          ("patch_sizes", [16, 6, 5, 4]), ("depths", [2, 2, 2, 2]))]
    if not all(isinstance(v, list) and len(v) == len(stages[0]) for v in stages) or not stages[0]:
        raise InputError("vision/audio config: hidden_sizes, patch_sizes and depths must be lists of one length")
    kernel, ratio = _whole(ac, "conv_kernel_size", 7), float(_get(ac, "mlp_ratio", 4.0))
    n, previous = 0, 1
    for width, patch, depth in zip(*([int(x) for x in v] for v in stages), strict=True):
        inter = int(width * ratio)
        n += _lin(previous * patch, width) + width + depth * (width * kernel + 2 * width + _lin(width, inter) +
                                                              _lin(inter, width))
        previous = width
    out = _whole(ac, "out_hidden_size", 8192)
    return n + previous + _lin(previous, out) + out


def granite_docling_vision(cfg: dict[str, Any], vc: dict[str, Any]) -> int:
    """GraniteDoclingVisionModel (granite_docling/modeling_granite_docling.py): SigLIP's tower without its pooling head
    and its connector: a LayerNorm; a coarse path at scale_factor and, with use_fine_route, a fine one at half of it,
    each a bias-free projection of the pixel-shuffled width to out_hidden_size and, per deepstack_visual_indexes entry,
    a merger (a LayerNorm of that width, two biased linears); a LayerNorm, a bias-free out x out linear and a LayerNorm
    (positions a buffer); with the wrapper's density_router_hidden_size, GraniteDoclingDensityRouter's attention pool,
    LayerNorm and two biased linears."""
    h, out = _whole(vc, "hidden_size", 768), _whole(vc, "out_hidden_size", 1024)
    merges = len(_get(vc, "deepstack_visual_indexes", [3, 7, 10]))
    scale = _whole(vc, "scale_factor", 4)
    n = siglip({**vc, "vision_use_head": False}) + 2 * h + out * out + 4 * out
    for factor in (scale, scale // 2) if _get(vc, "use_fine_route", True) else (scale,):
        merged = h * factor * factor
        n += merged * out + merges * (2 * merged + _lin(merged, out) + _lin(out, out))
    router = _get(cfg, "density_router_hidden_size", None)
    return n + (_lin(h, 1) + 2 * h + _lin(h, int(router)) + _lin(int(router), 1) if router else 0)


def _whisper_stem(mel: int, d: int) -> int:
    """Whisper's two biased Conv1d of kernel 3: from the mel bins to the width, and a strided one within it."""
    return _conv1d(mel, d, 3) + _conv1d(d, d, 3)


def _striding_subsampling(channels: int, kernel: int, halvings: int, flat_in: int, h: int) -> int:
    """NeMo's striding subsampling (Phi-4-multimodal's, Parakeet's): a biased Conv2d from one channel, then per further
    halving a depthwise and a 1x1 Conv2d, both biased, and a biased linear from `flat_in` (the channels x the
    frequency bins left) to the width `h`."""
    per_halving = channels * kernel * kernel + channels + _conv(channels, channels, 1)
    return _conv(1, channels, kernel) + (halvings - 1) * per_halving + _lin(flat_in, h)


def _multimodal_embedder(c: dict[str, Any], h: int, text_hidden: int) -> int:
    """Gemma3nMultimodalEmbedder (gemma3n/modeling_gemma3n.py, transformers 5.24): a table of vocab_size rows of the
    encoder's width `h`, two norms with a weight, a bias-free projection to the text width, a last norm without one."""
    return _whole(c, "vocab_size", 128) * h + 2 * h + h * text_hidden


#: the Omni thinkers' Whisper-style audio encoders memviz counts (`omni_audio`), and Qwen3-ASR's, Qwen3-Omni's
OMNI_AUDIO = ("qwen2_5_omni_audio_encoder", "qwen3_omni_moe_audio_encoder", "qwen3_asr_encoder")


def omni_audio(ac: dict[str, Any]) -> int:
    """The Qwen-Omni thinkers' audio encoders (qwen2_5_omni / qwen3_omni_moe modeling files): Whisper's encoder
    blocks (two LayerNorms, q/v/out biased, k biased in Qwen3-Omni's only, a biased fc1 / fc2 of encoder_ffn_dim) and
    a final LayerNorm. Qwen2.5-Omni's: two biased Conv1d over num_mel_bins, a bos / eos pair of output_dim, one biased
    projection to output_dim. Qwen3-Omni's: three biased stride-2 3x3 Conv2d of downsample_hidden_size channels, a
    bias-free conv_out from them x the mel bins left (each stride halving, rounded up), two biased projections.
    Qwen3-ASR (qwen3_asr/modular_qwen3_asr.py) keeps Qwen3-Omni's encoder and moves its two projections into
    Qwen3ASRMultiModalProjector: the same count."""
    d, ffn, mel = _whole(ac, "d_model", 1280), _whole(ac, "encoder_ffn_dim", 5120), _whole(ac, "num_mel_bins", 128)
    out, qwen3 = _whole(ac, "output_dim", 3584), ac.get("model_type") != OMNI_AUDIO[0]
    layer = 4 * d + 3 * _lin(d, d) + _lin(d, d, qwen3) + _lin(d, ffn) + _lin(ffn, d)
    n = _whole(ac, "encoder_layers", 32) * layer + 2 * d
    if not qwen3:
        return n + _whisper_stem(mel, d) + 2 * out + _lin(d, out)
    channels, freq = _whole(ac, "downsample_hidden_size", 480), mel
    for _ in range(3):
        freq = (freq + 1) // 2
    return n + channels * 9 + channels + 2 * (channels * channels * 9 + channels) + channels * freq * d + \
        _lin(d, d) + _lin(d, out)


def _whisper_width(ac: dict[str, Any], whisper_key: str, key: str, default: int) -> int:
    """A Whisper encoder's width under Whisper's name (`whisper_key`) or the newer one (`key`)."""
    return _whole(ac, whisper_key if ac.get(whisper_key) is not None else key, default)


def whisper_encoder(ac: dict[str, Any]) -> int:
    """Whisper's encoder as the audio language models copy it (WhisperEncoder in whisper/modeling_whisper.py;
    Qwen2AudioEncoder, VoxtralEncoder, AudioFlamingo3Encoder, MossTranscribeDiarizeAudioModel, transformers 5.24): two
    biased Conv1d of kernel 3 over num_mel_bins, a learned position per source frame (max_source_positions), blocks of
    two LayerNorms, q / v / out biased and k not, a biased fc1 / fc2, and a final LayerNorm. The widths under
    Whisper's names (d_model, encoder_layers, encoder_ffn_dim) or the newer ones (hidden_size, num_hidden_layers,
    intermediate_size)."""
    d = _whisper_width(ac, "d_model", "hidden_size", 1280)
    ffn = _whisper_width(ac, "encoder_ffn_dim", "intermediate_size", 5120)
    layers = _whisper_width(ac, "encoder_layers", "num_hidden_layers", 32)
    mel = _whole(ac, "num_mel_bins", 128)
    layer = 4 * d + 3 * _lin(d, d) + _lin(d, d, False) + _lin(d, ffn) + _lin(ffn, d)
    return _whisper_stem(mel, d) + _whole(ac, "max_source_positions", 1500) * d + layers * layer + 2 * d


def moss_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> int:
    """MossTranscribeDiarizeAudioModel and its projector (moss_transcribe_diarize/modeling_moss_transcribe_diarize.py,
    transformers 5.24): Whisper's encoder (`whisper_encoder`) and MossTranscribeDiarizeMultiModalProjector
    (audio_merge_size frames stacked into a linear to the text width, a second linear, both biased with
    projector_bias, a LayerNorm)."""
    bias = bool(_get(cfg, "projector_bias", True))
    merged = _whole(ac, "hidden_size", 1024) * _whole(cfg, "audio_merge_size", 4)
    return whisper_encoder(ac) + _lin(merged, text_hidden, bias) + _lin(text_hidden, text_hidden, bias) + \
        2 * text_hidden


def whisper_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> int:
    """The audio language models built on Whisper's encoder (`whisper_encoder`) and the projector each puts after it
    (transformers 5.24): Qwen2AudioMultiModalProjector, one biased linear from d_model; VoxtralMultiModalProjector, two
    bias-free linears from intermediate_size (four frames stacked) through the text width;
    AudioFlamingo3MultiModalProjector (MusicFlamingo's is the same), two linears from the encoder's width through the
    text width, biased with projector_bias."""
    d, wrapper = _whisper_width(ac, "d_model", "hidden_size", 1280), cfg.get("model_type")
    if wrapper == "qwen2_audio":
        projector = _lin(d, text_hidden)
    elif wrapper == "voxtral":
        projector = _whole(ac, "intermediate_size", 5120) * text_hidden + text_hidden * text_hidden
    else:
        bias = bool(_get(cfg, "projector_bias", True))
        projector = _lin(d, text_hidden, bias) + _lin(text_hidden, text_hidden, bias)
    return whisper_encoder(ac) + projector


def glmasr_audio(ac: dict[str, Any], text_hidden: int) -> int:
    """GlmAsrEncoder and GlmAsrMultiModalProjector (glmasr/modeling_glmasr.py, transformers 5.24): Whisper's two
    biased Conv1d, rotary positions (no learned ones), blocks of two LayerNorms, grouped attention with q / v / o
    biased and k not, a biased fc1 / fc2, a final LayerNorm; the projector, two biased linears from intermediate_size
    (four frames stacked) through twice the text width."""
    d, ffn, mel = _whole(ac, "hidden_size", 1280), _whole(ac, "intermediate_size", 5120), _whole(ac, "num_mel_bins", 128)
    heads = _whole(ac, "num_attention_heads", 20)
    if d % heads:
        raise InputError(f"vision/audio config: GLM-ASR's audio width {d} is not a whole number of {heads} heads")
    kv = _whole(ac, "num_key_value_heads", heads) * (d // heads)
    layer = 4 * d + 2 * _lin(d, d) + _lin(d, kv) + _lin(d, kv, False) + _lin(d, ffn) + _lin(ffn, d)
    encoder = _whisper_stem(mel, d) + _whole(ac, "num_hidden_layers", 32) * layer + 2 * d
    return encoder + _lin(ffn, 2 * text_hidden) + _lin(2 * text_hidden, text_hidden)


def janus_vision(cfg: dict[str, Any], vc: dict[str, Any]) -> int | None:
    """JanusModel (janus/modeling_janus.py): its SigLIP-style vision tower without a pooling head (an MLP of
    mlp_ratio x hidden), JanusVisionAlignerMLP (a biased linear to projection_dim and depth - 1 more), and the image
    generation path over the VQ codebook: its embedding (num_embeddings x embed_dim), JanusVQVAEAlignerMLP and
    JanusVQVAEHead (biased linears through the VQ config's projection_dim to the codebook). The VQ-VAE itself is counted
    apart (`janus_vqgan`); a tower with q/k norms (use_qk_norm) is not counted."""
    if _get(vc, "use_qk_norm", False):
        return None
    h = _whole(vc, "hidden_size", 1024)
    tower = siglip({**vc, "intermediate_size": int(h * float(_get(vc, "mlp_ratio", 4.0))), "vision_use_head": False})
    proj = _whole(vc, "projection_dim", 2048)
    aligner = _lin(h, proj) + (_whole(vc, "depth", 2) - 1) * _lin(proj, proj)
    vq = cfg.get("vq_config") if isinstance(cfg.get("vq_config"), dict) else {}
    codes, dim, gen = _whole(vq, "num_embeddings", 16384), _whole(vq, "embed_dim", 8), _whole(vq, "projection_dim", 2048)
    generation = codes * dim + _lin(dim, gen) + (_whole(vq, "num_hidden_layers", 2) - 1) * _lin(gen, gen)
    generation += _lin(_whole(vq, "image_token_embed_dim", 2048), gen) + _lin(gen, codes)
    return tower + aligner + generation


def _pair(cfg: dict[str, Any], key: str, default: int) -> tuple[int, int]:
    """A size given as one number or as [height, width]."""
    value = _get(cfg, key, default)
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return _whole({key: value[0]}, key, default), _whole({key: value[1]}, key, default)
    return (_whole(cfg, key, default),) * 2


def internvl_vision(vc: dict[str, Any]) -> int:
    """InternVLVisionModel (internvl/modeling_internvl.py, InternViT): a class token, a biased Conv2d patch
    embedding, absolute positions for the patches and the class token, blocks of two norms (LayerNorm or RMSNorm by
    norm_type), q/k/v (attention_bias) with optional q/k RMSNorms over the width, a biased projection, fc1/fc2 and
    two layer scales; a final LayerNorm unless use_mean_pooling."""
    h, inter = _whole(vc, "hidden_size", 1024), _whole(vc, "intermediate_size", 4096)
    (img_h, img_w), (p_h, p_w) = _pair(vc, "image_size", 448), _pair(vc, "patch_size", 14)
    grid = (img_h // p_h) * (img_w // p_w)
    n = h + (h if _get(vc, "use_mask_token", False) else 0) + _whole(vc, "num_channels", 3) * p_h * p_w * h + h
    n += (grid + 1) * h if _get(vc, "use_absolute_position_embeddings", True) else 0
    norm = 2 * h if _get(vc, "norm_type", "layer_norm") == "layer_norm" else h
    bias = bool(_get(vc, "attention_bias", False))
    attention = 3 * _lin(h, h, bias) + _lin(h, h) + (2 * h if _get(vc, "use_qk_norm", False) else 0)
    layer = 2 * norm + attention + _lin(h, inter) + _lin(inter, h) + 2 * h
    n += _whole(vc, "num_hidden_layers", 24) * layer
    return n + (0 if _get(vc, "use_mean_pooling", True) else 2 * h)


def glm4v_vision(vc: dict[str, Any]) -> int:
    """Glm4vVisionModel (glm4v/modeling_glm4v.py, GLM-4.1V / 4.5V / 4.6V): a learned position per patch of the
    (image_size / patch_size)^2 grid, a biased Conv3d patch embedding, RMSNorm blocks with a fused qkv
    (attention_bias), a bias-free proj and a bias-free gated MLP of out_hidden_size; the post-conv and post RMSNorms,
    the biased Conv2d downsample over spatial_merge_size^2 patches into out_hidden_size, and the merger (a
    bias-free projection, a LayerNorm and a gated MLP of intermediate_size)."""
    h, inter = _whole(vc, "hidden_size", 1536), _whole(vc, "intermediate_size", 13696)
    out, merge = _whole(vc, "out_hidden_size", 4096), _whole(vc, "spatial_merge_size", 2)
    patch, t_patch = _whole(vc, "patch_size", 14), _whole(vc, "temporal_patch_size", 2)
    grid = _whole(vc, "image_size", 336) // patch
    n = grid * grid * h + _whole(vc, "in_channels", 3) * t_patch * patch * patch * h + h
    attention = _lin(h, 3 * h, bool(_get(vc, "attention_bias", False))) + h * h
    n += _whole(vc, "depth", 24) * (2 * h + attention + 3 * h * out)
    n += 2 * h + h * out * merge * merge + out
    return n + out * out + 2 * out + 3 * out * inter


def glm_ocr_vision(vc: dict[str, Any]) -> int:
    """GlmOcrVisionModel (glm_ocr/modular_glm_ocr.py): GLM-4V's tower without learned positions or the post-conv
    norm; biased qkv / proj (attention_bias) with q/k norms of hidden / num_heads, a biased gated MLP of
    intermediate_size; the merger's MLP out_hidden_size x in_channels wide."""
    h, inter = _whole(vc, "hidden_size", 1024), _whole(vc, "intermediate_size", 4096)
    out, merge = _whole(vc, "out_hidden_size", 1536), _whole(vc, "spatial_merge_size", 2)
    patch, t_patch, channels = _whole(vc, "patch_size", 14), _whole(vc, "temporal_patch_size", 2), _whole(
        vc, "in_channels", 3)
    bias = bool(_get(vc, "attention_bias", True))
    n = channels * t_patch * patch * patch * h + h
    attention = _lin(h, 3 * h, bias) + _lin(h, h, bias) + 2 * (h // _whole(vc, "num_heads", 16))
    n += _whole(vc, "depth", 24) * (2 * h + attention + 2 * _lin(h, inter) + _lin(inter, h))
    n += h + h * merge * merge * out + out
    return n + out * out + 2 * out + 3 * out * out * channels


def gemma4_vision(vc: dict[str, Any]) -> int:
    """Gemma4VisionModel (gemma4/modeling_gemma4.py): a linear patch projection without bias, a (2,
    position_embedding_size, hidden) position table, blocks of four RMSNorms, bias-free q/k/v/o over
    num_key_value_heads with q/k norms of head_dim, and a gated bias-free MLP."""
    h, inter = _whole(vc, "hidden_size", 768), _whole(vc, "intermediate_size", 3072)
    heads, kv_heads = _whole(vc, "num_attention_heads", 12), _whole(vc, "num_key_value_heads", 12)
    head_dim, patch = _whole(vc, "head_dim", 64), _whole(vc, "patch_size", 16)
    attention = 2 * h * heads * head_dim + 2 * h * kv_heads * head_dim + 2 * head_dim
    layer = 4 * h + attention + 3 * h * inter
    n = 3 * patch * patch * h + 2 * _whole(vc, "position_embedding_size", 10240) * h
    return n + _whole(vc, "num_hidden_layers", 16) * layer


def gemma4_audio(ac: dict[str, Any]) -> int:
    """Gemma4AudioModel (gemma4/modeling_gemma4.py): two strided Conv2d subsampling layers with LayerNorms
    without bias and their input projection; conformer layers of two macaron feed-forwards (4 x hidden, pre
    and post norms), attention (q/k/v/post, a relative-position key projection, a per-dimension scale), a light
    convolution (linear_start to 2 x hidden, a depthwise kernel, linear_end, two norms) and three norms; the
    biased output projection to output_proj_dims."""
    h, heads = _whole(ac, "hidden_size", 1024), _whole(ac, "num_attention_heads", 8)
    c0, c1 = (int(c) for c in _get(ac, "subsampling_conv_channels", (128, 32)))
    kernel = _whole(ac, "conv_kernel_size", 5)
    n = 9 * c0 + c0 + 9 * c0 * c1 + c1 + (c0 // 4) * c1 * h
    ffn = 2 * h * 4 * h + 2 * h
    attention = 5 * h * h + h // heads
    lconv = 2 * h * h + h * h + h * kernel + 2 * h
    n += _whole(ac, "num_hidden_layers", 12) * (2 * ffn + attention + lconv + 3 * h)
    return n + _lin(h, _whole(ac, "output_proj_dims", 1536))


def gemma3n_audio(ac: dict[str, Any], text_hidden: int) -> int:
    """Gemma3nAudioEncoder and its Gemma3nMultimodalEmbedder (gemma3n/modeling_gemma3n.py, transformers 5.24): two
    bias-free Conv2d subsampling blocks with cumulative group norms, the frequency axis padded by one on each side,
    and their input projection; USM conformer blocks of two feed-forwards (4 x hidden, pre and post norms), attention
    (q/k/v, a relative-position projection, a per-dimension scale, post projection, two norms), a light convolution
    (linear_start to 2 x hidden, a depthwise kernel, linear_end, two norms) and a norm; the embedder's table of
    vocab_size rows, two norms and its projection to the text width (its last norm has no weight)."""
    h, heads = _whole(ac, "hidden_size", 1536), _whole(ac, "conf_num_attention_heads", 8)
    channels = [int(c) for c in _get(ac, "sscp_conv_channel_size", (128, 32))]
    kernels = [tuple(int(k) for k in pair) for pair in _get(ac, "sscp_conv_kernel_size", ((3, 3), (3, 3)))]
    strides = [tuple(int(k) for k in pair) for pair in _get(ac, "sscp_conv_stride_size", ((2, 2), (2, 2)))]
    freq, n, c_in = _whole(ac, "input_feat_size", 128), 0, 1
    for c_out, (kh, kw), (_, sw) in zip(channels[:2], kernels[:2], strides[:2], strict=True):
        n += c_in * c_out * kh * kw + c_out
        freq, c_in = (freq + 2 - kw) // sw + 1, c_out
    n += c_in * freq * h
    ffn = 2 * h * 4 * h + 2 * h
    attention = 5 * h * h + h // heads + 2 * h
    lconv = 3 * h * h + h * _whole(ac, "conf_conv_kernel_size", 5) + 2 * h
    n += _whole(ac, "conf_num_hidden_layers", 12) * (2 * ffn + attention + lconv + h)
    return n + _multimodal_embedder(ac, h, text_hidden)


#: parameters of the timm vision towers memviz knows, by architecture name and the config's model_args (as JSON), as
#: transformers builds them (TimmWrapperModel: timm.create_model(architecture, num_classes=0, **model_args),
#: timm_wrapper/modeling_timm_wrapper.py) with timm 1.0.31: Gemma 3n's MobileNetV5 (models/mobilenetv5.py: universal
#: inverted residual and multi-query attention stages, a multi-scale fusion adapter; no buffers, its norms are
#: RmsNorm2d) and FastVLM's FastViTHD (models/fastvit.py fastvit_mci3: RepMixer and attention stages, reparameterised
#: with inference_mode as FastVLM's config asks, else with its training branches; its BatchNorm statistics, 35,756 values
#: reparameterised, are buffers and not counted). The name fixes every width, the config gives none
#: (tests/core/test_towers.py builds each with timm where it is installed)
TIMM_PARAMETERS: dict[tuple[str, str], int] = {
    ("mobilenetv5_300m_enc", "{}"): 294_126_912, ("mobilenetv5_300m", "{}"): 294_126_912,
    ("mobilenetv5_base", "{}"): 80_598_976,
    ("fastvit_mci3", '{"inference_mode": true}'): 122_714_208, ("fastvit_mci3", '{"inference_mode": false}'): 122_875_584,
    ("fastvit_mci3", "{}"): 122_875_584}


def timm_tower(vc: dict[str, Any], default: str) -> int | None:
    """The parameters of the timm tower a TimmWrapper vision config names (`TIMM_PARAMETERS`); None for an
    architecture, or model_args, memviz has no count of."""
    args = vc.get("model_args") or {}
    if not isinstance(args, dict):
        return None
    return TIMM_PARAMETERS.get((str(_get(vc, "architecture", default)), json.dumps(args, sort_keys=True, default=str)))


#: timm 1.0.31's Perception Encoder ViTs (models/eva.py vit_pe_*: Eva with fused, biased qkv, rotary positions, a
#: LayerNorm before the blocks and no patch bias): name -> (patch, width, depth, mlp_ratio, image side, the Eva arguments
#: the name sets beyond them)
_PE_CORE = {"global_pool": "map", "attn_pool_mlp_ratio": 4.0}
_PE_VITS: dict[str, tuple[int, int, int, float, int, dict[str, Any]]] = {
    **{f"vit_pe_core_{size}": (patch, d, 12, 4.0, side, _PE_CORE) for size, patch, d, side in (
        ("tiny_patch16_384", 16, 192, 384), ("small_patch16_384", 16, 384, 384), ("base_patch16_224", 16, 768, 224))},
    "vit_pe_core_large_patch14_336": (14, 1024, 24, 4.0, 336, _PE_CORE),
    "vit_pe_core_gigantic_patch14_448": (14, 1536, 50, 8960 / 1536, 448, {**_PE_CORE, "class_token": False}),
    "vit_pe_lang_large_patch14_448": (14, 1024, 23, 4.0, 448, {"use_post_transformer_norm": False, "use_fc_norm": False,
                                                                "init_values": 0.1}),
    "vit_pe_lang_gigantic_patch14_448": (14, 1536, 47, 8960 / 1536, 448, {
        "class_token": False, "use_post_transformer_norm": False, "use_fc_norm": False, "init_values": 0.1}),
    **{f"vit_pe_spatial_{size}": (patch, d, 12, 4.0, 512, {"use_post_transformer_norm": False, "use_fc_norm": False})
       for size, patch, d in (("tiny_patch16_512", 16, 192), ("small_patch16_512", 16, 384),
                              ("base_patch16_512", 16, 768))},
    "vit_pe_spatial_large_patch14_448": (14, 1024, 24, 4.0, 448, {"use_post_transformer_norm": False,
                                                                   "use_fc_norm": False}),
    "vit_pe_spatial_gigantic_patch14_448": (14, 1536, 50, 8960 / 1536, 448, {
        "class_token": False, "use_post_transformer_norm": False, "use_fc_norm": False, "init_values": 0.1}),
}
#: Eva arguments that change no parameter count (positions are rotary; heads split the same widths)
_PE_FREE_ARGS = frozenset({"ref_feat_shape", "num_heads", "attn_pool_num_heads", "rope_grid_offset",
                           "rope_grid_indexing", "dynamic_img_size", "drop_rate", "drop_path_rate", "attn_type"})


def pe_vit(vc: dict[str, Any]) -> int | None:
    """A Perception Encoder ViT as timm builds it for TimmWrapperModel (num_classes 0) from its name and the config's
    model_args (embed_dim, depth, img_size, patch_size, mlp_ratio, class_token, global_pool, init_values, the pre /
    post / fc norms): a bias-free patch Conv2d, a class token and a learned position per patch (and per class token),
    a pre-norm, blocks of two LayerNorms, a fused biased qkv, a biased proj, a biased MLP of round(width x mlp_ratio),
    a layer scale pair with init_values, a post-norm unless an fc-norm (global_pool "avg") replaces it, and with
    global_pool "map" the attention-pooling head (a latent, q / kv / proj, a LayerNorm, an MLP of attn_pool_mlp_ratio);
    None for another architecture or an argument memviz does not read."""
    name, args = str(_get(vc, "architecture", "")), vc.get("model_args") or {}
    if name not in _PE_VITS or not isinstance(args, dict) or set(args) - _PE_FREE_ARGS - {
            "embed_dim", "depth", "img_size", "patch_size", "mlp_ratio", "class_token", "global_pool", "init_values",
            "use_pre_transformer_norm", "use_post_transformer_norm", "use_fc_norm", "attn_pool_mlp_ratio"}:
        return None
    patch, d, depth, ratio, side, named = _PE_VITS[name]
    a = {"embed_dim": d, "depth": depth, "patch_size": patch, "mlp_ratio": ratio, "img_size": side, **named, **args}
    d, depth, patch = _whole(a, "embed_dim", d), _whole(a, "depth", depth), _whole(a, "patch_size", patch)
    height, width = _pair(a, "img_size", side)
    inner, cls, pool = round(d * float(a["mlp_ratio"])), bool(a.get("class_token", True)), a.get("global_pool", "avg")
    pre = bool(a.get("use_pre_transformer_norm", True))
    fc = pool == "avg" if a.get("use_fc_norm") is None else bool(a["use_fc_norm"])
    post = not fc if a.get("use_post_transformer_norm") is None else bool(a["use_post_transformer_norm"])
    n = 3 * patch * patch * d + (0 if pre else d) + cls * d + ((height // patch) * (width // patch) + cls) * d
    layer = 4 * d + _lin(d, 3 * d) + _lin(d, d) + _lin(d, inner) + _lin(inner, d) + (2 * d if a.get("init_values") else 0)
    n += 2 * d * pre + depth * layer + 2 * d * post + 2 * d * fc
    if pool == "map":  # AttentionPoolLatent
        hidden = round(d * float(a.get("attn_pool_mlp_ratio", a["mlp_ratio"])))
        n += d + _lin(d, d) + _lin(d, 2 * d) + _lin(d, d) + 2 * d + _lin(d, hidden) + _lin(hidden, d)
    return n


def perception_lm_vision(vc: dict[str, Any], text_hidden: int) -> int | None:
    """PerceptionLM's vision tower (TimmWrapperModel of a Perception Encoder, `pe_vit`) and
    PerceptionLMMultiModalProjector (two biased linears from model_args' embed_dim through the text width; its
    pooling has no weights); None for a tower memviz has no count of."""
    tower = pe_vit(vc)
    args = vc.get("model_args") or {}
    if tower is None or "embed_dim" not in args:  # the projector reads model_args["embed_dim"]
        return None
    return tower + _lin(_whole(args, "embed_dim", 1024), text_hidden) + _lin(text_hidden, text_hidden)


def gemma3n_vision(vc: dict[str, Any], text_hidden: int) -> int | None:
    """Gemma 3n's vision tower (TimmWrapperModel of vc's timm architecture, `TIMM_PARAMETERS`) and its
    Gemma3nMultimodalEmbedder (a table of vocab_size rows of hidden_size, two norms with a weight, a bias-free
    projection to the text width, a last norm without one); None for a tower memviz has no count of."""
    tower = timm_tower(vc, "mobilenetv5_300m_enc")
    if tower is None:
        return None
    h = _whole(vc, "hidden_size", 2048)
    return tower + _multimodal_embedder(vc, h, text_hidden)


def fast_vlm_vision(cfg: dict[str, Any], vc: dict[str, Any], text_hidden: int) -> int | None:
    """FastVLM's vision tower (TimmWrapperModel, `TIMM_PARAMETERS`: FastViTHD) and FastVlmMultiModalProjector (two
    linears from the tower's hidden_size through the text width, biased with multimodal_projector_bias; the config
    allows only the last layer's features); None for a tower memviz has no count of."""
    tower = timm_tower(vc, "fastvit_mci3")
    if tower is None:
        return None
    bias = bool(_get(cfg, "multimodal_projector_bias", True))
    return tower + _lin(_whole(vc, "hidden_size", 3072), text_hidden, bias) + _lin(text_hidden, text_hidden, bias)


def _feature_layers(cfg: dict[str, Any], default: int | list[int]) -> int:
    """How many encoder layers' outputs the projector concatenates (vision_feature_layer: one index or a list;
    VipLLaVA's released configs name it vision_feature_layers)."""
    layers = _get(cfg, "vision_feature_layer", _get(cfg, "vision_feature_layers", default))
    return len(layers) if isinstance(layers, (list, tuple)) else 1


#: Idefics3VisionConfig's and SmolVLMVisionConfig's defaults where they differ from SiglipVisionConfig's
_IDEFICS3_VISION = {"hidden_size": 1152, "patch_size": 32}
#: the encoder configs' default widths where a projector reads them (SiglipVisionConfig, CLIPVisionConfig and
#: Gemma4VisionConfig: 768; PixtralVisionConfig and InternVLVisionConfig: 1024; Idefics3 / SmolVLM: 1152)
_HIDDEN_DEFAULTS = {"pixtral": 1024, "internvl_vision": 1024, "idefics3_vision": 1152, "smolvlm_vision": 1152}


def qformer(qc: dict[str, Any], h: int, encoder_width: int) -> int:
    """Blip2QFormerModel (blip_2/modeling_blip_2.py, transformers 5.24) of width `h` over features `encoder_width`
    wide: a LayerNorm and num_hidden_layers layers of biased self-attention (q, k, v, the output dense and its
    LayerNorm), cross-attention in every cross_attention_frequency-th layer from layer 0 (k / v from the features),
    and the queries' feed-forward (intermediate_query, output_query and its LayerNorm; a second one for text with
    use_qformer_text_input)."""
    inter, every = _whole(qc, "intermediate_size", 3072), _whole(qc, "cross_attention_frequency", 2)
    feed_forward = _lin(h, inter) + _lin(inter, h) + 2 * h
    layer = 4 * _lin(h, h) + 2 * h + feed_forward * (2 if _get(qc, "use_qformer_text_input", False) else 1)
    cross = 2 * _lin(h, h) + 2 * _lin(encoder_width, h) + 2 * h
    layers = _whole(qc, "num_hidden_layers", 12)
    return 2 * h + layers * layer + len(range(0, layers, every)) * cross


def blip_vision(vc: dict[str, Any]) -> int:
    """Blip2VisionModel / InstructBlipVisionModel (blip_2/modeling_blip_2.py, instructblip/modeling_instructblip.py,
    transformers 5.24): a class embedding, a biased Conv2d patch embedding, a learned position per patch and the class
    token, blocks of two LayerNorms, a fused qkv with q and v biases only (held as one 3 x hidden bias with qkv_bias),
    a biased projection and fc1 / fc2, and a post-LayerNorm."""
    h, inter = _whole(vc, "hidden_size", 1408), _whole(vc, "intermediate_size", 6144)
    patch, grid = _whole(vc, "patch_size", 14), _whole(vc, "image_size", 224) // _whole(vc, "patch_size", 14)
    layer = 4 * h + 3 * h * h + (3 * h if _get(vc, "qkv_bias", True) else 0) + _lin(h, h) + _lin(h, inter) + \
        _lin(inter, h)
    return h + 3 * patch * patch * h + h + (grid * grid + 1) * h + _whole(vc, "num_hidden_layers", 39) * layer + 2 * h


#: the BLIP-2-style wrappers: (their vision tower's model_type, whether the Q-Former reads the instruction)
BLIP_WRAPPERS = {"blip-2": ("blip_2_vision_model", False), "instructblip": ("instructblip_vision_model", True),
                 "instructblipvideo": ("instructblipvideo_vision_model", True)}


def blip_qformer(cfg: dict[str, Any], vc: dict[str, Any]) -> int:
    """The query tokens and Q-Former of a BLIP-2-style wrapper (`BLIP_WRAPPERS`), over the vision tower's features:
    BLIP-2's Blip2QFormerModel (`qformer`), InstructBLIP's InstructBlipQFormerModel with the instruction's
    feed-forward in every layer and its word and position embeddings (their LayerNorm taking the model's)."""
    qc = cfg.get("qformer_config") if isinstance(cfg.get("qformer_config"), dict) else {}
    h, instructed = _whole(qc, "hidden_size", 768), BLIP_WRAPPERS[str(cfg.get("model_type"))][1]
    vh = _whole(vc, "hidden_size", 1408)
    n = _whole(cfg, "num_query_tokens", 32) * h + qformer({**qc, "use_qformer_text_input": instructed}, h, vh)
    if instructed:
        n += (_whole(qc, "vocab_size", 30522) + _whole(qc, "max_position_embeddings", 512)) * h
    return n


def blip_float32(cfg: dict[str, Any], vc: dict[str, Any]) -> int:
    """Elements a BLIP-2-style wrapper keeps float32 in transformers 5.24 (`_keep_in_fp32_modules`): BLIP-2's query
    tokens and Q-Former (Blip2ForConditionalGeneration), InstructBLIP's query tokens only."""
    qc = cfg.get("qformer_config") if isinstance(cfg.get("qformer_config"), dict) else {}
    if BLIP_WRAPPERS[str(cfg.get("model_type"))][1]:
        return _whole(cfg, "num_query_tokens", 32) * _whole(qc, "hidden_size", 768)
    return blip_qformer(cfg, vc)


def radio_vision(vc: dict[str, Any]) -> int:
    """RadioModel (radio/modeling_radio.py, transformers 5.24; C-RADIO): a bias-free linear patch projection (and a
    second over video_temporal_patch_size stacked frames where that is set), a learned position per patch of the
    largest image (max_img_size), cls and register tokens, and blocks of two LayerNorms, q / k / v biased with qkv_bias
    and a biased o_proj, two layer scales, and an MLP of mlp_ratio (SwiGLU's two thirds, rounded up to 8, with
    use_swiglu_ffn); no final norm."""
    h, layers, patch = _whole(vc, "hidden_size", 1280), _whole(vc, "num_hidden_layers", 32), _whole(vc, "patch_size", 16)
    patch_dim = _whole(vc, "num_channels", 3) * patch * patch
    frames = vc.get("video_temporal_patch_size")
    n = patch_dim * h + (_whole(vc, "video_temporal_patch_size", 2) * patch_dim * h if frames is not None else 0)
    n += (_whole(vc, "max_img_size", 2048) // patch) ** 2 * h
    n += (_whole(vc, "num_cls_tokens", 3) + _whole(vc, "num_registers", 7)) * h
    wide = int(h * float(_get(vc, "mlp_ratio", 4.0)))
    if _get(vc, "use_swiglu_ffn", False):
        wide = (int(wide * 2 / 3) + 7) // 8 * 8
        mlp = 2 * _lin(h, wide) + _lin(wide, h)
    else:
        mlp = _lin(h, wide) + _lin(wide, h)
    attention = 3 * _lin(h, h, bool(_get(vc, "qkv_bias", True))) + _lin(h, h)
    return n + layers * (4 * h + attention + 2 * h + mlp)


def nemotron_h_omni_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int:
    """Nemotron-H Omni's vision path (nemotron_h_omni/modeling_nemotron_h_omni.py, transformers 5.24): its RADIO
    tower (`radio_vision`), the final LayerNorm Megatron adds where the language model has MTP layers, and the
    projector over pixel-shuffled features (an RMSNorm, two bias-free linears through projector_hidden_size)."""
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    vh = _whole(cfg, "vision_hidden_size", _whole(cfg, "vit_hidden_size", 1280))
    ratio = float(_get(cfg, "downsample_ratio", 0.5))
    if not 0 < ratio <= 1:
        raise InputError(f"vision/audio config: downsample_ratio must be in (0, 1], got {ratio!r}")
    merged = vh * int(1 / ratio) ** 2
    proj = _whole(cfg, "projector_hidden_size", 4096)
    final_norm = 2 * vh if int(_get(text, "num_nextn_predict_layers", 0)) > 0 else 0
    return radio_vision(vc) + final_norm + merged + merged * proj + proj * th


def hunyuan_vl_vision(vc: dict[str, Any]) -> int:
    """HunYuanVLVisionTransformer (hunyuan_vl/modeling_hunyuan_vl.py, transformers 5.24): a biased Conv2d patch
    embedding, a learned position per patch of the largest image (max_image_size) and a cls slot, blocks as SigLIP's
    (biased q / k / v / o and fc1 / fc2, two LayerNorms), and HunYuanVLVisionPatchMerger: an RMSNorm, a strided
    Conv2d of the merge window to twice the width, a 1x1 Conv2d to four times it, a linear into the merger's
    text_hidden_size, the image newline (four widths), begin / end / separator vectors and an RMSNorm (text-wide)."""
    h, inter = _whole(vc, "hidden_size", 1152), _whole(vc, "intermediate_size", 4304)
    patch, merge = _whole(vc, "patch_size", 16), _whole(vc, "spatial_merge_size", 2)
    out = _whole(vc, "text_hidden_size", 4096)
    n = _whole(vc, "num_channels", 3) * patch * patch * h + h + ((_whole(vc, "max_image_size", 2048) // patch) ** 2 + 1) * h
    n += _whole(vc, "num_hidden_layers", 27) * _vit_layer(h, inter)
    merger = h + (h * 2 * h * merge * merge + 2 * h) + (2 * h * 4 * h + 4 * h) + _lin(4 * h, out) + 4 * h + 4 * out
    return n + merger


def voxtral_realtime_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> int:
    """VoxtralRealtimeEncoder and VoxtralRealtimeMultiModalProjector (voxtral_realtime/modeling_voxtral_realtime.py,
    transformers 5.24): Whisper's two biased Conv1d of kernel 3 made causal (the same weights), rotary positions,
    blocks of two RMSNorms, attention of num_attention_heads heads of head_dim with every head its own keys (q / v / o
    biased, k not), a gated MLP of intermediate_size with a biased down projection, a final RMSNorm; the projector,
    two bias-free linears from downsample_factor frames stacked through the text width."""
    d, ffn, mel = _whole(ac, "hidden_size", 1280), _whole(ac, "intermediate_size", 5120), _whole(ac, "num_mel_bins", 128)
    heads = _whole(ac, "num_attention_heads", 32)
    head_dim = 64 if "head_dim" not in ac else _whole(ac, "head_dim", max(d // heads, 1))  # a null one: d / heads
    inner = heads * head_dim
    attention = _lin(d, inner) + _lin(d, inner, False) + _lin(d, inner) + _lin(inner, d)
    layer = 2 * d + attention + 2 * d * ffn + _lin(ffn, d)
    encoder = _whisper_stem(mel, d) + _whole(ac, "num_hidden_layers", 32) * layer + d
    return encoder + d * _whole(cfg, "downsample_factor", 4) * text_hidden + text_hidden * text_hidden


def _sanm_layer(x: int, h: int, inner: int, fsmn_kernel: int) -> int:
    """FunAsrNanoEncoderLayer from `x` inputs (fun_asr_nano/modeling_fun_asr_nano.py, transformers 5.24; SenseVoice's
    SAN-M block): a LayerNorm over the inputs, biased q / k / v from them and a biased o_proj at width `h`, the
    depthwise bias-free FSMN convolution of the values (`fsmn_kernel` taps; 0: none, as in the adaptor), a
    LayerNorm and a biased fc1 / fc2 of `inner`."""
    return 2 * x + 3 * _lin(x, h) + _lin(h, h) + h * fsmn_kernel + 2 * h + _lin(h, inner) + _lin(inner, h)


def fun_asr_nano_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> int:
    """FunAsrNanoEncoder and FunAsrNanoMultiModalProjector (transformers 5.24): num_hidden_layers SAN-M blocks, the
    first over num_stacked_frames x num_mel_bins inputs, the last transcription block and the last timestamp block
    ending in a LayerNorm (sinusoidal positions: no weights); the projector, two biased linears through
    projector_hidden_size to the adaptor's width and its num_hidden_layers blocks without FSMN (adaptor_config)."""
    h, ffn, layers = _whole(ac, "hidden_size", 512), _whole(ac, "intermediate_size", 2048), _whole(
        ac, "num_hidden_layers", 70)
    stamps, kernel = _count(ac, "num_timestamp_prediction_layers", 20, layers), _whole(ac, "fsmn_kernel_size", 11)
    inputs = _whole(ac, "num_mel_bins", 80) * _whole(ac, "num_stacked_frames", 7)
    normed = {i for i in (layers - stamps - 1, layers - 1) if i >= 0}
    encoder = _sanm_layer(inputs, h, ffn, kernel) + (layers - 1) * _sanm_layer(h, h, ffn, kernel) + 2 * h * len(normed)
    ad = cfg.get("adaptor_config") if isinstance(cfg.get("adaptor_config"), dict) else {}
    width, inner, blocks = _whole(ad, "hidden_size", 1024), _whole(ad, "intermediate_size", 256), _count(
        ad, "num_hidden_layers", 2, 1 << 10)
    projector = _lin(h, _whole(ad, "projector_hidden_size", 2048)) + _lin(_whole(ad, "projector_hidden_size", 2048), width)
    return encoder + projector + blocks * _sanm_layer(width, width, inner, 0)


def omniasr_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> int:
    """OmniASRAudioModel and the projector (omniasr/modeling_omniasr.py, transformers 5.24; wav2vec 2.0's encoder):
    a stack of Conv1d over the waveform (conv_dim channels, conv_kernel taps, biased with conv_bias), each with a
    LayerNorm, a LayerNorm and a biased linear to the width, a grouped positional Conv1d (num_conv_pos_embeddings taps
    in num_conv_pos_embedding_groups groups, biased), blocks of biased q / k / v / out, two LayerNorms and a biased
    feed-forward, a final LayerNorm; the projector, one biased linear to the text width."""
    h, ffn = _whole(ac, "hidden_size", 1024), _whole(ac, "intermediate_size", 4096)
    dims = _wholes(ac, "conv_dim", (512,) * 7)
    kernels = _wholes(ac, "conv_kernel", (10, 3, 3, 3, 3, 2, 2))
    if len(kernels) < len(dims):
        raise InputError(f"vision/audio config: conv_kernel names {len(kernels)} kernels for {len(dims)} convolutions")
    bias = bool(_get(ac, "conv_bias", True))
    convs = sum(c_in * c_out * k + (c_out if bias else 0) + 2 * c_out
                for c_in, c_out, k in zip([1, *dims[:-1]], dims, kernels[:len(dims)], strict=True))
    groups = _whole(ac, "num_conv_pos_embedding_groups", 16)
    if h % groups:
        raise InputError(f"vision/audio config: the width {h} is not a whole number of {groups} groups")
    positions = h * (h // groups) * _whole(ac, "num_conv_pos_embeddings", 128) + h
    layer = 4 * _lin(h, h) + 4 * h + _lin(h, ffn) + _lin(ffn, h)
    encoder = convs + 2 * dims[-1] + _lin(dims[-1], h) + positions + _whole(ac, "num_hidden_layers", 24) * layer + 2 * h
    return encoder + _lin(h, text_hidden)


def _nemo_encoder(c: dict[str, Any], defaults: tuple[int, int, int, int], qk_norm: bool, stacked: bool) -> int:
    """A Nemotron 3.5 Transcribe / Sortformer encoder (transformers 5.24 Nemotron3_5TranscribeAsrAudioModel,
    Nemotron3DiarizationAudioModel, Nemotron3_5TranscribeWordTimestampModel): with `stacked`, a bias-free linear
    from subsampling_factor stacked mel frames; a LayerNorm in, blocks of two LayerNorms, bias-free q / k / v (v as
    wide as q) and a biased o_proj over heads of hidden_size / heads (LayerNorms over a head's q and k with
    `qk_norm`), a biased fc1 / fc2, and a LayerNorm out. `defaults`: (width, intermediate, layers, heads)."""
    h, inter, layers, heads = (_whole(c, key, d) for key, d in zip(
        ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"), defaults, strict=True))
    if h % heads:
        raise InputError(f"vision/audio config: the audio width {h} is not a whole number of {heads} heads")
    head_dim = h // heads
    kv = _whole(c, "num_key_value_heads", heads) * head_dim
    attention = 2 * h * heads * head_dim + h * kv + _lin(heads * head_dim, h) + (4 * head_dim if qk_norm else 0)
    n = 4 * h + layers * (4 * h + attention + _lin(h, inter) + _lin(inter, h))
    if stacked:
        n += _whole(c, "subsampling_factor", 8) * _whole(c, "num_mel_bins", 128) * h
    return n


def nemo_speechlm_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> tuple[int, int]:
    """Nemotron 3.5 Transcribe's audio path (nemotron3_5_transcribe/modeling_nemotron3_5_transcribe.py,
    nemotron3_diarization/modeling_nemotron3_diarization.py, transformers 5.24), and the part of it its class keeps
    float32 in any 16-bit model (`_keep_in_fp32_modules_strict`: the audio tower and the projector): the speech
    encoder (asr_config), the Sortformer diarization model (its encoder, a biased projection to the head's width, a
    sub-pixel Conv1d upsampler of kernel 3, a two-linear speaker classifier, a silence embedding), a LayerNorm over the
    speech features and one over the speaker activities, the biased projector to the text width; and beside them in
    the model's dtype the word-timestamp encoder (a ConvTranspose1d upsampler, its blocks) and its 1x1 Conv1d head."""
    asr = ac.get("asr_config") if isinstance(ac.get("asr_config"), dict) else {}
    diarization = ac.get("diarization_config") if isinstance(ac.get("diarization_config"), dict) else {}
    dia_audio, head = (diarization.get(k) if isinstance(diarization.get(k), dict) else {}
                       for k in ("audio_config", "head_config"))
    h, hd = _whole(asr, "hidden_size", 1280), _whole(head, "hidden_size", 192)
    speakers, upsampling = _whole(head, "num_speakers", 8), _whole(head, "subsampling_factor", 8)
    dia = _nemo_encoder(dia_audio, (512, 2048, 31, 8), False, True) + _lin(_whole(head, "audio_hidden_size", 512), hd)
    dia += hd * hd * upsampling * 3 + hd * upsampling + _lin(hd, hd) + _lin(hd, speakers) + _whole(
        dia_audio, "hidden_size", 512)
    kept = _nemo_encoder(asr, (1280, 5120, 32, 10), True, True) + dia + 2 * h + 2 * speakers + _lin(h, text_hidden)
    wt = cfg.get("word_timestamp_config") if isinstance(cfg.get("word_timestamp_config"), dict) else {}
    hw = _whole(wt, "hidden_size", 1280)
    stamps = _nemo_encoder(wt, (1280, 640, 2, 16), True, False) + hw * hw * _whole(wt, "upsampling_factor", 2) + hw
    return kept + stamps + _lin(hw, _whole(wt, "vocab_size", 23863)), kept


def granite_speech_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> int:
    """GraniteSpeechCTCEncoder and GraniteSpeechEncoderProjector (granite_speech/modeling_granite_speech.py,
    transformers 5.24; Granite Speech Plus's are the same): a biased linear from input_dim, Conformer blocks (two
    half-step feed-forwards of feedforward_mult x the width, each a LayerNorm and two biased linears; attention, a
    LayerNorm, bias-free q and kv and a biased output over heads of dim_head, Shaw's relative positions, 2 x
    max_pos_emb + 1 of dim_head; a convolution module, a LayerNorm, a biased 1x1 conv to twice conv_expansion_factor
    x the width, a GLU, a bias-free depthwise conv of conv_kernel_size, a BatchNorm with its running statistics, a
    biased 1x1 conv back; a LayerNorm), biased linears to output_dim and back; the projector, window_size /
    downsample_rate learned queries, a BLIP-2 Q-Former (projector_config) and a biased linear to the text width."""
    h, heads, mult = _whole(ac, "hidden_dim", 1024), _whole(ac, "num_heads", 8), _whole(ac, "feedforward_mult", 4)
    inner = heads * _whole(ac, "dim_head", max(h // heads, 1))
    conv = h * _whole(ac, "conv_expansion_factor", 2)
    feed_forward = 2 * h + _lin(h, h * mult) + _lin(h * mult, h)
    attention = 2 * h + 3 * h * inner + _lin(inner, h) + (2 * _whole(ac, "max_pos_emb", 512) + 1) * (inner // heads)
    module = 2 * h + _lin(h, 2 * conv) + conv * _whole(ac, "conv_kernel_size", 15) + 4 * conv + 1 + _lin(conv, h)
    out = _whole(ac, "output_dim", 42)
    encoder = _lin(_whole(ac, "input_dim", 160), h) + _whole(ac, "num_layers", 10) * (
        2 * feed_forward + attention + module + 2 * h) + _lin(h, out) + _lin(out, h)
    qc = cfg.get("projector_config") if isinstance(cfg.get("projector_config"), dict) else {}
    qh = _whole(qc, "hidden_size", 768)
    queries = _whole(cfg, "window_size", 15) // _whole(cfg, "downsample_rate", 5)
    return encoder + queries * qh + qformer(qc, qh, _whole(qc, "encoder_hidden_size", 1408)) + _lin(qh, text_hidden)


def vibevoice_tokenizer_encoder(c: dict[str, Any]) -> int:
    """VibeVoiceAcousticTokenizerEncoderModel (vibevoice_acoustic_tokenizer/modeling_vibevoice_acoustic_tokenizer.py,
    transformers 5.24): a biased causal Conv1d from the audio channels to num_filters, ConvNeXt blocks (an RMSNorm,
    a biased depthwise conv of kernel_size, a layer-scale vector; an RMSNorm, a biased feed-forward of ffn_expansion x
    the width, a layer-scale vector) at depths[0] there and depths[i + 1] after each strided conv (kernel twice
    downsampling_ratios[i]) doubling the width, and a biased conv of kernel_size to hidden_size."""
    width, k, e = _whole(c, "num_filters", 32), _whole(c, "kernel_size", 7), _whole(c, "ffn_expansion", 4)
    ratios, depths = _wholes(c, "downsampling_ratios", (2, 2, 4, 5, 5, 8)), _wholes(c, "depths", (3, 3, 3, 3, 3, 3, 8))
    if len(depths) != len(ratios) + 1:
        raise InputError(f"vision/audio config: depths must list one more stage than the {len(ratios)} "
                         f"downsampling_ratios, got {len(depths)}")

    def blocks(n: int, w: int) -> int:
        return n * (4 * w + w * k + w + _lin(w, e * w) + _lin(e * w, w))
    total = _conv1d(_whole(c, "channels", 1), width, k) + blocks(depths[0], width)
    for ratio, depth in zip(ratios, depths[1:], strict=True):
        total += _conv1d(width, 2 * width, 2 * ratio) + blocks(depth, 2 * width)
        width *= 2
    return total + _conv1d(width, _whole(c, "hidden_size", 64), k)


def vibevoice_asr_audio(cfg: dict[str, Any], ac: dict[str, Any], text_hidden: int) -> int:
    """VibeVoice-ASR's acoustic and semantic tokenizer encoders (`vibevoice_tokenizer_encoder`, from
    acoustic_tokenizer_encoder_config and semantic_tokenizer_encoder_config) and VibeVoiceAsrMultiModalProjector
    (per path a biased linear from the encoder's hidden_size to the text width, an RMSNorm and a biased linear)."""
    def path(c: dict[str, Any], hidden: int) -> int:  # hidden: the config class's default latent width
        latent = _whole(c, "hidden_size", hidden)
        return vibevoice_tokenizer_encoder({**c, "hidden_size": latent}) + _lin(latent, text_hidden) + text_hidden + \
            _lin(text_hidden, text_hidden)
    semantic = cfg.get("semantic_tokenizer_encoder_config")
    return path(ac, 64) + path(semantic if isinstance(semantic, dict) else {}, 128)


def parakeet_encoder(ac: dict[str, Any], attention_bias: bool) -> int:
    """ParakeetEncoder (parakeet/modeling_parakeet.py, transformers 5.24; NeMo's FastConformer): a striding
    subsampling (a Conv2d from one channel, then per further halving of subsampling_factor a depthwise and a 1x1
    Conv2d, all biased, and a biased linear from the channels x the mel bins left), and blocks of five LayerNorms,
    two feed-forwards, relative-position attention (q / k / v / o biased with attention_bias, a bias-free positional
    projection, the u / v biases) and a convolution module (pointwise to twice the width, depthwise of
    conv_kernel_size, a BatchNorm's weight and bias, pointwise; biased with convolution_bias)."""
    h, inter, heads = _whole(ac, "hidden_size", 1024), _whole(ac, "intermediate_size", 4096), _whole(ac, "num_attention_heads", 8)
    if h % heads:
        raise InputError(f"vision/audio config: Parakeet's width {h} is not a whole number of {heads} heads")
    kv = _whole(ac, "num_key_value_heads", heads) * (h // heads)
    c, k, stride = (_whole(ac, key, d) for key, d in (("subsampling_conv_channels", 256),
                                                      ("subsampling_conv_kernel_size", 3), ("subsampling_conv_stride", 2)))
    halvings = _whole(ac, "subsampling_factor", 8).bit_length() - 1
    subsampling = _striding_subsampling(c, k, halvings, c * (_whole(ac, "num_mel_bins", 80) // stride ** halvings), h)
    conv_bias = bool(_get(ac, "convolution_bias", True))
    attention = 2 * _lin(h, h, attention_bias) + 2 * _lin(h, kv, attention_bias) + h * h + 2 * h
    convolution = _lin(h, 2 * h, conv_bias) + h * _whole(ac, "conv_kernel_size", 9) + (h if conv_bias else 0) + 2 * h + \
        _lin(h, h, conv_bias)
    feed_forward = _lin(h, inter, attention_bias) + _lin(inter, h, attention_bias)
    return subsampling + _whole(ac, "num_hidden_layers", 24) * (10 * h + 2 * feed_forward + attention + convolution)


def nemotron_h_omni_audio(ac: dict[str, Any], th: int) -> int | None:
    """Nemotron-H Omni's audio path (transformers 5.24): its Parakeet encoder (attention_bias False where the
    release omits it, as NemotronH_Omni_Reasoning_V3_Config supplies) and embed_audio (an RMSNorm and two linears
    through projection_hidden_size, biased with projection_bias); None without projection_hidden_size, which the
    class needs."""
    if ac.get("projection_hidden_size") is None:
        return None
    proj, bias = _whole(ac, "projection_hidden_size", 4096), bool(_get(ac, "projection_bias", False))
    h = _whole(ac, "hidden_size", 1024)
    return parakeet_encoder(ac, bool(_get(ac, "attention_bias", False))) + h + _lin(h, proj, bias) + _lin(proj, th, bias)


def granite4_vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int | None:
    """Granite4VisionModel (granite4_vision/modeling_granite4_vision.py, transformers 5.24): its CLIP or SigLIP tower
    (AutoModel of vision_config), the image newline (one text-wide vector), and a Granite4VisionWindowQFormerDownsampler
    per deepstack_layer_map pair and per spatial offset (four): a Q-Former as wide as the tower (`qformer`:
    Granite4VisionConfig sets its width and features to the tower's), a LayerNorm, query_side^2 learned queries and
    window_side^2 learned positions (downsample_rate "query_side/window_side") and a biased linear into the text
    width. None for another tower."""
    family = vc.get("model_type") or "clip_vision_model"
    if family not in ("clip_vision_model", "siglip_vision_model"):
        return None
    vh = _whole(vc, "hidden_size", 768)
    rate = str(_get(cfg, "downsample_rate", ""))
    sides = rate.split("/")
    if len(sides) != 2 or not all(side.strip().isdigit() and int(side) > 0 for side in sides):
        raise InputError(f"vision/audio config: Granite 4 Vision's downsample_rate must read 'q/w', got {rate!r}")
    pairs = _get(cfg, "deepstack_layer_map", [])
    if not isinstance(pairs, list):
        raise InputError("vision/audio config: Granite 4 Vision's deepstack_layer_map must be a list of pairs")
    qc = cfg.get("qformer_config") if isinstance(cfg.get("qformer_config"), dict) else {}
    qc = {"num_hidden_layers": 1, "intermediate_size": 3072, "cross_attention_frequency": 1, **qc}  # its defaults
    query_side, window_side = (int(side) for side in sides)
    downsampler = qformer(qc, vh, vh) + 2 * vh + (query_side ** 2 + window_side ** 2) * vh + _lin(vh, th)
    tower = clip(vc) if family == "clip_vision_model" else siglip(vc)
    return tower + th + (len(pairs) + 4) * downsampler


def _vision(cfg: dict[str, Any], vc: dict[str, Any], th: int) -> int | None:
    """Parameters of the wrapper's vision tower and projector; None for a family memviz does not count."""
    wrapper, family = str(cfg.get("model_type") or ""), str(vc.get("model_type") or "")
    vh = _whole(vc, "hidden_size", _HIDDEN_DEFAULTS.get(family, 768))
    if wrapper == "dots3_note" and family in ("", "dots3_note_vision_encoder"):  # its merger is its projector
        return dots3_vision(vc)
    if wrapper == "glm_image" and family == "glm_image_vision":  # no projector: its features go to the VQ codebook
        return glm_image_vision(vc)
    if wrapper == "apertus1p5" and family in ("", "apertus1p5_vision_tokenizer"):  # its codes are text tokens:
        return apertus1p5_vision_tokenizer(vc)  # no projector
    if wrapper == "granite4_vision":
        return granite4_vision(cfg, vc, th)
    if wrapper == "hunyuan_vl" and family == "hunyuan_vl_vision":
        return hunyuan_vl_vision(vc)
    if wrapper == "nemotron_h_omni" and family == "radio":
        return nemotron_h_omni_vision(cfg, vc, th)
    if wrapper in BLIP_WRAPPERS and family in (BLIP_WRAPPERS[wrapper][0], ""):  # the Q-Former's queries, projected
        qh = _whole(cfg.get("qformer_config") or {}, "hidden_size", 768)  # into the text width
        return blip_vision(vc) + blip_qformer(cfg, vc) + _lin(qh, th)
    if wrapper == "gemma3n" and family == "gemma3n_vision":
        return gemma3n_vision(vc, th)
    if wrapper == "fast_vlm" and family == "timm_wrapper":
        return fast_vlm_vision(cfg, vc, th)
    if wrapper == "perception_lm" and family == "timm_wrapper":
        return perception_lm_vision(vc, th)
    if wrapper == "gemma3" and family == "siglip_vision_model":  # Gemma3MultiModalProjector: matrix + RMSNorm
        return siglip(vc) + vh * th + vh
    if wrapper in ("llava", "llava_next", "llava_next_video", "llava_onevision") and family in (
            "clip_vision_model", "siglip_vision_model"):  # LlavaNextVideo's resampler pools without weights
        tower = clip(vc) if family == "clip_vision_model" else siglip(vc)  # LlavaMultiModalProjector
        bias = bool(_get(cfg, "multimodal_projector_bias", True))
        projector = _lin(vh * _feature_layers(cfg, -1 if wrapper == "llava_onevision" else -2), th, bias) + _lin(th, th, bias)
        return tower + projector + (th if wrapper != "llava" else 0)  # LlavaNextModel.image_newline
    if wrapper in ("mistral3", "mistral_large4") and family == "pixtral":  # Mistral3MultiModalProjector (Mistral
        # Large 4's is the same): RMSNorm, patch merger, MLP
        bias = bool(_get(cfg, "multimodal_projector_bias", False))
        merge = _whole(cfg, "spatial_merge_size", 2)
        projector = vh + vh * merge * merge * vh + _lin(vh * _feature_layers(cfg, -1), th, bias) + _lin(th, th, bias)
        return pixtral(vc) + projector
    if wrapper == "llama4" and family == "llama4_vision_model":  # Llama4MultiModalProjector: one linear, no bias
        return llama4_vision(vc) + _whole(vc, "vision_output_dim", 7680) * th
    if wrapper == "qwen2_5_vl":
        return qwen2_5_vision(vc, th)
    if wrapper == "qwen2_vl":
        return qwen2_vision(vc, th)
    if wrapper in QWEN3_VISION_WRAPPERS:
        return qwen3_vision(vc, th)
    if (wrapper, family) in (("idefics3", "idefics3_vision"), ("smolvlm", "smolvlm_vision")):
        # Idefics3VisionTransformer / SmolVLMVisionTransformer: SigLIP's blocks without the pooling head, their
        # configs' defaults; the connector's one bias-free linear over scale_factor^2 patches (Idefics3SimpleMLP)
        tower = siglip({**_IDEFICS3_VISION, **vc, "vision_use_head": False})
        return tower + vh * _whole(cfg, "scale_factor", 2) ** 2 * th
    if wrapper in ("glm4v", "glm4v_moe", "glm46v", "glmga") and family in ("glm4v_vision", "glm4v_moe_vision"):
        return glm4v_vision(vc)  # its merger maps into out_hidden_size, the language model's width
    if (wrapper, family) in (("internvl", "internvl_vision"), ("qianfan_ocr", "qianfan_ocr_vision")):
        # InternVLMultiModalProjector (Qianfan-OCR's tower and projector are InternVL's): the pixel shuffle's
        merged = vh * int(1 / float(_get(cfg, "downsample_ratio", 0.5))) ** 2  # LayerNorm and two linears
        return internvl_vision(vc) + 2 * merged + _lin(merged, th) + _lin(th, th)
    if wrapper in ("gemma4", "gemma4_unified") and family == "gemma4_vision":  # Gemma4MultimodalEmbedder
        return gemma4_vision(vc) + vh * th
    return _vision_more(cfg, vc, th, wrapper, family, vh)


def _vision_more(cfg: dict[str, Any], vc: dict[str, Any], th: int, wrapper: str, family: str, vh: int) -> int | None:
    """The wrappers of towers memviz counts whose projectors `_vision` does not list (transformers 5.24): PaliGemma's
    one biased linear into projection_dim, ShieldGemma 2's Gemma 3 projector, Command A Vision's pixel shuffle into a
    SwiGLU (alignment_intermediate_size, halved), LFM2-VL's into a two-layer MLP (optional LayerNorm), LightOnOCR's
    Pixtral, EXAONE 4.5's Qwen2.5-VL tower, HyperCLOVA X SEED Vision 2's (and its linear), PaddleOCR-VL's SigLIP
    (its merged-patch MLP), GLM-OCR's own, Cosmos3 Omni's Qwen3-VL tower, Llama 3.2 Vision's (a biased linear
    from vision_output_dim: the last layer's and the intermediate layers' outputs side by side) and Idefics2's (its
    SwiGLU and perceiver resampler), MiniCPM-V 4.6's / 4.7's / MiniCPM-OCR's (its window merger and downsampling
    MLPs); the Qwen2.5-Omni and Qwen3-Omni thinkers' Qwen2.5-VL and Qwen3-VL towers (their
    audio encoders: `omni_audio`); VipLLaVA's CLIP tower and normed projector, Video-LLaVA's two CLIP towers, Aya
    Vision's SigLIP and its pixel-shuffle SwiGLU, Molmo 2's tower and pooling adapter, GOT-OCR2's SAM tower and
    convolutional projector, VideoLLaMA 3's SigLIP blocks and MLP projector, DeepSeek-VL's SigLIP and aligner (with its
    hybrid variant's high-resolution SAM tower), LFM3-VL's convolution / attention tower, Kimi-K2.5's
    MoonViT and its projection, Aria's Idefics3 tower and cross-attention projector, Ovis2's AIMv2 tower with its
    visual tokenizer head and embedding table, Muse Glimmer's and Muse Spark's tower, adapter and projection (Muse
    Spark's audio encoder: `muse_spark_audio`), MiniMax-M3-VL's tower and two-stage projector, HY-V4-VL's tower and patch
    merger, Step 3.7's tower, downsamplers and projector, Granite Docling's SigLIP and DeepStack connector,
    Phi-4-multimodal's image embedder (its audio conformer: `phi4mm_audio`), Janus's tower, aligner and image
    generation path (its VQ-VAE: `janus_vqgan`), Cosmos3 Edge's SigLIP 2 tower and patch merger, Cohere Compass's
    Qwen3-VL tower."""
    if wrapper == "paligemma" and family == "siglip_vision_model":  # PaliGemmaMultiModalProjector
        return siglip(vc) + _lin(vh, _whole(vc, "projection_dim", 2048))
    if wrapper == "shieldgemma2" and family == "siglip_vision_model":  # Gemma3MultiModalProjector
        return siglip(vc) + vh * th + vh
    if wrapper == "cohere2_vision" and family == "siglip_vision_model":  # Cohere2VisionMultiModalProjector
        inter = _whole(cfg, "alignment_intermediate_size", 36864)
        return siglip(vc) + _lin(vh * _whole(cfg, "downsample_factor", 2) ** 2, inter) + _lin(inter // 2, th)
    if wrapper == "qwen2_5_omni_thinker":  # Qwen2_5OmniVisionEncoder: Qwen2.5-VL's tower and merger
        return qwen2_5_vision(vc, th)
    if wrapper == "qwen3_omni_moe_thinker":  # Qwen3OmniMoeVisionEncoder: Qwen3-VL's, deepstack mergers included
        return qwen3_vision(vc, th)
    if wrapper in ("minicpmv4_6", "minicpmv4_7", "minicpm_ocr"):
        return minicpmv_vision(cfg, vc, th)
    if wrapper == "idefics2":  # Idefics2VisionTransformer whatever its vision_config names
        return idefics2_vision(cfg, vc, th)
    if wrapper == "mllama" and family == "mllama_vision_model":  # MllamaModel.multi_modal_projector: one biased
        return mllama_vision(vc) + _lin(_whole(vc, "vision_output_dim", 7680), th)  # linear into the text width
    if (wrapper, family) in (("cosmos3_omni", "qwen3_vl_vision"), ("cohere_compass", "cohere_compass_vision")):
        return qwen3_vision(vc, th)  # Qwen3-VL's tower with its deepstack mergers (CohereCompassVisionModel's too)
    if wrapper == "glm_ocr" and family == "glm_ocr_vision":
        return glm_ocr_vision(vc)
    if wrapper == "lighton_ocr" and family == "pixtral":  # LightOnOcrMultiModalProjector: Mistral 3's norm and patch
        merge = _whole(cfg, "spatial_merge_size", 2)  # merger, its MLP from the tower's width, without biases
        return pixtral(vc) + vh + vh * merge * merge * vh + vh * th + th * th
    if wrapper == "exaone4_5" and family == "exaone4_5_vision":
        return exaone4_5_vision(vc, th)
    if wrapper == "llava_onevision1_5" and family == "llava_onevision1_5_vision":  # the merger is its projector
        return llava_onevision1_5_vision(vc)
    if wrapper == "hyperclovax_vision_v2" and family == "qwen2_5_vl_vision":  # one biased linear from the merger's
        return qwen2_5_vision(vc, th) + _lin(_whole(vc, "out_hidden_size", 3584), th)  # out_hidden_size
    if wrapper == "paddleocr_vl" and family == "paddleocr_vl_vision":  # SigLIP's blocks, no pooling head;
        merged = vh * _whole(vc, "spatial_merge_size", 2) ** 2  # PaddleOCRProjector: LayerNorm, two biased linears
        return siglip({**vc, "vision_use_head": False}) + 2 * vh + _lin(merged, merged) + _lin(merged, th)
    if wrapper == "aya_vision" and family == "siglip_vision_model":  # AyaVisionMultiModalProjector: pixel shuffle,
        merged = vh * _whole(cfg, "downsample_factor", 2) ** 2  # LayerNorm, a biased SwiGLU (alignment_intermediate_
        inter = _whole(cfg, "alignment_intermediate_size", th)  # size, else the text width; halved) into the text width
        return siglip(vc) + 2 * merged + _lin(merged, inter) + _lin(inter // 2, th)
    if wrapper == "molmo2" and family == "molmo2_vision":
        return molmo2_vision(cfg, vc, th)
    if (wrapper, family) in (("got_ocr2", "got_ocr2_vision"), ("pp_chart2table", "pp_chart2table_vision")):
        return got_ocr2_vision(vc, th)  # PPChart2TableConfig is GotOcr2Config: GotOcr2ForConditionalGeneration
    if wrapper == "aria" and family == "idefics3_vision":  # Idefics3VisionTransformer (SigLIP's blocks, no head);
        # AriaProjector: learned queries, AriaCrossAttention (bias-free q/k/v, an nn.MultiheadAttention, a biased
        # linear, two LayerNorms), a LayerNorm and a bias-free MLP through the text width
        queries = _whole(cfg, "max_value_projector_patch_to_query_dict", 256)
        cross = 3 * vh * vh + (3 * vh * vh + 3 * vh) + _lin(vh, vh) + _lin(vh, vh) + 4 * vh
        tower = siglip({**_IDEFICS3_VISION, **vc, "vision_use_head": False})
        return tower + queries * vh + cross + 2 * vh + vh * th + th * th
    if (wrapper, family) in (("muse_glimmer", "muse_glimmer_vision"), ("muse_spark", "muse_spark_vision")):
        return muse_vision(cfg, vc, th)
    if wrapper == "granite_docling" and family == "granite_docling_vision":
        return granite_docling_vision(cfg, vc)
    if wrapper == "hy_v4_vl" and family == "hy_v4_vl_vision":
        return hy_v4_vision(vc)
    if wrapper == "step3p7" and family == "step3p5_vision":
        return step3p7_vision(cfg, vc, th)
    if wrapper == "minimax_m3_vl" and family == "minimax_m3_vl_vision":
        return minimax_m3_vision(cfg, vc, th)
    if wrapper == "ovis2" and family == "ovis2_vision":
        return ovis2_vision(cfg, vc, th)
    if wrapper == "ovis2_5" and family == "ovis2_5_vision":
        return ovis2_5_vision(vc, th)
    if wrapper == "kimi_k25" and family == "kimi_k25_vision":
        return kimi_k25_vision(cfg, vc, th)
    if wrapper == "lfm3_vl" and family == "lfm3_vl_vision":
        return lfm3_vl_vision(cfg, vc, th)
    if wrapper == "janus" and family == "janus_vision_model":
        return janus_vision(cfg, vc)
    if wrapper == "phi4_multimodal" and family == "phi4_multimodal_vision":  # Phi4MultimodalImageEmbedding: SigLIP
        # with its head, the global and sub-image separators (one vision-wide vector each), two biased projections
        return siglip(vc) + 2 * vh + _lin(vh, th) + _lin(th, th)
    if wrapper == "deepseek_vl" and family == "siglip_vision_model":  # DeepseekVLAligner: two biased linears
        return siglip(vc) + _lin(vh, th) + _lin(th, th)
    if wrapper == "deepseek_vl_hybrid" and family == "siglip_vision_model":
        return deepseek_vl_hybrid_vision(cfg, vc, th)
    if vc.get("model_name") == "deeplip_b_l":  # DeepSeek-OCR's release (wrapper deepseek_vl_v2, family "vision")
        return deep_encoder_vision(cfg, vc, th)
    if wrapper == "unlimited_ocr" and family == "unlimited_ocr_vision":
        return unlimited_ocr_vision(vc, th)
    if wrapper == "video_llama_3" and family == "video_llama_3_vision":  # VideoLlama3VisionModel: SigLIP's blocks
        # with rotary positions (no learned ones) and no pooling head; VideoLlama3Projector: two biased linears
        return _siglip_tower({**vc, "vision_use_head": False}, 0) + _lin(vh, th) + _lin(th, th)
    if wrapper == "vipllava" and family == "clip_vision_model":  # VipLlavaMultiModalProjector: a LayerNorm over
        merged = vh * _feature_layers(cfg, [-2, -5, -8, -11, 6])  # the layers' outputs side by side, two biased
        return clip(vc) + 2 * merged + _lin(merged, th) + _lin(th, th)  # linears
    if wrapper == "video_llava" and family == "clip_vision_model":  # VideoLlavaModel: an image and a video tower
        bias = bool(_get(cfg, "multimodal_projector_bias", True))  # (two CLIPVisionModels), LLaVA's projector
        return 2 * clip(vc) + _lin(vh * _feature_layers(cfg, -2), th, bias) + _lin(th, th, bias)
    if wrapper == "lfm2_vl" and family == "siglip2_vision_model":  # Lfm2VlMultiModalProjector
        merged, inner = vh * _whole(cfg, "downsample_factor", 2) ** 2, _whole(cfg, "projector_hidden_size", 2560)
        bias = bool(_get(cfg, "projector_bias", True))
        norm = 2 * merged if _get(cfg, "projector_use_layernorm", True) else 0
        return siglip2(vc) + norm + _lin(merged, inner, bias) + _lin(inner, th, bias)
    if wrapper == "cosmos3_edge" and family == "cosmos3_edge_vision":  # Cosmos3EdgeVisionModel: SigLIP 2's tower
        merged, inner = vh * _whole(vc, "spatial_merge_size", 2) ** 2, _whole(cfg, "projector_hidden_size", 11520)
        # without a pooling head; Cosmos3EdgePatchMerger: a LayerNorm per patch, two biased linears from the merged
        return _siglip_tower({**vc, "vision_use_head": False}, _whole(vc, "num_patches", 256)) + 2 * vh + \
            _lin(merged, inner) + _lin(inner, th)
    return None


#: wrapper model_type -> (the audio encoder model_types it is counted for, the first its family and the default
#: where the config names none; the count of encoder and projector from (wrapper config, audio config, text width),
#: None where memviz cannot count it, or (that count, the part the class keeps float32 in any 16-bit model)). The Omni
#: thinkers' encoders are counted by their own type (`OMNI_AUDIO`)
AUDIO_ENCODERS: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any], dict[str, Any], int],
                                                          int | tuple[int, int] | None]]] = {
    **dict.fromkeys(("gemma4", "gemma4_unified"), (("gemma4_audio",), lambda cfg, ac, th: gemma4_audio(ac) + _whole(
        ac, "output_proj_dims", 1536) * th)),  # and Gemma4MultimodalEmbedder's projection
    "gemma3n": (("gemma3n_audio",), lambda cfg, ac, th: gemma3n_audio(ac, th)),
    "dots3_note": (("dots3_note_audio_encoder",), lambda cfg, ac, th: dots3_audio(ac)),
    "muse_spark": (("muse_spark_audio",), lambda cfg, ac, th: muse_spark_audio(ac)),
    "phi4_multimodal": (("phi4_multimodal_audio",), lambda cfg, ac, th: phi4mm_audio(ac, th)),
    "moss_transcribe_diarize": (("moss_transcribe_diarize_audio",), moss_audio),
    "qwen2_audio": (("qwen2_audio_encoder",), whisper_audio),
    "voxtral": (("voxtral_encoder",), whisper_audio),
    "audioflamingo3": (("audioflamingo3_encoder",), whisper_audio),
    "musicflamingo": (("audioflamingo3_encoder", "musicflamingo_encoder"), whisper_audio),  # MusicFlamingoConfig's own
    "nemotron_h_omni": (("parakeet_encoder", "parakeet"), lambda cfg, ac, th: nemotron_h_omni_audio(ac, th)),
    "glmasr": (("glmasr_encoder",), lambda cfg, ac, th: glmasr_audio(ac, th)),
    "voxtral_realtime": (("voxtral_realtime_encoder",), voxtral_realtime_audio),
    "fun_asr_nano": (("fun_asr_nano_encoder",), fun_asr_nano_audio),
    "omniasr": (("omniasr_audio",), omniasr_audio),
    "apertus1p5": (("wavtokenizer_encoder",), lambda cfg, ac, th: wavtokenizer_encoder(ac)),
    "nemo_speechlm": (("nemotron3_5_transcribe_audio",), nemo_speechlm_audio),
    **dict.fromkeys(("granite_speech", "granite_speech_plus"), (("granite_speech_encoder", "granite_speech_plus_encoder"),
                                                                granite_speech_audio)),
    "vibevoice_asr": (("vibevoice_acoustic_tokenizer_encoder",), vibevoice_asr_audio),
}
#: wrappers whose audio encoder config is not named audio_config
AUDIO_CONFIG_KEYS = {**dict.fromkeys(("granite_speech", "granite_speech_plus"), "encoder_config"),
                     "vibevoice_asr": "acoustic_tokenizer_encoder_config"}
#: wrapper -> the sub-configs its counts read beyond `READ_SUBCONFIGS` and its audio config
WRAPPER_SUBCONFIGS = {**dict.fromkeys(("granite_speech", "granite_speech_plus", "deepseek_vl_v2"), {"projector_config"}),
                      "vibevoice_asr": {"semantic_tokenizer_encoder_config"}}
#: a multimodal config's sub-configs memviz reads: the language model's, the encoders' and the parts counted with them
#: (BLIP's and Granite 4 Vision's Q-Formers, Idefics2's perceiver, Molmo 2's adapter, DeepSeek-VL hybrid's SAM tower,
#: Nemotron 3.5 Transcribe's word-timestamp encoder; DeepSeek-VL2's language_config, the language model's); any other
#: with a model_type is named as not counted
READ_SUBCONFIGS = frozenset({"text_config", "language_config", "vision_config", "audio_config", "vq_config",
                             "qformer_config", "perceiver_config", "adapter_config", "high_res_vision_config",
                             "word_timestamp_config"})
#: wrappers whose class keeps its encoders float32 in any 16-bit model (`_keep_in_fp32_modules_strict`, transformers
#: 5.24): Apertus 1.5's image and audio tokenizers, whose codes are an argmax that half precision flips
STRICT_FLOAT32_WRAPPERS = frozenset({"apertus1p5"})
#: wrapper model_type -> (its VQ image tokenizer's model_type, its count)
VQ_TOKENIZERS: dict[str, tuple[str, Callable[[dict[str, Any]], int]]] = {
    "chameleon": ("chameleon_vqgan", chameleon_vqgan), "emu3": ("emu3_vqgan", emu3_vqgan),
    "janus": ("janus_vqgan", janus_vqgan), "glm_image": ("glm_image_vqmodel", glm_image_vq)}


def encoders(cfg: dict[str, Any], text_hidden: int, processors: dict[str, dict[str, Any]] | None = None
             ) -> tuple[tuple[Encoder, ...], tuple[str, ...]]:
    """The encoders of a multimodal config `cfg` (the outer one, beside `text_config`), and a warning for each
    encoder config memviz cannot count; `processors` the folder's image / video processor configs, which size the
    largest inputs (the released ones' sizes where absent). A malformed encoder config is one InputError."""
    try:
        return _encoders(cfg, text_hidden, processors or {})
    except (TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise InputError(f"vision/audio config is malformed: {exc}") from None


def _encoders(cfg: dict[str, Any], text_hidden: int, processors: dict[str, dict[str, Any]]
              ) -> tuple[tuple[Encoder, ...], tuple[str, ...]]:
    out: list[Encoder] = []
    warnings: list[str] = []
    wrapper = str(cfg.get("model_type"))
    audio_key = AUDIO_CONFIG_KEYS.get(wrapper, "audio_config")
    vc, ac, vq = cfg.get("vision_config"), cfg.get(audio_key), cfg.get("vq_config")
    strict = wrapper in STRICT_FLOAT32_WRAPPERS
    if wrapper == "fuyu":  # FuyuModel.vision_embed_tokens: one biased linear from a patch's pixels
        pixels = _whole(cfg, "patch_size", 30) ** 2 * _whole(cfg, "num_channels", 3)
        out.append(Encoder(VISION, "fuyu", _lin(pixels, text_hidden)))
    if isinstance(vc, dict):
        n = _vision(cfg, vc, text_hidden)
        if n is None:
            warnings.append(f"its vision encoder ({vc.get('model_type') or 'vision_config'}) is not counted; "
                            "transformers and vLLM load it with the language model")
        else:
            wide = n if strict else blip_float32(cfg, vc) if wrapper in BLIP_WRAPPERS else 0
            out.append(Encoder(VISION, str(vc.get("model_type") or cfg.get("model_type")), n,
                               _vision_shape(cfg, vc, text_hidden, processors), float32_parameters=wide,
                               float32_strict=strict))
    if isinstance(ac, dict):
        kinds, count = AUDIO_ENCODERS.get(wrapper, ((), None))
        if kinds and ac.get("model_type", kinds[0]) in kinds and (n := count(cfg, ac, text_hidden)) is not None:
            n, wide = n if isinstance(n, tuple) else (n, n if strict else 0)
            out.append(Encoder(AUDIO, kinds[0], n, float32_parameters=wide, float32_strict=bool(wide)))
        elif ac.get("model_type") in OMNI_AUDIO:
            out.append(Encoder(AUDIO, str(ac["model_type"]), omni_audio(ac)))
        else:
            warnings.append(f"its audio encoder ({ac.get('model_type') or 'audio_config'}) is not counted")
    named = next((cfg[k] for k in ("mm_vision_tower", "vision_tower") if isinstance(cfg.get(k), str)), None)
    if named and not isinstance(vc, dict):  # LLaVA's original layout (its own code): the tower named by a string
        warnings.append(f"its vision tower ({named}, named by the config for the release's own code) is not counted")
    for key, sub in cfg.items():  # an encoder under a name memviz does not read (Granite Speech's encoder_config)
        if key.endswith("_config") and key not in READ_SUBCONFIGS | WRAPPER_SUBCONFIGS.get(wrapper, set()) | {
                audio_key} and isinstance(sub, dict) and sub.get("model_type"):
            warnings.append(f"its {key.removesuffix('_config').replace('_', ' ')} ({sub['model_type']}) is not counted")
    kind, count_vq = VQ_TOKENIZERS.get(wrapper, ("", None))
    if isinstance(vq, dict) and count_vq and vq.get("model_type", kind) == kind:
        out.append(Encoder(VISION, kind, count_vq(vq)))  # the wrapper model's vqmodel
    elif isinstance(vq, dict):  # another wrapper's image tokenizer
        warnings.append(f"its VQ image tokenizer ({cfg['vq_config'].get('model_type') or 'vq_config'}) is not counted; "
                        "transformers loads it with the language model")
    return tuple(out), tuple(warnings)


def describe(towers: tuple[Encoder, ...]) -> str:
    """The encoders in words: "vision 423,060,336 (siglip_vision_model)"; "" for a text-only model."""
    return "; ".join(f"{e.modality} {e.parameters:,d} ({e.family})" for e in towers)
