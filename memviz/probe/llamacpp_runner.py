"""The probe's llama.cpp backend: load a GGUF file in llama.cpp and measure where its memory goes.

llama.cpp reports its own buffers through its log callback (`llama_log_set`):
model buffers per buffer type (CPU_Mapped, CPU_REPACK, AMX, CPU, CUDA0, ...), the
KV buffers and the cells of each cache, the compute and output buffers; those
lines (DEBUG lines dropped) are the measured components. The OS gives the process
memory: resident set including mapped file pages, and its peak (VmHWM); NVML the
GPU memory on a CUDA build. TTFT is the time to decode `--prompt` random tokens
of each of `--parallel` sequences and sample the first token; decode speed is
`--new` tokens more per sequence, one llama_decode per step for all sequences.
The low-level API is used because `Llama()` exposes neither n_seq_max nor the
unified cache; its defaults that differ from llama-server (swa_full on) are set
to llama-server's. With no GGUF file, one is built from the config or preset
at the chosen mix (`memviz.probe.gguf_build`). Supported: llama-cpp-python 0.3.36.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

from memviz.core.engines.llamacpp_cpu import features_of
from memviz.core.formats import LLAMACPP_CACHE_TYPES
from memviz.probe.protocol import COMPONENTS, EXIT_OK, EXIT_OOM
from memviz.probe.runner import T0, BadInput, Sampler, _Parser, add_run_arguments, emit

SUPPORTED_BINDING = "0.3.36"
CACHE_TYPES = tuple(LLAMACPP_CACHE_TYPES.values())


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memviz probe --engine llamacpp", description="Measure a GGUF model in llama.cpp (JSON lines).")
    p.add_argument("--engine", choices=["llamacpp"], required=True)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--gguf", help="a GGUF file")
    src.add_argument("--config", help="config.json or folder: a GGUF file of its shapes is built at --weights")
    src.add_argument("--preset", help="bundled preset: a GGUF file of its shapes is built at --weights")
    p.add_argument("--weights", default="Q4_K_M", help="mix of the built file (F16, Q8_0, Q4_K_M, IQ4_XS, ...)")
    p.add_argument("--context", type=int, default=4096, help="llama.cpp -c: cells for all sequences together")
    p.add_argument("--parallel", type=int, default=1, help="sequences decoded together (-np, n_seq_max)")
    p.add_argument("--unified-kv", action="store_true", help="one KV buffer for all sequences (-kvu)")
    p.add_argument("--ubatch", type=int, default=512)
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--flash-attn", default="auto", choices=["on", "off", "auto"])
    p.add_argument("--cache-type-k", default="f16", choices=CACHE_TYPES)
    p.add_argument("--cache-type-v", default="f16", choices=CACHE_TYPES)
    p.add_argument("--gpu-layers", type=int, default=0, help="layers offloaded to the GPU (-ngl; a CUDA build)")
    p.add_argument("--no-kv-offload", action="store_true")
    p.add_argument("--no-op-offload", action="store_true",
                   help="the host runs the ops on its weights even for large micro-batches")
    p.add_argument("--n-cpu-moe", type=int, default=0)
    p.add_argument("--no-mmap", action="store_true")
    p.add_argument("--no-repack", action="store_true")
    p.add_argument("--no-host", action="store_true",
                   help="beside a GPU, host weights skip the GPU's host buffer type (so the CPU may pack them)")
    p.add_argument("--swa-full", action="store_true")
    p.add_argument("--prompt", type=int, default=128, help="prompt tokens per sequence")
    p.add_argument("--new", type=int, default=16, help="new tokens per sequence")
    p.add_argument("--threads", type=int, default=0)
    add_run_arguments(p)
    return p


def _architecture(args):
    from memviz.core.errors import InputError

    try:
        if args.gguf:
            from memviz.core.importers.gguf_file import read_gguf

            return read_gguf(args.gguf), Path(args.gguf)
        if args.preset:
            from memviz.core.presets import get_preset

            return get_preset(args.preset).architecture(), None
        from memviz.core.arch import from_hf_config, load_config

        return from_hf_config(load_config(args.config), name=Path(args.config).stem), None
    except InputError as exc:
        raise BadInput(str(exc)) from None


def _check_args(args) -> None:
    for key in ("context", "parallel", "ubatch", "batch", "prompt", "new"):
        if not 0 < getattr(args, key) < 2**31:
            raise BadInput(f"--{key.replace('_', '-')} must be a positive 32-bit number")
    if args.gpu_layers < 0 or args.n_cpu_moe < 0:
        raise BadInput("--gpu-layers and --n-cpu-moe must not be negative")
    if args.cache_type_k != args.cache_type_v:
        raise BadInput("memviz sizes one cache type for K and V: give the same --cache-type-k and --cache-type-v")
    if args.prompt + args.new > args.context // args.parallel:
        raise BadInput(f"--prompt + --new ({args.prompt + args.new}) must fit in each sequence's share of "
                       f"--context ({args.context // args.parallel})")


def _weight_format(arch, args) -> str:
    """The file's own tensors when there is a file; before a file is built, its mix (F16, an upper bound, for
    the mixes memviz does not size)."""
    from memviz.core.gguf_mixes import GGUF_MIXES

    if arch.stored:
        return "stored"
    return args.weights.upper() if args.weights.upper() in GGUF_MIXES else "F16"


def _rotation_on() -> bool:
    """Whether llama.cpp rotates a quantized cache's attention: src/llama-kv-cache.cpp reads LLAMA_ATTN_ROT_DISABLE
    with atoi, a non-zero leading integer turning it off."""
    digits = re.match(r"\s*[+-]?\d+", os.environ.get("LLAMA_ATTN_ROT_DISABLE", ""))
    return not (digits and int(digits.group()))


def scenario(arch, args):
    """memviz's scenario for the same settings (llama.cpp engine, the file's exact tensors)."""
    from memviz.core.estimate import Scenario

    options = {"n_ubatch": args.ubatch, "n_batch": args.batch, "flash_attn": args.flash_attn,
               "kv_unified": args.unified_kv, "swa_full": args.swa_full, "n_cpu_moe": args.n_cpu_moe,
               "mmap": not args.no_mmap, "repack": not args.no_repack, "cpu": args.cpu_features,
               "op_offload": not args.no_op_offload, "host_buffer": not args.no_host,
               "attn_rotation": _rotation_on()}
    per_seq = -(-args.context // args.parallel)
    on_gpu = args.gpu_layers > 0
    return Scenario(weight_format=_weight_format(arch, args), kv_format=args.cache_type_k,
                    context_tokens=per_seq,
                    batch=args.parallel, engine="llamacpp", device="cuda" if on_gpu else "cpu",
                    gpu_layers=min(args.gpu_layers, arch.num_layers + 1) if on_gpu else None,
                    kv_offload=args.no_kv_offload and on_gpu, options=tuple(sorted(options.items())))


def estimate_result(arch, args) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(components as the result carries them, the scenario, the engine's buffer-level figures)."""
    from memviz.core.engines import get_engine
    from memviz.core.estimate import estimate, inputs

    sc = scenario(arch, args)
    e = estimate(arch, sc)
    x = inputs(arch, sc, sc.context_tokens, sc.batch)
    engine = get_engine("llamacpp")
    n_ctx, swa, n_ubatch = engine.cells(x)
    buffers = {"model": engine.cpu_buffers(x) if sc.device == "cpu" else {}, "n_ctx": int(n_ctx),
               "swa_cells": int(swa), "n_ubatch": int(n_ubatch), "output": int(engine.host_buffers(x)),
               "compute": int(engine.activations(x, True, 0.0))}
    return {**e.bytes, "peak": e.total}, sc.to_dict(), buffers


