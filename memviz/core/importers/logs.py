"""Engine logs as measured memory, in the estimate's four components.

llama.cpp / ollama (llama-server) print, per backend buffer:
  `<dev> model buffer size = X MiB` (weights; older builds: `<dev> buffer size`),
  `<dev> KV buffer size = X MiB`, `<dev> RS buffer size = X MiB` (recurrent state; DeepSeek-V4's compressor
  states: `<dev> DSV4 csa state buffer size = X MiB`, src/llama-kv-cache-dsv4.cpp `llama_dsv4_comp_state`),
  `<dev> compute buffer size = X MiB`, `<dev> output buffer size = X MiB`,
and since PR #15860 a memory breakdown per device:
  `- CUDA0 (RTX 4090): total = free + (self = model + context + compute) + unaccounted` (MiB).
Devices named CPU*, *_Host or Host are host memory; the others are accelerators.

vLLM prints its start-up profile (`worker.py` / `gpu_worker.py`):
  `model weights take X GiB`, `non_torch_memory [takes] X GiB`,
  `PyTorch activation peak memory [takes] X GiB`, `the rest of the memory reserved
  for KV Cache is X GiB` / `available_kv_cache_memory X GiB` / `Available KV cache
  memory: X GiB`, `Model loading took X GiB`, `GPU KV cache size: N tokens`; V1's suggestion of
  `--kv-cache-memory` (gpu_worker.py; with --kv-cache-memory-bytes set, `reserved X GiB memory for KV Cache as
  specified by kv_cache_memory_bytes` instead; 0.11: `Actual usage is X GiB for weight, Y GiB for peak activation, Z GiB
  for non-torch memory, and W GiB for CUDAGraph memory`; 0.33: `X GiB for consumed memory (weights + non-torch),
  Y GiB for peak activation, and W GiB for CUDAGraph memory`) and its `Free memory on device (F/T GiB)`; the CUDA
  graphs' capture and, from 0.21, the estimate taken from the budget (`_vllm_cudagraphs`).

Components a log does not state are None, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memviz.core.errors import InputError
from memviz.core.units import GB, MB, GiB, KiB, MiB

COMPONENT_KEYS = ("weights", "kv_cache", "activations", "overhead")
_UNITS = {"b": 1, "kib": KiB, "mib": MiB, "gib": GiB, "mb": MB, "gb": GB}
_NUM = r"([0-9][0-9,]*\.?[0-9]*)"


@dataclass
class LogMeasurement:
    engine: str
    bytes: dict[str, int | None]  # weights, kv_cache, activations, overhead, total (accelerators)
    host_bytes: dict[str, int | None]
    devices: dict[str, dict[str, int]] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)
    lines_matched: int = 0

    def to_dict(self) -> dict:
        return {"engine": self.engine, "bytes": self.bytes, "host_bytes": self.host_bytes, "devices": self.devices,
                "details": self.details, "lines_matched": self.lines_matched}


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def is_host_buffer(device: str) -> bool:
    d = device.lower()
    return d.startswith("cpu") or d.endswith("_host") or d == "host"


_LCPP_BUFFER = re.compile(
    r"(?P<dev>[A-Za-z][\w]*?)\s+(?P<kind>model |KV |RS |compute |output |DSV4 \w+ state )?buffer size\s*=\s*" + _NUM
    + r"\s*MiB")


#: libmtmd's lines for an mmproj's compute buffers (tools/mtmd/clip.cpp `reserve_compute_meta`, earlier
#: `alloc_compute_meta`): the encoder's, apart from the language model's
_MTMD_COMPUTE = re.compile(r"(?:alloc|reserve)_compute_meta:")


def _buffer_kind(m: re.Match) -> str | None:
    """The kind of a buffer line; DeepSeek-V4's compressor states are recurrent state, as an RS buffer."""
    kind = m.group("kind")
    return "RS " if kind and kind.startswith("DSV4") else kind


_LCPP_BREAKDOWN_DEV = re.compile(r"-\s*(?P<dev>[A-Za-z][\w]*)")
_LCPP_BREAKDOWN_SELF = re.compile(r"(?P<self>-?\d+)\s*=\s*(?P<model>-?\d+)\s*\+\s*(?P<ctx>-?\d+)\s*\+\s*(?P<compute>-?\d+)"
                                  r"(?:\s*\)\s*\+\s*(?P<unacc>-?\d+))?")
