"""The planner: which weight format, KV format, engine and split to run on given hardware.

It enumerates weight format × KV format × engine × tensor / pipeline split (and,
where host RAM is given, llama.cpp and transformers layer offload, and for a
mixture-of-experts model in llama.cpp the expert offload llama-server's `--fit`
chooses: every layer on the GPU, the experts of the last ones in host RAM), estimates each
with the same `estimate` as everywhere, keeps what fits the engine's budget with
`headroom` left (the fit rule of `memviz.core.fit.within`) and meets the limits,
and ranks what is left: quality loss first (`memviz.core.quality`; evidence from
this model's family before evidence borrowed from another, and that before no
evidence), then the decode-speed bound, then memory.

Splits follow the engines' documented modes: vLLM tensor parallel inside a node
and pipeline parallel across nodes (multi-node through Ray,
`--distributed-executor-backend ray`, docs "Distributed inference and serving");
llama.cpp layers over the GPUs of a node and over nodes through its RPC backend
(`--rpc`, tools/rpc/README.md); transformers layers over the GPUs of one machine
(accelerate's `device_map`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from memviz.core.arch import Architecture
from memviz.core.engines import get_engine
from memviz.core.engines.llamacpp_fit import FitPlacement
from memviz.core.errors import InputError
from memviz.core.estimate import Estimate, Scenario, estimate
from memviz.core.fit import capacity_bytes, needed_bytes, refused_on, within
from memviz.core.gpus import GPU, gpu_pool
from memviz.core.quality import Quality, quality
from memviz.core.search import largest_true
from memviz.core.speed import speed_bounds
from memviz.core.units import GiB

#: What each engine is asked to run: weight formats it loads, KV formats it offers.
GRID: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "vllm": (("bf16", "fp8", "int8", "awq-int4", "gptq-int4"), ("bf16", "fp8")),
    "llamacpp": (("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_K_S", "IQ4_XS", "Q3_K_M", "IQ3_M", "Q2_K"),
                 ("fp16", "q8_0", "q4_0")),
    "transformers": (("bf16", "llm-int8", "bnb-nf4", "awq-int4", "gptq-int4"), ("bf16",)),
}
#: llama.cpp's ternary file types, tried for BitNet models (whose weights are ternary to begin with)
TERNARY_MIXES = ("TQ2_0", "TQ1_0")
OFFLOAD_ENGINES = ("llamacpp", "transformers")
MULTI_NODE_ENGINES = ("vllm", "llamacpp")
DEFAULT_HEADROOM = 0.05  # of each GPU's budget left free: what varies between runs (allocator, kernels)


@dataclass(frozen=True)
class Hardware:
    """`gpus_per_node` GPUs of one kind in each of `nodes` machines, and host RAM per node if known."""

    gpu: GPU
    gpus_per_node: int = 1
    nodes: int = 1
    host_ram_bytes: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= 64:
            raise InputError(f"nodes must be from 1 to 64, got {self.nodes}")
        if self.host_ram_bytes is not None and self.host_ram_bytes <= 0:
            raise InputError("host RAM must be more than 0 bytes")

    @property
    def label(self) -> str:
        per = f"{self.gpus_per_node}× {self.gpu.label}" if self.gpus_per_node > 1 else self.gpu.label
        return f"{self.nodes} nodes of {per}" if self.nodes > 1 else per


def parse_hardware(gpus: str, nodes: int = 1, host_ram_bytes: int | None = None) -> list[Hardware]:
    """"h100-80gx8,rtx4090" -> one Hardware per comma-separated choice (catalogue key or vram:SIZE, xN for N)."""
    out = []
    for spec in (s for s in gpus.split(",") if s.strip()):
        gpu, n = gpu_pool(spec)
        out.append(Hardware(gpu, n, nodes, host_ram_bytes))
    if not out:
        raise InputError("give at least one GPU (e.g. --gpu rtx4090 or --vram 24GiB)")
    return out


@dataclass(frozen=True)
class Requirements:
    context_tokens: int
    concurrency: int = 1
    min_tokens_per_s: float | None = None
    max_quality_loss_pct: float | None = None
    headroom: float = DEFAULT_HEADROOM

    def __post_init__(self) -> None:
        if not 0 <= self.headroom < 1:
            raise InputError(f"headroom must be in [0, 1), got {self.headroom}")
        if self.min_tokens_per_s is not None and not (math.isfinite(self.min_tokens_per_s) and self.min_tokens_per_s >= 0):
            raise InputError(f"minimum tokens/s must be a finite number >= 0, got {self.min_tokens_per_s}")
        if self.max_quality_loss_pct is not None and not (
                math.isfinite(self.max_quality_loss_pct) and self.max_quality_loss_pct >= 0):
            raise InputError(f"maximum quality loss must be a finite percentage >= 0, got {self.max_quality_loss_pct}")


@dataclass(frozen=True)
class Candidate:
    """One configuration on one hardware choice, estimated, with why it is kept or not."""

    estimate: Estimate
    hardware: Hardware
    needed_bytes: int  # on the busiest GPU
    budget_bytes: int  # the engine's budget per GPU, before headroom
    quality: Quality
    decode_tokens_per_s_max: float | None  # roofline bound (memviz.core.speed); None: GPU bandwidth unknown
    problem: str = ""  # empty: kept; else why not ("does not fit", "below 20 tokens/s", ...)

    @property
    def scenario(self) -> Scenario:
        return self.estimate.scenario

    @property
    def gpus_used(self) -> int:
        return get_engine(self.scenario.engine).gpus(self.scenario)

    @property
    def host_bytes(self) -> int:
        return self.estimate.host.total

    @property
    def offloaded(self) -> bool:
        return self.scenario.gpu_layers is not None or bool(self.scenario.engine_options.get("override_tensor"))

    def label(self) -> str:
        sc = self.scenario
        split = f"TP{sc.tp}" + (f"×PP{sc.pp}" if sc.pp > 1 else "") if sc.tp > 1 else (f"PP{sc.pp}" if sc.pp > 1 else "1 GPU")
        off = f", {sc.gpu_layers} layers on GPU" if sc.gpu_layers is not None else ""
        if sc.engine_options.get("override_tensor"):
            off += f", experts of {_host_expert_layers(self.estimate)} layers in host RAM"
        return f"{sc.engine} {sc.weight_format} · KV {sc.kv_format} · {split}{off}"

    def launch_command(self, model: str | None = None) -> str:
        return launch_command(self, model)


@dataclass(frozen=True)
class Plan:
    architecture: Architecture
    requirements: Requirements
    hardware: tuple[Hardware, ...]
    ranked: tuple[Candidate, ...]  # kept, best first
    rejected: tuple[Candidate, ...] = field(default=())
    refusals: tuple[str, ...] = field(default=())  # why engines refused combinations, most frequent first

    @property
    def considered(self) -> int:
        return len(self.ranked) + len(self.rejected)

    def closest(self) -> Candidate | None:
        """Of the rejected, the one that needs the least beyond its budget (relative), for "nothing fits"."""
        over = [c for c in self.rejected if c.budget_bytes > 0]
        return min(over, key=lambda c: c.needed_bytes / c.budget_bytes, default=None)


def _splits(engine: str, a: Architecture, hw: Hardware) -> list[tuple[int, int]]:
    """(tp, pp) pairs the engine can run on `hw`: powers of two up to a node, times the nodes."""
    sizes = sorted({1 << i for i in range(hw.gpus_per_node.bit_length()) if 1 << i <= hw.gpus_per_node}
                   | {hw.gpus_per_node})
    node_counts = (1, hw.nodes) if engine in MULTI_NODE_ENGINES and hw.nodes > 1 else (1,)
    out = []
    for nodes in node_counts:
        for g in sizes:
            if engine == "vllm":
                tp_ok = a.num_heads % g == 0 and (a.num_kv_heads % g == 0 or g % a.num_kv_heads == 0)
                out.append((g, nodes) if tp_ok else (1, g * nodes))
            elif engine == "transformers" and nodes > 1:
                continue
            else:
                out.append((1, min(g * nodes, a.num_layers)))
    return sorted(set(out))


def _estimate(a: Architecture, sc: Scenario, refusals: Counter | None = None) -> Estimate | None:
    try:
        return estimate(a, sc)
    except InputError as exc:  # a combination the engine refuses (TP not dividing heads, V cache rules...)
        if refusals is not None:
            refusals[str(exc)] += 1
        return None


def _budget(hw: Hardware, est: Estimate, req: Requirements) -> float:
    return capacity_bytes(hw.gpu, est.scenario, est.architecture) * (1 - req.headroom)


def _fits(est: Estimate, hw: Hardware, req: Requirements) -> bool:
    return _gpu_fits(est, hw, req) and _host_fits(est, hw)


def _gpu_fits(est: Estimate, hw: Hardware, req: Requirements) -> bool:
    return within(needed_bytes(est), _budget(hw, est, req)) and not refused_on(est, hw.gpu)


def _host_fits(est: Estimate, hw: Hardware) -> bool:
    return hw.host_ram_bytes is None or within(est.host.total, hw.host_ram_bytes)


def _most_that_fit(placed, hi: int, hw: Hardware, req: Requirements) -> Estimate | None:
    """The estimate of `placed(n)` for the largest n in [0, hi] that fits (more n, more on the GPUs), or None."""
    tried: dict[int, Estimate | None] = {}

    def fits(n: int) -> bool:
        tried[n] = est = placed(n)
        return est is not None and _fits(est, hw, req)

    n = largest_true(fits, 0, hi)
    return tried[n] if n >= 0 else None


def _offloaded(a: Architecture, sc: Scenario, hw: Hardware, req: Requirements) -> Estimate | None:
    """The most layers on the GPUs that fit with the rest in host RAM, or None."""
    return _most_that_fit(lambda n: _estimate(a, sc.with_changes(gpu_layers=n)), a.num_layers - 1, hw, req)


def _experts_offloaded(a: Architecture, sc: Scenario, hw: Hardware, req: Requirements) -> Estimate | None:
    """A MoE model in llama.cpp placed as llama-server's --fit places it (`llamacpp_fit.FitPlacement`): every layer
    on the GPU, the experts of the fewest last layers in host RAM that fit the planner's budget; None if even every
    expert in host RAM does not fit."""
    if sc.engine != "llamacpp" or not a.is_moe:
        return None

    def placed(first: int) -> Estimate | None:
        rule = FitPlacement(experts_from=first).options(a)["override_tensor"]
        return _estimate(a, sc.with_changes(options={**sc.engine_options, "override_tensor": rule}))

    return _most_that_fit(placed, a.num_layers - 1, hw, req)  # the most layers keeping their experts on the GPU


def _host_expert_layers(est: Estimate) -> int:
    """How many layers keep their experts in host memory under the scenario's -ot rule."""
    from memviz.core.engines.llamacpp import host_tensors
    from memviz.core.formats import get_weight_format
    from memviz.core.inventory import Role, build_inventory

    sc, a = est.scenario, est.architecture
    host = host_tensors(a, get_weight_format(sc.weight_format), sc.engine_options["override_tensor"])
    return len({t.layer for t in build_inventory(a) if t.role is Role.EXPERT and t.name in host})


