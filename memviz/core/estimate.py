"""The estimate: device memory = weights + KV cache + activations/workspace + overhead.

This is the seed documents' accounting split (document 000: weights on the device
+ KV cache on the device + intermediate computation/workspace + runtime and
allocator overhead). Each component carries its provenance: "exact" (summed
from the tensor inventory), "formula" (a cited formula of the inputs) or
"constant" (an assumed, editable figure). Results are per device when the model
is split (tensor / pipeline parallel) and for host memory when layers or the
KV cache are offloaded.

`device_arrays` computes every term with numpy so that `estimate` (one point)
and `memviz.core.sweep` (thousands of points) share one implementation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np

from memviz.core.activations import inference_workspace
from memviz.core.arch import FULL, SLIDING, Architecture
from memviz.core.engines import BITSANDBYTES_RUNTIME_BYTES_CPU, Engine, get_engine
from memviz.core.errors import InputError, reject_unknown_fields
from memviz.core.formats import BITSANDBYTES, get_kv_format, get_weight_format, tensor_bytes
from memviz.core.gpus import get_gpu
from memviz.core.inventory import Role, active_fraction, active_parameter_count, parameter_count
from memviz.core.kv import KVLayout, kv_bytes_per_token, kv_cache_bytes, paged

COMPONENTS = ("weights", "kv_cache", "activations", "overhead")
ATTENTION_IMPLS = ("sdpa", "eager", "flash")
DEVICES = ("cuda", "cpu")
_SPLIT_ROLES = frozenset({Role.ATTENTION, Role.MLP, Role.EXPERT, Role.EMBEDDING, Role.LM_HEAD})


@dataclass(frozen=True)
class Scenario:
    """One deployment of a model: formats, lengths, engine and devices.

    `sequence_tokens` (per-sequence lengths, summed for the KV cache) overrides
    `context_tokens` x `batch`. `gpu_layers` keeps that many layers on the GPU and
    the rest in host memory (None: all). `runtime_overhead_bytes` and
    `allocator_fraction` override the engine's assumed constants.
    """

    name: str = ""
    weight_format: str = "bf16"
    kv_format: str = "bf16"
    context_tokens: int = 4096
    batch: int = 1
    sequence_tokens: tuple[int, ...] = ()
    engine: str = "transformers"
    device: str = "cuda"
    tp: int = 1
    pp: int = 1
    gpu: str | None = None
    gpu_layers: int | None = None
    kv_offload: bool = False
    attention: str | None = None
    prefill_chunk_tokens: int | None = None
    logits_all_tokens: bool = False
    gpu_memory_utilization: float = 0.9
    runtime_overhead_bytes: int | None = None
    allocator_fraction: float | None = None

    def __post_init__(self) -> None:
        for key in ("context_tokens", "batch", "tp", "pp"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise InputError(f"{key} must be a positive integer, got {value!r}")
        if any((not isinstance(n, (int, np.integer))) or n <= 0 for n in self.sequence_tokens):
            raise InputError("every sequence length must be a positive integer")
        if self.gpu_layers is not None and self.gpu_layers < 0:
            raise InputError(f"gpu_layers must be >= 0, got {self.gpu_layers}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise InputError(f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}")
        if self.prefill_chunk_tokens is not None and self.prefill_chunk_tokens <= 0:
            raise InputError("prefill_chunk_tokens must be positive")
        if self.attention is not None and self.attention not in ATTENTION_IMPLS:
            raise InputError(f"unknown attention {self.attention!r}; known: {', '.join(ATTENTION_IMPLS)}")
        if self.device not in DEVICES:
            raise InputError(f"unknown device {self.device!r}; known: {', '.join(DEVICES)}")
        if self.runtime_overhead_bytes is not None and self.runtime_overhead_bytes < 0:
            raise InputError("runtime_overhead_bytes must be >= 0")
        if self.allocator_fraction is not None and not 0 <= self.allocator_fraction < 1:
            raise InputError("allocator_fraction must be in [0, 1)")
        # resolve names early so a typo fails where it was made
        get_weight_format(self.weight_format)
        get_kv_format(self.kv_format)
        engine = get_engine(self.engine)
        if self.gpu is not None:
            get_gpu(self.gpu)
        if self.tp > 1 and not engine.supports_tp:
            raise InputError(f"tensor parallelism is modelled for vllm only, not {engine.name} (use pp to split layers)")
        if (self.gpu_layers is not None or self.kv_offload) and not engine.supports_offload:
            raise InputError(f"offloading (gpu_layers / kv_offload) is modelled for transformers and llamacpp, not {engine.name}")

    @property
    def sequences(self) -> int:
        return len(self.sequence_tokens) or self.batch

    @property
    def longest_sequence(self) -> int:
        return max(self.sequence_tokens) if self.sequence_tokens else self.context_tokens

    def with_changes(self, **changes: Any) -> Scenario:
        return Scenario(**{**asdict(self), **changes})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sequence_tokens"] = list(self.sequence_tokens)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        reject_unknown_fields(cls, data, "scenario")
        d = dict(data)
        d["sequence_tokens"] = tuple(d.get("sequence_tokens", ()))
        return cls(**d)


@dataclass(frozen=True)
class Component:
    """One term of the estimate on the device that decides the fit."""

    name: str
    bytes: int
    provenance: str  # "exact" | "formula" | "constant"
    formula: str
    source: str


@dataclass(frozen=True)
class DeviceUsage:
    device: str
    weights: int
    kv_cache: int
    activations: int
    overhead: int

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.activations + self.overhead


@dataclass(frozen=True)
class Estimate:
    architecture: Architecture
    scenario: Scenario
    components: tuple[Component, ...]
    devices: tuple[DeviceUsage, ...]
    host: DeviceUsage
    parameters: int
    active_parameters: int
    kv_bytes_per_token: int
    kv_cache_required: int
    notes: tuple[str, ...] = field(default=())

    @property
    def bytes(self) -> dict[str, int]:
        return {c.name: c.bytes for c in self.components}

    @property
    def total(self) -> int:
        return sum(c.bytes for c in self.components)

    def component(self, name: str) -> Component:
        return next(c for c in self.components if c.name == name)


@dataclass
class Arrays:
    """Per-device arrays (one value per sweep point) of the four components."""

    device: str
    weights: np.ndarray
    kv_cache: np.ndarray
    activations: np.ndarray
    overhead: np.ndarray
    kv_required: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.weights + self.kv_cache + self.activations + self.overhead

    @property
    def needed(self) -> np.ndarray:
        """What must fit (vLLM: the KV the sequences require, not the pool it reserves)."""
        return self.total - self.kv_cache + self.kv_required


def _stages(a: Architecture, pp: int) -> list[range]:
    """Layers of each pipeline stage: an even split, earlier stages take the remainder."""
    bounds = np.linspace(0, a.num_layers, pp + 1)
    edges = [int(round(x)) for x in bounds]
    return [range(edges[i], edges[i + 1]) for i in range(pp)]


def _gpu_layer_set(a: Architecture, sc: Scenario, engine: Engine) -> tuple[set[int], bool, bool]:
    """(layers on the GPU, embedding on GPU, output layer on GPU) under offloading rules."""
    L = a.num_layers
    if sc.device == "cpu":
        return set(range(L)), True, True
    if engine.name == "llamacpp":
        ngl = L + 1 if sc.gpu_layers is None else min(sc.gpu_layers, L + 1)
        return set(range(L - min(ngl, L), L)), False, ngl > L
    g = L if sc.gpu_layers is None else min(sc.gpu_layers, L)
    return set(range(g)), True, g == L


def _pad(x: np.ndarray, multiple: int) -> np.ndarray:
    return paged(x, multiple) if multiple > 1 else x


def device_arrays(a: Architecture, sc: Scenario, context: np.ndarray, batch: np.ndarray) -> tuple[list[Arrays], Arrays]:
    """Per-GPU and host component arrays for contexts `context` and batches `batch`
    (broadcast together). Per-sequence lengths in `sc.sequence_tokens` are honoured
    when `context`/`batch` are the scenario's own scalars."""
    engine = get_engine(sc.engine)
    wf, kvf = get_weight_format(sc.weight_format), get_kv_format(sc.kv_format)
    attention = sc.attention or engine.attention_default
    context, batch = np.broadcast_arrays(np.asarray(context, dtype=np.int64), np.asarray(batch, dtype=np.int64))
    zeros = np.zeros(context.shape)
    gpu_layers, embed_on_gpu, output_on_gpu = _gpu_layer_set(a, sc, engine)
    stages = _stages(a, sc.pp)
    layout = KVLayout(latent_mla=engine.latent_mla, block_tokens=engine.block_tokens, kv_heads_divisor=sc.tp)
    # ggml computes its graph in F32; PyTorch engines in the 16-bit compute dtype (fp32 for fp32 weights)
    act_bytes = 4 if wf.name == "fp32" or engine.name == "llamacpp" else 2
    logits_bytes = 4 if engine.name == "llamacpp" else act_bytes + 4

    # weights: per stage on the GPU, the rest on the host
    stage_w = [0.0] * sc.pp
    host_w = 0.0
    largest_layer: dict[int, float] = {}
    for t, _, nbytes in tensor_bytes(a, wf):
        share = nbytes / sc.tp if t.role in _SPLIT_ROLES else nbytes
        if t.layer is not None:
            on_gpu, stage = t.layer in gpu_layers, next(s for s, r in enumerate(stages) if t.layer in r)
            largest_layer[t.layer] = largest_layer.get(t.layer, 0) + nbytes
        elif t.role in (Role.EMBEDDING, Role.POSITION):
            on_gpu, stage = embed_on_gpu, 0
            if t.role is Role.EMBEDDING and a.tie_word_embeddings and output_on_gpu and not embed_on_gpu:
                host_w += nbytes  # llama.cpp loads a tied embedding twice: input on the host,
                on_gpu, stage = True, sc.pp - 1  # and a duplicate as the GPU output layer
        else:
            on_gpu, stage = output_on_gpu, sc.pp - 1
        if on_gpu:
            stage_w[stage] += share
        else:
            host_w += nbytes

    # KV cache
    seqs_given = bool(sc.sequence_tokens) and context.shape == () and context == sc.context_tokens and batch == sc.batch
    if engine.name == "llamacpp":
        n_ubatch = sc.prefill_chunk_tokens or engine.prefill_chunk_tokens
        total_tokens = np.asarray(sum(sc.sequence_tokens)) if seqs_given else context * batch
        n_ctx = _pad(total_tokens, engine.context_padding if attention == "flash" else 32)
        swa = np.minimum(n_ctx, _pad(np.asarray((a.sliding_window or 0) * batch + n_ubatch), 256))

        def kv_for(layers: range) -> np.ndarray:
            return kv_cache_bytes(a, kvf, n_ctx, layout, layers, sliding_tokens=swa)
    else:
        def kv_for(layers: range, prompt_held: bool = False) -> np.ndarray:
            """`prompt_held`: sliding layers holding the whole prompt, as in transformers right after prefill."""
            if seqs_given:
                seqs = list(sc.sequence_tokens)
                held = np.asarray(seqs) if prompt_held else None
                return np.asarray(kv_cache_bytes(a, kvf, seqs, layout, layers, sliding_tokens=held))
            return batch * kv_cache_bytes(a, kvf, context, layout, layers, sliding_tokens=context if prompt_held else None)

    kv_on_gpu_all = engine.name == "transformers"  # accelerate offload runs layers on the GPU: cache stays there
    # transformers' DynamicSlidingWindowLayer keeps its window as a view of the prompt-long tensor it built at
    # prefill, so until the first decode step replaces it every sliding layer holds the whole prompt's K/V
    # (cache_utils.py; the probe sees it as prefill transient)
    holds_prompt = engine.name == "transformers" and SLIDING in a.layer_types
    stage_kv, stage_held, host_kv = [], [], zeros.copy()
    for r in stages:
        on = [i for i in r if (i in gpu_layers or kv_on_gpu_all)] if not sc.kv_offload else []
        off = [i for i in r if i not in on]
        stage_kv.append(_sum_layers(kv_for, on, zeros))
        held = _sum_layers(partial(kv_for, prompt_held=True), on, zeros) if holds_prompt else stage_kv[-1]
        stage_held.append(held - stage_kv[-1])
        host_kv = host_kv + _sum_layers(kv_for, off, zeros) * sc.tp

    # activations: prefill workspace of the largest layer (+ decode transient)
    chunk = sc.prefill_chunk_tokens or engine.prefill_chunk_tokens
    longest = np.asarray(sc.longest_sequence) if seqs_given else context
    if engine.name == "llamacpp":
        step, kv_t, b, rows = np.minimum(n_ctx, chunk), n_ctx, np.ones_like(batch), np.minimum(n_ctx, chunk)
    elif chunk:
        step, kv_t, b = np.minimum(longest * batch, chunk), longest, np.ones_like(batch)
        rows = batch
    else:
        step, kv_t, b = longest, longest, batch
        rows = batch * longest if sc.logits_all_tokens else batch
    eager = engine.name == "transformers"
    ws = inference_workspace(a, step, kv_t, b, attention, act_bytes, rows, logits_bytes, sc.tp, eager)
    ws_no_logits = inference_workspace(a, step, kv_t, b, attention, act_bytes, 0, logits_bytes, sc.tp, eager)
    decode_copy = zeros
    if engine.name == "transformers":
        # DynamicCache.update concatenates: the largest layer's K/V (a full-attention one) exist twice in a step
        biggest = next((i for i, kind in enumerate(a.layer_types) if kind == FULL), 0)
        decode_copy = kv_for(range(biggest, biggest + 1))
    streamed = max((largest_layer[i] for i in largest_layer if i not in gpu_layers), default=0.0)
    if engine.name != "transformers":
        streamed = 0.0

    runtime = sc.runtime_overhead_bytes
    if runtime is None:
        runtime = engine.runtime_bytes_cpu if sc.device == "cpu" else engine.runtime_bytes_cuda
        if sc.device == "cpu" and engine.name == "transformers" and wf.name in BITSANDBYTES:
            runtime += BITSANDBYTES_RUNTIME_BYTES_CPU
    alloc = engine.allocator_fraction if sc.device == "cuda" else 0.0
    alloc = alloc if sc.allocator_fraction is None else sc.allocator_fraction

    label = "CPU" if sc.device == "cpu" else "GPU"
    out: list[Arrays] = []
    n_dev = 0
    for s, r in enumerate(stages):
        last = s == sc.pp - 1
        work = (ws.peak if last else ws_no_logits.peak) + streamed * (s == 0)
        act = np.maximum(work, decode_copy) + stage_held[s] if engine.name == "transformers" else work
        act = act * (1 if len(r) else 0) + zeros
        kv = stage_kv[s]
        overhead = runtime + alloc * (kv + act)
        w = np.full(context.shape, stage_w[s])
        kv_required = kv
        if engine.preallocates_kv_pool and sc.gpu and sc.device == "cuda":
            budget = sc.gpu_memory_utilization * get_gpu(sc.gpu).memory_bytes
            pool = budget - (w + act + overhead)
            kv = np.maximum(kv_required, pool)
        for _ in range(sc.tp):
            out.append(Arrays(f"{label}{n_dev}", w, kv, act, overhead + zeros, kv_required))
            n_dev += 1

    output_buffer = zeros
    if engine.name == "llamacpp":
        output_buffer = batch * a.vocab_size * 4.0  # host-side logits buffer for n_seq outputs
    host = Arrays("host", np.full(context.shape, host_w), host_kv, output_buffer + zeros, zeros, host_kv)
    return out, host


