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


def emit(event: str, **fields: Any) -> None:
    with _LOCK:
        sys.stdout.write(encode(event, **fields) + "\n")
        sys.stdout.flush()


class BadInput(Exception):
    """Bad options or model source: exit status 2 with one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print usage and exit(2) on its own
        raise BadInput(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memviz probe", description="Measure a real model's memory (JSON lines on stdout).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--preset", help="bundled preset (random-initialised, no download)")
    src.add_argument("--config", help="config.json or folder (random-initialised)")
    src.add_argument("--model", help="local model folder with weights (from_pretrained, local files only)")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--quant", default="none", choices=["none", "bnb-int8", "bnb-nf4"])
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt", type=int, default=128, help="prompt tokens per sequence")
    p.add_argument("--new", type=int, default=16, help="new tokens generated per sequence")
    p.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"])
    p.add_argument("--cache", default="dynamic", choices=["dynamic", "static"])
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    p.add_argument("--trust-remote-code", action="store_true", help="allow code from the model folder to run")
    p.add_argument("--allow-pickle", action="store_true", help="allow .bin weights (loaded with weights_only=True)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry; output is always JSON lines")
    p.add_argument("--sample-interval", type=float, default=0.25, help="seconds between memory samples")
    p.add_argument("--no-store", action="store_true", help="do not keep this run for calibration")
    return p


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
    from transformers import AutoConfig

    cfg = dict(cfg)
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrapper: the language model only
        cfg = dict(cfg["text_config"])
    cfg.pop("quantization_config", None)  # random init in the chosen dtype; quantization is --quant
    model_type = cfg.pop("model_type", None)
    if not model_type:
        raise BadInput("config has no model_type")
    try:
        return AutoConfig.for_model(model_type, **cfg)
    except (ValueError, KeyError) as exc:
        raise BadInput(f"transformers cannot build a '{model_type}' config: {exc}") from None


def _estimate(arch, args, device: str, context_tokens: int) -> tuple[dict[str, int], dict[str, Any]]:
    """memviz's own estimate for the same model and settings, in the result's shape, and its scenario."""
    from memviz.core.estimate import Scenario, estimate

    weights = {"none": args.dtype, "bnb-int8": "llm-int8", "bnb-nf4": "bnb-nf4"}[args.quant]
    if args.model and arch.stored and args.quant == "none":
        weights = "stored"
    sc = Scenario(weight_format=weights, kv_format=args.dtype, context_tokens=context_tokens, batch=args.batch,
                  engine="transformers", device="cpu" if device == "cpu" else "cuda", attention=args.attn)
    e = estimate(arch, sc)
    return {**e.bytes, "peak": e.total}, sc.to_dict()


# --- measuring helpers -----------------------------------------------------------------


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


def tensor_bytes(tensors) -> int:
    """Bytes the tensors themselves address (a view counts its own elements, not its storage)."""
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def cache_keyword(model) -> str:
    """The forward argument that takes the cache (transformers 5.2x renamed `past_key_values` to `cache`)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def cache_tensors(cache):
    for layer in getattr(cache, "layers", []):
        yield getattr(layer, "keys", None)
        yield getattr(layer, "values", None)


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


def _device(args, torch) -> str:
    if args.device == "auto":
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise BadInput("CUDA was requested but torch sees no CUDA device")
    if args.device != "cpu" and not args.device.startswith("cuda"):
        raise BadInput(f"unknown device {args.device!r} (auto, cpu, cuda, cuda:N)")
    return "cuda:0" if args.device == "cuda" else args.device


# --- the run ---------------------------------------------------------------------------


