"""A llama.cpp log held against memviz's estimate of the same load.

The log gives the model and the settings (`memviz.core.importers.llamacpp_log`); memviz estimates that scenario
with its llama.cpp engine and sets each buffer llama.cpp printed beside the figure memviz gives for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from memviz.core.arch import Architecture
from memviz.core.engines.llamacpp_mtmd import encoder_from_log, mtmd_buffers
from memviz.core.engines.vllm_cudagraphs import Captures, cudagraph_bytes
from memviz.core.engines.vllm_kv import PRINTS_CONCURRENCY_SINCE
from memviz.core.estimate import Estimate, estimate
from memviz.core.gguf_mixes import GGUF_MIXES, gguf_type_counts, mix_base
from memviz.core.importers.llamacpp_log import LlamaCppLoad, architecture_of, read_llamacpp_load, scenario_of
from memviz.core.importers.logs import LogMeasurement, is_host_buffer, parse_log
from memviz.core.importers.vllm_log import read_vllm_settings
from memviz.core.units import GiB


@dataclass(frozen=True)
class BufferCheck:
    """One buffer (or count) as llama.cpp printed it and as memviz estimates it."""

    name: str
    measured: int
    estimated: int
    unit: str = "bytes"

    @property
    def error(self) -> float | None:
        """Relative error of the estimate (None when llama.cpp printed 0)."""
        return None if not self.measured else (self.estimated - self.measured) / self.measured


def _sum(buffers: dict[str, int], host: bool) -> int:
    return sum(v for d, v in buffers.items() if is_host_buffer(d) == host)


def check_load(load: LlamaCppLoad, a: Architecture | None = None) -> tuple[Estimate, list[BufferCheck]]:
    """memviz's estimate of the load and the buffers it printed, side by side (a buffer the log does not print is
    left out). `a`: the model, when the log does not print its metadata."""
    a = a or architecture_of(load)
    e = estimate(a, scenario_of(load, a))
    return e, load_checks(load, e)


def load_checks(load: LlamaCppLoad, e: Estimate) -> list[BufferCheck]:
    """The buffers (and the tensors per type) a llama.cpp load printed beside the estimate `e` of a llama.cpp
    scenario, device and host apart."""
    a, sc = e.architecture, e.scenario
    facts, b = e.engine_facts, load.buffers
    rows = [BufferCheck("n_ctx", int(load.settings["n_ctx"]), facts["n_ctx"], "cells")] if "n_ctx" in load.settings else []
    gpu = sc.device == "cuda"
    if gpu and b["model"]:
        rows.append(BufferCheck("model (device)", _sum(b["model"], host=False), sum(d.weights for d in e.devices)))
        rows.append(BufferCheck("model (host)", _sum(b["model"], host=True), e.host.weights))
    elif b["model"]:
        rows += _cpu_model_rows(b["model"], facts["cpu_model_buffers"])
    if any(not is_host_buffer(d) for d in b["kv"]) or not gpu:
        rows.append(BufferCheck("KV (device)" if gpu else "KV", _sum(b["kv"], host=not gpu),
                                sum(d.kv_cache for d in e.devices)))
    if gpu and any(is_host_buffer(d) for d in b["kv"]):
        rows.append(BufferCheck("KV (host)", _sum(b["kv"], host=True), e.host.kv_cache))
    rows.append(BufferCheck("compute (device)" if gpu else "compute", _sum(b["compute"], host=not gpu),
                            sum(d.activations for d in e.devices)))
    if gpu and any(is_host_buffer(d) for d in b["compute"]):
        rows.append(BufferCheck("compute (host)", _sum(b["compute"], host=True), facts["host_compute_bytes"]))
    if b["output"]:
        rows.append(BufferCheck("output", sum(b["output"].values()), facts["output_buffer_bytes"]))
    return rows + mmproj_checks(load, facts["flash_attn"]) + _type_rows(load, a, sc.weight_format)


def mmproj_checks(load: LlamaCppLoad, flash: bool) -> list[BufferCheck]:
    """libmtmd's compute buffers for the mmproj the log loaded, beside memviz's for the tower its lines describe
    (`llamacpp_mtmd`), with the attention its warm-up reports; none where memviz does not size that projector."""
    printed, hparams = load.buffers.get("mmproj_compute"), load.settings.get("mmproj", {})
    deepstack = next((int(v) for k, v in load.meta.items() if k.endswith(".n_deepstack_layers")), 0)
    tower = encoder_from_log(hparams, deepstack) if printed else None
    if tower is None:
        return []
    b = mtmd_buffers((tower,), hparams.get("flash_attn", "enabled" if flash else "disabled") == "enabled")
    device = [v for d, v in printed.items() if not is_host_buffer(d)]
    if not device:  # a CPU run (or --no-mmproj-offload): the whole buffer in host memory
        return [BufferCheck("mmproj compute", _sum(printed, host=True), b.device_bytes)]
    rows = [BufferCheck("mmproj compute (device)", sum(device), b.device_bytes)]
    if any(is_host_buffer(d) for d in printed):
        rows.append(BufferCheck("mmproj compute (host)", _sum(printed, host=True), b.host_bytes))
    return rows


def _cpu_model_rows(printed: dict[str, int], ours: dict[str, int]) -> list[BufferCheck]:
    """A CPU load's model buffers one by one ("model CPU_REPACK", "model CPU_Mapped"): packed and mapped bytes
    follow different rules, so their sum could hide two errors. The split files of one model each print their own
    mapped buffer (summed here); CPU_AARCH64 is CPU_REPACK's name before early 2025."""
    printed = {("CPU_REPACK" if n == "CPU_AARCH64" else n): v for n, v in printed.items()}
    return [BufferCheck(f"model {n}", printed.get(n, 0), ours.get(n, 0)) for n in sorted(set(printed) | set(ours))]