def _attach_as(sc: dict[str, Any], args) -> dict[str, Any]:
    """The scenario a session compares the run with: a built file is its mix (when memviz sizes that mix),
    since the session's model has no stored tensors; a given file is itself."""
    from memviz.core.gguf_mixes import GGUF_MIXES

    mix = args.weights.upper()
    return {**sc, "weight_format": mix} if not args.gguf and mix in GGUF_MIXES else sc


class LogSink:
    """llama.cpp's log lines (DEBUG dropped, with their continuations), joined when a line arrives in
    pieces; bounded. Levels are ggml's `ggml_log_level`: 1 DEBUG, 2 INFO, 3 WARN, 4 ERROR, 5 CONT."""

    MAX_LINES = 20_000
    DEBUG, CONT = 1, 5

    def __init__(self, llama_cpp) -> None:
        self.lines: list[str] = []
        self._part = ""
        self._level = 0

        @llama_cpp.llama_log_callback
        def callback(level, text, _user):
            if level != self.CONT:
                self._level = level
            if self._level == self.DEBUG or len(self.lines) >= self.MAX_LINES:
                return
            self._part += text.decode("utf-8", errors="replace")[:4096]
            while "\n" in self._part:
                line, self._part = self._part.split("\n", 1)
                self.lines.append(line)

        self.callback = callback  # keep a reference: ctypes would free it
        llama_cpp.llama_log_set(callback, None)


