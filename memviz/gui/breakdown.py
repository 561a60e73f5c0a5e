"""Breakdown view: the numbers behind the selected scenario, with formula and inputs; copyable."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memviz.core.arch import CROSS, FULL, LINEAR_MIXER_NAMES
from memviz.core.engines import get_engine
from memviz.core.engines.llamacpp_fit import default_fit_placement
from memviz.core.engines.llamacpp_mtmd import describe as describe_mmproj
from memviz.core.engines.transformers import describe_cross_attention
from memviz.core.engines.vllm import BATCH_BUFFERS
from memviz.core.engines.vllm_cudagraphs import FA3_SPLITS
from memviz.core.engines.vllm_eagle3 import DRAFTER_SOURCES, DRAFTERS
from memviz.core.engines.vllm_rotary import tables_label
from memviz.core.estimate import Estimate
from memviz.core.fit import context_text, max_batch, max_context
from memviz.core.formats import get_weight_format, tensor_bytes
from memviz.core.gpus import get_gpu
from memviz.core.speed import speed_bounds
from memviz.core.towers import encoder_bytes
from memviz.core.units import Unit, format_bytes

HEADERS = ("Item", "Bytes", "Size", "Provenance", "Formula / inputs", "Source")


def _other_layers(a, facts: dict) -> str:
    """Where layers differ from L x Hkv x D: Gemma 4's full-attention layers' shape and the layers caching nothing,
    the recurrent layers (gated delta-nets, Mamba2, short convolutions) with their fixed state per sequence, MLA's
    latent rows as the engine lays them out (`latent_widths`)."""
    parts = []
    if not a.uniform_attention:
        full = a.layer_types.index(FULL)
        parts.append(f"full layers Hkv={a.layer_kv_heads(full)}, D={a.layer_head_dim(full)}")
        if a.kv_shared_layers:
            parts.append(f"last {a.kv_shared_layers} layers reuse K/V")
        if a.kv_reading_layers:
            parts.append(f"{a.kv_reading_layers} layers read an earlier layer's K/V and cache none")
    if a.state_layers:
        kind = LINEAR_MIXER_NAMES[a.linear_mixer]
        state = f" and {a.linear_state_values:,} state values" if a.linear_state_values else ""
        where = "beside their attention" if a.parallel_mamba else "no KV"
        parts.append(f"{a.state_layers} {kind} layers: {where}, a fixed state per sequence "
                     f"(the convolution's last inputs over {a.linear_conv_dim:,} channels{state} each)")
    if a.cross_attention_tokens:
        parts.append(f"{a.layer_types.count(CROSS)} cross-attention layers: K/V of {a.cross_attention_tokens:,} "
                     "vision tokens an image, none of the text's")
    if a.compress_ratios:
        parts.append(f"one K=V vector a token over each layer's window of {a.sliding_window:,}; compressed entries of "
                     f"D every ratio tokens: {a.layer_kinds_text()}, the indexer's of {a.indexer_head_dim}")
    elif a.is_mla:
        widths = facts.get("latent_widths", ())
        parts.append(f"MLA: one latent of {' or '.join(map(str, widths))} a token and layer that caches one")
    if a.indexer_head_dim and not a.compress_ratios:
        parts.append(f"{sum(a.indexer_layers)} layers also cache the sparse-attention indexer's key of "
                     f"{a.indexer_head_dim}")
    return " (" + "; ".join(parts) + ")" if parts else ""


def breakdown_rows(est: Estimate, unit: Unit, gpus: tuple[str, ...] = ()) -> list[tuple[str, str, str, str, str, str]]:
    """Rows: the four components, per-device and host usage, weights per tensor group, the engine's figures,
    the largest context and batch on the scenario's GPU, and the decode speed bound on each GPU (`gpus`)."""
    a, sc = est.architecture, est.scenario
    inputs = (f"L={a.num_layers}, Hkv={a.num_kv_heads}, D={a.head_dim}{_other_layers(a, est.engine_facts)}, "
              f"context={sc.context_tokens:,}, sequences={sc.sequences}, KV={sc.kv_format}, engine={sc.engine}")
    out = []
    for c in est.components:
        detail = c.formula + (f" [{inputs}]" if c.name == "kv_cache" else "")
        out.append((c.name, f"{c.bytes:,d}", format_bytes(c.bytes, unit, 3), c.provenance, detail, c.source))
    out.append(("total (busiest device)", f"{est.total:,d}", format_bytes(est.total, unit, 3), "", "sum of the four", ""))
    if est.kv_cache_required != est.bytes["kv_cache"]:
        out.append(("KV required by the sequences", f"{est.kv_cache_required:,d}", format_bytes(est.kv_cache_required, unit, 3),
                    "formula", "what the sequences need of the reserved pool", ""))
    if len(est.devices) > 1:
        for d in est.devices:
            out.append((f"device {d.device}", f"{d.total:,d}", format_bytes(d.total, unit, 3), "", "weights+KV+act+overhead", ""))
    if est.host.total:
        out.append(("host RAM", f"{est.host.total:,d}", format_bytes(est.host.total, unit, 3), "formula",
                    "offloaded weights / KV, output buffer", ""))
    groups: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for t, storage, nbytes in tensor_bytes(a, get_weight_format(sc.weight_format)):
        g = groups[(t.role.value, storage)]
        g[0] += 1
        g[1] += t.numel
        g[2] += nbytes
    for (role, storage), (count, numel, nbytes) in sorted(groups.items(), key=lambda kv: -kv[1][2]):
        out.append((f"weights: {role} ({storage})", f"{nbytes:,d}", format_bytes(nbytes, unit, 3), "exact",
                    f"{count} tensors, {numel:,d} parameters, {nbytes * 8 / numel:.3f} bits each", "tensor inventory"))
    out += _encoder_rows(est, unit)
    out += engine_rows(est, unit)
    if sc.gpu and (placed := default_fit_placement(a, sc)):
        out.append(("llama-server's default --fit", "", "", "formula", f"would start it with {placed}, leaving 1 GiB "
                    "of the GPU free (-o fit=true estimates that placement)", "common/fit.cpp"))
    if sc.gpu:
        gpu = get_gpu(sc.gpu)
        out.append((f"largest context on {gpu.label}", context_text(max_context(a, sc, gpu)), "", "formula",
                    f"at {sc.batch} sequences", "bisection on the estimate"))
        out.append((f"largest batch on {gpu.label}", f"{max_batch(a, sc, gpu):,d}", "", "formula",
                    f"at {sc.context_tokens:,} tokens", "bisection on the estimate"))
    for key in dict.fromkeys([*([sc.gpu] if sc.gpu else []), *gpus]):
        gpu = get_gpu(key)
        b = speed_bounds(est, gpu)
        if np.isfinite(b.decode_tokens_per_s_max):
            out.append((f"decode speed bound on {gpu.label}", f"≤ {b.decode_tokens_per_s_max:,.0f} tokens/s", "",
                        "bound", f"one step reads the active weights and the KV cache at "
                        f"{gpu.bandwidth_bytes_per_s / 1e12:.2f} TB/s; prefill ≥ {b.prefill_s_min:.3f} s", "memviz.core.speed"))
    return out


