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

from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache, partial
from typing import Any

import numpy as np

from memviz.core.arch import Architecture
from memviz.core.engines import Engine, Inputs, Placement, get_engine
from memviz.core.errors import InputError, reject_unknown_fields
from memviz.core.formats import STORED, get_kv_format, get_weight_format, tensor_bytes
from memviz.core.gpus import GPU, get_gpu
from memviz.core.inventory import active_fraction, active_parameter_count, parameter_count
from memviz.core.kv import kv_bytes_per_token, latent_width
from memviz.core.tensor_table import on_gpu as tensor_on_gpu
from memviz.core.tensor_table import tensor_table
from memviz.core.units import GiB

COMPONENTS = ("weights", "kv_cache", "activations", "overhead")
ATTENTION_IMPLS = ("sdpa", "eager", "flash")
DEVICES = ("cuda", "cpu")


#: bounds that keep every product of the estimate within int64 (2**31 tokens x 2**20 sequences x 2**17 bytes per
#: token < 2**68 would not; 2**31 x 2**20 = 2**51 cells x bytes per cell stays below 2**63 for real models)
LIMITS = {"context_tokens": 2**31, "batch": 2**20, "tp": 1024, "pp": 1024}


@dataclass(frozen=True)
class Scenario:
    """One deployment of a model: formats, lengths, engine and devices.

    `sequence_tokens` (per-sequence lengths, summed for the KV cache) overrides
    `context_tokens` x `batch`. `gpu_layers` keeps that many layers on the GPU and
    the rest in host memory (None: all). `runtime_overhead_bytes` and
    `allocator_fraction` override the engine's assumed constants. `options` are the
    engine's own settings (`memviz.core.engines`, each engine's `options`) as
    sorted (name, value) pairs; the engine validates them.
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
    gpu_memory_utilization: float | None = None  # vLLM's share of the GPU; None: the engine's own default
    runtime_overhead_bytes: int | None = None
    allocator_fraction: float | None = None
    options: tuple[tuple[str, Any], ...] = ()
    extrapolate: bool = False  # estimate contexts beyond the model's positions anyway
    run_id: str | None = None  # the measured run shown with this scenario (memviz.core.runs)
    hidden: bool = False  # left out of the charts (kept in the table, the session and the exports of data)

    def __post_init__(self) -> None:
        self._check_types()
        for key, most in LIMITS.items():
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 < value <= most:
                raise InputError(f"{key} must be a whole number from 1 to {most:,d}, got {value!r}")
        if len(self.sequence_tokens) > LIMITS["batch"] or any(
                isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 < n <= LIMITS["context_tokens"]
                for n in self.sequence_tokens):
            raise InputError(f"sequence lengths must be whole numbers from 1 to {LIMITS['context_tokens']:,d}, "
                             f"at most {LIMITS['batch']:,d} of them")
        if self.gpu_layers is not None and self.gpu_layers < 0:
            raise InputError(f"gpu_layers must be >= 0, got {self.gpu_layers}")
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
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
        object.__setattr__(self, "kv_format", get_kv_format(self.kv_format).name)  # f16 -> fp16, as the engines name it
        engine = get_engine(self.engine)
        object.__setattr__(self, "engine", engine.name)
        parsed = engine.resolve(dict(self.options))
        object.__setattr__(self, "options", tuple(sorted((k, parsed[k]) for k, _ in self.options)))
        if self.gpu is not None:
            get_gpu(self.gpu)
        if self.tp > 1 and not engine.supports_tp:
            raise InputError(f"tensor parallelism is modelled for vllm only, not {engine.name} (use pp to split layers)")
        if (self.gpu_layers is not None or self.kv_offload) and not engine.supports_offload:
            raise InputError(f"offloading (gpu_layers / kv_offload) is modelled for transformers and llama.cpp, not {engine.name}")

    def _check_types(self) -> None:
        """Field types, before any value is used (session files and the app hand over outside data)."""
        if isinstance(self.options, dict):  # options given as a mapping
            object.__setattr__(self, "options", tuple(sorted(self.options.items())))
        if not isinstance(self.options, tuple) or not all(isinstance(o, tuple) and len(o) == 2 for o in self.options):
            raise InputError("scenario options must be name: value pairs")
        def wrong(key: str, kind: str) -> InputError:
            return InputError(f"scenario {key} must be {kind}, got {getattr(self, key)!r:.60}")

        for key in ("name", "weight_format", "kv_format", "engine", "device"):
            if not isinstance(getattr(self, key), str):
                raise wrong(key, "text")
        for key in ("gpu", "attention", "run_id"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), str):
                raise wrong(key, "text or null")
        for key in ("kv_offload", "logits_all_tokens", "extrapolate", "hidden"):
            if not isinstance(getattr(self, key), bool):
                raise wrong(key, "true or false")
        for key in ("gpu_layers", "prefill_chunk_tokens", "runtime_overhead_bytes"):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
                raise wrong(key, "a whole number or null")
        for key in ("gpu_memory_utilization", "allocator_fraction"):
            v = getattr(self, key)
            if v is not None and (
                    isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v)):
                raise wrong(key, "a number")

    @property
    def sequences(self) -> int:
        return len(self.sequence_tokens) or self.batch

    @property
    def gpu_spec(self) -> GPU | None:
        """The scenario's GPU from the catalogue (or as entered); None where it names none."""
        return get_gpu(self.gpu) if self.gpu else None

    @property
    def compute_capability(self) -> tuple[int, int] | None:
        """The scenario's NVIDIA GPU's compute capability; None on the CPU, for an unnamed GPU or a non-NVIDIA one."""
        return self.gpu_spec.compute_capability if self.gpu and self.device == "cuda" else None

    @property
    def longest_sequence(self) -> int:
        return max(self.sequence_tokens) if self.sequence_tokens else self.context_tokens

    @property
    def engine_options(self) -> dict[str, Any]:
        """Every option of the scenario's engine: the set ones and the defaults."""
        return get_engine(self.engine).resolve(dict(self.options))

    def with_changes(self, **changes: Any) -> Scenario:
        if "options" in changes and isinstance(changes["options"], dict):
            changes["options"] = tuple(sorted(changes["options"].items()))
        if "engine" in changes and changes["engine"] != self.engine and "options" not in changes:
            changes["options"] = ()  # options belong to the engine they were set for
        return Scenario(**{**asdict(self), **changes})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sequence_tokens"] = list(self.sequence_tokens)
        d["options"] = dict(self.options)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        reject_unknown_fields(cls, data, "scenario")
        d = dict(data)
        seqs = d.get("sequence_tokens", ())
        if not isinstance(seqs, (list, tuple)):
            raise InputError(f"scenario sequence_tokens must be a list of token counts, got {seqs!r:.60}")
        d["sequence_tokens"] = tuple(seqs)
        options = d.get("options", {})
        if not isinstance(options, dict):
            raise InputError("scenario options must be an object of name: value")
        d["options"] = tuple(sorted(options.items()))
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
    host_read_bytes: int = 0  # weight bytes a decoded token reads from host memory (offloaded layers)
    engine_facts: dict[str, Any] = field(default_factory=dict, compare=False)

    def launch_command(self, model: str | None = None) -> str:
        """The command that runs this scenario in its engine (`model`: a path or repository id)."""
        a = self.architecture
        return get_engine(self.scenario.engine).launch_command(a, self.scenario, model or a.ref or a.name)

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
    kv_pool: np.ndarray | None = None  # what an engine that pre-allocates reserves (vLLM); None otherwise
    weights_read: float = 0.0  # host: weight bytes read from host memory per decoded token (offloaded layers)

    @property
    def total(self) -> np.ndarray:
        return self.weights + self.kv_cache + self.activations + self.overhead

    @property
    def needed(self) -> np.ndarray:
        """What must fit (vLLM: the KV the sequences require, not the pool it reserves)."""
        return self.total - self.kv_cache + self.kv_required

    @property
    def committed(self) -> np.ndarray:
        """What the device holds with its KV pool as reserved, whatever the sequences require (vLLM)."""
        return self.total - self.kv_cache + (self.kv_required if self.kv_pool is None else self.kv_pool)


