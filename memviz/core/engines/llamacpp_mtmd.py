"""libmtmd's compute buffers for a multimodal model's mmproj, as llama-server reserves them at start-up.

llama-server loads the mmproj through libmtmd with its own -fa setting (ggml-org/llama.cpp 0c1e570
tools/server/server-context.cpp: `mparams.flash_attn_type = params_base.flash_attn_type`, warm-up on). The clip
context then reserves the graph of one warm-up image (tools/mtmd/clip.cpp `clip_model_loader::warmup`,
`get_dummy_batch`, `reserve_compute_meta`): for Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5 towers a square of
46 x 46 merged tokens (`set_warmup_n_tokens(46*46)`: 92 x 92 = 8,464 patches, 1,288 pixels a side at 14-pixel
patches, 1,472 at 16), for Gemma 3's SigLIP its one image size (896 pixels: 4,096 patches), for Gemma 4 16 x 16
tokens pooled 3 x 3 (`set_warmup_n_tokens(256)`: 48 x 48 = 2,304 patches of 16 pixels, 768 pixels a side).

ggml-alloc's peak over each graph, in f32 values a patch, was measured with libmtmd 0c1e570 (llama-cpp-python
0.3.36) on this project's CPU over mmproj files of the released towers' widths and of other hidden, MLP and output
widths (benchmarks/llamacpp_mmproj.py; tests/data/llamacpp/mmproj_buffers.json); the terms are exact to the printed
0.01 MiB in each measured case but one:

- Qwen3-VL / Qwen3.5 (models/qwen3vl.cpp): with flash attention the largest of (6 + deepstack mergers) x hidden,
  ff + 2 x hidden, and, with more than one merger, 4 x hidden + mergers / 2 x out where the last one's features
  are concatenated (Qwen3-VL-32B's out of 5,120 measures 1.0 % under it; an out of 8,192, which no release has,
  far over); without, one f32 score matrix per head (heads x patches) beside (7 + mergers) x hidden. Measured
  with the mergers at the released layers (5, 11, 17 of 24; 8, 16, 24 of 27): mergers on adjacent layers move
  the peak.
- Qwen2-VL (models/qwen2vl.cpp): the larger of 6 x hidden and ff + 2 x hidden with flash attention; the scores
  beside 5 x hidden without.
- Qwen2.5-VL (the same graph with window attention): the window mask, an f32 input of patches x patches, and its f16
  copy for flash attention (1.5 x patches), beside 4 x hidden + the gated MLP's ff while ff is at most half the
  patches (measured: 3,420-3,900 under, 4,300-8,192 over), else 4 x hidden + 2 x ff; without flash attention the
  scores, the f32 mask and 5 x hidden.
- Gemma 3 (models/siglip.cpp): 3 x hidden + ff with flash attention; the scores beside 6 x hidden without.
- Gemma 4 (models/gemma4v.cpp, `build_vit` with a gated MLP): 3 x hidden + 3 x ff with flash attention; the scores
  beside 5 x hidden without. Its two int32 positions a patch stay through the pass, and the f32 pixels' block (3 x
  16 x 16 values a patch) stays a hole where no hidden-wide tensor fits in it: all of it for a tower wider than 768,
  768 - hidden for one of 512 to 768 (measured at 512, 640, 768, 1,024, 1,152 and 1,536).

The Qwen graphs also keep their inputs through the pass: the image's f32 pixels (3 x patch^2 a patch) and the M-RoPE
positions (4 int32 a patch; Qwen2.5-VL's two window indices, 0.5 more). On a GPU the device's buffer holds the whole
peak and the host's ("CPU compute buffer") the inputs filled from host memory (published: Qwen3.6-27B's mmproj on
CUDA 248.10 + 24.93 MiB, Qwen2.5-VL-7B's on ROCm 704.79 + 292.41 MiB; this project measures 248.10 and 704.79).

A larger image than the warm-up's grows the buffer at its first encode (ggml-alloc reserves again). Where the terms
keep their form over the patches (Qwen2-VL, Qwen3-VL, Qwen3.5: measured at 2,116, 8,464 and 19,044 patches; Gemma 4
at 2,304, 4,096, 6,400 and 9,216) memviz gives that size for the largest image llama.cpp takes
(`set_limit_image_tokens`: 4,096 merged tokens for the Qwen towers, 16,384 patches; 1,120 for Gemma 4, 10,080
patches); Qwen2.5-VL's quadratic mask moves its peak between stages, and Gemma 3's images are all one size.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import isqrt
from typing import Any

from memviz.core.arch import MAX_DIMENSION
from memviz.core.errors import InputError
from memviz.core.towers import VISION, Encoder, VisionShape, vision_shape
from memviz.core.units import Unit, format_bytes

#: merged tokens a side of the Qwen towers' warm-up image (clip.cpp `set_warmup_n_tokens(46*46)`)
QWEN_WARMUP_SIDE_TOKENS = 46
#: merged tokens of the largest image llama.cpp gives a Qwen tower (clip.cpp `set_limit_image_tokens(8, 4096)`)
QWEN_MAX_IMAGE_TOKENS = 4096
#: Gemma 4's warm-up side in pooled tokens (`set_warmup_n_tokens(256)`) and its largest image
#: (`set_limit_image_tokens(70, 1120)`)
GEMMA4_WARMUP_SIDE_TOKENS = 16
GEMMA4_MAX_IMAGE_TOKENS = 1120
QWEN3, QWEN25, QWEN2, GEMMA3, GEMMA4 = "qwen3vl", "qwen25vl", "qwen2vl", "gemma3", "gemma4v"
#: merged tokens of the largest image memviz sizes the buffer for, per projector
_MAX_IMAGE_TOKENS = {QWEN3: QWEN_MAX_IMAGE_TOKENS, QWEN2: QWEN_MAX_IMAGE_TOKENS, GEMMA4: GEMMA4_MAX_IMAGE_TOKENS}
#: patches merged (pooled) along a side where the file names no merge (clip.cpp `load_hparams`); 2 for the others
DEFAULT_MERGE = {GEMMA3: 4, GEMMA4: 3}


def warmup_side_patches(kind: str, merge: int, side_patches: int = 0) -> int:
    """Patches along one side of a projector's warm-up image: Gemma 3's one image (`side_patches`), else the
    warm-up's tokens a side (Gemma 4's 16, the Qwen towers' 46) times the merge."""
    if kind == GEMMA3:
        return side_patches
    return (GEMMA4_WARMUP_SIDE_TOKENS if kind == GEMMA4 else QWEN_WARMUP_SIDE_TOKENS) * merge


