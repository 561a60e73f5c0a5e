"""What every engine model answers, and the inputs the estimate hands it.

An engine decides where each tensor lives, how its KV cache is sized, how large
its transient workspace is, what its runtime costs, which part of a GPU it may
use and how it would be launched. `memviz.core.estimate` assembles these answers
into the four components without knowing which engine it asks; adding an engine
means adding one module next to this one and registering it in `__init__`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from memviz.core.arch import LINEAR_MIXER_NAMES, Architecture
from memviz.core.errors import InputError
from memviz.core.formats import STORED, KVFormat, WeightFormat
from memviz.core.kv import KVLayout, kv_cache_bytes
from memviz.core.towers import encoder_bytes
from memviz.core.units import MiB, parse_bytes

if TYPE_CHECKING:
    from memviz.core.estimate import Scenario
    from memviz.core.gpus import GPU
    from memviz.core.tensor_table import TensorTable


#: Non-torch device memory of a torch process once it has run its first CUDA kernels (CUDA context, cuBLAS
#: workspace, loaded kernels): 686 MiB in all 15 real runs on an H200 (torch 2.11 + CUDA 13.0, driver
#: 580.159.04; docs/accuracy-cuda.md). Other GPUs and CUDA versions were not measured.
TORCH_CUDA_BASELINE_BYTES = 686 * MiB
SIXTEEN_BIT_FORMATS = frozenset({"bf16", "fp16", "fp32"})


@dataclass(frozen=True)
class Option:
    """One engine option: its type, default (None: derived, see `help`) and limits."""

    name: str
    kind: type
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    memory: bool = False  # a size in bytes: text reads as '20GiB' / '20GB' (`units.parse_bytes`)

    @property
    def kind_label(self) -> str:
        return "bytes" if self.memory else self.kind.__name__

    def parse(self, value: Any) -> Any:
        """`value` converted to the option's type, or InputError naming the option."""
        if value is None:
            return None
        if self.memory and isinstance(value, str):
            try:
                value = parse_bytes(value)
            except InputError as e:
                raise InputError(f"option {self.name}: {e}") from None
        try:
            if self.kind is bool:
                if isinstance(value, str):
                    if value.lower() not in ("true", "false", "1", "0", "on", "off", "yes", "no"):
                        raise ValueError(value)
                    value = value.lower() in ("true", "1", "on", "yes")
                elif not isinstance(value, (bool, np.bool_, int)):
                    raise ValueError(value)
                out: Any = bool(value)
            elif self.kind is int:
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError(value)
                out = int(value)
            elif self.kind is float:
                if isinstance(value, bool):
                    raise ValueError(value)
                out = float(value)
                if not np.isfinite(out):
                    raise ValueError(value)
            else:
                out = str(value)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"option {self.name} must be {self.kind.__name__}, got {value!r}") from None
        if self.choices and out not in self.choices:
            allowed = ", ".join(repr(c) if c == "" else str(c) for c in self.choices)
            raise InputError(f"option {self.name} must be one of {allowed} ({self.help}), got {out!r}")
        if self.minimum is not None and out < self.minimum:
            raise InputError(f"option {self.name} must be >= {self.minimum:g}, got {out!r}")
        if self.maximum is not None and out > self.maximum:
            raise InputError(f"option {self.name} must be <= {self.maximum:g}, got {out!r}")
        return out