def run(args) -> int:
    for key in ("batch", "prompt", "new"):
        if getattr(args, key) <= 0:
            raise BadInput(f"--{key} must be positive")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    cfg_dict, arch, model_dir = _source(args)
    if arch.learned_positions and args.prompt + args.new > arch.max_position_embeddings:
        raise BadInput(f"{arch.name} has learned positions for {arch.max_position_embeddings} tokens: "
                       f"--prompt + --new ({args.prompt + args.new}) must not exceed it")

    from memviz.probe.memory import NVML, CPUMeter, CUDAMeter

    cpu = CPUMeter()
    cpu.reset_peak()
    baseline_rss = cpu.rss()
    nvml_index = int(args.device.split(":")[1]) if args.device.startswith("cuda:") else 0
    nvml = NVML(nvml_index) if args.device != "cpu" else None
    device_used_before = nvml.device_used() if nvml else None
    emit("phase", name="baseline", t_s=round(time.perf_counter() - T0, 3),
         bytes={"rss": baseline_rss, "device_used_other_processes": device_used_before})

    try:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, DynamicCache, StaticCache
    except ImportError as exc:
        raise BadInput(f"the probe needs torch and transformers in {sys.executable} "
                       f"({exc}); install them with: {sys.executable} -m pip install torch transformers") from None
    if args.threads:
        torch.set_num_threads(args.threads)
    device = _device(args, torch)
    on_cuda = device.startswith("cuda")
    if args.quant != "none":
        missing = [m for m in ("bitsandbytes", "accelerate") if importlib.util.find_spec(m) is None]
        if missing:
            raise BadInput(f"--quant {args.quant} needs {' and '.join(missing)} in {sys.executable}; install with: "
                           f"{sys.executable} -m pip install {' '.join(missing)}")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    hf_cfg = hf_config(cfg_dict) if model_dir is None else None

    if on_cuda:
        index = torch.device(device).index or 0
        torch.cuda.set_device(index)
        torch.zeros(1, device=device)
        torch.cuda.synchronize()
        meter = CUDAMeter(torch, index, nvml or NVML(index), device_used_before)
        name = torch.cuda.get_device_name(index)
        total_mem = torch.cuda.get_device_properties(index).total_memory
    else:
        meter = cpu
        name = platform.processor() or platform.machine()
        total_mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else None
    runtime_rss = cpu.rss()
    env = dict(device=device, device_name=name, torch=torch.__version__, transformers=transformers.__version__,
               python=platform.python_version(), platform=platform.platform(), threads=torch.get_num_threads(),
               driver=(nvml.driver() if nvml else None), allocator_conf=os.environ.get("PYTORCH_ALLOC_CONF")
               or os.environ.get("PYTORCH_CUDA_ALLOC_CONF"), memory_total=total_mem, peak_resettable=cpu.resettable,
               dtype=args.dtype, quant=args.quant, attn=args.attn, cache=args.cache, batch=args.batch,
               prompt=args.prompt, new=args.new, engine="transformers")
    emit("env", **env)
    emit("phase", name="runtime", t_s=round(time.perf_counter() - T0, 3), bytes={"rss": runtime_rss})

    sampler = Sampler(meter, args.sample_interval)
    sampler.start()
    state: dict[str, Any] = {"phase": "load", "runtime_rss": runtime_rss, "baseline_rss": baseline_rss, "env": env}
    measured: dict[str, int | None] = dict.fromkeys(COMPONENTS)
    context_tokens = args.prompt + args.new - 1  # the last generated token is never written to the cache
    scratch = tempfile.TemporaryDirectory(prefix="memviz-probe-") if args.quant != "none" and not model_dir else None
    try:
        if scratch is not None:
            state["phase"] = "checkpoint"
            model_dir = random_checkpoint(cfg_dict, dtype, scratch.name, args.trust_remote_code)
            emit("phase", name="checkpoint", t_s=round(time.perf_counter() - T0, 3), bytes={"rss": cpu.rss()})
        return _measure(args, torch, AutoModelForCausalLM, DynamicCache, StaticCache, hf_cfg, model_dir, dtype, device,
                        on_cuda, meter, cpu, state, measured, arch, context_tokens)
    except (torch.cuda.OutOfMemoryError, MemoryError) as exc:
        est, scenario = _estimate(arch, args, device, context_tokens)
        emit("result", partial=True, phase_failed=state["phase"], measured=measured, timings={}, estimate=est,
             scenario=scenario, error_pct={}, message=f"out of memory during {state['phase']}: {str(exc).splitlines()[0]}")
        return EXIT_OOM
    finally:
        sampler.stop_event.set()
        if scratch is not None:
            scratch.cleanup()


