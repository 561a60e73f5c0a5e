"""A llama.cpp load log as a scenario and its measurement.

llama.cpp prints everything memory depends on while it loads a model, so one log is both the input of an
estimate and the measurement to hold it against:
- the GGUF metadata (`src/llama-model-loader.cpp`, the dump `- kv N: KEY TYPE = VALUE` and
  `- type T: N tensors`; arrays print as `arr[TYPE,LEN]`, long ones cut with `...`);
- the context it built (`src/llama-context.cpp`, constructor: `n_ctx`, `n_ctx_seq` / `n_ctx_per_seq`,
  `n_batch`, `n_ubatch`, `n_seq_max`, `flash_attn`, `kv_unified`, and `using full-size SWA cache` for
  --swa-full (`src/llama-kv-cache-iswa.cpp`); older builds prefix the lines
  `llama_new_context_with_model:`), the cache types (`type_k = 'f16'` or `K (q8_0):`), whether a quantized
  cache's attention is rotated (`attn_rot_k = 1`, src/llama-kv-cache.cpp; a quantized cache without it: a build
  before the rotation, or LLAMA_ATTN_ROT_DISABLE=1) and
  `offloaded N/M layers to GPU` and the tensors `-ot` / `--n-cpu-moe` kept in host memory (`src/llama-model.cpp`
  `load_tensors`: `tensor NAME (SIZE TYPE) buffer type overridden to CPU` or `CUDA_Host`; older builds print
  `Tensor NAME buffer type overriden to CPU`);
- what llama-server's `--fit` printed before the load (`common/fit.cpp`: the free memory it measured and, per
  device, "N layers (M overflowing)"), which places the experts of the last layers in host memory;
- its buffers (`memviz.core.importers.logs.llamacpp_buffers`).

A log that holds several loads (a server that reloads, Ollama's vocabulary-only load) is read at its last load
that reserved a compute buffer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from memviz.core.arch import Architecture
from memviz.core.engines.llamacpp_cpu import features_of
from memviz.core.errors import InputError
from memviz.core.formats import KV_FORMATS, LLAMACPP_CACHE_TYPES
from memviz.core.gguf_mixes import GGUF_MIXES, IMATRIX_SUFFIX, QKV_BRANCH_SUFFIX, gguf_type_counts, mix_base
from memviz.core.gguf_names import FUSED_QKV, gguf_name, gguf_tensors
from memviz.core.importers.gguf_file import architecture_from_gguf_config, config_from_gguf
from memviz.core.importers.logs import is_host_buffer, llamacpp_buffers
from memviz.core.inventory import Role
from memviz.core.units import MiB

#: llama.h `enum llama_ftype` -> memviz's GGUF mix names (general.file_type)
FILE_TYPES = {
    0: "fp32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
    19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
    26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 38: "MXFP4_MOE",
}

_LOAD_START = "llama_model_loader: loaded meta data"
_META = re.compile(r"llama_model_loader: - kv\s+\d+:\s+(\S+)\s+(\S+)\s+=\s?(.*)$")
_TENSORS = re.compile(r"loaded meta data with \d+ key-value pairs and (\d+) tensors")
#: the per-layer KV heads and feed-forward widths the model summary prints whole (`llama_model::print_info`, `print_f`
#: over n_layer), where the metadata dump cuts arrays longer than a dozen values
_PER_LAYER = re.compile(r"(?:print_info|llm_load_print_meta): (n_head_kv|n_ff)\s+= \[([\d, ]+)\]")
_PER_LAYER_KEYS = {"n_head_kv": "attention.head_count_kv", "n_ff": "feed_forward_length"}
_TYPE_COUNT = re.compile(r"llama_model_loader: - type\s+(\w+):\s+(\d+) tensors")
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_SETTING = re.compile(r"(?:llama_context|llama_new_context_with_model):\s+(n_ctx|n_ctx_seq|n_ctx_per_seq|n_batch|"
                      r"n_ubatch|n_seq_max|flash_attn|kv_unified)\s+=\s+(\S+)")
_FA_RESOLVED = re.compile(r"Flash Attention was auto, set to (enabled|disabled)")
_TYPE_K = re.compile(r"type_k = '(\w+)'|K \((\w+)\):")
_ATTN_ROT = re.compile(r"attn_rot_[kv] = 1\b")
#: the mmproj's hparams and its warm-up's attention as libmtmd prints them (tools/mtmd/clip.cpp `load_hparams`,
#: `warmup`)
_MMPROJ_HPARAM = re.compile(r"load_hparams:\s+(projector|n_embd|n_head|n_ff|projection_dim|image_size|patch_size|"
                            r"n_merge|n_wa_pattern):\s+(\S+)")
_MMPROJ_FLASH = re.compile(r"warmup: flash attention is (enabled|disabled)")
_NO_VOCAB = "vocab only - skipping tensors"
_OVERRIDE = re.compile(r"[Tt]ensor (\S+?)(?: \([^)]*\))? buffer type overridd?en to (\S+)")
_HOST_BUFFERS = ("CPU", "CUDA_Host")  # CPU, CPU_REPACK, ... and CUDA's pinned host buffer
#: llama-server's `--fit` (common/fit.cpp `common_params_fit_impl`): the free memory it measured and, per device,
#: the layers it gave it and how many of those keep experts in host memory
_FIT_FREE = re.compile(r"projected to use \d+ MiB of device memory vs\. (\d+) MiB of free device memory")
_FIT_DEVICE = re.compile(r"llama_params_fit_impl:\s+- (\S+) .*?:\s+(\d+) layers \(\s*(\d+) overflowing\)")


@dataclass(frozen=True)
class LlamaCppLoad:
    """One model load as llama.cpp reported it."""

    meta: dict[str, Any]
    n_tensors: int | None
    type_counts: dict[str, int]
    settings: dict[str, Any]
    offloaded: tuple[int, int] | None
    buffers: dict[str, dict[str, int]]
    notes: tuple[str, ...] = field(default=())

    @property
    def accelerators(self) -> list[str]:
        """Devices that hold buffers and are not host memory (CUDA0, ROCm0, Metal, Vulkan0, ...)."""
        names = {d for kind in ("model", "kv", "compute") for d in self.buffers[kind]}
        return sorted(d for d in names if not is_host_buffer(d))


def _value(kind: str, text: str) -> Any:
    """A printed metadata value: numbers as numbers, an array of strings as its length, an array of numbers as
    the numbers shown (a cut array keeps what was printed)."""
    text = text.strip()
    m = re.fullmatch(r"arr\[(\w+),(\d+)\]", kind)
    if m:
        if m.group(1) == "str":
            return int(m.group(2))
        nums = re.findall(r"-?\d+(?:\.\d+)?", text.split("]")[0])
        return [float(n) if "." in n else int(n) for n in nums]
    try:
        if kind in ("u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64"):
            return int(text)
        if kind in ("f32", "f64"):
            return float(text)
    except ValueError:
        return text  # not the number the type says: kept as printed, an error later only if memory depends on it
    if kind == "bool":
        return text == "true"
    return text


def _loads(text: str) -> list[list[str]]:
    """The log cut into loads (each from its metadata dump on)."""
    parts: list[list[str]] = [[]]
    for line in text.splitlines():
        if _LOAD_START in line and parts[-1]:
            parts.append([])
        parts[-1].append(line)
    return parts


def dumps_metadata(text: str) -> bool:
    """Whether a log prints a model's GGUF metadata (what `read_llamacpp_load` needs to name the model)."""
    return any(_META.search(line) for line in text.splitlines())