def parse_option_pairs(pairs: list[str]) -> dict[str, str]:
    """`["name=value", ...]` as typed on the command line or in the app; the engine checks names and values."""
    out = {}
    for pair in (p.strip() for p in pairs):
        if not pair:
            continue
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InputError(f"engine options are NAME=VALUE pairs, got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def compute_bytes(weight_format: str) -> int:
    """Bytes of one value in the compute dtype of weights in `weight_format`: fp32 for an fp32 model, else 16-bit."""
    return 4 if weight_format == "fp32" else 2


def check_context(a: Architecture, sc: Scenario) -> None:
    """A sequence longer than the model's positions (`max_position_embeddings`, which includes the rope
    scaling its config declares) is refused unless the scenario asks to extrapolate."""
    limit = a.max_position_embeddings
    if limit and sc.longest_sequence > limit and not sc.extrapolate:
        raise InputError(f"{sc.longest_sequence:,d} tokens per sequence exceed {a.name}'s {limit:,d} positions; "
                         "shorten the context or ask to extrapolate (--extrapolate, or the scenario's "
                         "'beyond max' box)")


def encoders_bytes(x: Inputs) -> float:
    """All of a multimodal model's encoders and projectors (`towers.encoder_bytes`). An imported checkpoint's own
    tensors (format "stored") hold its encoders already: only those read from a separate mmproj file count."""
    if x.wf.name == STORED:
        return float(sum(e.stored_bytes for e in x.a.encoders))
    return float(sum(encoder_bytes(e, x.wf.name) for e in x.a.encoders))


@dataclass(frozen=True)
class Placement:
    """Where the engine keeps tensors when a GPU is used.

    `gpu_layers`: layers whose weights are on a GPU; `kv_gpu_layers`: layers whose
    KV cache is; `tied_output_copy`: a tied embedding loaded twice (host input,
    GPU output layer); `host_expert_layers`: layers whose routed experts stay in
    host memory although the layer runs on the GPU (llama.cpp `--n-cpu-moe`);
    `host_tensors`: single tensors kept in host memory (llama.cpp `--override-tensor`).
    """

    gpu_layers: frozenset[int]
    kv_gpu_layers: frozenset[int]
    embed_on_gpu: bool
    output_on_gpu: bool
    tied_output_copy: bool = False
    host_expert_layers: frozenset[int] = frozenset()
    host_tensors: frozenset[str] = frozenset()  # inventory names kept in host memory (llama.cpp --override-tensor)


@dataclass
class Inputs:
    """One scenario evaluated at arrays of contexts and batches (broadcast together)."""

    a: Architecture
    sc: Scenario
    wf: WeightFormat
    kvf: KVFormat
    options: dict[str, Any]
    attention: str
    context: np.ndarray
    batch: np.ndarray
    seqs_given: bool  # the scenario's own per-sequence lengths apply
    zeros: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.zeros = np.zeros(self.context.shape)

    @property
    def longest(self) -> np.ndarray:
        return np.asarray(self.sc.longest_sequence) if self.seqs_given else self.context

    @property
    def act_bytes(self) -> int:
        return compute_bytes(self.wf.name)

    @property
    def sequences(self) -> np.ndarray:
        """Sequences decoded together: the scenario's own when its lengths apply, else the batch."""
        return np.asarray(self.sc.sequences) if self.seqs_given else self.batch

    @property
    def total_tokens(self) -> np.ndarray:
        return np.asarray(sum(self.sc.sequence_tokens)) if self.seqs_given else self.context * self.batch


class Engine:
    """Base engine: whole-prompt prefill, per-sequence caches, everything on one device.

    Subclasses override what their engine does differently; each cites the code it follows.
    """

    name = ""
    label = ""
    version = ""
    source = ""
    options: tuple[Option, ...] = ()
    attention_default = "sdpa"
    latent_mla = False
    supports_tp = False
    supports_offload = False
    quantizes_on_load: frozenset[str] = frozenset()  # weight formats it makes from a 16-bit checkpoint while loading
    default_kv_format = "bf16"  # the cache the engine keeps when not told: the checkpoint's 16-bit dtype
    default_context_tokens = 4096  # memviz's context when none is given (capped at the model's positions)

    def default_kv(self, weight_format: str) -> str:
        """The cache the engine keeps when not told, for weights in `weight_format`: the compute dtype's (an fp32
        model's cache is fp32: transformers' DynamicCache, vLLM's "auto"), llama.cpp's f16."""
        return "fp32" if weight_format == "fp32" and self.default_kv_format == "bf16" else self.default_kv_format

    def accepts_weights(self, weight_format: str) -> bool:
        """Whether the engine can hold weights in `weight_format` at all (every format by default)."""
        return True

    def kv_storage(self, kvf: KVFormat, weight_format: str) -> KVFormat:
        """The cache format as the engine stores it for weights in `weight_format` (the format itself by default)."""
        return kvf

    def default_attention(self, a: Any) -> str:
        """The attention implementation the engine runs `a` with when the scenario names none."""
        return self.attention_default

    def runs_as(self, a: Architecture, options: dict[str, Any]) -> Architecture:
        """`a` as the engine builds it with `options` (resolved), where its own model differs from the checkpoint's
        (llama.cpp's full attention for the sliding windows of types it builds without them); `a` by default."""
        return a

    def default_context(self, a: Any, total_vram_bytes: float | None) -> int:
        """Tokens per sequence when the user gives none; `total_vram_bytes`: the scenario's GPUs together, if known."""
        return min(self.default_context_tokens, a.max_position_embeddings or self.default_context_tokens)

    # --- options -------------------------------------------------------------------
    def has_option(self, name: str) -> bool:
        return any(o.name == name for o in self.options)

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        known = ", ".join(o.name for o in self.options) or "none"
        raise InputError(f"{self.name} has no option {name!r}; its options: {known}")

    def resolve(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Every option of this engine: the given ones parsed and checked, the rest at their defaults."""
        out = {o.name: o.default for o in self.options}
        for key, value in raw.items():
            out[key] = self.option(key).parse(value)
        return out

    def check(self, a: Architecture, sc: Scenario, options: dict[str, Any]) -> None:
        """Raise InputError for a combination the engine refuses."""
        if sc.tp > 1 and not self.supports_tp:
            raise InputError(f"tensor parallelism is modelled for vllm only, not {self.name} (use pp to split layers)")
        if (sc.gpu_layers is not None or sc.kv_offload) and not self.supports_offload:
            raise InputError(f"offloading (gpu_layers / kv_offload) is not modelled for {self.name}")
        if sc.pp > a.num_layers // a.block_layers:
            raise InputError(f"pp ({sc.pp}) cannot exceed the model's {a.num_layers // a.block_layers} layers")
        check_context(a, sc)

    def options_on(self, sc: Scenario, pp: int) -> dict[str, Any]:
        """The scenario's options when it is tried on `pp` pipeline stages (the fewest-GPUs search)."""
        return dict(sc.options)

    # --- placement and KV --------------------------------------------------------------
    def stages(self, x: Inputs) -> list[range]:
        """The layers of each pipeline stage (one GPU, or `tp` of them): an even split, earlier stages take the
        remainder."""
        n, pp = x.a.num_layers, x.sc.pp
        edges = [round(n * i / pp) for i in range(pp + 1)]
        return [range(edges[i], edges[i + 1]) for i in range(pp)]

    def placement(self, x: Inputs) -> Placement:
        a, sc = x.a, x.sc
        every = frozenset(range(a.num_layers))
        if sc.device == "cpu":
            return Placement(every, every, True, True)
        g = a.num_layers if sc.gpu_layers is None else min(sc.gpu_layers, a.num_layers)
        layers = frozenset(range(g))
        return Placement(layers, frozenset() if sc.kv_offload else layers, True, g == a.num_layers)

    def kv_layout(self, x: Inputs) -> KVLayout:
        return KVLayout(latent_mla=self.latent_mla, kv_heads_divisor=x.sc.tp)

    def kv_bytes(self, x: Inputs, layers: range) -> np.ndarray:
        """KV bytes of `layers` on one device for all sequences, the delta-net layers' states included."""
        layout = self.kv_layout(x)
        if x.seqs_given:
            kv = np.asarray(kv_cache_bytes(x.a, x.kvf, list(x.sc.sequence_tokens), layout, layers))
        else:
            kv = x.batch * kv_cache_bytes(x.a, x.kvf, x.context, layout, layers)
        return kv + self.linear_states(x, layers)

    def linear_states(self, x: Inputs, layers: range) -> np.ndarray | int:
        """What the gated delta-net layers among `layers` hold for all sequences (`linear_state_held_bytes`)."""
        linear = sum(1 for i in layers if x.a.layer_has_state(i))
        return linear * self.linear_state_held_bytes(x) * x.sequences if linear else 0

    def kv_transient(self, x: Inputs, layers: range) -> np.ndarray:
        """KV bytes held on top of `kv_bytes` while the prompt is processed (0 for most engines)."""
        return x.zeros

    # --- workspace, runtime, budget --------------------------------------------------
    def activations(self, x: Inputs, last_stage: bool, streamed_layer_bytes: float,
                    first_stage: bool = True, loaded_bytes: float = 0.0) -> np.ndarray:
        """Transient peak of one device holding a pipeline stage (`last_stage`: it computes the logits;
        `first_stage`: the first device, where llama.cpp's scheduler runs ops on weights in host memory).
        `streamed_layer_bytes`: the largest layer kept in host memory, for engines that copy offloaded
        layers onto the GPU to run them (accelerate); engines that run them on the CPU ignore it. `loaded_bytes`:
        what the device holds before it runs (its weights), for engines that size a pass by the memory left free."""
        raise NotImplementedError

    def runtime_bytes(self, x: Inputs) -> float:
        raise NotImplementedError

    def stage_runtime_bytes(self, x: Inputs, layers: range, last_stage: bool) -> float:
        """Runtime memory that depends on the pipeline stage (`layers`: its layers; `last_stage`: the one that
        samples), beside `runtime_bytes`."""
        return 0.0

    def allocator_fraction(self, x: Inputs) -> float:
        return 0.0

    def host_buffers(self, x: Inputs) -> np.ndarray:
        """Host memory the engine allocates besides offloaded weights and KV (output buffers)."""
        return x.zeros

    def usable_bytes(self, gpu: GPU, sc: Scenario) -> float:
        """Bytes of one GPU this engine may fill: what CUDA reports as total (the driver's reservation is not
        allocatable), or the share its platform allows (Apple's working set)."""
        return float(gpu.cuda_total_bytes)

    def kv_pool(self, x: Inputs, gpu: GPU, non_kv: np.ndarray, peak: np.ndarray | None = None) -> np.ndarray | None:
        """The KV pool the engine pre-allocates on a GPU beside `non_kv` bytes, `peak` of them transient (None: it
        allocates what sequences need)."""
        return None

    def stage_pools(self, x: Inputs, pools: list[np.ndarray | None]) -> list[np.ndarray | None]:
        """The pools the pipeline stages keep, from what each stage's memory allows (`kv_pool`): by default each
        its own."""
        return pools

    def kv_formula(self, x: Inputs) -> str:
        """What the engine's cache keeps beyond the formula, appended to the KV component's formula."""
        return ""

    def kv_pool_formula(self, x: Inputs) -> str:
        """How a pre-allocated pool (`kv_pool`) is sized, appended to the KV component's formula."""
        return ""

    def overhead_formula(self, facts: dict[str, Any]) -> str:
        """What the engine's runtime bytes hold, appended to the overhead component's formula ("": the constant)."""
        return ""

    def commit_cap_bytes(self, gpu: GPU, sc: Scenario, peak: float) -> float:
        """The most the engine may commit (`commits_budget`) beside a transient `peak`: where the rest alone exceeds
        it the engine holds no pool, and its budget is this, not the rest."""
        return float("inf")

    def commits_budget(self, sc: Scenario) -> bool:
        """Whether the engine's budget is what it commits on the busiest device, its pool beside the rest (vLLM's
        kv_cache_memory_bytes, or a pool sized from measured memory), not a share of the GPU (`fit.capacity_bytes`)."""
        return False

    def tp_shares(self, x: Inputs, tt: TensorTable) -> np.ndarray:
        """Per tensor of `tt`: the fraction of it the busiest tensor-parallel rank holds: 1 / tp of the attention,
        MLP, expert, embedding and output tensors, the others whole."""
        return np.where(tt.split, 1.0 / x.sc.tp, 1.0)

    def replicas(self, options: dict[str, Any]) -> int:
        """Copies of the tensor-parallel x pipeline group the scenario runs (vLLM's data parallelism); 1 here."""
        return 1

    def split_labels(self, options: dict[str, Any]) -> tuple[str, ...]:
        """How the engine spreads the scenario beyond TP and PP, for labels (vLLM: "DP4", "EP"); none here."""
        return ()

    def gpus(self, sc: Scenario) -> int:
        """GPUs the scenario runs on: tp x pp x the engine's replicas."""
        return sc.tp * sc.pp * self.replicas(self.resolve(dict(sc.options)))

    def device_tensor_bytes(self, x: Inputs, tt: TensorTable) -> np.ndarray:
        """Bytes each tensor of `tt` takes in a device's weight buffer: its stored bytes, unless the engine's
        allocator pads them (llama.cpp's CUDA buffers)."""
        return tt.nbytes

    def dequantized_storages(self, sc: Scenario, options: dict[str, Any]) -> frozenset[str]:
        """Storage formats the engine converts to 16 bits while loading (2 bytes per value from then on)."""
        return frozenset()

    def weight_extra(self, x: Inputs, layers: range) -> float:
        """Bytes one device holding the pipeline stage `layers` keeps beyond its tensors' own (llama.cpp's
        repacked CPU copies, vLLM's kernel padding); 0 for most engines."""
        return 0.0

    def encoder_place(self, x: Inputs) -> str:
        """Where the engine keeps a multimodal model's encoders (`Architecture.encoders`): "device", "host", or ""
        when it does not load them. transformers loads them beside the language model (`...ForConditionalGeneration`)."""
        return "device"

    def encoder_bytes(self, x: Inputs) -> float:
        """Bytes of the encoders on one device of the first stage (`encoders_bytes` where `encoder_place` is the
        device)."""
        return encoders_bytes(x) if self.encoder_place(x) == "device" else 0.0

    def host_weight_extra(self, x: Inputs) -> float:
        """Bytes the host's model buffers hold beyond its tensors' own (llama.cpp's mapped file range beside GPUs);
        0 for most engines."""
        return 0.0

    def facts(self, x: Inputs, gpu: GPU | None, pool_bytes: float | None,
              non_kv_bytes: float | None = None, loaded_bytes: float = 0.0) -> dict[str, Any]:
        """Engine-specific figures to report next to the components (vLLM's token pool, ...); `non_kv_bytes`: what
        the busiest GPU holds besides its KV; `loaded_bytes`: what the first GPU loads (its weights)."""
        return {}

    def linear_state_bytes(self, x: Inputs) -> int:
        """One gated delta-net layer's state for one sequence, as the engine keeps it."""
        raise NotImplementedError

    def linear_state_held_bytes(self, x: Inputs) -> int:
        """What a delta-net layer holds per sequence: its state, unless the engine pages it (vLLM)."""
        return self.linear_state_bytes(x)

    def linear_state_facts(self, x: Inputs) -> dict[str, Any]:
        """The state a recurrent layer holds per sequence, how many layers hold one and what they are (empty without
        any)."""
        if not x.a.state_layers:
            return {}
        return {"linear_state_bytes_per_layer_sequence": self.linear_state_held_bytes(x),
                "linear_state_layers": x.a.state_layers,
                "linear_state_layer_kind": LINEAR_MIXER_NAMES[x.a.linear_mixer]}

    def launch_command(self, a: Architecture, sc: Scenario, model: str) -> str:
        raise NotImplementedError

    def checkpoint(self, a: Architecture, sc: Scenario, model: str) -> tuple[str, bool]:
        """(what to load, whether the engine quantizes it while loading) for the scenario's weight format: `model`
        when it is stored in that format (both 16-bit counts), the 16-bit `model` when the engine quantizes while
        loading, else a checkpoint stored in that format, named as a placeholder the user fills in."""
        fmt, stored = sc.weight_format, a.native_format or "bf16"
        if fmt in (stored, "stored") or (fmt in SIXTEEN_BIT_FORMATS and stored in SIXTEEN_BIT_FORMATS):
            return model, False
        if fmt in self.quantizes_on_load and stored in SIXTEEN_BIT_FORMATS:
            return model, True
        return f"<{model} as a {fmt} checkpoint>", False

