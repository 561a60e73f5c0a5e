"""A plan as data (JSON), as a terminal table and as a self-contained Markdown report section."""

from __future__ import annotations

from typing import Any

from memviz.core.planner import Candidate, Plan
from memviz.core.quality import Evidence, Match
from memviz.core.units import GB, GiB


def _evidence_json(m: Match) -> dict[str, Any]:
    e = m.evidence
    out: dict[str, Any] = {"closeness": m.closeness, "loss_pct": m.loss_pct}
    if e is not None:
        out.update(model=e.model, metric=e.metric, baseline=e.baseline, value=e.value, note=e.note,
                   source=e.source_title, url=e.source_url)
    return out


def candidate_json(c: Candidate, model: str | None) -> dict[str, Any]:
    sc = c.scenario
    return {
        "engine": sc.engine, "weight_format": sc.weight_format, "kv_format": sc.kv_format, "tp": sc.tp, "pp": sc.pp,
        "gpu_layers": sc.gpu_layers, "hardware": c.hardware.label, "gpus_used": c.gpus_used,
        "needed_bytes_per_gpu": c.needed_bytes, "budget_bytes_per_gpu": c.budget_bytes, "host_bytes": c.host_bytes,
        "quality_loss_pct": c.quality.loss_pct,
        "quality": {"weights": _evidence_json(c.quality.weights), "kv": _evidence_json(c.quality.kv)},
        "decode_tokens_per_s_max": c.decode_tokens_per_s_max, "problem": c.problem or None,
        "launch_command": c.launch_command(model),
    }


def plan_json(p: Plan, model: str | None, top: int) -> dict[str, Any]:
    closest = p.closest() if not p.ranked else None
    r = p.requirements
    return {
        "model": p.architecture.name, "hardware": [h.label for h in p.hardware],
        "requirements": {"context_tokens": r.context_tokens, "concurrency": r.concurrency,
                         "min_tokens_per_s": r.min_tokens_per_s, "max_quality_loss_pct": r.max_quality_loss_pct,
                         "headroom": r.headroom},
        "considered": p.considered, "kept": len(p.ranked),
        "candidates": [candidate_json(c, model) for c in p.ranked[:top]],
        "closest": None if closest is None else {**candidate_json(closest, model), "over_budget_pct": over_pct(closest)},
    }


def over_pct(c: Candidate) -> float:
    """How far the busiest GPU's need exceeds its budget, in %."""
    return (c.needed_bytes / c.budget_bytes - 1) * 100


def _loss(c: Candidate) -> str:
    loss = c.quality.loss_pct
    return "no evidence" if loss is None else f"{loss:.2f} %"


def _speed(c: Candidate) -> str:
    v = c.decode_tokens_per_s_max
    return "—" if v is None else f"{v:,.0f}" if v >= 10 else f"{v:.2g}"


def nothing_fits(p: Plan) -> str:
    """One sentence for a plan with no candidate: what is closest and by how much."""
    c = p.closest()
    if c is None:
        why = f" ({p.refusals[0]})" if p.refusals else ""
        return f"nothing can run: every combination was refused by its engine{why}"
    limits = {x.problem for x in p.rejected}
    if all(not x.startswith("does not fit") for x in limits):
        return f"configurations fit, but none meets the limits ({'; '.join(sorted(limits))[:300]})"
    if c.problem.startswith("does not fit in host RAM"):
        return f"nothing fits: the closest is {c.label()} on {c.hardware.label}, which {c.problem}"
    return (f"nothing fits: the closest is {c.label()} on {c.hardware.label}, which needs "
            f"{c.needed_bytes / GiB:.2f} GiB per GPU of {c.budget_bytes / GiB:.2f} GiB ({over_pct(c):+.1f} %)")