@dataclass(frozen=True)
class MtmdBuffers:
    """libmtmd's start-up compute buffers for one vision tower: the projector kind (clip.cpp PROJECTOR_TYPE), the
    warm-up image's side in pixels and patches, the bytes of the GPU's (or a CPU run's) buffer, of the host's
    beside a GPU, and of the GPU's buffer after the largest image of `largest_image_tokens` merged tokens (None
    where memviz does not size it; at least the warm-up's, as ggml-alloc reserves again only for a larger graph)."""

    projector: str
    warmup_side_px: int
    patches: int
    device_bytes: int
    host_bytes: int
    largest_image_bytes: int | None
    largest_image_tokens: int = QWEN_MAX_IMAGE_TOKENS


def projector(e: Encoder) -> str:
    """The llama.cpp projector of a vision tower memviz sizes; "" for the others."""
    f = e.family
    if f.startswith("qwen3"):
        return QWEN3
    if f.startswith("qwen2_5"):
        return QWEN25
    if f.startswith("qwen2"):
        return QWEN2
    if f == "gemma4_vision":
        return GEMMA4
    shape = vision_shape(e)
    return GEMMA3 if f.startswith("siglip") and shape is not None and shape.side_patches else ""


#: libmtmd's names of those projectors (tools/mtmd/clip-impl.h PROJECTOR_TYPE_NAMES), as its load prints them, and
#: the tower families memviz gives them
_PROJECTOR_NAMES = {"qwen3vl_merger": (QWEN3, "qwen3_vl"), "qwen2.5vl_merger": (QWEN25, "qwen2_5_vl"),
                    "qwen2vl_merger": (QWEN2, "qwen2_vl"), "gemma3": (GEMMA3, "siglip_vision_model"),
                    "gemma4v": (GEMMA4, "gemma4_vision")}


