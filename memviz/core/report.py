"""The numbers behind a chart, as rows and as CSV / JSON / Markdown text.

One row per scenario: its settings, the four components and the total in bytes
(the busiest device), and for each GPU whether it fits. Exports write bytes (exact
integers) plus the chosen display unit, so a reader never has to guess GiB vs GB.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from memviz.core.arch import Architecture
from memviz.core.engines import get_engine, gptq_kernels
from memviz.core.engines.transformers import describe_cross_attention
from memviz.core.errors import InputError
from memviz.core.estimate import COMPONENTS, Estimate, Scenario, estimate
from memviz.core.files import write_text_atomic
from memviz.core.fit import estimate_fits, needed_bytes
from memviz.core.gpus import get_gpu
from memviz.core.runs import MeasuredRun, for_scenario, is_stale
from memviz.core.session import Session
from memviz.core.towers import describe
from memviz.core.units import Unit, to_unit

DATA_SUFFIXES = (".csv", ".json", ".md")
SETTINGS = ("name", "weight_format", "kv_format", "context_tokens", "batch", "engine", "tp", "pp")


def scenario_label(sc: Scenario) -> str:
    """A short label for a scenario: its name, or weights · KV · context×batch, and TP / PP / the engine's own split
    (vLLM's DP, EP) where several GPUs share it (the chart shows one of them: without it, one GPU and a split of
    the same model looked alike)."""
    if sc.name:
        return sc.name
    ctx = f"{sc.context_tokens // 1024}K" if sc.context_tokens % 1024 == 0 else f"{sc.context_tokens:,}"
    engine = get_engine(sc.engine)
    own = engine.split_labels(engine.resolve(dict(sc.options)))  # a Scenario's options are the engine's (checked)
    gpus = "".join(f" · {k}{n}" for k, n in (("TP", sc.tp), ("PP", sc.pp)) if n > 1) + "".join(f" · {x}" for x in own)
    return f"{sc.weight_format} · KV {sc.kv_format} · {ctx}×{sc.batch}{gpus}"


def _traits(sc: Scenario) -> dict[str, str]:
    """What sets a scenario apart beyond its `scenario_label`, as a label's words."""
    out = {"engine": sc.engine, "gpu": sc.gpu_spec.label if sc.gpu_spec else "",
           "gpu_layers": "" if sc.gpu_layers is None else f"{sc.gpu_layers} GPU layers",
           "kv_offload": "KV in host RAM" if sc.kv_offload else "", "attention": sc.attention or "",
           "prefill": f"chunk {sc.prefill_chunk_tokens:,d}" if sc.prefill_chunk_tokens else "",
           "utilization": "" if sc.gpu_memory_utilization is None else f"util {sc.gpu_memory_utilization:g}",
           "device": sc.device,
           "sequences": "/".join(f"{n:,d}" for n in sc.sequence_tokens)}
    out.update({f"option {k}": f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sc.options})
    return out


def scenario_labels(scenarios: list[Scenario] | tuple[Scenario, ...]) -> list[str]:
    """Each scenario's `scenario_label`, told apart where two coincide (a chart's bars and lines, a table's rows):
    what differs between them (engine, GPU, GPU layers, engine options, ...) is added, and a number where nothing
    does."""
    out = [scenario_label(sc) for sc in scenarios]
    for label in {x for x in out if out.count(x) > 1}:
        idx = [i for i, x in enumerate(out) if x == label]
        traits = [_traits(scenarios[i]) for i in idx]
        keys = [k for k in dict.fromkeys(k for t in traits for k in t) if len({t.get(k, "") for t in traits}) > 1]
        for i, t in zip(idx, traits, strict=True):
            out[i] = " · ".join([label, *(t[k] for k in keys if t.get(k))])
    for label in {x for x in out if out.count(x) > 1}:
        for n, i in enumerate((i for i, x in enumerate(out) if x == label), 1):
            out[i] = f"{label} #{n}"
    return out


def estimates(a: Architecture, scenarios: tuple[Scenario, ...] | list[Scenario]) -> list[Estimate]:
    return [estimate(a, sc) for sc in scenarios]


def rows(a: Architecture, scenarios: list[Scenario] | tuple[Scenario, ...], gpus: tuple[str, ...] = (),
         runs: tuple[MeasuredRun, ...] = ()) -> list[dict[str, Any]]:
    """One row per scenario; a measured run (probe or engine log) of the same scenario adds measured_* columns."""
    out = []
    for sc, est, label in zip(scenarios, estimates(a, scenarios), scenario_labels(scenarios), strict=True):
        row: dict[str, Any] = {"model": a.name, "label": label}
        row.update({k: getattr(sc, k) for k in SETTINGS})
        row["gpus"] = get_engine(sc.engine).gpus(sc)
        row.update({f"{c}_bytes": est.bytes[c] for c in COMPONENTS})
        row["total_bytes"] = est.total
        row["kv_required_bytes"] = est.kv_cache_required  # below kv_cache_bytes where vLLM reserves a larger pool
        row["needed_bytes"] = needed_bytes(est)  # what the fits_* columns judge
        row["host_bytes"] = est.host.total
        for g in gpus:
            row[f"fits_{g}"] = estimate_fits(est, get_gpu(g))
        run = for_scenario(tuple(runs), sc)
        measured = run.measured if run and not is_stale(run, sc) else None  # a stale run is not this scenario's
        for c in (*COMPONENTS, "peak"):
            row[f"measured_{c}_bytes"] = (measured or {}).get(c)
        row["engine_options"] = dict(sc.options)
        row["engine_facts"] = est.engine_facts
        row["launch_command"] = est.launch_command()
        out.append(row)
    return out