def inputs(a: Architecture, sc: Scenario, context: np.ndarray, batch: np.ndarray) -> Inputs:
    """The scenario at contexts `context` and batches `batch` (broadcast together), checked by its engine."""
    engine = get_engine(sc.engine)
    options = engine.resolve(dict(sc.options))
    engine.check(a, sc, options)
    a = engine.runs_as(a, options)
    context, batch = np.broadcast_arrays(np.asarray(context, dtype=np.int64), np.asarray(batch, dtype=np.int64))
    seqs_given = bool(sc.sequence_tokens) and context.shape == () and context == sc.context_tokens and batch == sc.batch
    kvf = engine.kv_storage(get_kv_format(sc.kv_format), sc.weight_format)
    return Inputs(a, sc, get_weight_format(sc.weight_format), kvf, options,
                  sc.attention or engine.default_attention(a), context, batch, bool(seqs_given))


def _weights(x: Inputs, placement: Placement, stages: list[range], engine: Engine) -> tuple[list[float], float, float, float]:
    """(weights per pipeline stage on one device, as its buffers hold them (`Engine.device_tensor_bytes`), weights
    in host memory, largest offloaded layer, weight bytes read from host memory per decoded token)."""
    a, sc = x.a, x.sc
    tt = tensor_table(a, x.wf)
    device_bytes = engine.device_tensor_bytes(x, tt)
    stage_of = np.zeros(a.num_layers, dtype=np.int64)
    for s_i, r in enumerate(stages):
        stage_of[list(r)] = s_i
    gpu_layer = np.zeros(a.num_layers, dtype=bool)
    gpu_layer[list(placement.gpu_layers)] = True
    layer_idx = np.where(tt.layer >= 0, tt.layer, a.num_layers)
    in_layer = tt.layer >= 0
    on_gpu = tensor_on_gpu(a, tt, placement)
    stage = np.where(in_layer, stage_of[np.minimum(layer_idx, a.num_layers - 1)], np.where(tt.front, 0, sc.pp - 1))
    host_w = float(tt.nbytes[~on_gpu].sum())
    if placement.tied_output_copy:  # a tied embedding loaded twice: input on the host, a duplicate as the GPU
        copy = tt.embedding & tt.front  # output layer of the last stage
        host_w += float(tt.nbytes[copy].sum()) - float(tt.nbytes[copy & ~on_gpu].sum())
        on_gpu = on_gpu | copy
        stage = np.where(copy, sc.pp - 1, stage)
    share = device_bytes * engine.tp_shares(x, tt)
    stage_w = np.bincount(stage[on_gpu], weights=share[on_gpu], minlength=sc.pp)
    per_layer = np.bincount(tt.layer[in_layer], weights=tt.nbytes[in_layer], minlength=a.num_layers)
    offloaded = ~gpu_layer & (per_layer > 0)
    streamed = float(per_layer[offloaded].max()) if offloaded.any() else 0.0
    host_read = float((tt.nbytes * tt.active)[~on_gpu].sum())
    return [float(w) for w in stage_w[: sc.pp]], host_w, streamed, host_read