def encoder_from_log(hparams: dict[str, str], deepstack: int) -> Encoder | None:
    """The vision tower a llama.cpp log's mmproj lines describe (`load_hparams:` projector, n_embd, n_head, n_ff,
    projection_dim, image_size, patch_size, n_merge), with the language model's deepstack count (its GGUF's
    n_deepstack_layers); None for a projector memviz does not size. Its parameters are not printed (0)."""
    try:
        widths = {k: int(hparams[k]) for k in ("n_embd", "n_head", "n_ff", "projection_dim")}
        widths |= {k: int(hparams.get(k, 0)) for k in ("patch_size", "n_merge", "image_size")}
    except (KeyError, ValueError):
        return None
    e = tower_encoder(hparams.get("projector", ""), widths, deepstack)
    return e if e.shape else None


def tower_encoder(projector_name: str, widths: dict[str, int], deepstack: int, parameters: int = 0,
                  stored_bytes: int = 0, file: str = "") -> Encoder:
    """A vision tower as libmtmd loads it: the projector's name and its widths by the names clip.cpp prints them
    (n_embd, n_head, n_ff, projection_dim, patch_size, n_merge: 0 for the projector's default, image_size), sized
    (`Encoder.shape`) where memviz sizes that projector; its family the projector's name otherwise."""
    kind, family = _PROJECTOR_NAMES.get(projector_name, ("", f"mmproj {projector_name}"))
    beyond = next((k for k, v in widths.items() if v > MAX_DIMENSION), None)
    if beyond:
        raise InputError(f"the mmproj's {beyond} of {widths[beyond]:,d} is beyond any real encoder")
    h, heads, ff, out, patch = (widths.get(k, 0) for k in ("n_embd", "n_head", "n_ff", "projection_dim", "patch_size"))
    merge = widths.get("n_merge") or DEFAULT_MERGE.get(kind, 2)
    if not kind or min(h, heads, ff, out, patch) < 1:
        return Encoder(VISION, family, parameters, (), stored_bytes, file)
    if kind == GEMMA3:  # one image size, pooled n_merge x n_merge (clip.cpp PROJECTOR_TYPE_GEMMA3)
        side = widths.get("image_size", 0) // patch
        shape = (side * side, side * side // merge ** 2, h, ff, out, 0, 3 * patch * patch, 0, 0, 0, 4, 2, heads, side)
    elif kind == GEMMA4:  # images up to llama.cpp's largest; vLLM's pass over them is not sized (no held tensors)
        tokens = GEMMA4_MAX_IMAGE_TOKENS
        shape = (tokens * merge * merge, tokens, h, ff, out, 0, 3 * patch * patch, patch * merge, 0, 0, 0, 0, heads, 0)
    else:
        tokens = QWEN_WARMUP_SIDE_TOKENS ** 2
        shape = (tokens * merge * merge, tokens, h, ff, out, deepstack, 3 * 2 * patch * patch, patch * merge, 0, 0,
                 4, 2, heads, 0)
    return Encoder(VISION, family, parameters, shape if shape[0] else (), stored_bytes, file)


def mtmd_buffers(encoders: tuple[Encoder, ...], flash: bool, image_max_tokens: int = 0) -> MtmdBuffers | None:
    """The buffers libmtmd reserves for the model's vision tower, if memviz sizes it; `image_max_tokens`
    llama-server's --image-max-tokens (0: the projector's own), which moves the largest image, not the warm-up's
    (clip.cpp `set_warmup_n_tokens` follows `set_limit_image_tokens`)."""
    for e in encoders:
        kind = projector(e) if e.modality == VISION else ""
        v = vision_shape(e)
        if kind and v is not None:
            return _buffers(kind, v, flash, image_max_tokens)
    return None


def _buffers(kind: str, v: VisionShape, flash: bool, image_max_tokens: int = 0) -> MtmdBuffers:
    merge = isqrt(v.patches // v.tokens)
    patch_px = v.unit // merge if kind != GEMMA3 else isqrt(v.pixels // 3)
    side = warmup_side_patches(kind, merge, v.side_patches)
    device, host = compute_bytes(kind, v, side * side, patch_px, flash)
    most = (image_max_tokens or _MAX_IMAGE_TOKENS[kind]) if kind in _MAX_IMAGE_TOKENS else 0
    largest = max(device, compute_bytes(kind, v, most * merge * merge, patch_px, flash)[0]) if most else None
    return MtmdBuffers(kind, side * patch_px, side * side, device, host, largest, most)


def compute_bytes(kind: str, v: VisionShape, patches: int, patch_px: int, flash: bool) -> tuple[int, int]:
    """(the buffer of the device running the graph, the host's beside a GPU) for an image of `patches` patches of
    `patch_px` pixels: the peak with the inputs the graph keeps, and those inputs."""
    inputs = _input_values(kind, patch_px, patches)
    return (int(4 * patches * (_peak_values(kind, v, patches, flash) + _kept_values(kind, v, inputs, patch_px))),
            int(4 * patches * inputs))


def _input_values(kind: str, patch_px: int, n: int) -> float:
    """Graph inputs a patch (f32 / int32 values): the image's pixels, the Qwen towers' M-RoPE positions (Gemma
    4's two), and Qwen2.5-VL's two window indices (of merged tokens) and its f32 window mask (patches x patches)."""
    pixels = 3 * patch_px ** 2
    if kind in (GEMMA3, GEMMA4):
        return pixels + (2 if kind == GEMMA4 else 0)
    return pixels + 4 + (0.5 + n if kind == QWEN25 else 0)


def _kept_values(kind: str, v: VisionShape, inputs: float, patch_px: int) -> float:
    """What the inputs leave in the buffer at its peak, a patch: all of them for the Qwen graphs, none for
    SigLIP (its pixels freed first), for Gemma 4 its positions and the pixels' block less one hidden-wide tensor
    placed in it where one fits."""
    if kind == GEMMA3:
        return 0
    if kind == GEMMA4:
        pixels = 3 * patch_px ** 2
        return inputs - (v.hidden if v.hidden <= pixels else 0)
    return inputs


def _peak_values(kind: str, v: VisionShape, n: int, flash: bool) -> float:
    """ggml-alloc's peak a patch beyond the inputs, in f32 values (the module's list)."""
    h, ff = v.hidden, v.mlp
    scores = 0 if flash else v.heads * n
    if kind == QWEN3:
        if not flash:
            return scores + (7 + v.deepstack) * h
        merged = 4 * h + v.deepstack / 2 * v.out if v.deepstack > 1 else 0  # concatenated features
        return max((6 + v.deepstack) * h, ff + 2 * h, merged)
    if kind == QWEN2:
        return max(6 * h, ff + 2 * h) if flash else scores + 5 * h
    if kind == QWEN25:
        if not flash:
            return scores + 5 * h
        return 0.5 * n + 4 * h + (ff if ff <= n / 2 else 2 * ff)
    if kind == GEMMA4:
        return 3 * h + 3 * ff if flash else scores + 5 * h
    return 3 * h + ff if flash else scores + 6 * h


def describe(m: dict[str, Any], unit: Unit) -> str:
    """The buffers as the engine's facts hold them (`MtmdBuffers` with "where" and "flash_attn"), in one line."""
    side = m["warmup_side_px"]
    text = (f"compute buffer {format_bytes(m['device_bytes'], unit)} on "
            f"{'the CPU' if m['where'] == 'host' else 'its device'} for the {side} x {side} warm-up image "
            f"({m['patches']:,d} patches, flash attention {'on' if m['flash_attn'] else 'off'})")
    if m["host_bytes"] and m["where"] == "device":
        text += f", its inputs {format_bytes(m['host_bytes'], unit)} in host memory beside a GPU"
    if m["largest_image_bytes"]:
        largest = f"; the largest image ({m.get('largest_image_tokens', QWEN_MAX_IMAGE_TOKENS):,d} tokens)"
        grows = m["largest_image_bytes"] > m["device_bytes"]
        text += f"{largest} grows it to {format_bytes(m['largest_image_bytes'], unit)}" if grows else \
            f"{largest} fits in it"
    return text