def _candidate(est: Estimate, hw: Hardware, req: Requirements, parameters_b: float) -> Candidate:
    a, sc = est.architecture, est.scenario
    q = quality(a, sc.weight_format, sc.kv_format, parameters_b)
    bound = speed_bounds(est, hw.gpu).decode_tokens_per_s_max
    bound = bound if math.isfinite(bound) else None
    problem = ""
    if not _gpu_fits(est, hw, req):
        problem = "does not fit" + (f" with {req.headroom:.0%} headroom" if req.headroom else "")
    elif not _host_fits(est, hw):
        problem = f"does not fit in host RAM: needs {est.host.total / GiB:.2f} of {hw.host_ram_bytes / GiB:.2f} GiB"
    elif req.min_tokens_per_s is not None and (bound is None or bound < req.min_tokens_per_s):
        problem = f"decode bound {'unknown' if bound is None else f'{bound:,.0f} tokens/s'} < {req.min_tokens_per_s:g}"
    elif req.max_quality_loss_pct is not None and (q.loss_pct is None or q.loss_pct > req.max_quality_loss_pct):
        problem = ("no quality evidence" if q.loss_pct is None
                   else f"quality loss {q.loss_pct:.2f} % > {req.max_quality_loss_pct:g} %")
    return Candidate(est, hw, int(needed_bytes(est)), int(capacity_bytes(hw.gpu, sc, est.architecture)), q, bound, problem)