def _encoder_rows(est: Estimate, unit: Unit) -> list[tuple[str, str, str, str, str, str]]:
    """A multimodal model's encoders beside the tensor groups: their bytes at 16 bits where the engine loads them."""
    if "encoders_place" not in est.engine_facts:  # a text model, or an imported file whose tensors hold them
        return []
    place = est.engine_facts["encoders_place"]
    out = []
    for e in est.architecture.encoders:
        nbytes = encoder_bytes(e, est.scenario.weight_format)
        what = f"{e.parameters:,d} parameters ({e.family}, with its projector)"
        if place:
            detail = f"{what}, {8 * nbytes // e.parameters} bits each" + (", in host memory" if place == "host" else "")
        else:
            detail = f"{what}: not loaded (vLLM --language-model-only; llama.cpp without --mmproj)"
        out.append((f"weights: {e.modality} encoder", f"{nbytes:,d}" if place else "",
                    format_bytes(nbytes, unit, 3) if place else "not loaded", "exact", detail, "memviz.core.towers"))
    return out


def engine_rows(est: Estimate, unit: Unit) -> list[tuple[str, str, str, str, str, str]]:
    """What the engine itself would report (vLLM's pool in tokens), its refusal if any, and the launch command."""
    sc, facts = est.scenario, est.engine_facts
    engine = get_engine(sc.engine)
    out = []
    if "refusal" in facts:
        out.append(("engine refuses this scenario", "", "", "formula", facts["refusal"], engine.version))
    if "cross_attention_images" in facts:
        held = facts["cross_attention_bytes_per_image"] * facts["cross_attention_images"] * sc.sequences
        out.append(("cross-attention image cache", f"{held:,d}", format_bytes(held, unit, 3), "formula",
                    f"{describe_cross_attention(facts)}, x {sc.sequences} sequence(s)", engine.version))
    if "kv_pool_tokens" in facts:
        out.append(("GPU KV cache size", f"{facts['kv_pool_tokens']:,d} tokens", format_bytes(facts["kv_pool_bytes"], unit, 3),
                    "formula", f"{facts['kv_blocks']:,d} blocks of {facts['block_size']} tokens"
                    + (" (kv_cache_memory_bytes)" if "kv_cache_memory_bytes" in facts else ""), engine.version))
        out.append(("maximum concurrency", f"{facts['max_concurrency']:.2f}x", "", "formula",
                    f"requests of max_model_len {facts['max_model_len']:,d} the pool holds at once", engine.version))
    if "suggested_kv_cache_memory_bytes" in facts:
        n = facts["suggested_kv_cache_memory_bytes"]
        note = ("the pool less the CUDA graphs it captured and 150 MiB: the size to pin it with (--kv-cache-memory-bytes)"
                if n > 0 else "none fits: the rest and the CUDA graphs vLLM captures already fill the budget")
        out.append(("kv_cache_memory_bytes vLLM suggests", f"{n:,d}", format_bytes(n, unit, 3), "formula", note,
                    engine.version))
    if facts.get("cudagraph_bytes"):
        measured = facts.get("kv_sizing") == "measured"
        when = ("captured after the pool of kv_cache_memory_bytes" if "kv_cache_memory_bytes" in facts
                else "captured and measured before the extensible KV cache is sized" if measured
                else "taken from the budget before the KV pool")
        caps, split = facts["cudagraph_captures"], facts.get("cudagraph_split_kv_bytes", 0)
        graphs = f"{caps['piecewise']} piecewise + {caps['full']} FULL, up to {caps['largest']:,d} tokens"
        of_it = (f"; of it FlashAttention 3's split-KV buffers {format_bytes(split, unit, 3)} ({FA3_SPLITS} splits of the "
                 "largest FULL graph)" if split else "")
        out.append(("CUDA graphs" if measured else "CUDA graphs (vLLM's estimate)", graphs,
                    format_bytes(facts["cudagraph_bytes"], unit, 3), "formula",
                    when + "; counted in the overhead (none with enforce_eager)" + of_it, engine.version))
    if "kv_left_free_bytes" in facts:
        out.append(("left free beside the pool", "", format_bytes(facts["kv_left_free_bytes"], unit, 3), "formula",
                    "vLLM's extensible KV cache keeps max(1 GiB, 0.75 x the transient peak) free beyond that peak "
                    "(more where gpu_memory_utilization caps the pool)", engine.version))
    if "profile_sampler" in facts:
        ps = facts["profile_sampler"]
        out.append(("sampler warm-up of the profile run", f"{ps['requests']:,d} rows of logits",
                    format_bytes(ps["bytes"], unit, 3), "formula", ps["label"] + ", beside the "
                    "forward's hidden states (the activations take the larger of this and the forward)", engine.version))
    if "drafter" in facts:
        m = facts["drafter"]
        out.append((f"{DRAFTERS[m['method']]} (speculative decoding)", f"{m['layers']} layer(s), "
                    f"{m['num_speculative_tokens']} tokens a step", format_bytes(m["weight_bytes"], unit, 3), "formula",
                    f"{DRAFTER_SOURCES[m['method']]}, loaded beside it on the last stage (counted in the weights), "
                    "each layer caching as one more full-attention layer in the pool"
                    + (f"; each of the model's {m['state_layers']} state layers keeps a state page more a request for "
                       "each drafted token" if m.get("state_layers") else ""), engine.version))
    if facts.get("sampler_state_bytes"):
        out.append(("sampler state (V2 model runner)", f"{facts['max_num_seqs']:,d} request slots",
                    format_bytes(facts["sampler_state_bytes"], unit, 3), "formula", "penalty counts (an int32 a "
                    "vocabulary entry) and bit masks for every request slot, kept from loading on; counted in the "
                    "overhead", engine.version))
    if facts.get("ngram_buffer_bytes"):
        out.append(("n-gram inputs buffer (first stage)", f"{facts['max_num_batched_tokens']:,d} batched tokens",
                    format_bytes(facts["ngram_buffer_bytes"], unit, 3), "formula", "the V2 model state's fused n-gram "
                    "input embeddings, kept from loading on; the profile step's lookups and projections peak at "
                    f"{format_bytes(facts['ngram_peak_bytes'], unit, 3)} before the forward (activations: the "
                    "larger)", engine.version))
    if facts.get("attention_workspace_bytes"):
        total, inside = facts["attention_workspace_bytes"], facts["attention_workspace_in_budget_bytes"]
        out.append((f"{facts['attention_workspace_owners']} attention workspaces",
                    f"{facts['max_num_batched_tokens']:,d} batched tokens",
                    format_bytes(total, unit, 3), "formula", facts["attention_workspace_parts"] + "; "
                    + (f"{format_bytes(inside, unit, 3)} counted in the overhead, the rest allocated after the pool"
                       if total > inside else "counted in the overhead"), engine.version))
    if facts.get("rotary_tables"):
        out.append(("rotary tables (cos / sin)", tables_label(facts["rotary_tables"]),
                    format_bytes(facts["rotary_table_bytes"], unit, 3), "formula", "one per distinct rope, built "
                    "while the model loads (vLLM's \"Model loading took\" includes them); counted in the overhead",
                    engine.version))
    if facts.get("lora_slot_bytes"):
        slots, rank = facts["lora_slots"]
        out.append(("LoRA adapter slots", f"{slots} x rank {rank}", format_bytes(facts["lora_slot_bytes"], unit, 3),
                    "exact",
                    "max_loras slots of max_lora_rank in every linear layer, the experts and the embeddings the model "
                    "class lists, zeros from load; counted in the weights (CUDA graphs captured with and without "
                    "adapters)", engine.version))
    for key, item, what in BATCH_BUFFERS:
        if facts.get(key):
            out.append((item, f"{facts['max_num_batched_tokens']:,d} batched tokens", format_bytes(facts[key], unit, 3),
                        "formula", f"allocated with the model for a batch's {what}; counted in the overhead",
                        engine.version))
    if facts.get("compile_benchmark_bytes"):
        out.append(("cold compile's kernel benchmark", "the embedding table's copy",
                    format_bytes(facts["compile_benchmark_bytes"], unit, 3), "formula", "a first start compiles the "
                    "model in the profile run and Inductor benchmarks the embedding kernel on a random copy of the "
                    "table: a floor of the first stage's activations (none once vLLM's compile cache holds the model)",
                    engine.version))
    if facts.get("moe_workspace_bytes"):
        out.append(("MoE experts' workspace", f"{facts['max_num_batched_tokens']:,d} batched tokens",
                    format_bytes(facts["moe_workspace_bytes"], unit, 3), "formula", "the fused-MoE kernel's scratch "
                    "for a full batch, kept from the first MoE layer on (vLLM's WorkspaceManager); counted in the "
                    + facts["runner_buffers_in"], engine.version))
    if facts.get("pp_receive_buffer_bytes"):
        out.append(("pipeline receive buffer", f"{facts['max_num_batched_tokens']:,d} batched tokens",
                    format_bytes(facts["pp_receive_buffer_bytes"], unit, 3), "formula", "on every stage after the "
                    "first: the previous stage's hidden states (and residual) arrive in it; counted in the "
                    + facts["runner_buffers_in"], engine.version))
    if facts.get("sparse_index_buffer_bytes"):
        out.append(("top-k index buffers (sparse attention)", f"{facts['max_num_batched_tokens']:,d} batched tokens",
                    format_bytes(facts["sparse_index_buffer_bytes"], unit, 3), "formula", "the indices the indexers "
                    "select for a batch, and a decode workspace per indexer layer, kept from loading on; counted in "
                    "the overhead", engine.version))
    if "encoder_profile" in facts:
        ep = facts["encoder_profile"]
        out.append(("vision encoder's profile pass", f"{ep['items']} {ep['modality']}(s) x {ep['tokens_per_item']:,d} "
                    "tokens" + (f", {ep['chunk']:,d} {ep['chunk_unit']} a call" if "chunk" in ep else ""),
                    format_bytes(ep["peak_bytes"], unit, 3), "formula", "the largest inputs the encoder budget allows, "
                    + ("not profiled (--skip-mm-profiling): outside the budget, a batch with images may run out of "
                       "memory" if ep.get("skipped") else
                       "encoded before the language model's pass (the activations take the larger of the two)"),
                    engine.version))
    if facts.get("graphs_after_pool_bytes"):
        out.append(("CUDA graphs captured after the pool", "", format_bytes(facts["graphs_after_pool_bytes"], unit, 3),
                    "formula", "before v0.20 (estimate_cudagraphs off): beyond gpu_memory_utilization's share",
                    engine.version))
    if "outside_budget_bytes" in facts:
        out.append(("before the budget (CUDA context, NCCL)", "", format_bytes(facts["outside_budget_bytes"], unit, 3),
                    "constant", "allocated before vLLM's baseline snapshot: outside its budget"
                    + ("" if facts.get("kv_sizing") == "measured" else
                       ", and must fit beside gpu_memory_utilization x the CUDA total"), engine.version))
    if "startup_risk" in facts:
        out.append(("start-up risk", "", "", "constant", facts["startup_risk"], engine.version))
    if "mxfp4_moe_backend" in facts:
        out.append(("MXFP4 MoE backend", facts["mxfp4_moe_backend"], "", "formula",
                    "expert matrices padded to the backend's tile sizes (counted in the weights)", engine.version))
    if "offload_copy_bytes" in facts:
        out.append(("weights copied in by op offload", "", format_bytes(facts["offload_copy_bytes"], unit, 3), "exact",
                    "the largest weight kept in host memory that a GPU op copies into its compute buffer (counted in "
                    "the activations; off: --no-op-offload)", engine.version))
    if "mmproj_compute" in facts:
        m = facts["mmproj_compute"]
        out.append(("mmproj compute buffer (libmtmd)", f"{m['device_bytes']:,d}", format_bytes(m["device_bytes"], unit, 3),
                    "formula", describe_mmproj(m, unit) + " (counted in the activations; host part in host RAM)",
                    engine.version))
    if "fit" in facts:
        out.append(("placement by --fit", "", "", "formula", f"{facts['fit']}: where llama-server's --fit puts the "
                    "weights to leave 1 GiB of the GPU free (common/fit.cpp)", engine.version))
    for buffer, nbytes in facts.get("cpu_model_buffers", {}).items():
        out.append((f"{buffer} model buffer", "", format_bytes(nbytes, unit, 3), "exact",
                    "weights as llama.cpp's CPU backend holds them (mapped file, packed copies)", engine.version))
    out.append(("launch command", "", "", "", est.launch_command().replace("\n", " ; "), engine.version))
    return out


