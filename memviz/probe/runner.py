"""The probe process: run a real transformers model and measure where its memory goes.

Recipe (shared/notes/measurement.md): baseline before torch is imported (CPU) or
before a CUDA context exists (NVML); runtime overhead after the imports and a
warm-up; weights = the model's unique parameter/buffer storages (cross-checked
against the allocator / RSS growth at load); KV = the bytes of the cache tensors'
storages after generation; activations = the peak above the steady state during
prefill and decode, minus the KV cache; overhead = what the peak holds beyond
those three (interpreter, libraries, CUDA context, allocator reserve). Equal-
length synthetic prompts, generation forced to the full length, one warm-up
forward before timing; CUDA timings are synchronised. bitsandbytes (--quant)
quantizes while loading: a --config/--preset source is first written as a
random-initialised safetensors checkpoint to a temporary folder, then loaded
like downloaded weights (CUDA, or the CPU backend of bitsandbytes >= 0.48).
Several GPUs (--device cuda:0,1): accelerate's balanced device map places whole
layers (a pipeline split, the estimate's pp), each GPU is measured on its own and
the result names the busiest one, with every device's stack in `per_device`.

Security: nothing is downloaded (HF_HUB_OFFLINE, local_files_only); code from a
model folder runs only with --trust-remote-code; weights load from safetensors
only, unless --allow-pickle (then torch.load with weights_only=True).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from memviz.probe.protocol import COMPONENTS, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, EXIT_OOM, encode

_LOCK = threading.Lock()
T0 = time.perf_counter()


_ENDED = threading.Event()  # set by a run's result or error, cleared by the next run's start


def emit(event: str, **fields: Any) -> None:
    """One protocol line; after the run's `result` or `error` the sampler thread's samples are dropped, so
    the terminal line is the last one."""
    with _LOCK:
        if event == "start":
            _ENDED.clear()
        elif event in ("result", "error"):
            _ENDED.set()
        elif _ENDED.is_set():
            return
        sys.stdout.write(encode(event, **fields) + "\n")
        sys.stdout.flush()


#: the QuantizedCache kinds, memviz's KV formats (core/engines/transformers_cache.py `QUANTIZED_CACHES`, imported
#: where used: the core stays out of the probe's start-up, whose memory it measures)
QUANTIZED_CACHES = ("int4", "int2", "fp8")


class BadInput(Exception):
    """Bad options or model source: exit status 2 with one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print usage and exit(2) on its own
        raise BadInput(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memviz probe", description="Measure a real model's memory (JSON lines on stdout); "
                "'memviz probe --engine llamacpp --help' for llama.cpp.")
    p.add_argument("--engine", default="transformers", choices=["transformers"])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--preset", help="bundled preset (random-initialised, no download)")
    src.add_argument("--config", help="config.json or folder (random-initialised)")
    src.add_argument("--model", help="local model folder with weights (from_pretrained, local files only)")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--quant", default="none", choices=["none", "bnb-int8", "bnb-nf4"])
    p.add_argument("--device", default="auto",
                   help="auto | cpu | cuda | cuda:N | cuda:N,M,... (whole layers spread over those GPUs)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt", type=int, default=128, help="prompt tokens per sequence")
    p.add_argument("--new", type=int, default=16, help="new tokens generated per sequence")
    p.add_argument("--attn", default="auto", choices=["auto", "sdpa", "eager"],
                   help="attention implementation; auto: what transformers chooses for the model (eager where it has "
                        "no SDPA path, e.g. Gemma-2)")
    p.add_argument("--cache", default="dynamic", choices=["dynamic", "static", *QUANTIZED_CACHES],
                   help="the generate cache: DynamicCache, StaticCache, or QuantizedCache (int4 / int2: optimum-quanto; "
                        "fp8: transformers 5.25+)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    p.add_argument("--trust-remote-code", action="store_true", help="allow code from the model folder to run")
    p.add_argument("--allow-pickle", action="store_true", help="allow .bin weights (loaded with weights_only=True)")
    add_run_arguments(p)
    return p


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The options every probe backend takes: output, sampling, the memory guard and storing the run."""
    p.add_argument("--json", action="store_true", help="accepted for symmetry; output is always JSON lines")
    p.add_argument("--sample-interval", type=float, default=0.25, help="seconds between memory samples (0.01 to 60)")
    p.add_argument("--force", action="store_true",
                   help="run even when the estimate says the run needs more memory than this machine has")
    p.add_argument("--no-store", action="store_true", help="do not keep this run for calibration")


# --- model source -----------------------------------------------------------------


def _source(args) -> tuple[dict[str, Any], Any, str | None]:
    """(HF config dict, memviz Architecture, model folder or None)."""
    from memviz.core.errors import InputError

    try:
        if args.preset:
            from memviz.core.presets import get_preset

            p = get_preset(args.preset)
            return dict(p.config), p.architecture(), None
        from memviz.core.arch import from_hf_config, load_config

        if args.config:
            cfg = load_config(args.config)
            return cfg, from_hf_config(cfg, name=Path(args.config).stem), None
        folder = Path(args.model)
        if not folder.is_dir():
            raise BadInput(f"--model must be a folder with config.json and weights: {folder}")
        from memviz.core.importers import import_path

        cfg = load_config(folder)
        return cfg, import_path(folder), str(folder)
    except InputError as exc:
        raise BadInput(str(exc)) from None


def hf_config(cfg: dict[str, Any]):
    """The transformers config the probe builds its model from: a multimodal wrapper's language model only (a Qwen-Omni
    checkpoint's thinker's), from its text_config. Where AutoModelForCausalLM has no class for that: the wrapper's,
    whose causal-LM class builds the language model alone (Llama 3.2 Vision: MllamaForCausalLM), else the decoder
    memviz reads it as (`decoder_type`: the Qwen-Omni thinkers' are Qwen2's / Qwen3-MoE's, tensor for tensor)."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES as causal

    from memviz.core.arch import decoder_type, omni_thinker

    cfg = dict(omni_thinker(cfg)[0])
    text = cfg.get("text_config")
    if isinstance(text, dict) and (text.get("model_type") in causal or cfg.get("model_type") not in causal):
        cfg = dict(text)
        read_as = decoder_type(str(cfg.get("model_type")))
        if cfg.get("model_type") not in causal and read_as in causal:
            cfg["model_type"] = read_as
    cfg.pop("quantization_config", None)  # random init in the chosen dtype; quantization is --quant
    model_type = cfg.pop("model_type", None)
    if not model_type:
        raise BadInput("config has no model_type")
    try:
        built = AutoConfig.for_model(model_type, **cfg)
    except (ValueError, KeyError) as exc:
        raise BadInput(f"transformers cannot build a '{model_type}' config: {exc}") from None
    if model_type not in causal:  # Molmo 2's Molmo2TextModel: only its wrapper, with the vision tower, generates
        raise BadInput(f"transformers has no causal-LM class for '{model_type}': the probe cannot build this model's "
                       "language model alone")
    return built


def estimate_result(arch, args, devices: list[str], context_tokens: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """memviz's own estimate for the same model and settings, in the result's shape (the busiest device;
    with several GPUs also each one's, as a pipeline split of whole layers), and its scenario."""
    from memviz.core.estimate import Scenario, estimate

    weights = {"none": args.dtype, "bnb-int8": "llm-int8", "bnb-nf4": "bnb-nf4"}[args.quant]
    if not args.model:  # from a config the probe builds a wrapper's language model only (`hf_config`)
        arch = arch.with_changes(encoders=())
    if args.model and arch.stored and args.quant == "none":
        weights = "stored"
    kv = args.cache if args.cache in QUANTIZED_CACHES else args.dtype
    sc = Scenario(weight_format=weights, kv_format=kv, context_tokens=context_tokens, batch=args.batch,
                  engine="transformers", options={"images": 0},  # text prompts: no image in a cross-attention layer
                  device="cpu" if devices == ["cpu"] else "cuda",
                  attention=None if args.attn == "auto" else args.attn,
                  pp=len(devices))
    e = estimate(arch, sc)
    out: dict[str, Any] = {**e.bytes, "peak": e.total}
    if len(devices) > 1:
        out["per_device"] = [{"device": d, "weights": u.weights, "kv_cache": u.kv_cache, "activations": u.activations,
                              "overhead": u.overhead, "peak": u.total} for d, u in zip(devices, e.devices, strict=True)]
    return out, sc.to_dict()


# --- measuring helpers -----------------------------------------------------------------


def _requested_attention(args) -> str | None:
    """--attn for transformers: None lets it choose the model's default."""
    return None if args.attn == "auto" else args.attn


def attention_used(model) -> str:
    """The attention implementation transformers loaded, as memviz names it (sdpa, eager, flash)."""
    used = str(getattr(model.config, "_attn_implementation", None) or "eager")
    return "flash" if used.startswith("flash_attention") else used if used in ("sdpa", "eager") else "sdpa"


def storage_bytes(tensors) -> int:
    """Bytes of the distinct storages behind `tensors` (views and tied weights counted once)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        s = t.untyped_storage()
        key = (s.data_ptr(), s.device.type)
        if key not in seen:
            seen.add(key)
            total += s.nbytes()
    return total


def random_checkpoint(cfg: dict[str, Any], dtype, folder: str, trust_remote_code: bool) -> str:
    """Write a random-initialised safetensors checkpoint of `cfg` to `folder` in a child process
    (memviz.probe.checkpoint), so that bitsandbytes quantizes it while loading exactly as it does
    downloaded weights, and this process's memory holds nothing of the random model."""
    import subprocess

    config_path = Path(folder) / "source-config.json"
    config_path.write_text(json.dumps(cfg), encoding="utf-8")
    cmd = [sys.executable, "-m", "memviz.probe.checkpoint", str(config_path), str(dtype).removeprefix("torch."), folder]
    r = subprocess.run(cmd + (["--trust-remote-code"] if trust_remote_code else []), capture_output=True, text=True)
    if r.returncode:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"writing the random checkpoint for --quant failed: {tail}")
    return folder


def weight_tensors(model):
    """Parameters and buffers, plus the quantization state bitsandbytes keeps beside them and not as
    either: NF4 blocks' absmax and code (`Params4bit.quant_state`), LLM.int8 row scales (`Int8Params.SCB`)."""
    for p in model.parameters():
        yield p
        qs = getattr(p, "quant_state", None)
        for state in (qs, getattr(qs, "state2", None)):
            if state is not None:
                yield state.absmax
                yield state.code
        yield getattr(p, "SCB", None)
    yield from model.buffers()


def addressed_bytes(tensors) -> int:
    """Bytes the tensors themselves address (a view counts its own elements, not its storage)."""
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def cache_keyword(model) -> str:
    """The forward argument that takes the cache (transformers 5.2x renamed `past_key_values` to `cache`)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def check_quantized_cache(kind: str, arch, dtype: str) -> None:
    """A QuantizedCache the model takes (`transformers_cache.check`) and whose backend is installed, before loading."""
    if kind not in QUANTIZED_CACHES:
        return
    from memviz.core.engines import transformers_cache
    from memviz.core.engines.base import compute_bytes
    from memviz.core.errors import InputError

    try:
        transformers_cache.check(arch, kind, compute_bytes(dtype))
    except InputError as exc:
        raise BadInput(str(exc)) from None
    backend = transformers_cache.backend(kind)
    if backend == "quanto" and (importlib.util.find_spec("optimum") is None
                                or importlib.util.find_spec("optimum.quanto") is None):
        raise BadInput(f"the {kind} cache runs on optimum-quanto: pip install optimum-quanto")
    from transformers import cache_utils

    if backend == "fp8" and not hasattr(cache_utils, "Fp8QuantizedLayer"):
        raise BadInput("this transformers has no fp8 QuantizedCache (transformers 5.25 has)")


def quantized_cache(config, kind: str):
    """transformers' QuantizedCache for memviz's KV format `kind` (`transformers_cache.QUANTIZED_CACHES`)."""
    from transformers.cache_utils import QuantizedCache

    from memviz.core.engines.transformers_cache import QUANTIZED_CACHES as BACKENDS

    backend, nbits = BACKENDS[kind]
    return QuantizedCache(backend=backend, config=config, **({} if backend == "fp8" else {"nbits": nbits}))


def _inner_tensors(obj):
    """The plain tensors in `obj`: a tensor, a tuple of them (fp8's values and scale), or a tensor subclass made of
    others (optimum-quanto's packed tensors: data, scale, shift)."""
    if isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _inner_tensors(item)
    elif hasattr(obj, "__tensor_flatten__") and type(obj).__name__ not in ("Tensor", "Parameter"):
        names, _ = obj.__tensor_flatten__()
        for name in names:
            yield from _inner_tensors(getattr(obj, name))
    elif obj is not None:
        yield obj


def cache_tensors(cache):
    """Every tensor a transformers cache holds per layer, each once: keys and values (one tensor where a layer keeps
    K=V, DeepSeek-V4's `DeepseekV4HCACache`), a sparse-attention indexer's keys (DynamicIndexedLayer; MiniMax-M3's
    MiniMaxM3VLSparseCacheLayer names them idx_keys), the prompt's keys and values an R-SWA layer keeps apart from its
    window (Unlimited-OCR's UnlimitedOcrDynamicReferenceSlidingWindowLayer; its static layer's are views of one
    buffer, whose parts sum to it), a
    linear-attention layer's conv and recurrent states (LinearAttentionCacheLayerMixin, transformers 5.2x
    cache_utils.py, which keeps them in dicts by state index) and DeepSeek-V4's compressed entries and compressor
    buffers (dicts by compressor name)."""
    seen: set[int] = set()
    for layer in getattr(cache, "layers", []):
        tensors = [getattr(layer, name, None) for name in ("keys", "values", "indexer_keys", "idx_keys",
                                                           "prefill_keys", "prefill_values")]
        for name in ("conv_states", "recurrent_states", "compressed_kv", "buffer_kv", "buffer_gate", "overlap_kv",
                     "overlap_gate"):
            states = getattr(layer, name, None)
            if isinstance(states, dict):
                tensors += states.values()
        for name in ("_quantized_keys", "_quantized_values"):  # QuantizedCache's layers
            tensors += _inner_tensors(getattr(layer, name, None))
        for t in tensors:
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                yield t


class Sampler(threading.Thread):
    def __init__(self, meter, interval: float) -> None:
        super().__init__(daemon=True)
        self.meter, self.interval, self.stop_event = meter, interval, threading.Event()

    def run(self) -> None:
        while not self.stop_event.wait(self.interval):
            try:
                emit("sample", t_s=round(time.perf_counter() - T0, 3), **self.meter.sample())
            except Exception:  # the meter may fail during shutdown; samples are best effort
                return


def requested_devices(spec: str) -> list[str]:
    """Devices named by --device, before torch is imported: [] for auto, ["cpu"], or CUDA devices
    ("cuda" = "cuda:0"; "cuda:0,1" spreads the model's layers over GPUs 0 and 1)."""
    if spec == "auto":
        return []
    if spec == "cpu":
        return ["cpu"]
    if spec == "cuda":
        return ["cuda:0"]
    if spec.startswith("cuda:"):
        parts = spec[5:].split(",")
        if all(p.strip().isdigit() for p in parts) and len({int(p) for p in parts}) == len(parts):
            return [f"cuda:{int(p)}" for p in parts]
    raise BadInput(f"unknown device {spec!r} (auto, cpu, cuda, cuda:N, cuda:N,M,...)")


def cuda_index(device: str) -> int:
    """The N of "cuda:N" (devices come from `requested_devices`, always with an index)."""
    return int(device.removeprefix("cuda:"))


def _devices(requested: list[str], torch) -> list[str]:
    if not requested:
        return ["cuda:0"] if torch.cuda.is_available() else ["cpu"]
    if requested[0].startswith("cuda"):
        if not torch.cuda.is_available():
            raise BadInput("CUDA was requested but torch sees no CUDA device")
        count = torch.cuda.device_count()
        if any(cuda_index(d) >= count for d in requested):
            raise BadInput(f"torch sees {count} CUDA device(s): {', '.join(requested)} requested")
    return requested


def by_device(tensors) -> dict[str, list]:
    """Tensors grouped by the device they live on ("cpu", "cuda:0", ...)."""
    out: dict[str, list] = {}
    for t in tensors:
        if t is not None:
            out.setdefault(str(t.device), []).append(t)
    return out


# --- the run ---------------------------------------------------------------------------


def check_sample_interval(seconds: float) -> None:
    if not 0.01 <= seconds <= 60:  # 0 would busy-loop the sampler thread
        raise BadInput(f"--sample-interval must be 0.01 to 60 seconds, got {seconds}")


def check_fits_machine(estimate_peak: int, device_total: int | None, where: str, force: bool) -> None:
    """Refuse, before loading, a run whose estimated peak exceeds this machine's memory (unless forced)."""
    if device_total and estimate_peak > device_total and not force:
        raise BadInput(f"the estimate needs {estimate_peak / 2**30:.1f} GiB but {where} has {device_total / 2**30:.1f} "
                       "GiB: the run would be killed for memory; shrink it, or pass --force to try anyway")


def is_out_of_memory(exc: BaseException) -> bool:
    """torch's CPU allocator raises RuntimeError ("DefaultCPUAllocator: can't allocate memory"), not MemoryError."""
    text = str(exc)
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError" or (
        isinstance(exc, RuntimeError) and ("can't allocate memory" in text or "not enough memory" in text))


def run(args) -> int:
    for key in ("batch", "prompt", "new"):
        if not 0 < getattr(args, key) < 2**31:
            raise BadInput(f"--{key} must be a positive whole number below 2**31")
    check_sample_interval(args.sample_interval)
    requested = requested_devices(args.device)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    cfg_dict, arch, model_dir = _source(args)
    check_quantized_cache(args.cache, arch, args.dtype)
    if arch.learned_positions and args.prompt + args.new > arch.max_position_embeddings:
        raise BadInput(f"{arch.name} has learned positions for {arch.max_position_embeddings} tokens: "
                       f"--prompt + --new ({args.prompt + args.new}) must not exceed it")

    from memviz.probe.memory import NVML, CPUMeter, CUDAMeter

    cpu = CPUMeter()
    cpu.reset_peak()
    baseline_rss = cpu.rss()
    # NVML baselines before any CUDA context exists ("auto" may become cuda:0)
    cuda_indices = [cuda_index(d) for d in requested if d.startswith("cuda")] or ([0] if not requested else [])
    nvml = {i: NVML(i) for i in cuda_indices}
    used_before = {i: n.device_used() for i, n in nvml.items()}
    emit("phase", name="baseline", t_s=round(time.perf_counter() - T0, 3),
         bytes={"rss": baseline_rss, "device_used_other_processes": used_before.get(cuda_indices[0])
                if cuda_indices else None})

    try:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, DynamicCache, StaticCache
    except ImportError as exc:
        raise BadInput(f"the probe needs torch and transformers in {sys.executable} "
                       f"({exc}); install them with: {sys.executable} -m pip install torch transformers") from None
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = _devices(requested, torch)
    on_cuda = devices[0].startswith("cuda")
    needs = ["bitsandbytes", "accelerate"] if args.quant != "none" else ["accelerate"] if len(devices) > 1 else []
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:
        why = f"--quant {args.quant}" if args.quant != "none" else "spreading a model over several GPUs"
        raise BadInput(f"{why} needs {' and '.join(missing)} in {sys.executable}; install with: "
                       f"{sys.executable} -m pip install {' '.join(missing)}")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    hf_cfg = hf_config(cfg_dict) if model_dir is None else None

    if on_cuda:
        meters = {}
        for d in devices:
            index = cuda_index(d)
            torch.zeros(1, device=d)  # the CUDA context on every device used
            torch.cuda.synchronize(index)
            meters[d] = CUDAMeter(torch, index, nvml.get(index) or NVML(index), used_before.get(index))
        first = meters[devices[0]]
        torch.cuda.set_device(first.index)
        name = torch.cuda.get_device_name(first.index)
        total_mem = torch.cuda.get_device_properties(first.index).total_memory
        driver = first.nvml.driver()
    else:
        meters = {"cpu": cpu}
        name = platform.processor() or platform.machine()
        total_mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else None
        driver = None
    runtime_rss = cpu.rss()
    env = dict(device=",".join(devices), devices=devices, device_name=name, torch=torch.__version__,
               transformers=transformers.__version__, python=platform.python_version(), platform=platform.platform(),
               threads=torch.get_num_threads(), driver=driver,
               allocator_conf=os.environ.get("PYTORCH_ALLOC_CONF") or os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
               memory_total=total_mem, peak_resettable=cpu.resettable, dtype=args.dtype, quant=args.quant,
               attn=args.attn, cache=args.cache, batch=args.batch, prompt=args.prompt, new=args.new,
               engine="transformers")
    emit("env", **env)
    emit("phase", name="runtime", t_s=round(time.perf_counter() - T0, 3), bytes={"rss": runtime_rss})
    planned, _ = estimate_result(arch, args, devices, args.prompt + args.new - 1)
    check_fits_machine(int(planned["peak"]), total_mem, devices[0] if on_cuda else "this machine's RAM", args.force)

    group = MeterGroup(meters, on_cuda)
    sampler = Sampler(group, args.sample_interval)
    sampler.start()
    state: dict[str, Any] = {"phase": "load", "runtime_rss": runtime_rss, "baseline_rss": baseline_rss, "env": env}
    measured: dict[str, int | None] = dict.fromkeys(COMPONENTS)
    context_tokens = args.prompt + args.new - 1  # the last generated token is never written to the cache
    # bitsandbytes quantizes while loading, and a spread model is placed while loading: both need a checkpoint
    checkpoint = not model_dir and (args.quant != "none" or len(devices) > 1)
    scratch = tempfile.TemporaryDirectory(prefix="memviz-probe-") if checkpoint else None
    try:
        if scratch is not None:
            state["phase"] = "checkpoint"
            model_dir = random_checkpoint(cfg_dict, dtype, scratch.name, args.trust_remote_code)
            emit("phase", name="checkpoint", t_s=round(time.perf_counter() - T0, 3), bytes={"rss": cpu.rss()})
        return _measure(args, torch, AutoModelForCausalLM, DynamicCache, StaticCache, hf_cfg, model_dir, dtype, devices,
                        group, cpu, state, measured, arch, context_tokens)
    except (torch.cuda.OutOfMemoryError, MemoryError, RuntimeError) as exc:
        if not is_out_of_memory(exc):
            raise
        est, scenario = estimate_result(arch, args, devices, context_tokens)
        emit("result", partial=True, phase_failed=state["phase"], measured=measured, timings={}, estimate=est,
             scenario=scenario, error_pct={}, message=f"out of memory during {state['phase']}: {str(exc).splitlines()[0]}")
        return EXIT_OOM
    finally:
        sampler.stop_event.set()
        if scratch is not None:
            scratch.cleanup()


class MeterGroup:
    """The meters of the devices a model occupies, read together; values are dicts keyed by device."""

    def __init__(self, meters: dict[str, Any], on_cuda: bool) -> None:
        self.meters, self.on_cuda = meters, on_cuda

    def _each(self, method: str) -> dict[str, int]:
        return {d: getattr(m, method)() for d, m in self.meters.items()}

    def reset_peak(self) -> None:
        for m in self.meters.values():
            m.reset_peak()

    def synchronize(self) -> None:
        for m in self.meters.values():
            m.synchronize()

    def allocated(self) -> dict[str, int]:
        return self._each("allocated")

    def reserved(self) -> dict[str, int]:
        return self._each("reserved")

    def peak_allocated(self) -> dict[str, int]:
        return self._each("peak_allocated")

    def peak_reserved(self) -> dict[str, int]:
        return self._each("peak_reserved")

    def process_used(self) -> dict[str, int]:
        return self._each("process_used")

    def sample(self) -> dict[str, Any]:
        """One device: its meter's sample; several: the sum per key, and each device's own."""
        samples = {d: m.sample() for d, m in self.meters.items()}
        if len(samples) == 1:
            return next(iter(samples.values()))
        keys = set.intersection(*(set(v) for v in samples.values()))
        return {**{k: sum(v[k] for v in samples.values()) for k in keys}, "per_device": samples}


def _sub(a: dict[str, int], *others: dict[str, int]) -> dict[str, int]:
    return {d: a[d] - sum(o.get(d, 0) for o in others) for d in a}


def _measure(args, torch, AutoModelForCausalLM, DynamicCache, StaticCache, hf_cfg, model_dir, dtype, devices, group,
             cpu, state, measured, arch, context_tokens) -> int:
    t_run = time.perf_counter()
    on_cuda = group.on_cuda
    first = devices[0]

    def per_device(count, tensors) -> dict[str, int]:
        """`count` (storage_bytes or addressed_bytes) of the tensors on each device."""
        groups = by_device(tensors)
        return {d: count(groups.get(d, [])) for d in devices}

    gc.collect()
    group.reset_peak()
    alloc_before = group.allocated()
    quant_cfg = None
    if args.quant != "none":
        from transformers import BitsAndBytesConfig

        quant_cfg = (BitsAndBytesConfig(load_in_8bit=True) if args.quant == "bnb-int8" else
                     BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=dtype))
    if model_dir is not None:
        placement: dict[str, Any] = {"device_map": first}
        if len(devices) > 1:  # accelerate's balanced split of whole layers over the chosen GPUs, nothing offloaded
            placement = {"device_map": "auto",
                         "max_memory": {cuda_index(d): torch.cuda.get_device_properties(d).total_memory for d in devices}}
        model = AutoModelForCausalLM.from_pretrained(
            model_dir, local_files_only=True, dtype=dtype, attn_implementation=_requested_attention(args),
            trust_remote_code=args.trust_remote_code, use_safetensors=None if args.allow_pickle else True,
            quantization_config=quant_cfg, **placement)
    else:
        with torch.device(first):
            model = AutoModelForCausalLM.from_config(hf_cfg, dtype=dtype, attn_implementation=_requested_attention(args),
                                                     trust_remote_code=args.trust_remote_code)
    model.eval()
    args.attn = state["env"]["attn"] = attention_used(model)  # the estimate and the stored run use what ran
    gc.collect()
    group.synchronize()
    weights = per_device(storage_bytes, weight_tensors(model))
    load_delta = _sub(group.allocated(), alloc_before)
    load_peak = group.peak_reserved()
    emit("phase", name="load", t_s=round(time.perf_counter() - T0, 3), attention=args.attn,
         bytes={"weights_storage": sum(weights.values()), "growth": sum(load_delta.values()),
                "peak": max(load_peak.values()), **({"per_device_weights": weights} if len(devices) > 1 else {})})

    vocab = model.config.get_text_config().vocab_size
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(3, vocab, (args.batch, args.prompt), generator=gen).to(first)
    state["phase"] = "warmup"
    with torch.inference_mode():
        model(input_ids=ids[:1, :8], use_cache=False, logits_to_keep=1)
    group.synchronize()
    gc.collect()
    emit("phase", name="warmup", t_s=round(time.perf_counter() - T0, 3), bytes=group.sample())
    nontorch = _sub(group.process_used(), group.reserved()) if on_cuda else None

    cache_kw = cache_keyword(model)
    if args.cache == "static":
        cache = StaticCache(config=model.config, max_cache_len=args.prompt + args.new)
    elif args.cache in QUANTIZED_CACHES:
        cache = quantized_cache(model.config, args.cache)
    else:
        cache = DynamicCache(config=model.config)
    state["phase"] = "prefill"
    gc.collect()
    group.reset_peak()
    base = group.allocated()
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model(input_ids=ids, **{cache_kw: cache}, use_cache=True, logits_to_keep=1)
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
        del out
        tok_cpu = tok.cpu()  # host sync: the first token exists
    ttft = time.perf_counter() - t0
    kv_prefill = per_device(storage_bytes, cache_tensors(cache))
    # sliding layers keep their window as a view of the prompt-long tensor until the first decode step:
    # the cache proper is what the views address, the rest of their storage is prefill transient
    kv_prefill_kept = per_device(addressed_bytes, cache_tensors(cache))
    peak_prefill = group.peak_allocated()
    reserved_prefill = group.peak_reserved()
    act_prefill = _sub(peak_prefill, base, kv_prefill_kept)
    emit("phase", name="prefill", t_s=round(time.perf_counter() - T0, 3),
         bytes={"peak": max(peak_prefill.values()), "kv_cache": sum(kv_prefill_kept.values()),
                "kv_storage": sum(kv_prefill.values()), "activations": max(act_prefill.values())}, ttft_s=ttft)
    emit("progress", phase="prefill", fraction=1.0)

    state["phase"] = "decode"
    gc.collect()
    group.reset_peak()
    d0 = group.allocated()
    t1 = time.perf_counter()
    steps = args.new - 1
    largest = dict.fromkeys(devices, 0)  # a QuantizedCache shrinks when its residual is quantized: its largest counts
    with torch.inference_mode():
        for i in range(steps):
            position = torch.full((1,), args.prompt + i, dtype=torch.long, device=first)
            out = model(input_ids=tok, **{cache_kw: cache}, cache_position=position, use_cache=True, logits_to_keep=1)
            tok = out.logits[:, -1].argmax(-1, keepdim=True).to(first)
            del out
            if args.cache in QUANTIZED_CACHES:
                now = per_device(storage_bytes, cache_tensors(cache))
                largest = {d: max(largest[d], now[d]) for d in devices}
            if (i + 1) % max(1, steps // 10) == 0:
                tok_cpu = tok.cpu()
                emit("progress", phase="decode", fraction=round((i + 1) / steps, 3))
        tok_cpu = tok.cpu()
    decode_s = time.perf_counter() - t1
    del tok_cpu
    kv_final = per_device(storage_bytes, cache_tensors(cache))
    kv_final = {d: max(kv_final[d], largest[d]) for d in devices}
    peak_decode = group.peak_allocated()
    reserved_decode = group.peak_reserved()
    act_decode = {d: peak_decode[d] - d0[d] - (kv_final[d] - kv_prefill[d]) for d in devices}
    emit("phase", name="decode", t_s=round(time.perf_counter() - T0, 3),
         bytes={"peak": max(peak_decode.values()), "kv_cache": sum(kv_final.values()),
                "activations": max(act_decode.values())}, decode_s=decode_s)

    per_device = []
    for d in devices:
        act = max(act_prefill[d], act_decode[d], 0)
        if on_cuda:  # the process's device memory at its peak: non-torch + what the caching allocator reserved
            peak = (nontorch[d] or 0) + max(reserved_prefill[d], reserved_decode[d], load_peak[d])
        else:
            peak = max(load_peak[d], peak_prefill[d], peak_decode[d])
        per_device.append({"device": d, "weights": weights[d], "kv_cache": kv_final[d], "activations": act,
                           "overhead": peak - weights[d] - kv_final[d] - act, "peak": peak})
    busiest = max(per_device, key=lambda u: u["peak"])
    measured.update({k: busiest[k] for k in COMPONENTS})
    if on_cuda:
        b = busiest["device"]
        extra = {"nontorch": nontorch[b],
                 "fragmentation": max(reserved_prefill[b], reserved_decode[b]) - max(peak_prefill[b], peak_decode[b])}
    else:
        extra = {"rss_baseline": state["baseline_rss"], "rss_after_imports": state["runtime_rss"],
                 "load_growth": load_delta["cpu"]}
    timings = {"ttft_s": ttft, "decode_tokens_per_s": args.batch * steps / decode_s if steps and decode_s > 0 else None,
               "total_s": time.perf_counter() - t_run}
    est, scenario = estimate_result(arch, args, devices, context_tokens)
    error_pct = {k: ((est[k] - measured[k]) / measured[k] * 100 if measured[k] else None) for k in COMPONENTS}
    result = dict(partial=False, measured=measured, timings=timings, estimate=est, scenario=scenario, error_pct=error_pct,
                  attention=args.attn,
                  context_tokens=context_tokens, details=extra, model=arch.name)
    if len(devices) > 1:
        result["per_device"] = per_device
    if not args.no_store:
        from memviz.core.calibration import save_run

        try:
            result["stored_run"] = save_run(state["env"], result).id
        except OSError as exc:  # a read-only data folder must not lose the measurement
            result["stored_run"] = None
            print(f"memviz probe: could not store the run: {exc}", file=sys.stderr)
    emit("result", **result)
    return EXIT_OK


def _engine(argv: list[str]) -> str:
    """The --engine value among the arguments (transformers when absent)."""
    for i, arg in enumerate(argv):
        if arg.startswith("--engine="):
            return arg.partition("=")[2]
        if arg == "--engine" and i + 1 < len(argv):
            return argv[i + 1]
    return "transformers"


def _terminate(signum, _frame) -> None:
    """Stop (SIGTERM) unwinds like Ctrl+C, so that temporary checkpoints and child processes are cleaned up."""
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    emit("start", pid=os.getpid(), argv=argv, executable=sys.executable)
    if threading.current_thread() is threading.main_thread():
        import signal

        signal.signal(signal.SIGTERM, _terminate)
    try:
        if _engine(argv) == "llamacpp":
            from memviz.probe import llamacpp_runner

            return llamacpp_runner.run(llamacpp_runner.parser().parse_args(argv))
        return run(parser().parse_args(argv))
    except BadInput as exc:
        emit("error", kind="bad_input", message=str(exc), phase="setup")
        print(f"memviz probe: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        emit("error", kind="interrupted", message="interrupted", phase="run")
        return EXIT_FAILED
    except Exception as exc:
        emit("error", kind=type(exc).__name__, message=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
             phase="run", traceback=traceback.format_exc())
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