def _source_file(arch, args, state) -> Path:
    if args.gguf:
        return Path(args.gguf)
    from memviz.core.errors import InputError
    from memviz.probe import gguf_build

    state["phase"] = "build"
    try:
        path = gguf_build.build_in_child(arch, args.weights)
    except InputError as exc:
        raise BadInput(str(exc)) from None
    emit("phase", name="build", t_s=round(time.perf_counter() - T0, 3), bytes={"file": path.stat().st_size},
         path=str(path), weights=args.weights)
    return path


def run(args) -> int:
    from memviz.probe.runner import check_fits_machine, check_sample_interval

    _check_args(args)
    check_sample_interval(args.sample_interval)
    arch, _ = _architecture(args)
    from memviz.core.errors import InputError

    try:
        if not args.gguf:
            from memviz.probe.gguf_build import check_supported

            check_supported(arch)
        if not args.gpu_layers:  # a CPU run: the whole estimate lives in this machine's RAM
            args.cpu_features = "avx2"  # the CPU's own features are known once llama.cpp is loaded
            planned, _, _ = estimate_result(arch, args)
            ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else None
            check_fits_machine(int(planned["peak"]), ram, "this machine's RAM", args.force)
    except InputError as exc:
        raise BadInput(str(exc)) from None
    from memviz.probe.memory import NVML, CPUMeter

    cpu = CPUMeter()
    cpu.reset_peak()
    baseline = cpu.rss()
    nvml = NVML(0) if args.gpu_layers else None  # before llama.cpp creates a CUDA context
    args.nvml_before = nvml.device_used() if nvml else None
    emit("phase", name="baseline", t_s=round(time.perf_counter() - T0, 3), bytes={"rss": baseline})
    try:
        import llama_cpp
    except ImportError as exc:
        raise BadInput(f"the llama.cpp probe needs llama-cpp-python=={SUPPORTED_BINDING} in {sys.executable} ({exc}); "
                       f"install it with: {sys.executable} -m pip install 'memviz[llamacpp]'") from None
    sink = LogSink(llama_cpp)
    llama_cpp.llama_backend_init()
    info = llama_cpp.llama_print_system_info().decode(errors="replace").strip()
    args.cpu_features = features_of(info)
    state: dict[str, Any] = {"phase": "load"}
    path = _source_file(arch, args, state)
    if not args.gguf:
        from memviz.core.importers.gguf_file import read_gguf

        arch = read_gguf(path).with_changes(name=arch.name)
    env = dict(engine="llamacpp", device="cuda" if args.gpu_layers else "cpu", device_name=platform.processor()
               or platform.machine(), llama_cpp_python=llama_cpp.__version__, llama_cpp=llamacpp_version(llama_cpp),
               system_info=info, cpu_features=args.cpu_features, gpu_offload=bool(llama_cpp.llama_supports_gpu_offload()),
               python=platform.python_version(), platform=platform.platform(), threads=args.threads or None,
               dtype=arch.stored[0].storage if arch.stored else None, weights=args.weights if not args.gguf else "file",
               torch=None, transformers=None, driver=None, model_file=str(path), parallel=args.parallel,
               context=args.context, prompt=args.prompt, new=args.new, batch=args.parallel)
    if args.gpu_layers and not env["gpu_offload"]:
        raise BadInput("--gpu-layers needs a llama.cpp built with a GPU backend "
                       "(CMAKE_ARGS=\"-DGGML_CUDA=on\" pip install llama-cpp-python)")
    emit("env", **env)
    runtime = cpu.rss()
    emit("phase", name="runtime", t_s=round(time.perf_counter() - T0, 3), bytes={"rss": runtime})
    sampler = Sampler(cpu, args.sample_interval)
    sampler.start()
    measured: dict[str, int | None] = dict.fromkeys(COMPONENTS)
    try:
        return _measure(llama_cpp, sink, args, arch, path, cpu, env, state, measured, baseline, nvml)
    except MemoryError as exc:
        est, sc, _ = estimate_result(arch, args)
        emit("result", partial=True, phase_failed=state["phase"], measured=measured, timings={}, estimate=est,
             scenario=sc, error_pct={}, message=f"out of memory during {state['phase']}: {exc}")
        return EXIT_OOM
    finally:
        sampler.stop_event.set()