def rank_key(c: Candidate) -> tuple:
    """Quality first, then the decode bound, then memory on the busiest GPU. Quality is compared within tiers
    of evidence strength (`Quality.tier`): a loss measured on this model or its family ranks before one
    borrowed from another family, and that before no evidence — figures from other models and other
    metrics are not interchangeable."""
    loss = c.quality.loss_pct
    return (c.quality.tier, round(loss, 3) if loss is not None else 0.0, -(c.decode_tokens_per_s_max or 0.0),
            c.needed_bytes, c.gpus_used)


def plan(a: Architecture, hardware: list[Hardware], req: Requirements, engines: tuple[str, ...] = tuple(GRID)) -> Plan:
    """Every configuration of `engines` on every hardware choice, estimated and ranked."""
    from memviz.core.inventory import parameter_count

    unknown = [e for e in engines if e not in GRID]
    if unknown:
        raise InputError(f"the planner knows the engines {', '.join(GRID)}, not {', '.join(unknown)}")
    parameters_b = parameter_count(a) / 1e9
    context = req.context_tokens
    if a.max_position_embeddings and context > a.max_position_embeddings:
        raise InputError(f"{context:,d} tokens per sequence exceed {a.name}'s {a.max_position_embeddings:,d} positions")
    kept, rejected, refusals = [], [], Counter()
    for hw in hardware:
        for engine in engines:
            weights, kvs = GRID[engine]
            if engine in ("vllm", "transformers") and a.native_format and a.native_format not in weights:
                weights = (a.native_format, *weights)  # the checkpoint as released (gpt-oss MXFP4, DeepSeek FP8,
                # BitNet's packed ternary weights, which only transformers loads)
            if engine == "llamacpp" and a.model_type == "bitnet":
                weights = (*weights, *TERNARY_MIXES)  # a ternary model's own GGUF types
            for wf in weights:
                for kv in kvs:
                    base = Scenario(weight_format=wf, kv_format=kv, context_tokens=context, batch=req.concurrency,
                                    engine=engine, gpu=hw.gpu.key)
                    for tp, pp in _splits(engine, a, hw):
                        est = _estimate(a, base.with_changes(tp=tp, pp=pp), refusals)
                        if est is None:
                            continue
                        whole_node = tp * pp == hw.gpus_per_node  # offloading beside an idle GPU is never better
                        if engine in OFFLOAD_ENGINES and hw.host_ram_bytes and whole_node and not _fits(est, hw, req):
                            est = _experts_offloaded(a, est.scenario, hw, req) or _offloaded(a, est.scenario, hw, req) or est
                        c = _candidate(est, hw, req, parameters_b)
                        (rejected if c.problem else kept).append(c)
    return Plan(a, req, tuple(hardware), tuple(sorted(kept, key=rank_key)), tuple(rejected),
                tuple(msg for msg, _ in refusals.most_common()))


