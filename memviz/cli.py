"""Command line: `memviz estimate`, `memviz plan`, `memviz presets`, `memviz formats`, `memviz gpus`,
`memviz training`. With no arguments `memviz` starts the desktop app.

Bad input exits with status 2 and one line on stderr that names the problem.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from math import prod
from pathlib import Path
from typing import Any

from memviz import __version__
from memviz.core.arch import Architecture, from_config_path
from memviz.core.engines import gptq_kernels
from memviz.core.engines.llamacpp_mtmd import describe
from memviz.core.engines.transformers import describe_cross_attention
from memviz.core.engines.vllm import BATCH_BUFFERS
from memviz.core.engines.vllm_eagle3 import DRAFTERS
from memviz.core.engines.vllm_rotary import tables_label
from memviz.core.errors import InputError
from memviz.core.estimate import COMPONENTS, Estimate, Scenario, estimate
from memviz.core.units import GiB, Unit, format_bytes, parse_bytes


def _add_model_source(p: argparse.ArgumentParser, mmproj: bool = False) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--preset", help="bundled preset key (see 'memviz presets')")
    src.add_argument("--config", help="a config.json file or a model folder holding one")
    src.add_argument("--safetensors", help="a .safetensors file, its index, or a model folder: exact stored sizes")
    src.add_argument("--gguf", help="a .gguf file: architecture and exact stored sizes from its metadata")
    if mmproj:
        p.add_argument("--mmproj", help="a llama.cpp mmproj .gguf (the encoders llama-server loads with --mmproj): "
                       "its tensors' exact sizes and its vision tower's compute buffer; llamacpp / ollama engines")


def _add_scenario_args(p: argparse.ArgumentParser, export: bool) -> None:
    """The scenario's settings, the same for `estimate` and `export` (export: one scenario per weight format, and
    the first of its GPUs is the one each scenario runs on, as `estimate --gpu`)."""
    p.add_argument("--weights", help=("comma-separated weight formats, one scenario each" if export else
                   "weight format") + " (see 'memviz formats'); default the checkpoint's own (bf16, a release's "
                   "MXFP4 / FP8), or 'stored' for imported files")
    p.add_argument("--kv", help="KV cache format; default the engine's (llama.cpp, Ollama: f16; else bf16)")
    p.add_argument("--context", type=int, help="tokens kept per sequence (prompt + generated); default 4096 (Ollama: "
                   "its VRAM tier for --gpu), or the model's positions if fewer")
    p.add_argument("--extrapolate", action="store_true", help="estimate a context beyond the model's positions")
    p.add_argument("--batch", type=int, default=1, help="concurrent sequences")
    p.add_argument("--sequences", help="comma-separated per-sequence token counts (overrides --context/--batch)")
    p.add_argument("--engine", default="auto",
                   help="transformers | vllm | llamacpp | ollama | auto (GGUF mixes -> llamacpp, a release's own "
                        "quantized format -> vllm, else transformers)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                   help="an engine option, e.g. max_num_seqs=64 (vllm) or n_ubatch=256 (llamacpp); see 'memviz engines'")
    p.add_argument("--draft-config", help="an EAGLE-3 drafter's config.json or folder (vllm): its widths and draft "
                   "vocabulary for -o num_speculative_tokens=K")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel degree (vllm)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (layers split over GPUs)")
    if export:
        p.add_argument("--gpu", default="", help="comma-separated GPUs (see 'memviz gpus'), each a capacity line; "
                       "the scenarios run on the first (vLLM's pool, Ollama's context, llama.cpp's fit)")
    else:
        p.add_argument("--gpu", help="GPU from the catalogue (see 'memviz gpus'): adds the fit; NAME@TOTAL sets the "
                                     "CUDA total a vLLM log printed, e.g. rtx4080@15.99GiB (WSL2)")
    p.add_argument("--gpu-layers", type=int, help="layers kept on the GPU, the rest offloaded to host RAM")
    p.add_argument("--kv-offload", action="store_true", help="keep the KV cache in host RAM (llama.cpp --no-kv-offload)")
    p.add_argument("--attention", choices=["sdpa", "eager", "flash"], help="attention kernel (engine default)")
    p.add_argument("--prefill-chunk", type=int, help="prefill chunk / micro-batch tokens (engine default)")
    p.add_argument("--logits-all", action="store_true", help="transformers: logits for every prompt token (plain forward)")
    p.add_argument("--gpu-memory-utilization", type=float, default=None,
                   help="vLLM's share of the GPU (default vLLM's: 1.0 with its extensible KV cache, else 0.92)")
    p.add_argument("--overhead", help="runtime overhead, e.g. 800MiB or 1GB (engine default otherwise)")


def _architecture(args: argparse.Namespace) -> Architecture:
    """The model the arguments name, with the encoders of the mmproj file given (`--mmproj`) in place of any."""
    a = _model(args)
    if not getattr(args, "mmproj", None):
        return a
    from memviz.core.importers.gguf_file import read_mmproj

    return a.with_changes(encoders=read_mmproj(args.mmproj))


def _model(args: argparse.Namespace) -> Architecture:
    from memviz.core.presets import get_preset

    if args.preset:
        return get_preset(args.preset).architecture()
    if args.safetensors:
        from memviz.core.importers.safetensors_file import read_safetensors

        return read_safetensors(args.safetensors)
    if args.gguf:
        from memviz.core.importers.gguf_file import read_gguf

        return read_gguf(args.gguf)
    return from_config_path(args.config)


def _default_weights(args: argparse.Namespace, a: Architecture) -> str:
    """Imported files default to their stored tensors; presets and configs to the format the checkpoint is
    released in (bf16, or gpt-oss's MXFP4, DeepSeek's FP8)."""
    if args.weights:
        return args.weights
    return "stored" if (args.safetensors or args.gguf) else a.native_format or "bf16"


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments are one line and exit 2, as every other input error (subcommands inherit the class)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    p = _OneLineParser(prog="memviz", description="How much memory an LLM needs at inference time.")
    p.add_argument("--version", action="version", version=f"memviz {__version__}")
    sub = p.add_subparsers(dest="command")

    e = sub.add_parser("estimate", help="estimate device memory for one scenario")
    _add_model_source(e, mmproj=True)
    _add_scenario_args(e, export=False)
    e.add_argument("--unit", default="GiB", choices=["GiB", "GB"])
    e.add_argument("--json", action="store_true", help="print one JSON object")

    x = sub.add_parser("export", help="write a compare/sweep chart (PNG, SVG, PDF) or its data (CSV, JSON, Markdown)")
    _add_model_source(x, mmproj=True)
    _add_scenario_args(x, export=True)
    x.add_argument("--chart", choices=["compare", "sweep"], default="compare")
    x.add_argument("--unit", default="GiB", choices=["GiB", "GB"])
    x.add_argument("--width", type=int, default=1800, help="width the chart is laid out at, in pixels")
    x.add_argument("--scale", type=float, default=1.0, help="PNG pixels per layout pixel (2 for print)")
    x.add_argument("--title", help="chart title (default: the model and unit)")
    x.add_argument("--subtitle", default="auto",
                   help="line under the title; 'auto': engines, settings, GPUs, memviz version, date; 'none': no line")
    x.add_argument("--log-x", action="store_true", help="sweep: logarithmic context axis")
    x.add_argument("--out", required=True, help="FILE.png|.svg|.pdf|.csv|.json|.md")

    i = sub.add_parser("inspect", help="architecture, tensor counts by type and role, and exact bytes of a model file")
    i.add_argument("path", help="config.json, .safetensors (or index / folder) or .gguf")
    i.add_argument("--json", action="store_true")

    g = sub.add_parser("log", help="parse a llama.cpp / ollama / vLLM log into measured memory components")
    g.add_argument("path", help="a log file ('-' for standard input)")
    g.add_argument("--check", action="store_true",
                   help="estimate the run the log reports and set each figure the engine printed beside memviz's "
                        "(llama.cpp: model, context and offload from the log; vLLM: settings from the log, the "
                        "model from --preset / --config and the GPU from --gpu)")
    gm = g.add_mutually_exclusive_group()
    gm.add_argument("--preset", help="vLLM --check: the model the log ran (bundled preset key)")
    gm.add_argument("--config", help="vLLM --check: the model's config.json or folder")
    g.add_argument("--gpu", help="vLLM --check: the GPU the log ran on (see 'memviz gpus')")
    g.add_argument("--weights", help="vLLM --check: weight format (default: the checkpoint's own)")

    sub.add_parser("probe", help="measure a real model in this process (JSON lines; see 'memviz probe --help')")
    r = sub.add_parser("runs", help="list, export or delete stored probe runs (calibration data)")
    r.add_argument("action", choices=["list", "export", "delete"])
    r.add_argument("target", nargs="?", help="export: output .json; delete: run id")

    sub.add_parser("presets", help="list bundled model presets")
    sub.add_parser("formats", help="list weight and KV cache formats")
    sub.add_parser("gpus", help="list the GPU catalogue")
    sub.add_parser("engines", help="list the engines, the versions they follow and their options")

    pl = sub.add_parser("plan", help="which weight format, KV format, engine and split to run on given hardware")
    _add_model_source(pl)
    hw = pl.add_mutually_exclusive_group(required=True)
    hw.add_argument("--gpu", help="GPU(s) per node, e.g. rtx4090, h100-80gx8, or alternatives: rtx4090x2,l40s")
    hw.add_argument("--vram", help="memory of one GPU, e.g. 24GiB (no speed bound without a catalogue GPU)")
    pl.add_argument("--nodes", type=int, default=1, help="machines of those GPUs (vLLM over Ray, llama.cpp RPC)")
    pl.add_argument("--host-ram", help="host RAM per node, e.g. 128GiB: allows layer offload (llama.cpp, transformers)")
    pl.add_argument("--context", type=int, help="tokens per sequence (prompt + generated); default 4096 or the model's")
    pl.add_argument("--concurrency", type=int, default=1, help="sequences served at once")
    pl.add_argument("--engine", default="vllm,llamacpp,transformers", help="comma-separated engines to consider")
    pl.add_argument("--min-tokens-per-s", type=float, help="keep candidates whose decode bound reaches this")
    pl.add_argument("--max-quality-loss", type=float, help="keep candidates with evidence of at most this loss, in %%")
    pl.add_argument("--headroom", type=float, default=0.05, help="share of each GPU's budget left free (default 0.05)")
    pl.add_argument("--top", type=int, default=5, help="candidates shown")
    pl.add_argument("--markdown", help="also write the plan as a Markdown report section to this file, with its "
                    "Pareto picture beside it (FILE.pareto.png)")
    pl.add_argument("--json", action="store_true", help="print one JSON object")

    t = sub.add_parser("training", help="training-time activations (Korthikanti et al.) next to inference")
    _add_model_source(t)
    t.add_argument("--seq", type=int, default=2048)
    t.add_argument("--batch", type=int, default=1)
    return p


def _engine_name(args: argparse.Namespace, weight_format: str, a: Architecture) -> str:
    from memviz.core.engines import default_engine, quantized_gguf

    return default_engine(weight_format, a.native_format, quantized_gguf(a)) if args.engine == "auto" else args.engine


def _context(args: argparse.Namespace, a: Architecture, engine: str, gpu: str | None) -> int:
    """--context, or the engine's default for the scenario's GPU (Ollama's VRAM tier; else 4096), capped at the
    model's positions."""
    from memviz.core.engines import get_engine
    from memviz.core.gpus import get_gpu

    if args.context is not None:
        return args.context
    vram = get_gpu(gpu).usable_bytes * args.tp * args.pp if gpu and args.device == "cuda" else None
    return get_engine(engine).default_context(a, vram)


def _kv(args: argparse.Namespace, engine: str, weights: str) -> str:
    """--kv, or the cache the engine keeps when not told (llama.cpp and Ollama: f16; else the compute dtype's)."""
    from memviz.core.engines import get_engine

    return args.kv or get_engine(engine).default_kv(weights)


def _scenario(args: argparse.Namespace, a: Architecture, weights: str, gpu: str | None) -> Scenario:
    """The scenario the arguments describe, in weight format `weights` on `gpu` (a catalogue key or None)."""
    from memviz.core.engines import parse_option_pairs

    seqs: tuple[int, ...] = ()
    if args.sequences:
        try:
            seqs = tuple(int(x) for x in args.sequences.split(",") if x.strip())
        except ValueError:
            raise InputError(f"--sequences must be comma-separated integers, got {args.sequences!r}") from None
    overhead = None if args.overhead is None else parse_bytes(args.overhead)
    engine = _engine_name(args, weights, a)
    options = _with_drafter(args, engine, a, _with_mmproj(args, engine, parse_option_pairs(args.option)))
    return Scenario(
        weight_format=weights, kv_format=_kv(args, engine, weights), context_tokens=_context(args, a, engine, gpu),
        batch=args.batch, sequence_tokens=seqs, engine=engine, device=args.device, tp=args.tp,
        pp=args.pp, gpu=gpu, options=tuple(sorted(options.items())),
        gpu_layers=args.gpu_layers, kv_offload=args.kv_offload, attention=args.attention,
        prefill_chunk_tokens=args.prefill_chunk, logits_all_tokens=args.logits_all,
        gpu_memory_utilization=args.gpu_memory_utilization, runtime_overhead_bytes=overhead,
        extrapolate=args.extrapolate,
    )


def _with_mmproj(args: argparse.Namespace, engine: str, options: dict[str, str]) -> dict[str, str]:
    """The engine options with --mmproj's: the file is loaded (llama.cpp / Ollama engines only)."""
    if not getattr(args, "mmproj", None):
        return options
    from memviz.core.engines import get_engine

    if not get_engine(engine).has_option("mmproj"):
        raise InputError(f"--mmproj is llama.cpp's file of a model's encoders; the {engine} engine loads them "
                         "from the model's own checkpoint")
    if options.setdefault("mmproj", "true").lower() in ("false", "0", "no", "off"):
        raise InputError("--mmproj gives an mmproj file and -o mmproj=false leaves it out: choose one")
    return options


def _with_drafter(args: argparse.Namespace, engine: str, a: Architecture, options: dict[str, str]) -> dict[str, str]:
    """The engine options with --draft-config's (`vllm_eagle3.drafter_options`; vLLM only), which -o must not
    contradict."""
    if not getattr(args, "draft_config", None):
        return options
    from memviz.core.arch import load_config
    from memviz.core.engines.vllm_eagle3 import drafter_options

    if engine != "vllm":
        raise InputError(f"--draft-config gives vLLM an EAGLE-3 drafter; the {engine} engine runs none")
    drafter = {**drafter_options(load_config(args.draft_config), a), "draft_model": _folder(args.draft_config)}
    if clash := [k for k, v in drafter.items() if options.get(k, v) != v]:
        raise InputError(f"--draft-config sets {', '.join(clash)}, which -o gives otherwise: choose one")
    return {**options, **drafter}


def _model_ref(args: argparse.Namespace) -> str | None:
    """What a launch command loads: the preset's repository, the GGUF file, or the folder holding the config or
    safetensors file given (vLLM and transformers load a model folder, not its config.json)."""
    from memviz.core.presets import get_preset

    if args.preset:
        return get_preset(args.preset).repo
    if args.gguf:
        return args.gguf
    return _folder(args.safetensors or args.config)


def _folder(given: str | None) -> str | None:
    """The model folder a path names: a file's folder, or the folder itself."""
    return str(Path(given).parent) if given and Path(given).is_file() else given


def estimate_json(est: Estimate, model: str | None = None) -> dict[str, Any]:
    """The JSON contract of `memviz estimate --json` (scripts depend on it)."""
    from memviz.core.engines import get_engine
    from memviz.core.engines.llamacpp_fit import default_fit_placement
    from memviz.core.fit import capacity_bytes, fits, max_batch, max_context, min_gpus, needed_bytes
    from memviz.core.gpus import get_gpu
    from memviz.core.speed import speed_bounds

    a, sc = est.architecture, est.scenario
    out: dict[str, Any] = {
        "model": a.name,
        "parameters": est.parameters,
        "active_parameters": est.active_parameters,
        "encoder_parameters": {e.modality: e.parameters for e in a.encoders},
        "bytes": {**est.bytes, "total": est.total},
        "kv_bytes_per_token": est.kv_bytes_per_token,
        "kv_cache_required": est.kv_cache_required,
        "components": [
            {"name": c.name, "bytes": c.bytes, "provenance": c.provenance, "formula": c.formula, "source": c.source}
            for c in est.components
        ],
        "devices": [{"device": d.device, **{c: getattr(d, c) for c in COMPONENTS}, "total": d.total} for d in est.devices],
        "host": {**{c: getattr(est.host, c) for c in COMPONENTS}, "total": est.host.total},
        "scenario": sc.to_dict(),
        "engine": {"name": sc.engine, "follows": get_engine(sc.engine).version, **est.engine_facts},
        "launch_command": est.launch_command(model),
        "notes": list(est.notes),
    }
    if sc.gpu:
        gpu = get_gpu(sc.gpu)
        speed = speed_bounds(est, gpu)
        out["fit"] = {
            "gpu": gpu.key, "capacity_bytes": int(capacity_bytes(gpu, sc, a)), "device_memory_bytes": gpu.memory_bytes,
            "needed_bytes": int(needed_bytes(est)),  # the busiest GPU's need that `fits` compares with the capacity
            "fits": fits(a, sc, gpu), "max_context": max_context(a, sc, gpu), "max_batch": max_batch(a, sc, gpu),
        }
        fewest = min_gpus(a, sc, gpu)
        out["fit"]["fewest_gpus"] = ({"count": get_engine(sc.engine).gpus(fewest), "tp": fewest.tp, "pp": fewest.pp}
                                     if fewest else None)
        placed = default_fit_placement(a, sc)
        if placed:
            out["fit"]["llama_server_fit"] = placed
        out["speed_bounds"] = {
            "decode_step_s_min": speed.decode_step_s_min, "decode_tokens_per_s_max": speed.decode_tokens_per_s_max,
            "prefill_s_min": speed.prefill_s_min, "note": "roofline lower bounds on time, not predictions",
        }
    return out


def _print_table(data: dict[str, Any], unit: Unit) -> None:
    from memviz.core.fit import context_text

    print(f"{data['model']}: {data['parameters']:,d} parameters ({data['active_parameters']:,d} active per token)"
          + "".join(f" + {n:,d} in its {m} encoder" for m, n in data["encoder_parameters"].items()))
    sc = data["scenario"]
    print(f"{sc['engine']}, weights {sc['weight_format']}, KV {sc['kv_format']}, context {sc['context_tokens']:,d} x "
          f"batch {sc['batch']}; KV {data['kv_bytes_per_token']:,d} bytes per token")
    facts = data["engine"]
    if "linear_state_layers" in facts:
        print(f"plus a fixed state of {facts['linear_state_bytes_per_layer_sequence']:,d} bytes per sequence in each of "
              f"{facts['linear_state_layers']} {facts['linear_state_layer_kind']} layers")
    if "cross_attention_images" in facts:
        print(describe_cross_attention(facts))
    if "quant_kernel" in facts:
        print(gptq_kernels.describe(facts, unit))
    print(f"{'component':<12} {unit.value:>12} {'bytes':>18}  provenance")
    for c in data["components"]:
        print(f"{c['name']:<12} {format_bytes(c['bytes'], unit):>12} {c['bytes']:>18,d}  {c['provenance']}")
    total = data["bytes"]["total"]
    print(f"{'total':<12} {format_bytes(total, unit):>12} {total:>18,d}  (busiest device of {len(data['devices'])})")
    if data["host"]["total"]:
        print(f"{'host RAM':<12} {format_bytes(data['host']['total'], unit):>12} {data['host']['total']:>18,d}")
    if "fit" in data:
        f = data["fit"]
        verdict = "fits" if f["fits"] else "does NOT fit"
        print(f"{f['gpu']}: {verdict} in {format_bytes(f['capacity_bytes'], unit)} usable; "
              f"largest context {context_text(f['max_context'])}, largest batch {f['max_batch']:,d}")
        if f["fewest_gpus"]:
            g = f["fewest_gpus"]
            replicas = g["count"] // (g["tp"] * g["pp"])
            split = f"TP {g['tp']} x PP {g['pp']}" + (f" x DP {replicas}" if replicas > 1 else "")
            print(f"fewest {f['gpu']} GPUs for this scenario: {g['count']} ({split})")
        if f.get("llama_server_fit"):
            print(f"llama-server's default --fit (1 GiB left free) would start it instead with {f['llama_server_fit']} "
                  "(-o fit=true)")
    if "kv_pool_tokens" in facts:
        fixed = " as kv_cache_memory_bytes sets it" if "kv_cache_memory_bytes" in facts else ""
        print(f"vLLM KV cache{fixed}: {format_bytes(facts['kv_pool_bytes'], unit)} ({facts['kv_blocks']:,d} blocks of "
              f"{facts['block_size']}); GPU KV cache size: {facts['kv_pool_tokens']:,d} tokens; maximum concurrency "
              f"for {facts['max_model_len']:,d} tokens per request: {facts['max_concurrency']:.2f}x")
        if "fit" in data and data["kv_cache_required"] < data["bytes"]["kv_cache"]:
            print(f"of it the scenario's sequences need {format_bytes(data['kv_cache_required'], unit)}: "
                  f"{format_bytes(data['fit']['needed_bytes'], unit)} needed on the busiest device, the figure the fit "
                  "verdicts judge")
    if "suggested_kv_cache_memory_bytes" in facts:
        n = facts["suggested_kv_cache_memory_bytes"]
        if n > 0:
            print(f"vLLM's suggestion within this budget: --kv-cache-memory-bytes {n} ({format_bytes(n, unit)}; "
                  "memviz: -o kv_cache_memory_bytes)")
        else:
            print(f"vLLM's suggestion within this budget: none ({n:,d} bytes: the rest and the CUDA graphs it "
                  "captures already fill the budget)")
    if facts.get("cudagraph_bytes"):
        when = {"kv_cache_memory_bytes": "estimate, captured after the pool",
                "measured": "captured and measured before the pool"}.get(facts.get("kv_sizing", ""),
                                                                          "estimate, in its budget, before the pool")
        split = facts.get("cudagraph_split_kv_bytes", 0)
        of_it = f"; of it FlashAttention 3's split-KV buffers {format_bytes(split, unit)}" if split else ""
        print(f"vLLM CUDA graphs ({when}): {format_bytes(facts['cudagraph_bytes'], unit)}{of_it}")
    if "kv_left_free_bytes" in facts:
        print(f"vLLM extensible KV cache: {format_bytes(facts['kv_left_free_bytes'], unit)} left free beyond the "
              "transient peak (its margin: max(1 GiB, 0.75 x the peak), or what gpu_memory_utilization withholds)")
    if "profile_sampler" in facts:
        ps = facts["profile_sampler"]
        print(f"vLLM profile run: the sampler warm-up over {ps['requests']:,d} rows of logits holds "
              f"{format_bytes(ps['bytes'], unit)}: {ps['label']}")
    if "drafter" in facts:
        m = facts["drafter"]
        print(f"vLLM {DRAFTERS[m['method']]} ({m['num_speculative_tokens']} draft token(s) a step): {m['layers']} "
              f"draft layer(s), {format_bytes(m['weight_bytes'], unit)} of weights on the last stage, each caching as "
              "a full-attention layer in the pool" + (f"; each of the {m['state_layers']} state layers keeps "
                                                      f"{m['num_speculative_tokens']} more state page(s) a request"
                                                      if m.get("state_layers") else ""))
    if facts.get("sampler_state_bytes"):
        print(f"vLLM V2 model runner's sampler state (a vocabulary row of counts per request slot): "
              f"{format_bytes(facts['sampler_state_bytes'], unit)}")
    if facts.get("ngram_buffer_bytes"):
        print(f"vLLM n-gram embedding (first stage): inputs buffer {format_bytes(facts['ngram_buffer_bytes'], unit)} "
              f"(overhead); the profile step's n-gram lookups and projections peak at "
              f"{format_bytes(facts['ngram_peak_bytes'], unit)} before the forward (the activations take the larger of "
              "that and the forward's peak)")
    if facts.get("attention_workspace_bytes"):
        total, inside = facts["attention_workspace_bytes"], facts["attention_workspace_in_budget_bytes"]
        print(f"vLLM {facts['attention_workspace_owners']} attention workspaces: {format_bytes(total, unit)} "
              f"({facts['attention_workspace_parts']}), {format_bytes(inside, unit)} of it allocated before the pool "
              "is sized"
              + (f", {format_bytes(total - inside, unit)} after it" if total > inside else ""))
    if facts.get("rotary_tables"):
        print(f"vLLM rotary tables (cos / sin, loaded with the model; memviz counts them as overhead): "
              f"{format_bytes(facts['rotary_table_bytes'], unit)} in {tables_label(facts['rotary_tables'])}")
    if facts.get("lora_slot_bytes"):
        slots, rank = facts["lora_slots"]
        print(f"vLLM LoRA adapter slots ({slots} x rank {rank}, in the weights; CUDA graphs captured with and without "
              f"adapters): {format_bytes(facts['lora_slot_bytes'], unit)} on a first-stage GPU")
    for key, item, what in BATCH_BUFFERS:
        if facts.get(key):
            print(f"vLLM {item} (allocated with the model for a batch's {what}; memviz counts it as overhead): "
                  f"{format_bytes(facts[key], unit)} for {facts['max_num_batched_tokens']:,d} tokens")
    if facts.get("compile_benchmark_bytes"):
        print(f"vLLM cold compile: Inductor's benchmark on a copy of the embedding table holds "
              f"{format_bytes(facts['compile_benchmark_bytes'], unit)} in the first stage's profile run "
              "(-o cold_compile=false once vLLM's compile cache holds the model)")
    if facts.get("moe_workspace_bytes"):
        print(f"vLLM MoE experts' workspace (kept from the first MoE layer on; {facts['runner_buffers_in']}): "
              f"{format_bytes(facts['moe_workspace_bytes'], unit)}")
    if facts.get("pp_receive_buffer_bytes"):
        print(f"vLLM pipeline stages after the first: the buffer the previous stage's tensors arrive in "
              f"({facts['runner_buffers_in']}): {format_bytes(facts['pp_receive_buffer_bytes'], unit)}")
    if facts.get("sparse_index_buffer_bytes"):
        print(f"vLLM sparse attention's top-k index buffers (a batch of index rows and a decode workspace per "
              f"indexer layer): {format_bytes(facts['sparse_index_buffer_bytes'], unit)}")
    if "encoder_profile" in facts:
        ep = facts["encoder_profile"]
        print(f"vLLM profile run: the vision encoder's pass over {ep['items']} {ep['modality']}(s) of "
              f"{ep['tokens_per_item']:,d} tokens"
              + (f" ({ep['chunk']:,d} {ep['chunk_unit']} a call of the tower)" if "chunk" in ep else "")
              + (f" would peak at {format_bytes(ep['peak_bytes'], unit)}; --skip-mm-profiling leaves it out of the "
                 "budget: a batch with images may run out of memory" if ep.get("skipped") else
                 f" peaks at {format_bytes(ep['peak_bytes'], unit)}, before the language model's"))
    if facts.get("graphs_after_pool_bytes"):
        print(f"vLLM CUDA graphs captured after the pool (beyond its budget): "
              f"{format_bytes(facts['graphs_after_pool_bytes'], unit)}")
    if "outside_budget_bytes" in facts:
        print(f"vLLM before its budget (CUDA context, NCCL): {format_bytes(facts['outside_budget_bytes'], unit)}"
              + (f"; MXFP4 MoE backend {facts['mxfp4_moe_backend']} (experts padded)"
                 if "mxfp4_moe_backend" in facts else ""))
    if "fit" in facts:
        print(f"llama-server --fit (1 GiB left free): {facts['fit']}")
    if "mmproj_compute" in facts:
        print(f"llama.cpp mmproj: {describe(facts['mmproj_compute'], unit)}")
    if "startup_risk" in facts:
        print(f"warning: {facts['startup_risk']}")
    for note in data["notes"]:
        print(f"note: {note}")
    print(f"launch ({facts['follows']}):")
    for line in data["launch_command"].splitlines():
        print(f"  {line}")


def _fewest_hint(a: Architecture, sc: Scenario) -> str:
    from memviz.core.engines import get_engine
    from memviz.core.fit import min_gpus
    from memviz.core.gpus import get_gpu

    if not sc.gpu:
        return ""
    fewest = min_gpus(a, sc, get_gpu(sc.gpu))
    if fewest is None:
        return ""
    return f"; fewest {sc.gpu} GPUs that fit: {get_engine(sc.engine).gpus(fewest)} (--tp {fewest.tp} --pp {fewest.pp})"


def _cmd_estimate(args: argparse.Namespace) -> int:
    a = _architecture(args)
    sc = _scenario(args, a, _default_weights(args, a), args.gpu)
    est = estimate(a, sc)
    if "refusal" in est.engine_facts:
        raise InputError(est.engine_facts["refusal"] + _fewest_hint(a, sc))
    data = estimate_json(est, _model_ref(args))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        _print_table(data, Unit(args.unit))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memviz.core import report
    from memviz.core.gpus import get_gpu
    from memviz.core.session import Session

    a = _architecture(args)
    gpus = tuple(get_gpu(g).key for g in args.gpu.split(",") if g.strip())
    formats = [f.strip() for f in _default_weights(args, a).split(",") if f.strip()]
    scenarios = [_scenario(args, a, fmt, gpus[0] if gpus else None) for fmt in formats]
    if not scenarios:
        raise InputError("--weights names no format")
    session = Session(architecture=a, scenarios=tuple(scenarios), gpus=gpus, unit=Unit(args.unit))
    out = Path(args.out)
    if out.suffix.lower() in report.DATA_SUFFIXES:
        report.write(session, out)
    elif out.suffix.lower() in (".png", ".svg", ".pdf"):
        if args.width < 200:
            raise InputError("--width must be at least 200 pixels")
        from memviz.gui.headless import render

        if not 200 <= args.width <= 20000 or not 0.25 <= args.scale <= 8:
            raise InputError("--width must be 200..20000 pixels and --scale 0.25..8")
        render(session, args.chart, out, args.width, args.log_x, args.scale, args.title,
               None if args.subtitle == "none" else args.subtitle)
    else:
        raise InputError(f"unknown output type {out.suffix or '(none)'}; use .png .svg .pdf .csv .json .md")
    print(out)
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    from collections import Counter

    from memviz.core.importers import import_path
    from memviz.core.inventory import active_parameter_count, parameter_count
    from memviz.core.towers import describe

    a = import_path(args.path)
    counts: Counter = Counter()
    sizes: Counter = Counter()
    for t in a.stored:
        counts[(t.storage, t.role)] += 1
        sizes[(t.storage, t.role)] += t.nbytes
    arch = {k: v for k, v in a.to_dict().items() if k not in ("stored", "layer_types", "moe_layers", "ffn_layers")}
    data = {
        "architecture": arch,
        "layer_types": dict(Counter(a.layer_types)),
        "parameters_from_config": parameter_count(a),
        "active_parameters": active_parameter_count(a),
        "stored_tensors": len(a.stored),
        "stored_elements": sum(prod(t.shape) for t in a.stored),
        "stored_bytes": sum(t.nbytes for t in a.stored),
        "by_type_and_role": [{"type": st, "role": r, "tensors": counts[(st, r)], "bytes": sizes[(st, r)]}
                             for st, r in sorted(counts, key=lambda k: -sizes[k])],
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{a.name} ({a.model_type}): {a.decoder_layers} layers, hidden {a.hidden_size}, heads {a.num_heads}/"
          f"{a.num_kv_heads} KV, head dim {a.head_dim}, vocab {a.vocab_size:,d}; layers {a.layer_kinds_text()}")
    if a.is_moe:
        print(f"MoE: {a.num_experts} experts, top-{a.experts_per_token}, expert intermediate {a.moe_intermediate_size}")
    if a.is_mla:
        print(f"MLA: kv_lora_rank {a.kv_lora_rank}, rope dim {a.qk_rope_head_dim}")
    print(f"parameters (from the architecture): {data['parameters_from_config']:,d}")
    if a.encoders:
        print(f"encoders (parameters with their projectors, beside the language model): {describe(a.encoders)}")
    if a.stored:
        print(f"stored: {data['stored_tensors']:,d} tensors, {data['stored_elements']:,d} elements, "
              f"{data['stored_bytes']:,d} bytes ({format_bytes(data['stored_bytes'])})")
        print(f"{'type':<10} {'role':<20} {'tensors':>8} {'bytes':>18}")
        for row in data["by_type_and_role"]:
            print(f"{row['type']:<10} {row['role']:<20} {row['tensors']:>8,d} {row['bytes']:>18,d}")
    for w in a.warnings:
        print(f"note: {w}")
    return 0


def _cmd_log(args: argparse.Namespace) -> int:
    from memviz.core.importers.logs import parse_log, read_log

    if args.path == "-":
        text = read_log(sys.stdin)
    else:
        try:
            with open(args.path, encoding="utf-8", errors="replace") as fh:
                text = read_log(fh)
        except OSError as exc:
            raise InputError(f"cannot read {args.path}: {exc.strerror}") from None
    if args.check:
        if parse_log(text).engine == "vllm":
            return _print_vllm_check(text, args)
        return _print_log_check(text)
    print(json.dumps(parse_log(text).to_dict(), indent=2))
    return 0


def _print_vllm_check(text: str, args: argparse.Namespace) -> int:
    from memviz.core.engines import get_engine
    from memviz.core.gpus import get_gpu
    from memviz.core.importers.vllm_log import quantization_note, vllm_scenario
    from memviz.core.log_check import check_vllm
    from memviz.core.presets import get_preset
    from memviz.core.units import GiB

    if not (args.preset or args.config) or not args.gpu:
        raise InputError("a vLLM log names neither the model's architecture nor the GPU: give --preset or --config, "
                         "and --gpu")
    a = get_preset(args.preset).architecture() if args.preset else from_config_path(args.config)
    sc = vllm_scenario(text, a, get_gpu(args.gpu).key, args.weights)
    e, rows = check_vllm(text, a, sc)
    opts = ", ".join(f"{k} {v}" for k, v in sc.options)
    util = get_engine("vllm").utilization(sc)
    print(f"{a.name}: {sc.weight_format}, max_model_len {sc.context_tokens:,d}, utilization "
          f"{util:g}, TP {sc.tp} x PP {sc.pp} on {get_gpu(sc.gpu).label}"
          + (f"; {opts}" if opts else ""))
    print(f"{'figure':30s} {'vLLM':>14s} {'memviz':>14s} {'error':>8s}")
    for r in rows:
        err = "" if r.error is None else f"{100 * r.error:+7.1f}%"
        if r.unit == "bytes":
            print(f"{r.name:30s} {r.measured / GiB:>14,.2f} {r.estimated / GiB:>14,.2f} {err:>8s} GiB")
        elif r.unit == "x / 100":
            print(f"{r.name:30s} {r.measured / 100:>13,.2f}x {r.estimated / 100:>13,.2f}x {err:>8s}")
        else:
            print(f"{r.name:30s} {r.measured:>14,d} {r.estimated:>14,d} {err:>8s} {r.unit}")
    if not rows:
        print("the log prints none of the figures memviz checks (weights, KV pool, its tokens)")
    for note in (*e.architecture.warnings, quantization_note(text, a, args.weights)):
        if note:
            print(f"note: {note}")
    return 0


def _print_log_check(text: str) -> int:
    from memviz.core.engines import get_engine
    from memviz.core.gguf_mixes import QKV_BRANCH_SUFFIX
    from memviz.core.log_check import check_log, retyped_tensors
    from memviz.core.units import MiB

    e, rows = check_log(text)
    sc = e.scenario
    print(f"{e.architecture.name}: {sc.weight_format}, n_ctx {e.engine_facts['n_ctx']:,d}, "
          f"n_ubatch {e.engine_facts['n_ubatch']}, flash attention {'on' if e.engine_facts['flash_attn'] else 'off'}, "
          f"{'all layers on the GPU' if sc.gpu_layers is None else f'{sc.gpu_layers} layers on the GPU'}"
          f"{_host_experts(e)}" if sc.device == "cuda" else f"{e.architecture.name}: {sc.weight_format}, CPU run")
    print(f"{'buffer':18s} {'llama.cpp':>12s} {'memviz':>12s} {'error':>8s}")
    for r in rows:
        err = "" if r.error is None else f"{100 * r.error:+7.1f}%"
        if r.unit == "bytes":
            print(f"{r.name:18s} {r.measured / MiB:>12,.2f} {r.estimated / MiB:>12,.2f} {err:>8s} MiB")
        else:
            print(f"{r.name:18s} {r.measured:>12,d} {r.estimated:>12,d} {err:>8s} {r.unit}")
    for note in e.architecture.warnings:
        print(f"note: {note}")
    if sc.weight_format.endswith(QKV_BRANCH_SUFFIX):
        print("note: the file's tensors per type are those of older quantizers, which typed a fused attn_qkv by "
              f"its own branch ({get_engine('llamacpp').version} no longer reaches it): read with that branch")
    if retyped := retyped_tensors(rows):
        print(f"{retyped} tensors of the file have other types than {sc.weight_format} gets under the rules memviz "
              f"follows ({get_engine('llamacpp').version}): another quantizer made it; the model buffers follow.")
    return 0


def _host_experts(e) -> str:
    """", the experts of N layers in host memory" for a load whose -ot rules (or --fit) kept them there."""
    from memviz.core.engines.llamacpp import host_tensors
    from memviz.core.formats import get_weight_format
    from memviz.core.inventory import Role, build_inventory

    a, spec = e.architecture, e.scenario.engine_options.get("override_tensor", "")
    names = host_tensors(a, get_weight_format(e.scenario.weight_format), spec) if spec else frozenset()
    layers = {t.layer for t in build_inventory(a) if t.role is Role.EXPERT and t.name in names}
    return f", the experts of {len(layers)} layers in host memory" if layers else ""


def _cmd_runs(args: argparse.Namespace) -> int:
    from memviz.core import calibration as cal

    if args.action == "list":
        skipped: list[str] = []
        runs = cal.load_runs(skipped=skipped)
        print(f"{len(runs)} stored runs in {cal.runs_dir()}")
        for name in skipped:
            print(f"skipped an unreadable run file: {name}")
        for r in runs:
            m, e = r.measured, r.estimate
            err = (e["peak"] - m["peak"]) / m["peak"] * 100 if m.get("peak") else float("nan")
            print(f"{r.id}  {r.machine.get('device_name')} ({r.machine.get('device')}) {r.settings.get('model')} "
                  f"{r.machine.get('dtype')} B={r.settings.get('batch')}: peak {format_bytes(m['peak'])} measured, "
                  f"estimate {err:+.1f} %")
        for key in cal.CALIBRATION_KEYS:
            o, band = cal.calibrated_overhead(runs, key), cal.residual_band(runs, key)
            if o is not None:
                print(f"calibrated {key} overhead {format_bytes(o)}; peak estimate within ±{band * 100:.1f} %")
        return 0
    if not args.target:
        raise InputError(f"'memviz runs {args.action}' needs a {'file' if args.action == 'export' else 'run id'}")
    if args.action == "export":
        print(cal.export_runs(args.target))
    else:
        cal.delete_run(args.target)
        print(f"deleted {args.target}")
    return 0


def _cmd_presets() -> int:
    from memviz.core.inventory import parameter_count
    from memviz.core.presets import all_presets

    for key, p in all_presets().items():
        print(f"{key:<20} {p.name:<34} {parameter_count(p.architecture()) / 1e9:8.2f} B params  {p.repo}")
    return 0


def _cmd_formats() -> int:
    from memviz.core.formats import KV_FORMATS, weight_formats

    print("weight formats (bits per element of a 4096x4096 matrix, overhead included):")
    for key, f in weight_formats().items():
        bits = f.matrix.bits_per_element if f.matrix else None
        experts = f"; experts {f.experts.bits_per_element:.3f} bits" if f.experts else ""
        print(f"  {key:<19} {'' if bits is None else f'{bits:6.3f}':>6}  {f.description}{experts}")
    print("KV cache formats (bytes per 128-value head vector):")
    for key, k in KV_FORMATS.items():
        print(f"  {key:<12} {k.bytes_per_vector(128):6.1f}  {k.description}")
    return 0


def _cmd_gpus() -> int:
    from memviz.core.gpus import GPUS

    width, key_width = max(len(g.describe()) for g in GPUS.values()), max(len(k) for k in GPUS)
    for g in GPUS.values():
        cuda = "measured" if g.cuda_total else "estimated" if g.cuda_total_bytes != g.usable_bytes else ""
        total = f"CUDA {g.cuda_total_bytes / GiB:6.2f} GiB ({cuda})" if cuda else ""
        print(f"{g.key:<{key_width}} {g.describe():<{width}} {g.bandwidth_bytes_per_s / 1e12:5.2f} TB/s  ({g.memory_source})  "
              f"{total}".rstrip())
    return 0


def _cmd_engines() -> int:
    from memviz.core.engines import ENGINES

    for e in ENGINES.values():
        print(f"{e.name:<13} {e.label}\n{'':<13} follows {e.version}: {e.source}")
        for o in e.options:
            default = "derived" if o.default is None else o.default
            choices = f" ({'|'.join(map(str, o.choices))})" if o.choices else ""
            print(f"{'':<15}-o {o.name}=<{o.kind_label}>{choices}  default {default}: {o.help}")
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    """Exit 0 with candidates; 1 when nothing fits (the closest is named); 2 for bad input."""
    from pathlib import Path

    from memviz.core.files import write_text_atomic
    from memviz.core.plan_report import plan_json, plan_markdown, plan_text
    from memviz.core.planner import Requirements, parse_hardware, plan

    engines = tuple(e.strip().lower() for e in args.engine.split(",") if e.strip())
    if args.nodes > 1 and set(engines) <= {"transformers"}:
        raise InputError("--nodes > 1 needs vllm or llamacpp: transformers runs on one machine")
    if args.top < 1:
        raise InputError(f"--top must be at least 1, got {args.top}")
    a = _architecture(args)
    host = None if args.host_ram is None else parse_bytes(args.host_ram)
    hardware = parse_hardware(args.gpu or f"vram:{args.vram}", args.nodes, host)
    req = Requirements(_context(args, a, "transformers", None), args.concurrency, args.min_tokens_per_s,
                       args.max_quality_loss, args.headroom)
    p = plan(a, hardware, req, engines)
    model = _model_ref(args)
    if args.markdown:
        md = Path(args.markdown)
        picture = None
        if p.ranked or p.rejected:
            from memviz.gui.headless import render_plan

            picture = render_plan(p, md.with_suffix(".pareto.png")).name
        write_text_atomic(md, plan_markdown(p, model, args.top, picture))
    if args.json:
        print(json.dumps(plan_json(p, model, args.top), indent=2))
    else:
        print(plan_text(p, model, args.top))
    return 0 if p.ranked else 1


def _cmd_training(args: argparse.Namespace) -> int:
    from memviz.core.activations import (
        TRAINING_VARIANTS,
        training_activation_bytes,
        training_activation_bytes_per_layer,
    )

    a = _architecture(args)
    print(f"{a.name}: Korthikanti et al. stored activations, s={args.seq}, b={args.batch}, h={a.hidden_size}, "
          f"a={a.num_heads}, L={a.num_layers} (16-bit)")
    for v in TRAINING_VARIANTS:
        per = training_activation_bytes_per_layer(a, args.seq, args.batch, v)
        tot = training_activation_bytes(a, args.seq, args.batch, v)
        print(f"  {v:<10} per layer {per / GiB:8.3f} GiB   all layers {tot / GiB:9.3f} GiB")
    inf = estimate(a, Scenario(context_tokens=args.seq, batch=args.batch, attention="eager", extrapolate=True))
    print(f"  inference (transformers, eager, prefill of {args.seq} tokens): workspace "
          f"{inf.bytes['activations'] / GiB:.3f} GiB — buffers are reused layer to layer, nothing is kept for a backward pass")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI; a reader that closes the pipe early (`memviz presets | head -1`) ends it quietly with 141,
    the status of a process ended by SIGPIPE."""
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # Python would otherwise report the pipe again at exit
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _main(argv: list[str]) -> int:
    if not argv:
        return _launch_gui()
    if argv[0] == "probe":  # the measuring process: its own options and JSON-lines output
        from memviz.probe.runner import main as probe_main

        return probe_main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        if args.command == "estimate":
            return _cmd_estimate(args)
        if args.command == "export":
            return _cmd_export(args)
        if args.command == "inspect":
            return _cmd_inspect(args)
        if args.command == "log":
            return _cmd_log(args)
        if args.command == "runs":
            return _cmd_runs(args)
        if args.command == "presets":
            return _cmd_presets()
        if args.command == "formats":
            return _cmd_formats()
        if args.command == "gpus":
            return _cmd_gpus()
        if args.command == "engines":
            return _cmd_engines()
        if args.command == "training":
            return _cmd_training(args)
        if args.command == "plan":
            return _cmd_plan(args)
    except InputError as exc:
        print(f"memviz: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise
    except OSError as exc:
        print(f"memviz: error: {exc.strerror or exc}: {exc.filename or ''}", file=sys.stderr)
        return 2
    _parser().print_help()
    return 2


def _launch_gui() -> int:
    from memviz.gui.linux_deps import startup_problem

    problem = startup_problem()
    if problem:  # Qt would abort with a misleading hint
        print(f"memviz: error: {problem}", file=sys.stderr)
        return 2
    from memviz.gui.app import run

    return run()