def _measure(args, torch, AutoModelForCausalLM, DynamicCache, StaticCache, hf_cfg, model_dir, dtype, device, on_cuda,
             meter, cpu, state, measured, arch, context_tokens) -> int:
    t_run = time.perf_counter()
    gc.collect()
    meter.reset_peak()
    alloc_before = meter.allocated() if on_cuda else cpu.rss()
    quant_cfg = None
    if args.quant != "none":
        from transformers import BitsAndBytesConfig

        quant_cfg = (BitsAndBytesConfig(load_in_8bit=True) if args.quant == "bnb-int8" else
                     BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=dtype))
    if model_dir is not None:
        model = AutoModelForCausalLM.from_pretrained(
            model_dir, local_files_only=True, dtype=dtype, attn_implementation=args.attn, device_map=device,
            trust_remote_code=args.trust_remote_code, use_safetensors=None if args.allow_pickle else True,
            quantization_config=quant_cfg)
    else:
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(hf_cfg, dtype=dtype, attn_implementation=args.attn,
                                                     trust_remote_code=args.trust_remote_code)
    model.eval()
    gc.collect()
    if on_cuda:
        torch.cuda.synchronize()
    weights = storage_bytes(weight_tensors(model))
    load_delta = (meter.allocated() if on_cuda else cpu.rss()) - alloc_before
    load_peak = meter.peak_reserved() if on_cuda else cpu.peak()
    measured["weights"] = weights
    emit("phase", name="load", t_s=round(time.perf_counter() - T0, 3),
         bytes={"weights_storage": weights, "growth": load_delta, "peak": load_peak})

    vocab = model.config.get_text_config().vocab_size
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(3, vocab, (args.batch, args.prompt), generator=gen).to(device)
    state["phase"] = "warmup"
    with torch.inference_mode():
        model(input_ids=ids[:1, :8], use_cache=False, logits_to_keep=1)
    if on_cuda:
        torch.cuda.synchronize()
    gc.collect()
    emit("phase", name="warmup", t_s=round(time.perf_counter() - T0, 3), bytes=meter.sample())
    nontorch = (meter.process_used() - meter.reserved()) if on_cuda else None

    cache_kw = cache_keyword(model)
    if args.cache == "static":
        cache = StaticCache(config=model.config, max_cache_len=args.prompt + args.new)
    else:
        cache = DynamicCache(config=model.config)
    state["phase"] = "prefill"
    gc.collect()
    meter.reset_peak()
    base = meter.allocated() if on_cuda else cpu.rss()
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model(input_ids=ids, **{cache_kw: cache}, use_cache=True, logits_to_keep=1)
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
        del out
        tok_cpu = tok.cpu()  # host sync: the first token exists
    ttft = time.perf_counter() - t0
    kv_prefill = storage_bytes(cache_tensors(cache))
    # sliding layers keep their window as a view of the prompt-long tensor until the first decode step:
    # the cache proper is what the views address, the rest of their storage is prefill transient
    kv_prefill_kept = tensor_bytes(cache_tensors(cache))
    peak_prefill = meter.peak_allocated() if on_cuda else cpu.peak()
    reserved_prefill = meter.peak_reserved() if on_cuda else None
    act_prefill = peak_prefill - base - kv_prefill_kept
    emit("phase", name="prefill", t_s=round(time.perf_counter() - T0, 3),
         bytes={"peak": peak_prefill, "kv_cache": kv_prefill_kept, "kv_storage": kv_prefill,
                "activations": act_prefill}, ttft_s=ttft)
    emit("progress", phase="prefill", fraction=1.0)

    state["phase"] = "decode"
    gc.collect()
    meter.reset_peak()
    d0 = meter.allocated() if on_cuda else cpu.rss()
    t1 = time.perf_counter()
    steps = args.new - 1
    with torch.inference_mode():
        for i in range(steps):
            position = torch.full((1,), args.prompt + i, dtype=torch.long, device=device)
            out = model(input_ids=tok, **{cache_kw: cache}, cache_position=position, use_cache=True, logits_to_keep=1)
            tok = out.logits[:, -1].argmax(-1, keepdim=True)
            del out
            if (i + 1) % max(1, steps // 10) == 0:
                tok_cpu = tok.cpu()
                emit("progress", phase="decode", fraction=round((i + 1) / steps, 3))
        tok_cpu = tok.cpu()
    decode_s = time.perf_counter() - t1
    del tok_cpu
    kv_final = storage_bytes(cache_tensors(cache))
    peak_decode = meter.peak_allocated() if on_cuda else cpu.peak()
    act_decode = peak_decode - d0 - (kv_final - kv_prefill)
    emit("phase", name="decode", t_s=round(time.perf_counter() - T0, 3),
         bytes={"peak": peak_decode, "kv_cache": kv_final, "activations": act_decode}, decode_s=decode_s)

    measured["kv_cache"] = kv_final
    measured["activations"] = max(act_prefill, act_decode, 0)
    if on_cuda:
        frag = max(reserved_prefill or 0, meter.peak_reserved()) - max(peak_prefill, peak_decode)
        peak = (nontorch or 0) + max(reserved_prefill or 0, meter.peak_reserved(), load_peak)
        measured["peak"] = peak
        measured["overhead"] = peak - weights - kv_final - measured["activations"]
        extra = {"nontorch": nontorch, "fragmentation": frag}
    else:
        peak = max(load_peak, peak_prefill, peak_decode)
        measured["peak"] = peak
        measured["overhead"] = peak - weights - kv_final - measured["activations"]
        extra = {"rss_baseline": state["baseline_rss"], "rss_after_imports": state["runtime_rss"],
                 "load_growth": load_delta}
    timings = {"ttft_s": ttft, "decode_tokens_per_s": args.batch * steps / decode_s if steps and decode_s > 0 else None,
               "total_s": time.perf_counter() - t_run}
    est, scenario = _estimate(arch, args, device, context_tokens)
    error_pct = {k: ((est[k] - measured[k]) / measured[k] * 100 if measured[k] else None) for k in COMPONENTS}
    result = dict(partial=False, measured=measured, timings=timings, estimate=est, scenario=scenario, error_pct=error_pct,
                  context_tokens=context_tokens, details=extra, model=arch.name)
    if not args.no_store:
        from memviz.core.calibration import save_run

        try:
            result["stored_run"] = save_run(state["env"], result).id
        except OSError as exc:  # a read-only data folder must not lose the measurement
            result["stored_run"] = None
            print(f"memviz probe: could not store the run: {exc}", file=sys.stderr)
    emit("result", **result)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    emit("start", pid=os.getpid(), argv=argv, executable=sys.executable)
    try:
        args = parser().parse_args(argv)
        return run(args)
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