def read_llamacpp_load(text: str, need_metadata: bool = True) -> LlamaCppLoad:
    """The last load of a llama.cpp log that reserved a compute buffer (`need_metadata`: and printed the model's
    metadata; without it the caller names the model)."""
    parts = _loads(text)
    for i in reversed(range(len(parts))):
        lines = parts[i]
        if any(_NO_VOCAB in ln for ln in lines):
            continue
        buffers = llamacpp_buffers(lines)
        if buffers["compute"] and (not need_metadata or any(_META.search(ln) for ln in lines)):
            load = _read(lines, buffers, _preamble(parts, i))
            info = next((ln for ln in reversed(text.splitlines()) if _is_system_info(ln)), "")
            if info or "cpu" in load.settings:
                load.settings.setdefault("cpu", features_of(info))
                return load
            return _cpu_from_buffers(load)
    what = "its GGUF metadata dump and " if need_metadata else ""
    raise InputError(f"no llama.cpp load with {what}a compute buffer line in the log")


def read_lines(lines: list[str]) -> LlamaCppLoad:
    """One load's lines read as `read_llamacpp_load` reads a load (an excerpt: no compute line needed)."""
    return _read(lines, llamacpp_buffers(lines), [])


def _is_system_info(line: str) -> bool:
    """llama.cpp's `system_info:` line, or the bare `CPU : SSE3 = 1 | ...` that llama-cpp-python prints (its
    `llama_print_system_info()` when verbose)."""
    return "system_info" in line or line.lstrip().startswith("CPU : ")