def _sum_layers(kv_for, layers: list[int], zeros: np.ndarray) -> np.ndarray:
    """KV bytes of `layers` (consecutive runs evaluated together)."""
    if not layers:
        return zeros
    total = zeros
    start = prev = layers[0]
    for i in layers[1:] + [None]:
        if i is None or i != prev + 1:
            total = total + kv_for(range(start, prev + 1))
            if i is not None:
                start = i
        if i is not None:
            prev = i
    return total


_SOURCES = {
    "weights": ("exact", "sum over the tensor inventory of each tensor's bytes in its storage format",
                "memviz.core.formats (ggml type traits, GPTQ/AWQ/bitsandbytes layouts)"),
    "kv_cache": ("formula", "sum over layers and sequences of 2 x Hkv x D x tokens_kept x S (+ scales, pages)",
                 "seed 000 formula, generalised in memviz.core.kv"),
    "activations": ("formula", "peak transient of the largest layer: hidden + max(attention, MLP, logits); "
                    "transformers: at least the decode step's cache copy, plus the prompt-long K/V sliding layers "
                    "hold after prefill",
                    "memviz.core.activations (llm-analysis, llama.cpp graph reserve)"),
    "overhead": ("constant", "engine runtime constant + allocator fraction x (KV + activations)",
                 "memviz.core.engines (assumed, editable)"),
}


