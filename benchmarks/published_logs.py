"""memviz against every published engine log in tests/data/published, as Markdown tables (docs/engines.md).

    python benchmarks/published_logs.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memviz.core.units import GiB, MiB  # noqa: E402
from tests.core.test_published_logs import (  # noqa: E402
    KV_SIZES,
    LLAMACPP,
    TYPE_COUNTS,
    VLLM,
    compute_errors,
    kv_size_rows,
    llamacpp_check,
    vllm_rows,
)


def _cell(row, scale: float) -> str:
    if row is None:
        return ""
    if row.unit == "x / 100":
        return f"{row.measured / 100:.2f}x / {row.estimated / 100:.2f}x"
    if row.unit != "bytes":
        return f"{row.measured:,d} / {row.estimated:,d}"
    err = "" if row.error is None else f" ({100 * row.error:+.1f} %)"
    return f"{row.measured / scale:,.2f} / {row.estimated / scale:,.2f}{err}"


def llamacpp_table() -> list[str]:
    cols = ["KV (device)", "KV", "KV (host)", "compute (device)", "compute", "compute (host)", "output",
            "model (device)", "model (host)"]
    out = ["| case | build | device | KV MiB | host KV MiB | compute MiB | host compute MiB | output MiB | model MiB | "
           "host model MiB | tensor types |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for case in LLAMACPP:
        e, rows = llamacpp_check(case)
        get = {c: rows.get(c) for c in cols}
        kv, comp = get["KV (device)"] or get["KV"], get["compute (device)"] or get["compute"]
        skip = case.get("not_compared", {})
        cpu_models = "; ".join(f"{n.removeprefix('model ')} {_cell(r, MiB)}" + (" ²" if n in skip else "")
                               for n, r in rows.items() if n.startswith("model ") and not n.startswith("model ("))
        types = [r for n, r in rows.items() if n.startswith("tensors")]
        agree = "" if not types else "differ" if any(r.measured != r.estimated for r in types) else \
            "older qkv branch ¹" if e.scenario.weight_format.endswith("+qkv-branch") else "0c1e570's rules"
        out.append(f"| [{case['id']}]({case['source'].split()[0]}) | {case['build']} | {case['device']} | "
                   f"{_cell(kv, MiB)} | {_cell(get['KV (host)'], MiB)} | {_cell(comp, MiB)} | "
                   f"{_cell(get['compute (host)'], MiB)} | {_cell(get['output'], MiB)} | "
                   f"{_cell(get['model (device)'], MiB) or cpu_models} | "
                   f"{_cell(get['model (host)'], MiB)} | {agree} |")
    errors = compute_errors()
    within = sum(abs(e) <= 0.10 for e in errors)
    out.append("")
    out.append(f"Distinct compute buffers within 10 %: {within} of {len(errors)}; median |error| "
               f"{100 * statistics.median(abs(e) for e in errors):.1f} %.")
    notes = {case["quantizer"] for case in LLAMACPP if "quantizer" in case}
    out += [f"¹ {note}" for note in sorted(notes)]
    out += [f"² {case['id']}, {name if name.startswith('model (') else name.removeprefix('model ')}: {why}"
            for case in LLAMACPP for name, why in case.get("not_compared", {}).items()]
    return out


def kv_sizes_table() -> list[str]:
    out = ["| model | build | -c | --parallel | KV MiB (measured / memviz) |", "|---|---|---|---|---|"]
    for report in KV_SIZES:
        for point, mib in kv_size_rows(report):
            out.append(f"| [{report['id']}]({report['source'].split()[0]}) | {report['build']} | {point['n_ctx']:,d} | "
                       f"{point['parallel']} | {point['kv_mib']:,.2f} / {mib:,.2f} |")
    return out


def type_counts_table() -> list[str]:
    from memviz.core.arch import from_hf_config
    from memviz.core.gguf_mixes import gguf_type_counts
    from memviz.core.importers.llamacpp_log import type_counts_of
    from memviz.core.presets import get_preset

    out = ["| file | mix | tensors per type (printed / memviz) |", "|---|---|---|"]
    for case in TYPE_COUNTS:
        m = case["model"]
        a = get_preset(m["preset"]).architecture() if "preset" in m else from_hf_config(m["config"], name=case["id"])
        ours = gguf_type_counts(case["mix"], a)
        cells = ", ".join(f"{t} {n} / {ours.get(t, 0)}" for t, n in type_counts_of(case["log"]).items())
        out.append(f"| [{case['id']}]({case['source'].split()[0]}) | {case['mix']} | {cells} |")
    return out


def vllm_table() -> list[str]:
    out = ["| case | vLLM | weights GiB | non-torch GiB | activation peak GiB | profile + non-torch (implied) GiB "
           "| KV pool GiB | KV tokens | tokens in printed pool | concurrency in printed pool | CUDA graphs GiB "
           "| CUDA-graph estimate GiB |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    pools = []
    for case in VLLM:
        rows = vllm_rows(case)
        if case["engine"] == "V1" and "KV pool" in rows and "KV pool" not in case.get("not_compared", {}):
            pools.append(abs(rows["KV pool"].error))
        skip = case.get("not_compared", {})
        cells = [_cell(rows.get(n), GiB) + (" ¹" if n in skip else "")
                 for n in ("weights", "non-torch", "activation peak", "profile + non-torch (implied)", "KV pool",
                           "KV tokens", "tokens in printed pool", "concurrency in printed pool", "CUDA graphs (captured)",
                           "CUDA graphs (estimated)")]
        out.append(f"| [{case['id']}]({case['source'].split()[0]}) | {case['engine']} {case['vllm']} | "
                   + " | ".join(cells) + " |")
    out.append("")
    if pools:
        out.append(f"V1 KV pools compared: {len(pools)}; median |error| {100 * statistics.median(pools):.1f} %, "
                   f"worst {100 * max(pools):.1f} %.")
        out.append("")
    out += [f"¹ {case['id']}, {name}: {why}" for case in VLLM for name, why in case.get("not_compared", {}).items()]
    return out


if __name__ == "__main__":
    print("\n".join(["## llama.cpp (measured / memviz)", "", *llamacpp_table(), "", "## llama.cpp KV sizes", "",
                     *kv_sizes_table(), "", "## GGUF tensor types", "", *type_counts_table(), "",
                     "## vLLM (measured / memviz)", "", *vllm_table()]))