VENDORED = {"0.3.36": "0c1e570"}  # llama.cpp revision each llama-cpp-python release vendors (its sdist)


def llamacpp_version(llama_cpp) -> str:
    """llama.cpp's own version string, with the vendored revision where the binding is known."""
    own = llama_cpp.llama_version().decode(errors="replace") if hasattr(llama_cpp, "llama_version") else "?"
    commit = VENDORED.get(llama_cpp.__version__)
    return f"{own} ({commit})" if commit else own


def _load(llama_cpp, args, path: Path):
    mp = llama_cpp.llama_model_default_params()
    mp.n_gpu_layers = args.gpu_layers
    mp.load_mode = llama_cpp.LLAMA_LOAD_MODE_NONE if args.no_mmap else llama_cpp.LLAMA_LOAD_MODE_MMAP
    mp.use_extra_bufts = not args.no_repack
    mp.no_host = args.no_host
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), mp)
    if not model:
        raise BadInput(f"llama.cpp could not load {path} (see its log: unsupported architecture or a damaged file)")
    return model


def _context(llama_cpp, args, model):
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = args.context, args.batch, args.ubatch, args.parallel
    cp.kv_unified, cp.swa_full, cp.offload_kqv = args.unified_kv, args.swa_full, not args.no_kv_offload
    cp.op_offload = not args.no_op_offload
    cp.flash_attn_type = {"on": llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED, "off": llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED,
                          "auto": llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO}[args.flash_attn]
    from gguf import GGMLQuantizationType  # ggml's type numbers

    cp.type_k = cp.type_v = GGMLQuantizationType[args.cache_type_k.upper()].value
    if args.threads:
        cp.n_threads = cp.n_threads_batch = args.threads
    ctx = llama_cpp.llama_init_from_model(model, cp)
    if not ctx:
        raise BadInput("llama.cpp refused these context settings (see its log)")
    return ctx


def _decode(llama_cpp, ctx, batch, tokens: list[list[int]], start: int, logits_last: bool) -> None:
    """Feed `tokens[s]` to sequence s at positions start.., asking logits for each sequence's last token."""
    batch.n_tokens = 0
    for s, seq in enumerate(tokens):
        for i, tok in enumerate(seq):
            j = batch.n_tokens
            batch.token[j], batch.pos[j], batch.n_seq_id[j] = tok, start + i, 1
            batch.seq_id[j][0] = s
            batch.logits[j] = logits_last and i == len(seq) - 1
            batch.n_tokens += 1
    if llama_cpp.llama_decode(ctx, batch) != 0:
        raise RuntimeError("llama_decode failed (the KV cache is full or the batch too large)")


def _greedy(llama_cpp, ctx, vocab: int, rows: int) -> list[int]:
    import numpy as np

    out = []
    for r in range(-rows, 0):  # negative: the output rows, in the order of the batch
        ptr = llama_cpp.llama_get_logits_ith(ctx, r)
        if not ptr:
            raise RuntimeError("llama.cpp returned no logits")
        logits = np.ctypeslib.as_array(ptr, shape=(vocab,))
        out.append(int(logits.argmax()))
    return out