def plan_text(p: Plan, model: str | None, top: int) -> str:
    r = p.requirements
    seqs = f"{r.concurrency} sequence{'s' if r.concurrency > 1 else ''}"
    lines = [f"{p.architecture.name}: {r.context_tokens:,d} tokens × {seqs} on "
             f"{', '.join(h.label for h in p.hardware)} — {len(p.ranked)} of {p.considered} configurations fit "
             f"with {r.headroom:.0%} headroom"]
    if not p.ranked:
        return "\n".join([*lines, nothing_fits(p)])
    for i, c in enumerate(p.ranked[:top], 1):
        lines += [f"{i}. {c.label()} on {c.hardware.label}",
                  f"   {c.needed_bytes / GiB:.2f} GiB of {c.budget_bytes / GiB:.2f} GiB per GPU "
                  f"({c.needed_bytes / GB:.2f} GB); decode ≤ {_speed(c)} tokens/s (bound); quality loss {_loss(c)}",
                  f"   evidence: {c.quality.describe()}",
                  *(f"   $ {line}" for line in c.launch_command(model).splitlines())]
    return "\n".join(lines)


def _evidence_rows(cands: list[Candidate]) -> list[Evidence]:
    seen: dict[tuple, Evidence] = {}
    for c in cands:
        for m in (c.quality.weights, c.quality.kv):
            if m.evidence is not None:
                e = m.evidence
                seen.setdefault((e.format, e.kind, e.model, e.metric), e)
    return list(seen.values())


def plan_markdown(p: Plan, model: str | None, top: int, picture: str | None = None) -> str:
    """A report section: hardware, requirements, the choice, the runner-ups, the Pareto picture (a file name
    beside the report, when one was drawn), the evidence and its sources."""
    r = p.requirements
    out = [f"## Plan: {p.architecture.name}", "",
           f"- **Hardware**: {', '.join(h.label for h in p.hardware)}",
           f"- **Requirements**: {r.context_tokens:,d} tokens per sequence × {r.concurrency} concurrent; "
           f"{r.headroom:.0%} of each GPU's budget left free"
           + (f"; decode ≥ {r.min_tokens_per_s:g} tokens/s" if r.min_tokens_per_s is not None else "")
           + (f"; quality loss ≤ {r.max_quality_loss_pct:g} %" if r.max_quality_loss_pct is not None else ""),
           f"- **Considered**: {p.considered} configurations; {len(p.ranked)} kept", ""]
    if not p.ranked:
        return "\n".join([*out, nothing_fits(p), ""])
    best = p.ranked[0]
    out += ["### Chosen", "", f"**{best.label()}** on {best.hardware.label}: {best.needed_bytes / GiB:.2f} GiB of "
            f"{best.budget_bytes / GiB:.2f} GiB per GPU, decode ≤ {_speed(best)} tokens/s (a memory-bandwidth bound), "
            f"quality loss {_loss(best)}.", "", "```", best.launch_command(model), "```", "",
            *([f"![Pareto view: memory per GPU against quality loss]({picture})", ""] if picture else []),
            "### Runner-ups", "", "| # | configuration | GiB per GPU (need / budget) | decode bound (tokens/s) | "
            "quality loss | evidence |", "|---|---|---|---|---|---|"]
    for i, c in enumerate(p.ranked[:top], 1):
        out.append(f"| {i} | {c.label()} | {c.needed_bytes / GiB:.2f} / {c.budget_bytes / GiB:.2f} | {_speed(c)} | "
                   f"{_loss(c)} | {c.quality.describe()} |")
    out += ["", "### Evidence", "", "| format | kind | model | metric | 16-bit | quantized | loss | source |",
            "|---|---|---|---|---|---|---|---|"]
    for e in _evidence_rows(list(p.ranked[:top])):
        out.append(f"| {e.format} | {e.kind} | {e.model} | {e.metric} | {e.baseline:g} | {e.value:g} | "
                   f"{e.loss_pct:+.2f} % | [{e.source_title}]({e.source_url}) |")
    out += ["", "Quality losses are relative to each record's own 16-bit baseline (perplexity or benchmark score, as "
            "named); weights and KV losses are added. Evidence from another model is marked so. Decode figures are "
            "roofline bounds, not predictions.", ""]
    return "\n".join(out)