def device_arrays(a: Architecture, sc: Scenario, context: np.ndarray, batch: np.ndarray) -> tuple[list[Arrays], Arrays]:
    """Per-GPU and host component arrays for contexts `context` and batches `batch`
    (broadcast together). Per-sequence lengths in `sc.sequence_tokens` are honoured
    when `context`/`batch` are the scenario's own scalars. Every engine-specific rule
    comes from the scenario's engine (`memviz.core.engines`)."""
    return _arrays(inputs(a, sc, context, batch))


def _arrays(x: Inputs) -> tuple[list[Arrays], Arrays]:
    sc = x.sc
    engine = get_engine(sc.engine)
    zeros = x.zeros
    placement = engine.placement(x)
    stages = engine.stages(x)
    stage_w, host_w, streamed, host_read = _weights(x, placement, stages, engine)
    for s_i, r in enumerate(stages):
        stage_w[s_i] += engine.weight_extra(x, r)
    stage_w[0] += engine.encoder_bytes(x)

    host_kv = zeros.copy()
    stage_kv, stage_held = [], []
    for r in stages:
        on = [i for i in r if i in placement.kv_gpu_layers]
        off = [i for i in r if i not in placement.kv_gpu_layers]
        stage_kv.append(_sum_layers(partial(engine.kv_bytes, x), on, zeros))
        stage_held.append(_sum_layers(partial(engine.kv_transient, x), on, zeros))
        host_kv = host_kv + _sum_layers(partial(engine.kv_bytes, x), off, zeros) * sc.tp

    given = sc.runtime_overhead_bytes
    runtime = engine.runtime_bytes(x) if given is None else given
    alloc = engine.allocator_fraction(x) if sc.allocator_fraction is None else sc.allocator_fraction
    gpu = get_gpu(sc.gpu) if sc.gpu and sc.device == "cuda" else None
    label = "CPU" if sc.device == "cpu" else "GPU"
    parts = []
    for s, r in enumerate(stages):
        last = s == sc.pp - 1
        act = engine.activations(x, last, streamed if s == 0 else 0.0, first_stage=s == 0,
                                 loaded_bytes=stage_w[s]) + stage_held[s]
        act = act * (1 if len(r) else 0) + zeros
        stage_runtime = engine.stage_runtime_bytes(x, r, last) if given is None else 0.0
        overhead = runtime + stage_runtime + alloc * (stage_kv[s] + act) + zeros
        w = stage_w[s] + zeros
        parts.append((w, act, overhead, engine.kv_pool(x, gpu, w + act + overhead, act) if gpu is not None else None))
    pools = engine.stage_pools(x, [p[3] for p in parts])
    out: list[Arrays] = []
    for (w, act, overhead, _), kv_required, pool in zip(parts, stage_kv, pools, strict=True):
        kv = kv_required if pool is None else np.maximum(kv_required, pool)
        for _ in range(sc.tp * engine.replicas(x.options)):
            out.append(Arrays(f"{label}{len(out)}", w, kv, act, overhead, kv_required, pool))
    host_w += engine.host_weight_extra(x)
    host = Arrays("host", host_w + zeros, host_kv, engine.host_buffers(x) + zeros, zeros, host_kv,
                  weights_read=host_read)
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
    "weights": ("exact", "sum over the tensor inventory of each tensor's bytes in its storage format, "
                "placed where the engine keeps it, with the engine's own copies, padding and load-time conversions "
                "(llama.cpp's repacked CPU weights, vLLM's MXFP4 MoE tiles and Marlin FP8 scales, transformers' "
                "bf16 copies of FP8 / MXFP4 weights it cannot run)",
                "memviz.core.formats (ggml type traits, GPTQ/AWQ/bitsandbytes layouts)"),
    "kv_cache": ("formula", "sum over layers and sequences of 2 x Hkv x D x tokens_kept x S (+ scales, pages), "
                 "tokens kept as the engine allocates them",
                 "seed 000 formula, generalised in memviz.core.kv"),
    "activations": ("formula", "the engine's transient peak: its largest layer's workspace (prefill chunk, "
                    "profile run or graph reserve)", ""),
    "overhead": ("constant", "engine runtime constant + allocator fraction x (KV + activations)", ""),
}