def _preamble(parts: list[list[str]], i: int) -> list[str]:
    """What the log printed before load `i` began and after the load before it ended: `--fit`'s lines."""
    before = parts[i - 1] if i else []
    ends = [k for k, line in enumerate(before) if "compute buffer size" in line]
    return before[ends[-1] + 1:] if ends else before


def type_counts_of(lines: list[str]) -> dict[str, int]:
    """Tensors per ggml type the loader printed (`llama_model_loader: - type q4_K: N tensors`), names lower-case."""
    return {m.group(1).lower(): int(m.group(2)) for line in lines if (m := _TYPE_COUNT.search(line))}


def _fit_settings(preamble: list[str]) -> dict[str, Any]:
    """What `--fit` printed before the load: the free memory it measured, each device's layers and overflow."""
    out: dict[str, Any] = {}
    for line in preamble:
        if m := _FIT_FREE.search(line):
            out["fit_free_mib"] = int(m.group(1))
        elif m := _FIT_DEVICE.search(line):
            out.setdefault("fit_devices", {})[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def _read(lines: list[str], buffers: dict[str, dict[str, int]], preamble: list[str]) -> LlamaCppLoad:
    meta: dict[str, Any] = {}
    counts = type_counts_of(lines)
    settings: dict[str, Any] = _fit_settings(preamble)
    n_tensors = offloaded = None
    for line in lines:
        if m := _META.search(line):
            meta[m.group(1)] = _value(m.group(2), m.group(3))
        elif m := _TENSORS.search(line):
            n_tensors = int(m.group(1))
        elif m := _PER_LAYER.search(line):
            settings.setdefault("per_layer", {})[_PER_LAYER_KEYS[m.group(1)]] = [
                int(v) for v in m.group(2).split(",") if v.strip()]
        elif m := _OFFLOADED.search(line):
            offloaded = (int(m.group(1)), int(m.group(2)))
        elif m := _SETTING.search(line):
            settings.setdefault(m.group(1), m.group(2))
        elif m := _FA_RESOLVED.search(line):
            settings["flash_attn"] = m.group(1)
        elif m := _MMPROJ_HPARAM.search(line):
            settings.setdefault("mmproj", {})[m.group(1)] = m.group(2)
        elif m := _MMPROJ_FLASH.search(line):
            settings.setdefault("mmproj", {})["flash_attn"] = m.group(1)
        elif "using full-size SWA cache" in line:  # llama_kv_cache_iswa with swa_full (--swa-full)
            settings["swa_full"] = True
        elif (m := _OVERRIDE.search(line)) and m.group(2).startswith(_HOST_BUFFERS):
            settings.setdefault("host_tensors", []).append(m.group(1))
        if _ATTN_ROT.search(line):
            settings["attn_rot"] = True
        if (m := _TYPE_K.search(line)) and "type_k" not in settings:
            settings["type_k"] = m.group(1) or m.group(2)
    for suffix, values in settings.pop("per_layer", {}).items():  # a cut array printed whole by the summary
        key = f"{meta.get('general.architecture')}.{suffix}"  # (granitehybrid's and nemotron_h's layer kinds)
        if isinstance(meta.get(key), list) and len(values) > len(meta[key]):
            meta[key] = values
    notes = []
    if any(isinstance(v, list) and len(v) < 2 for v in meta.values()):
        notes.append("an array in the metadata dump was cut; its printed values are used")
    return LlamaCppLoad(meta, n_tensors, counts, settings, offloaded, buffers, tuple(notes))


#: model buffers of the CPU's packed weight types: AMX, CPU_REPACK (named CPU_AARCH64 until early 2025)
PACKED_BUFFERS = ("AMX", "CPU_REPACK", "CPU_AARCH64")


def _cpu_from_buffers(load: LlamaCppLoad) -> LlamaCppLoad:
    """A log without its system_info line: the CPU's weight buffers say whether it packs weights (AMX, or
    CPU_REPACK: read as AVX2, the x86 set; an ARM CPU packs others); none printed, generic."""
    model = load.buffers["model"]
    packed = next((name for name in PACKED_BUFFERS if name in model), None)
    features = "generic" if packed is None else "amx" if packed == "AMX" else "avx2"
    load.settings["cpu"] = features
    if packed is None:
        return load
    note = f"the log has no system_info line; its {packed} buffer is read as a CPU with {features.upper()}"
    return replace(load, notes=(*load.notes, note))


def architecture_of(load: LlamaCppLoad) -> Architecture:
    """The model of a load, from its metadata. What the tensor names decide is not printed: whether the output
    layer is the token embedding (tied), and a Qwen3-Next file's delta-net layout (one `ssm_in` per layer before
    llama.cpp split it). The tensor count decides where memviz names every GGUF tensor, else the printed model
    buffers (the nearer total), else untied with a note."""
    layouts = [set(), {"blk.0.ssm_in.weight"}] if load.meta.get("general.architecture") == "qwen3next" else [set()]
    variants = [_from_metadata(load, names | layout) for layout in layouts
                for names in ({"output.weight", "token_embd.weight"}, {"token_embd.weight"})]
    if load.n_tensors is not None:
        for a in variants:
            if _gguf_tensor_count(a) == load.n_tensors:
                return _with_converter_gates(load, a)
    printed = sum(load.buffers["model"].values())
    if printed:
        return _with_converter_gates(load, min(variants, key=lambda a: abs(_weight_bytes(a, load) - printed)))
    untied = variants[0]
    return untied.with_changes(warnings=(*untied.warnings, "the log does not say whether the output layer is the "
                                         "token embedding; read as a separate tensor"))


def _with_converter_gates(load: LlamaCppLoad, a: Architecture) -> Architecture:
    """A file whose shared-expert gates an earlier converter kept in 16 bits (`shared_gate_gguf_type`): the
    printed tensors per type hold exactly that many more F16 (or BF16) and fewer F32 tensors than the mix rules."""
    gates = sum(1 for t in gguf_tensors(a) if t.role is Role.ROUTER and "shared_expert_gate" in t.name)
    mix = FILE_TYPES.get(load.meta.get("general.file_type"))
    if not gates or mix is None or not load.type_counts:
        return a
    ours, printed = gguf_type_counts(mix, a), load.type_counts
    for kind in ("f16", "bf16"):
        if (printed.get(kind, 0) - ours.get(kind, 0) == gates == ours.get("f32", 0) - printed.get("f32", 0)):
            return a.with_changes(shared_gate_gguf_type=kind.upper())
    return a


def _from_metadata(load: LlamaCppLoad, tensor_names: set[str]) -> Architecture:
    cfg, warnings = config_from_gguf(load.meta, tensor_names)
    name = load.meta.get("general.name") or load.meta.get("general.architecture") or "llama.cpp log"
    return architecture_from_gguf_config(cfg, [*warnings, *load.notes], name=str(name), source="llama.cpp log")


def _gguf_tensor_count(a: Architecture) -> int:
    return len({gguf_name(t, a) for t in gguf_tensors(a)})


def _weight_bytes(a: Architecture, load: LlamaCppLoad) -> int:
    from memviz.core.formats import get_weight_format, weight_bytes

    return weight_bytes(a, get_weight_format(FILE_TYPES.get(load.meta.get("general.file_type"), "F16")))


def _flash(value: str | None) -> str:
    if value in ("1", "enabled", "true"):
        return "on"
    if value in ("0", "disabled", "false"):
        return "off"
    return "auto"


def _typed_by_the_qkv_branch(load: LlamaCppLoad, a: Architecture, mix: str) -> bool:
    """Whether the file's printed tensors per type are those of the older quantizers' attn_qkv branch and not
    those of the rules memviz follows (a fused-QKV model made before llama.cpp stopped reaching that branch)."""
    if a.model_type not in FUSED_QKV or not load.type_counts or mix_base(mix) not in GGUF_MIXES:
        return False
    printed = load.type_counts
    return gguf_type_counts(mix, a) != printed and gguf_type_counts(mix + QKV_BRANCH_SUFFIX, a) == printed


def scenario_of(load: LlamaCppLoad, a: Architecture):
    """The memviz scenario that asks llama.cpp for what this load built."""
    from memviz.core.estimate import Scenario

    s = load.settings
    try:
        n_ctx, seqs = int(s["n_ctx"]), int(s.get("n_seq_max", 1))
        n_ubatch, n_batch = int(s["n_ubatch"]), int(s.get("n_batch", s["n_ubatch"]))
    except (KeyError, ValueError):
        raise InputError("the llama.cpp log does not state n_ctx and n_ubatch") from None
    for name, value in (("n_ctx", n_ctx), ("n_seq_max", seqs), ("n_ubatch", n_ubatch), ("n_batch", n_batch)):
        if value < 1:
            raise InputError(f"the llama.cpp log states {name} = {value}, which llama.cpp does not build")
    kv = {ggml: name for name, ggml in LLAMACPP_CACHE_TYPES.items()}.get(s.get("type_k", "f16"))
    if kv is None:
        raise InputError(f"cache type {s.get('type_k')!r} is not one memviz models")
    file_type = load.meta.get("general.file_type")
    mix = FILE_TYPES.get(file_type, "F16")
    if any(key.startswith("quantize.imatrix") for key in load.meta) and f"{mix}{IMATRIX_SUFFIX}" in GGUF_MIXES:
        mix += IMATRIX_SUFFIX  # the quantizer's rules with an importance matrix
    if _typed_by_the_qkv_branch(load, a, mix):
        mix += QKV_BRANCH_SUFFIX
    options = {"n_ubatch": n_ubatch, "n_batch": n_batch, "flash_attn": _flash(s.get("flash_attn")),
               "cpu": s.get("cpu", "generic"),
               "kv_unified": s.get("kv_unified", "true") in ("true", "1"),  # builds before per-stream caches: unified
               "swa_full": bool(s.get("swa_full"))}
    if KV_FORMATS[kv].group and not s.get("attn_rot"):  # a quantized cache: an older build, or the rotation off
        options["attn_rotation"] = False
    if s.get("host_tensors"):  # the loader's own list, as one -ot pattern of exact GGUF names
        options["override_tensor"] = "^(" + "|".join(re.escape(n) for n in s["host_tensors"]) + ")$=CPU"
    device = "cuda" if load.accelerators else "cpu"
    if device == "cuda" and any(name in load.buffers["model"] for name in PACKED_BUFFERS):
        options["host_buffer"] = False  # packed beside a GPU: --no-host, or a build listing the packed types first
    gpu_layers = None
    if load.offloaded and device == "cuda" and load.offloaded[0] < load.offloaded[1]:
        gpu_layers = load.offloaded[0]
    sc = Scenario(name=str(a.name), weight_format=mix, kv_format=kv,
                  context_tokens=max(n_ctx // seqs, 1), batch=seqs, engine="llamacpp", device=device,
                  gpu_layers=gpu_layers, options=tuple(sorted(options.items())),
                  extrapolate=True)  # llama.cpp builds a context beyond the trained length (it warns)
    return _fitted(load, a, sc) if device == "cuda" and "override_tensor" not in options else sc


def _fitted(load: LlamaCppLoad, a: Architecture, sc):
    """A MoE load `--fit` placed on one GPU with the experts of its last layers in host memory (its fit line says
    how many): the same placement (`llamacpp_fit.logged_placement`) as -ot rules."""
    from memviz.core.engines.llamacpp_fit import logged_placement

    devices, free = load.settings.get("fit_devices", {}), load.settings.get("fit_free_mib")
    if len(devices) != 1 or free is None or not a.is_moe:
        return sc
    (n_layer, n_part), = devices.values()
    first = a.num_layers + 1 - n_part  # common/fit.cpp: the overflowing layers are the last n_part of n_layer
    if not 0 < n_part <= n_layer <= a.num_layers + 1 or sc.gpu_layers not in (None, n_layer) or first < 0:
        return sc
    placement = logged_placement(a, sc, first, free * MiB)
    return sc.with_changes(options={**sc.engine_options, **placement.options(a)})