_LCPP_KIND = {"model ": "weights", None: "weights", "KV ": "kv_cache", "RS ": "kv_cache", "compute ": "activations",
              "output ": "activations"}


def _parse_llamacpp(text: str) -> LogMeasurement | None:
    devices: dict[str, dict[str, int]] = {}
    matched = 0
    breakdown: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        if "memory breakdown" in line and "total" in line:
            continue
        dev = _LCPP_BREAKDOWN_DEV.search(line) if "breakdown" in line else None
        m = _LCPP_BREAKDOWN_SELF.search(line) if dev else None
        if m:
            d = breakdown.setdefault(dev.group("dev"), {})
            d.update(weights=int(m.group("model")) * MiB, kv_cache=int(m.group("ctx")) * MiB,
                     activations=int(m.group("compute")) * MiB)
            # "unaccounted" = total - free - self: driver/context memory, but also other programs' use and,
            # when negative, a device that reported more free memory than it had; only a plausible value is kept
            unacc = m.group("unacc")
            if unacc is not None and int(unacc) >= 0 and not is_host_buffer(dev.group("dev")):
                d["overhead"] = int(unacc) * MiB
            matched += 1
            continue
        m = _LCPP_BUFFER.search(line)
        if m and m.group("dev").lower() not in ("ctx", "ggml"):
            comp = _LCPP_KIND[_buffer_kind(m)]
            if comp == "weights" and any(k != "weights" for d in devices.values() for k in d):
                devices = {}  # a model loaded again (a server restart in the same log): its last load counts
            d = devices.setdefault(m.group("dev"), {})
            d[comp] = d.get(comp, 0) + round(_num(m.group(3)) * MiB)
            matched += 1
    if not matched:
        return None
    per_device = breakdown or devices  # the breakdown is llama.cpp's final accounting
    accel = {k: v for k, v in per_device.items() if not is_host_buffer(k)}
    host = {k: v for k, v in per_device.items() if is_host_buffer(k)}
    return LogMeasurement("llamacpp", _totals(accel), _totals(host), per_device, {}, matched)


_LCPP_SETTING = re.compile(r"llama_context:\s+(n_ctx|n_ctx_seq|n_batch|n_ubatch|n_seq_max)\s+=\s+(\d+)")
_LCPP_KV_SIZE = re.compile(r"llama_kv_cache: size =\s+" + _NUM + r" MiB \(\s*(\d+) cells,\s+(\d+) layers,\s+(\d+)/(\d+) seqs\)"
                           r", K \((\w+)\):\s+" + _NUM + r" MiB, V \((\w+)\):\s+" + _NUM + " MiB")


def llamacpp_buffers(lines: list[str]) -> dict[str, dict[str, int]]:
    """llama.cpp's own account of one load, buffer by buffer: {"model" | "kv" | "compute" | "output" |
    "mmproj_compute": {buffer name: bytes}, "kv_caches": {"0": cells, ...}, "settings": {n_ctx, n_ctx_seq, n_batch,
    n_ubatch, n_seq_max}} (figures as printed: MiB with two decimals, so exact to 0.005 MiB)."""
    kinds = {"model ": "model", None: "model", "KV ": "kv", "RS ": "kv", "compute ": "compute", "output ": "output"}
    out: dict[str, dict[str, int]] = {k: {} for k in ("model", "kv", "compute", "output", "mmproj_compute",
                                                      "kv_caches", "settings")}
    for line in lines:
        m = _LCPP_BUFFER.search(line)
        if m and m.group("dev").lower() not in ("ctx", "ggml"):
            d = out["mmproj_compute" if _MTMD_COMPUTE.search(line) else kinds[_buffer_kind(m)]]
            d[m.group("dev")] = d.get(m.group("dev"), 0) + round(_num(m.group(3)) * MiB)
            continue
        m = _LCPP_SETTING.search(line)
        if m:
            out["settings"][m.group(1)] = int(m.group(2))
            continue
        m = _LCPP_KV_SIZE.search(line)
        if m:
            n = len(out["kv_caches"])
            out["kv_caches"][f"cache{n}_cells"] = int(m.group(2))
            out["kv_caches"][f"cache{n}_layers"] = int(m.group(3))
            out["kv_caches"][f"cache{n}_k"] = round(_num(m.group(7)) * MiB)
            out["kv_caches"][f"cache{n}_v"] = round(_num(m.group(9)) * MiB)
    return out