def _type_rows(load: LlamaCppLoad, a: Architecture, weight_format: str) -> list[BufferCheck]:
    """The file's tensors by ggml type against the types memviz's mix rules give them: a quantizer whose rules
    differ from the llama.cpp memviz follows shows here first (its model buffers follow)."""
    if not load.type_counts or mix_base(weight_format) not in GGUF_MIXES:
        return []
    printed, ours = load.type_counts, gguf_type_counts(weight_format, a)
    return [BufferCheck(f"tensors {t}", printed.get(t, 0), ours.get(t, 0), "tensors")
            for t in sorted(set(printed) | set(ours))]


def retyped_tensors(rows: list[BufferCheck]) -> int:
    """Tensors the file types otherwise than memviz's mix rules (0: the same quantizer rules)."""
    return sum(max(r.measured - r.estimated, 0) for r in rows if r.unit == "tensors")


def check_log(text: str, a: Architecture | None = None) -> tuple[Estimate, list[BufferCheck]]:
    """`check_load` of the last load in a llama.cpp log."""
    return check_load(read_llamacpp_load(text, need_metadata=a is None), a)


def logged_weights(e: Estimate) -> int:
    """The weights of the busiest device as vLLM's "Model loading took" counts them: with the rotary tables its
    RotaryEmbeddings register (`vllm_rotary`), DeepSeek sparse attention's top-k index buffers (`vllm_dsa`) and the
    batch buffers multimodal classes make, which the model allocates while it loads (memviz keeps them as runtime
    memory): the engine's `model_load_extra_bytes`."""
    return e.bytes["weights"] + e.engine_facts.get("model_load_extra_bytes", 0)


def logged_captures(details: dict, ours: Captures) -> Captures:
    """The graphs a parsed vLLM log says it captured (its counts per mode and largest sizes: 0.21+'s "Profiling CUDA
    graph memory" line, else the progress bars or the config dump's sizes, a mode the log does not count captured
    none), else `ours`; FA3's split buffers and the activation bytes as `ours` has them."""
    pieces = details.get("piecewise_graphs") or details.get("capture_sizes")
    if not pieces:
        return ours
    largest = int(details.get("largest_capture", ours.largest))
    full_largest = int(details.get("largest_full_capture", min(largest, ours.largest_full)))
    return Captures(int(pieces), int(details.get("full_graphs", 0)), largest, full_largest, ours.split_kv, ours.act_bytes)


def check_vllm(text: str, a: Architecture, sc) -> tuple[Estimate, list[BufferCheck]]:
    """A vLLM start-up log against memviz's estimate of the scenario it ran (per GPU, as vLLM prints it); the
    log does not name the model or the settings, so the caller gives them."""
    e = estimate(a, sc)
    return e, vllm_checks(parse_log(text), e, read_vllm_settings(text).version)


def _printed_tokens(facts: dict, blocks: int, version: tuple[int, int, int] | None) -> int:
    """"GPU KV cache size" as the log's vLLM prints it for `blocks` blocks: maximum concurrency x max_model_len
    from 0.20.1, num_blocks // groups x the smallest block before (and when the log names no release)."""
    if version is not None and version >= PRINTS_CONCURRENCY_SINCE:
        return int(blocks / facts["kv_request_blocks"] * facts["max_model_len"])
    return blocks // facts.get("kv_groups", 1) * facts.get("kv_group_block_tokens", facts["block_size"])