def estimate(a: Architecture, sc: Scenario) -> Estimate:
    """Estimate device memory for architecture `a` deployed as `sc`."""
    gpus, host = device_arrays(a, sc, np.asarray(sc.context_tokens), np.asarray(sc.batch))
    devices = tuple(DeviceUsage(d.device, *(int(np.ceil(getattr(d, c))) for c in COMPONENTS)) for d in gpus)
    busiest_i = max(range(len(devices)), key=lambda i: devices[i].total)
    busiest = devices[busiest_i]
    engine = get_engine(sc.engine)
    kv_formula = _SOURCES["kv_cache"][1]
    if engine.preallocates_kv_pool and sc.gpu:
        kv_formula += (f"; vLLM reserves gpu_memory_utilization ({sc.gpu_memory_utilization}) x capacity"
                       " and the KV pool takes the rest")
    components = []
    for name in COMPONENTS:
        prov, formula, source = _SOURCES[name]
        if name == "kv_cache":
            formula = kv_formula
        if name == "overhead" and sc.runtime_overhead_bytes is not None:
            source = "user-set runtime overhead"
        components.append(Component(name, getattr(busiest, name), prov, formula, source))
    kvf = get_kv_format(sc.kv_format)
    layout = KVLayout(latent_mla=engine.latent_mla, kv_heads_divisor=1)
    notes = list(a.warnings)
    host_usage = DeviceUsage("host", *(int(np.ceil(getattr(host, c))) for c in COMPONENTS))
    if host_usage.total:
        notes.append(f"host memory holds {host_usage.total:,d} bytes (offloaded weights/KV, output buffers)")
    return Estimate(
        architecture=a, scenario=sc, components=tuple(components), devices=devices, host=host_usage,
        parameters=parameter_count(a), active_parameters=active_parameter_count(a),
        kv_bytes_per_token=int(np.ceil(kv_bytes_per_token(a, kvf, layout))),
        kv_cache_required=int(np.ceil(gpus[busiest_i].kv_required)), notes=tuple(notes),
    )


def active_weight_bytes(a: Architecture, weight_format: str) -> float:
    """Bytes of weights read per decoded token (routed experts: top-k of E)."""
    wf = get_weight_format(weight_format)
    return sum(nbytes * active_fraction(t, a) for t, _, nbytes in tensor_bytes(a, wf))