_NOT_IN_CSV = ("engine_options", "engine_facts", "launch_command")  # nested or multi-line: JSON and Markdown carry them


def to_csv(a: Architecture, scenarios, gpus=(), unit: Unit = Unit.GiB, runs=()) -> str:
    data = [{k: v for k, v in r.items() if k not in _NOT_IN_CSV} for r in rows(a, scenarios, gpus, runs)]
    buf = io.StringIO()
    if not data:
        return ""
    fieldnames = list(data[0]) + [f"total_{unit.value}"]
    w = csv.DictWriter(buf, fieldnames=fieldnames, lineterminator="\n")
    w.writeheader()
    for r in data:
        w.writerow({**r, f"total_{unit.value}": f"{to_unit(r['total_bytes'], unit):.4f}"})
    return buf.getvalue()


def to_json(a: Architecture, scenarios, gpus=(), unit: Unit = Unit.GiB, runs=()) -> str:
    return json.dumps({"model": a.name, "encoder_parameters": {e.modality: e.parameters for e in a.encoders},
                       "unit": unit.value, "bytes_unit": "bytes", "gpus": list(gpus),
                       "scenarios": rows(a, scenarios, gpus, runs), "runs": [r.to_dict() for r in runs]}, indent=2)


def to_markdown(a: Architecture, scenarios, gpus=(), unit: Unit = Unit.GiB, runs=()) -> str:
    data = rows(a, scenarios, gpus, runs)
    u = unit.value
    measured = any(r["measured_peak_bytes"] is not None for r in data)
    pooled = any(r["needed_bytes"] < r["total_bytes"] for r in data)  # vLLM's pool beyond its sequences' need
    head = ["scenario", "engine", *(f"{c} ({u})" for c in COMPONENTS), f"total ({u})",
            *([f"needed ({u})"] if pooled else []), *(f"fits {g}" for g in gpus),
            *([f"measured peak ({u})"] if measured else [])]
    lines = [f"**{a.name}** — memory per device, {u} ({'2^30' if unit is Unit.GiB else '10^9'} bytes)", "",
             *(["needed: the total with vLLM's KV pool, sized on the scenario's GPU, replaced by the KV its sequences "
                "need; the fits columns judge it.", ""] if pooled else []),
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in data:
        cells = [r["label"], r["engine"], *(f"{to_unit(r[f'{c}_bytes'], unit):.2f}" for c in COMPONENTS),
                 f"{to_unit(r['total_bytes'], unit):.2f}",
                 *([f"{to_unit(r['needed_bytes'], unit):.2f}"] if pooled else []),
                 *("yes" if r[f"fits_{g}"] else "no" for g in gpus)]
        if measured:
            peak = r["measured_peak_bytes"]
            cells.append(f"{to_unit(peak, unit):.2f}" if peak is not None else "—")
        lines.append("| " + " | ".join(cells) + " |")
    if a.encoders:
        lines += ["", f"Encoders beside the language model (parameters): {describe(a.encoders)}. The weights hold them "
                  "at 16 bits where the engine loads them (transformers; vLLM unless --language-model-only; llama.cpp with "
                  "--mmproj, which Ollama passes by default)."]
    for r in data:
        f = r["engine_facts"]
        if "cross_attention_images" in f:
            lines += ["", f"{r['label']}: {describe_cross_attention(f)}."]
        for line in engine_lines(f, unit):
            lines += ["", f"{r['label']}: {line}"]
    lines += ["", "Launch commands (each reproduces its scenario in its engine):", ""]
    for r in data:
        lines += [f"- {r['label']} ({r['engine']}):", "", "  ```", *(f"  {x}" for x in r["launch_command"].splitlines()),
                  "  ```"]
    return "\n".join(lines) + "\n"


def engine_lines(f: dict, unit: Unit) -> list[str]:
    """What the engine itself would report of a scenario (vLLM's pool as its start-up log prints it), its refusal
    and the risks it runs, as sentences."""
    out = []
    if f.get("kv_pool_bytes"):  # none where vLLM would not start
        pinned = " (set by kv_cache_memory_bytes)" if "kv_cache_memory_bytes" in f else ""
        out.append(f"vLLM's KV pool {to_unit(f['kv_pool_bytes'], unit):.2f} {unit.value}{pinned}, {f['kv_blocks']:,d} "
                   f"blocks; GPU KV cache size {f['kv_pool_tokens']:,d} tokens; maximum concurrency "
                   f"{f['max_concurrency']:.2f}x for {f['max_model_len']:,d} tokens per request.")
    out += [f"{gptq_kernels.describe(f, unit)}."] if "quant_kernel" in f else []
    out += [f"the engine refuses it: {f['refusal']}."] if "refusal" in f else []
    out += [f"risk: {f['startup_risk']}."] if "startup_risk" in f else []
    return out


def write(session: Session, path: str | Path) -> Path:
    """Write the numbers behind the charts as CSV, JSON or Markdown, chosen by the file suffix."""
    p = Path(path)
    writers = {".csv": to_csv, ".json": to_json, ".md": to_markdown}
    if p.suffix.lower() not in writers:
        raise InputError(f"cannot export data as {p.suffix or 'a file without suffix'}; use {', '.join(DATA_SUFFIXES)}")
    text = writers[p.suffix.lower()](session.architecture, session.scenarios, session.gpus, session.unit, session.runs)
    return write_text_atomic(p, text)