def vllm_checks(measured: LogMeasurement, e: Estimate, version: tuple[int, int, int] | None = None) -> list[BufferCheck]:
    """What a parsed vLLM log prints beside the estimate `e` of the scenario it ran: the profile's components, the
    pool's tokens, what the pool implies (not for a pool pinned in bytes, which implies nothing of the profile), the
    CUDA graphs' estimate (0.21+) and capture, the maximum concurrency and the `--kv-cache-memory` size vLLM
    suggests. `version`: the log's vLLM release, which decides how it prints the pool's tokens."""
    a, sc = e.architecture, e.scenario
    facts, gpu0 = e.engine_facts, e.devices[0]
    got = measured.bytes
    # what vLLM counts as consumed beside the weights: non-torch memory and, on the V2 model runner, its sampler state
    consumed = facts.get("non_torch_bytes", 0) + facts.get("sampler_state_bytes", 0)
    estimated = {"weights": logged_weights(e), "overhead": consumed if "non_torch_bytes" in facts else None,
                 "activations": gpu0.activations, "kv_cache": facts.get("kv_pool_bytes")}
    names = {"weights": "weights", "overhead": "non-torch", "activations": "activation peak", "kv_cache": "KV pool"}
    rows = [BufferCheck(names[k], got[k], estimated[k]) for k in names if got.get(k) is not None
            and estimated[k] is not None]
    details = measured.details
    if "last_stage_activations_gib" in details and sc.pp > 1:  # the stage that samples, whose block count all keep
        rows.append(BufferCheck("activation peak (last stage)", round(details["last_stage_activations_gib"] * GiB),
                                int(e.devices[-1].activations)))
    tokens = details.get("kv_cache_tokens") or details.get("max_tokens_in_cache")
    if tokens is None and "gpu_blocks" in details:
        tokens = details["gpu_blocks"] * facts["block_size"]
    if tokens is not None and "kv_pool_tokens" in facts:
        rows.append(BufferCheck("KV tokens", int(tokens), _printed_tokens(facts, facts["kv_blocks"], version),
                                "tokens"))
    logged_graphs = details.get("cudagraph_estimated_gib")
    if got.get("weights") and got.get("kv_cache") and facts.get("kv_sizing") == "profiled":
        # what the profile took, as the budget leaves it: requested - weights (with the rotary tables) - pool - the
        # CUDA-graph estimate (the log's own where it prints it and memviz takes it from the budget)
        graphs = round(logged_graphs * GiB) if logged_graphs is not None and facts["cudagraph_bytes"] else \
            facts["cudagraph_bytes"]
        implied = facts["budget_bytes"] - got["weights"] - got["kv_cache"] - graphs
        rows.append(BufferCheck("profile + non-torch (implied)", int(implied), int(gpu0.activations + consumed)))
    if "attention_block_tokens" in details and facts.get("block_size"):  # a hybrid model's block, as sized to its state
        rows.append(BufferCheck("attention block", int(details["attention_block_tokens"]), int(facts["block_size"]),
                                "tokens"))
    if tokens is not None and got.get("kv_cache"):
        # the layout alone: the tokens memviz fits in the pool the log printed (to its 0.01 GiB)
        held = _printed_tokens(facts, int(got["kv_cache"] // facts["kv_block_bytes"]), version)
        rows.append(BufferCheck("tokens in printed pool", int(tokens), held, "tokens"))
    if "cudagraph_captures" in facts:  # memviz's rule for the graphs the log counted: the estimate and the capture
        graphs = int(cudagraph_bytes(a, sc.tp, sc.pp, logged_captures(details, Captures(**facts["cudagraph_captures"]))))
        if logged_graphs is not None and facts.get("cudagraph_bytes"):  # 0.19 prints an estimate it does not apply
            rows.append(BufferCheck("CUDA graphs (estimated)", round(logged_graphs * GiB), graphs))
        if "cudagraph_took_gib" in details:
            rows.append(BufferCheck("CUDA graphs (captured)", round(details["cudagraph_took_gib"] * GiB), graphs))
    if details.get("max_concurrency") and got.get("kv_cache") and "kv_request_blocks" in facts:
        # the same for the requests the printed pool holds (vLLM prints the ratio to 0.01): its blocks over one
        # request's, as `get_max_concurrency_for_kv_cache_config` counts them (a padded group's layers included)
        held_blocks = got["kv_cache"] // facts["kv_block_bytes"]
        rows.append(BufferCheck("concurrency in printed pool", round(details["max_concurrency"] * 100),
                                round(held_blocks / facts["kv_request_blocks"] * 100), "x / 100"))
    if "suggested_kv_cache_memory_bytes" in details and "suggested_kv_cache_memory_bytes" in facts:
        rows.append(BufferCheck("--kv-cache-memory suggestion", int(details["suggested_kv_cache_memory_bytes"]),
                                facts["suggested_kv_cache_memory_bytes"]))
    return rows