def launch_command(c: Candidate, model: str | None = None) -> str:
    """The engine's command for the candidate, with the multi-node setup where it spans nodes."""
    cmd = c.estimate.launch_command(model)
    sc, hw = c.scenario, c.hardware
    if c.gpus_used <= hw.gpus_per_node:
        return cmd
    if sc.engine == "vllm":
        return ("# on every node: a Ray cluster (ray start --head / ray start --address=HEAD:6379)\n"
                f"{cmd} --distributed-executor-backend ray")
    workers = ",".join(f"NODE{i}:50052" for i in range(2, hw.nodes + 1))
    return (f"# on each other node: rpc-server --host 0.0.0.0 --port 50052 (llama.cpp built with -DGGML_RPC=ON)\n"
            f"{cmd} --rpc {workers}")


def pareto_front(candidates: list[Candidate] | tuple[Candidate, ...]) -> list[Candidate]:
    """The candidates with quality evidence that no other beats on both memory per GPU and quality loss
    (ties on both keep the faster decode bound), in increasing memory."""
    pts = sorted((c for c in candidates if c.quality.loss_pct is not None),
                 key=lambda c: (c.needed_bytes, c.quality.loss_pct, -(c.decode_tokens_per_s_max or 0)))
    front: list[Candidate] = []
    for c in pts:
        if not front or c.quality.loss_pct < front[-1].quality.loss_pct:
            front.append(c)
    return front