def estimate(a: Architecture, sc: Scenario) -> Estimate:
    """Estimate device memory for architecture `a` deployed as `sc`."""
    engine = get_engine(sc.engine)
    x = inputs(a, sc, np.asarray(sc.context_tokens), np.asarray(sc.batch))
    gpus, host = _arrays(x)
    devices = tuple(DeviceUsage(d.device, *(int(np.ceil(getattr(d, c))) for c in COMPONENTS)) for d in gpus)
    busiest_i = max(range(len(devices)), key=lambda i: devices[i].total)
    busiest = devices[busiest_i]
    gpu = get_gpu(sc.gpu) if sc.gpu and sc.device == "cuda" else None
    pool = gpus[busiest_i].kv_pool
    pool = None if pool is None else float(pool)
    non_kv = float(gpus[busiest_i].total - gpus[busiest_i].kv_cache)
    facts = engine.facts(x, gpu, pool, non_kv, float(gpus[0].weights)) | engine.linear_state_facts(x)
    if a.is_mla and not a.compress_ratios:  # the latent rows as this engine lays them out
        layout = engine.kv_layout(x)
        facts["latent_widths"] = sorted({latent_width(a, layout, i) for i in range(a.num_layers) if a.layer_caches_kv(i)})
    components = []
    for name in COMPONENTS:
        prov, formula, source = _SOURCES[name]
        source = source or f"{engine.version}: {engine.source}"
        if name == "kv_cache":
            formula += engine.kv_formula(x) + (engine.kv_pool_formula(x) if pool is not None else "")
        if name == "overhead" and sc.runtime_overhead_bytes is None and (more := engine.overhead_formula(facts)):
            prov = "formula"
            formula += more
        if name == "overhead" and sc.runtime_overhead_bytes is not None:
            source = "user-set runtime overhead"
        components.append(Component(name, getattr(busiest, name), prov, formula, source))
    kvf = x.kvf
    layout = replace(engine.kv_layout(x), kv_heads_divisor=1)
    notes = list(a.warnings)
    if a.encoders and (x.wf.name != STORED or any(e.file for e in a.encoders)):  # a checkpoint's own, or an mmproj
        facts["encoders_place"] = engine.encoder_place(x)
        notes.append(_encoder_note(a, facts["encoders_place"], engine.encoder_bytes(x)))
    host_usage = DeviceUsage("host", *(int(np.ceil(getattr(host, c))) for c in COMPONENTS))
    if host_usage.total:
        notes.append(f"host memory holds {host_usage.total:,d} bytes (offloaded weights/KV, output buffers)")
    return Estimate(
        architecture=a, scenario=sc, components=tuple(components), devices=devices, host=host_usage,
        parameters=parameter_count(a), active_parameters=active_parameter_count(a),
        kv_bytes_per_token=int(np.ceil(kv_bytes_per_token(a, kvf, layout))),
        kv_cache_required=int(np.ceil(gpus[busiest_i].kv_required)), notes=tuple(notes), engine_facts=facts,
        host_read_bytes=int(host.weights_read),
    )


def _encoder_note(a: Architecture, place: str, device_bytes: float) -> str:
    """What the weights say of a multimodal model's encoders: where they are held, and how much, or left out."""
    what = " and the ".join(f"{e.modality} encoder ({e.parameters / 1e9:.2f}B parameters with its projector)"
                            for e in a.encoders)
    if place == "device":
        return f"weights include the {what}: {device_bytes / GiB:.2f} GiB on each device of the first stage"
    if place == "host":
        return f"the {what} is held in host memory, at 16 bits (--no-mmproj-offload)"
    return (f"the {what} is not loaded: vLLM's --language-model-only leaves it out, and llama.cpp loads it only "
            "with --mmproj (option mmproj)")


@lru_cache(maxsize=1024)
def active_weight_bytes(a: Architecture, weight_format: str, sixteen_bit: frozenset[str] = frozenset()) -> float:
    """Bytes of weights read per decoded token (routed experts: top-k of E); tensors stored in a `sixteen_bit`
    storage are read as the 16-bit copies the engine made of them while loading."""
    wf = get_weight_format(weight_format)
    return sum((t.numel * 2 if storage in sixteen_bit else nbytes) * active_fraction(t, a)
               for t, storage, nbytes in tensor_bytes(a, wf))