def _totals(devices: dict[str, dict[str, int]]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for c in COMPONENT_KEYS:
        vals = [d[c] for d in devices.values() if c in d]
        out[c] = sum(vals) if vals else None
    known = [v for v in out.values() if v is not None]
    out["total"] = sum(known) if known else None
    return out


#: 0.1x's DEBUG profile line, which every rank prints for itself
_TORCH_PEAK = r"torch peak memory increase:\s*" + _NUM + r"\s*(GiB|GB|MiB)"
_VLLM = {
    "weights": [r"model weights take\s+" + _NUM + r"\s*(GiB|GB|MiB)", r"Model loading took\s+" + _NUM + r"\s*(GiB|GB|MiB)",
                r"Loading model weights took\s+" + _NUM + r"\s*(GiB|GB|MiB|MB)"],
    # 0.1x's DEBUG "Memory profiling takes ...: torch peak memory increase: X; non-torch forward increase memory: Y"
    # first: each rank prints it beside its "Available KV cache memory", where a pipeline's ranks differ
    "overhead": [r"non-torch forward increase memory:\s*" + _NUM + r"\s*(GiB|GB|MiB)",
                 # not the DEBUG "worker init memory snapshot: ..., torch_memory=0.0GiB, non_torch_memory=X" (the
                 # CUDA context before loading, outside the budget)
                 r"(?<!GiB, )non_torch_memory(?:\s+takes\s+|\s+|=)" + _NUM + r"\s*(GiB|GB|MiB)",
                 r"GiB for peak activation, " + _NUM + r"\s*(GiB) for non-torch memory"],
    "activations": [_TORCH_PEAK,
                    r"GiB kept for transient activations \(" + _NUM + r"\s*(GiB) allocated at peak",
                    r"PyTorch activation peak memory(?:\s+takes)?\s+" + _NUM + r"\s*(GiB|GB|MiB)",
                    r"GiB for (?:weight|consumed memory \(weights \+ non-torch\)), " + _NUM + r"\s*(GiB) for peak activation"],
    # vLLM 0.34's extensible cache prints its final size last (v1/worker/extensible_kv_cache.py `extend_kv_cache`);
    # its "Available KV cache memory" is the profile's figure, which only sizes the address range
    "kv_cache": [r"Extended KV cache to \d+ blocks \(" + _NUM + r"\s*(GiB)\)",
                 r"the rest of the memory reserved for KV Cache is\s+" + _NUM + r"\s*(GiB|GB|MiB)",
                 r"available_kv_cache_memory\s+" + _NUM + r"\s*(GiB|GB|MiB)",
                 r"kv_cache_size=" + _NUM + r"\s*(GiB|GB|MiB)",
                 r"Available KV cache memory:\s*" + _NUM + r"\s*(GiB|GB|MiB)",
                 r"reserved\s+" + _NUM + r"\s*(GiB) memory for KV Cache as specified by kv_cache_memory_bytes"],
}
#: the total CUDA reports, which vLLM budgets from: V0's "total_gpu_memory (T GiB)" / "total_gpu_memory=T GiB", V1's
#: "Free memory on device [cuda:0] (F/T GiB)"
CUDA_TOTAL_GIB = r"(?:total_gpu_memory[\s=(]*|Free memory on device(?: \S+)? \([\d.]+/)" + _NUM + r"\s*GiB"
_VLLM_DETAILS = {
    "kv_cache_tokens": r"GPU KV cache size:\s*" + _NUM + r"\s*tokens",
    # a hybrid model's attention block grown to hold a state page (platforms/interface.py `_align_hybrid_block_size`)
    "attention_block_tokens": r"Setting attention block size to\s*" + _NUM + r"\s*tokens",
    "gpu_blocks": r"(?:(?:GPU|CUDA|cuda) blocks:\s*|Extended KV cache to\s+)" + _NUM,
    "max_tokens_in_cache": r"maximum number of tokens that can be stored in KV cache \(" + _NUM + r"\)",
    "max_concurrency": r"Maximum concurrency for\s*[\d,]+\s*tokens per request:\s*" + _NUM + "x",
    "gpu_memory_utilization": r"gpu_memory_utilization\s*\(?\s*" + _NUM,
    "total_gpu_memory_gib": CUDA_TOTAL_GIB,
    "consumed_gib": r"Actual usage is\s*" + _NUM + r"\s*GiB for consumed memory",
    "suggested_kv_cache_memory_bytes": r"`--kv-cache-memory=" + _NUM + r"` \([\d.]+ GiB\) to fit into requested memory",
}


def _vllm_cudagraphs(text: str) -> dict[str, float]:
    """What a V1 log says of its CUDA graphs: the memory the capture took (GiB, as printed), the estimate 0.21+
    takes from the budget before capturing (`profile_cudagraph_memory`: "Estimated CUDA graph memory: X GiB
    total"; gpu_worker.py "CUDA graph pool memory: A GiB (actual), E GiB (estimated)"), the sizes of its config
    dump (how many, the largest) and the graphs counted per mode (0.21+'s "Profiling CUDA graph memory:
    PIECEWISE=N (largest=S), FULL=M (largest=T)", else the progress bars)."""
    out: dict[str, float] = {}
    m = re.search(r"Graph capturing finished in [\d.]+ secs?, took\s*" + _NUM + r"\s*GiB", text)
    pool = re.search(r"CUDA graph pool memory:\s*" + _NUM + r"\s*GiB \(actual\),\s*" + _NUM + r"\s*GiB \(estimated\)", text)
    if m or pool:
        out["cudagraph_took_gib"] = _num((m or pool).group(1))
    m = re.search(r"Estimated CUDA graph memory:\s*" + _NUM + r"\s*GiB", text)
    if m or pool:
        out["cudagraph_estimated_gib"] = _num(m.group(1) if m else pool.group(2))
    m = re.search(r'"cudagraph_capture_sizes":\s*\[([\d,\s]+)\]', text)
    if m:
        sizes = [int(v) for v in re.sub(r"\s+", "", m.group(1)).split(",") if v]  # a terminal may wrap the dump
        out["capture_sizes"], out["largest_capture"] = len(sizes), max(sizes)
    profiled = re.search(r"Profiling CUDA graph memory:([^\n]*)", text)
    for mode in ("PIECEWISE", "FULL"):
        counted = profiled and re.search(r"\b" + mode + r"=(\d+) \(largest=(\d+)\)", profiled.group(1))
        counts = [counted.group(1)] if counted else re.findall(
            r"Capturing CUDA graphs \([^)]*\b" + mode + r"\): 100%[^\n]*?(\d+)/\1\b", text)
        if counts:
            out[f"{mode.lower()}_graphs"] = max(int(c) for c in counts)
        if counted:
            out["largest_capture" if mode == "PIECEWISE" else "largest_full_capture"] = int(counted.group(2))
    return out


#: vLLM's "GB" is GiB: `model_runner.py` "Loading model weights took %.4f GB" divides by 2**30 (the V1 runner
#: prints the same figure, 14.9889 for Llama-3.1-8B, as GiB)
_VLLM_UNITS = {**_UNITS, "gb": GiB}


#: a V1 worker's line prefix: "(Worker_PP1 pid=442)", "(Worker_PP0_TP1 pid=9)", "(EngineCore pid=243)"
_VLLM_PROCESS = r"^\((\w+) pid=\d+\)"
#: what each rank profiles for itself: a pipeline's ranks print different figures
_PER_RANK = ("overhead", "activations")
#: what every rank prints for its own pool, of which the smallest binds (all keep the smallest rank's block count)
_SMALLEST_RANK = ("suggested_kv_cache_memory_bytes",)


def _rank_lines(text: str, rank: str) -> str:
    """The lines of `text` that the process named `rank` printed."""
    return "\n".join(line for line in text.splitlines() if re.match(r"\(" + rank + r" pid=", line))


def _pool_rank_text(text: str) -> str:
    """The lines of the process that printed the pool, where each rank prints its own profile (a pipeline's first
    stage prints "Available KV cache memory"); the whole log otherwise."""
    if "(Worker_" not in text:  # one process prints the profile
        return text
    for pat in _VLLM["kv_cache"]:
        m = re.search(pat, text)
        if m:
            rank = re.match(_VLLM_PROCESS, text[text.rfind("\n", 0, m.start()) + 1:m.start()])
            return _rank_lines(text, rank.group(1)) if rank else text
    return text


def _last_stage_peak(text: str) -> dict[str, float]:
    """The last pipeline stage's "torch peak memory increase" (GiB, as printed) where the log names its stages'
    workers (Worker_PP0 ... Worker_PPn): that stage samples, and every rank keeps its block count."""
    if "(Worker_PP" not in text:
        return {}
    stages = {int(n) for n in re.findall(r"\(Worker_PP(\d+)\w* pid=", text)}
    if len(stages) < 2:
        return {}
    m = re.search(_TORCH_PEAK, _rank_lines(text, rf"Worker_PP{max(stages)}\w*"))
    return {"last_stage_activations_gib": _num(m.group(1)) * _VLLM_UNITS[m.group(2).lower()] / GiB} if m else {}


def _parse_vllm(text: str) -> LogMeasurement | None:
    values: dict[str, int | None] = dict.fromkeys(COMPONENT_KEYS)
    matched = 0
    pool_rank = _pool_rank_text(text)
    for comp, patterns in _VLLM.items():
        for pat in patterns:
            m = re.search(pat, pool_rank) if comp in _PER_RANK else None
            m = m or re.search(pat, text)
            if m:
                values[comp] = round(_num(m.group(1)) * _VLLM_UNITS[m.group(2).lower()])
                matched += 1
                break
    details = {}
    for key, pat in _VLLM_DETAILS.items():
        if key in _SMALLEST_RANK:
            found = [_num(v) for v in re.findall(pat, text)]
            if found:
                details[key] = min(found)
                matched += 1
            continue
        m = re.search(pat, text)
        if m:
            details[key] = _num(m.group(1))
            matched += 1
    details.update(_vllm_cudagraphs(text))
    details.update(_last_stage_peak(text))
    if "consumed_gib" in details and values["activations"] is not None and "cudagraph_estimated_gib" in details \
            and "CUDA graph memory profiling is enabled" in text:
        # 0.2x's peak activation includes the CUDA-graph estimate it took from the budget (0.33 gpu_worker.py:
        # `peak_activation_memory = transient_peak_headroom + cudagraph_memory_estimate_applied`; 0.21 did not)
        values["activations"] = max(0, values["activations"] - round(details["cudagraph_estimated_gib"] * GiB))
    if values["overhead"] is None and values["weights"] is not None and "consumed_gib" in details:
        # 0.2x's "X GiB for consumed memory (weights + non-torch)": the weights' share is "Model loading took"
        values["overhead"] = max(0, round(details["consumed_gib"] * GiB) - values["weights"])
    if not any(v is not None for v in values.values()):
        return None
    known = [v for v in values.values() if v is not None]
    values["total"] = sum(known)
    ranks = len(set(re.findall(r"\(\w*Worker\w* pid=(\d+)\)", text))) or 1
    details["ranks_seen"] = ranks
    return LogMeasurement("vllm", values, dict.fromkeys([*COMPONENT_KEYS, "total"]), {}, details, matched)


MAX_LOG_CHARS = 64 * 2**20  # start-up reports come first; a longer log is a running server's whole history


def read_log(stream) -> str:
    """The text of an open log (file or stdin), refused beyond MAX_LOG_CHARS instead of cut silently."""
    text = stream.read(MAX_LOG_CHARS + 1)
    if len(text) > MAX_LOG_CHARS:
        raise InputError("the log is longer than 64 MiB; engines report memory at start-up, so pass its first part "
                         "(e.g. head -c 64M server.log)")
    return text


def parse_log(text: str) -> LogMeasurement:
    """Measured components from a llama.cpp/ollama or vLLM log (values per device; vLLM: per rank)."""
    if not text or not text.strip():
        raise InputError("the log is empty")
    result = _parse_vllm(text) if re.search(r"vllm|vLLM|KV Cache is|Model loading took|worker\.py", text) else None
    result = result or _parse_llamacpp(text) or _parse_vllm(text)
    if result is None:
        raise InputError("no llama.cpp/ollama buffer-size lines or vLLM memory-profiling lines found in the log")
    return result