class BreakdownView(QWidget):
    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.caption = QLabel()
        self.copy_button = QPushButton("Copy table")
        self.copy_button.clicked.connect(self.copy)
        top.addWidget(self.caption, 1)
        top.addWidget(self.copy_button)
        layout.addLayout(top)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(True)
        layout.addWidget(self.table, 1)
        self.launch = QPlainTextEdit()
        self.launch.setReadOnly(True)
        self.launch.setMaximumHeight(90)
        self.launch.setPlaceholderText("The command that runs the selected scenario in its engine")
        layout.addWidget(QLabel("Launch command (reproduces this scenario):"))
        layout.addWidget(self.launch)
        self.rows: list[tuple[str, ...]] = []

    def show_estimate(self, est: Estimate | None, label: str, unit: Unit, gpus: tuple[str, ...] = ()) -> None:
        self.rows = breakdown_rows(est, unit, gpus) if est is not None else []
        self.caption.setText(f"<b>{label}</b> — every number with its provenance" if est is not None else "No scenario")
        self.table.setRowCount(len(self.rows))
        for r, row in enumerate(self.rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        formula = HEADERS.index("Formula / inputs")  # long formulas wrap inside a capped column instead of eliding
        self.table.setColumnWidth(formula, min(self.table.columnWidth(formula), max(320, self.table.width() * 2 // 5)))
        self.table.resizeRowsToContents()
        self.launch.setPlainText(est.launch_command() if est is not None else "")

    def as_tsv(self) -> str:
        return "\n".join("\t".join(r) for r in [HEADERS, *self.rows])

    def copy(self) -> None:
        QApplication.clipboard().setText(self.as_tsv())