def _gpu_details(nvml, args) -> dict[str, int | None]:
    """This process's GPU memory (NVML) and the device's growth since before the CUDA context; {} on a CPU run."""
    if nvml is None:
        return {}
    used = nvml.device_used()
    growth = used - args.nvml_before if used is not None and args.nvml_before is not None else None
    return {"nvml_process_used": nvml.process_used(), "nvml_device_growth": growth}


def _phase(name: str, cpu, **extra: Any) -> None:
    """A phase boundary, with a memory sample so that short runs still draw a timeline."""
    t_s, rss = round(time.perf_counter() - T0, 3), cpu.rss()
    emit("sample", t_s=t_s, rss=rss)
    emit("phase", name=name, t_s=t_s, bytes={"rss": rss, "peak": cpu.peak()}, **extra)


def _measure(llama_cpp, sink, args, arch, path, cpu, env, state, measured, baseline, nvml) -> int:
    import numpy as np

    from memviz.core.importers.logs import llamacpp_buffers

    t_run = time.perf_counter()
    state["phase"] = "load"
    first_line = len(sink.lines)
    model = _load(llama_cpp, args, path)
    _phase("load", cpu)
    ctx = _context(llama_cpp, args, model)
    reported = llamacpp_buffers(sink.lines[first_line:])
    _phase("context", cpu, buffers=reported)
    vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model))
    rng = np.random.default_rng(0)
    prompts = [[int(t) for t in rng.integers(259, vocab, args.prompt)] for _ in range(args.parallel)]
    batch = llama_cpp.llama_batch_init(max(args.batch, args.parallel), 0, args.parallel)
    try:
        state["phase"] = "prefill"
        t0 = time.perf_counter()
        chunk = max(1, args.batch // args.parallel)
        for start in range(0, args.prompt, chunk):
            last = start + chunk >= args.prompt
            _decode(llama_cpp, ctx, batch, [p[start:start + chunk] for p in prompts], start, last)
        tokens = _greedy(llama_cpp, ctx, vocab, args.parallel)
        ttft = time.perf_counter() - t0
        _phase("prefill", cpu, ttft_s=ttft)
        state["phase"] = "decode"
        t1 = time.perf_counter()
        steps = args.new - 1
        for i in range(steps):
            _decode(llama_cpp, ctx, batch, [[t] for t in tokens], args.prompt + i, True)
            tokens = _greedy(llama_cpp, ctx, vocab, args.parallel)
            if (i + 1) % max(1, steps // 10) == 0:
                emit("progress", phase="decode", fraction=round((i + 1) / steps, 3))
        decode_s = time.perf_counter() - t1
    finally:
        llama_cpp.llama_batch_free(batch)
    peak = cpu.peak()
    _phase("decode", cpu, decode_s=decode_s)
    weights = sum(reported["model"].values())
    kv = sum(reported["kv"].values())
    act = sum(reported["compute"].values()) + sum(reported["output"].values())
    measured.update(weights=weights, kv_cache=kv, activations=act, overhead=peak - weights - kv - act, peak=peak)
    est, sc, est_buffers = estimate_result(arch, args)
    error_pct = {k: ((est[k] - measured[k]) / measured[k] * 100 if measured[k] else None) for k in COMPONENTS}
    timings = {"ttft_s": ttft, "decode_tokens_per_s": args.parallel * steps / decode_s if steps and decode_s > 0 else None,
               "total_s": time.perf_counter() - t_run}
    result = dict(partial=False, measured=measured, timings=timings, estimate=est, scenario=sc, attach_as=_attach_as(sc, args),
                  error_pct=error_pct,
                  context_tokens=sc["context_tokens"], model=arch.name, buffers=reported, estimated_buffers=est_buffers,
                  details={"rss_baseline": baseline, "rss_end": cpu.rss(), **_gpu_details(nvml, args)})
    llama_cpp.llama_free(ctx)
    llama_cpp.llama_model_free(model)
    if not args.no_store:
        from memviz.core.calibration import save_run

        try:
            result["stored_run"] = save_run(env, result).id
        except OSError as exc:
            result["stored_run"] = None
            print(f"memviz probe: could not store the run: {exc}", file=sys.stderr)
    emit("result", **result)
    return EXIT_OK
