"""Edits of a session that follow rules: each takes a Session and returns the next one.

The window applies them through its undo history; tests and scripts call them
without Qt. Nothing here reads or writes files except `read_calibration`, which
reads the stored probe runs once for the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from memviz.core.arch import Architecture
from memviz.core.engines import default_engine, get_engine, quantized_gguf
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.runs import MeasuredRun, settings_key
from memviz.core.session import Session


def switch_architecture(session: Session, a: Architecture, preset: str | None) -> Session:
    """The session on model `a`: scenarios on a file's own tensors fall back to bf16 without one; contexts
    beyond its positions are shortened to them (unless a scenario asks to extrapolate); an imported file adds
    a scenario "as stored in the file" (run by llama.cpp when the file is a quantized GGUF), a pre-quantized
    release (gpt-oss MXFP4, DeepSeek FP8) one "as released" in vLLM; a scenario whose engine does not run the model
    (vLLM and DeepSeek-V4) moves to the engine its format defaults to, where that one runs it, and one no engine
    runs in its format (a GGUF mix of a model llama.cpp has no architecture for) is left out (`unrunnable` says
    which and why); were none left, one of bf16 on transformers takes their place."""
    kept = tuple(_placed(sc, a) for sc in session.scenarios)
    scenarios = tuple(sc for sc in kept if not _refuses(sc, a))
    if kept and not scenarios:
        scenarios = (kept[0].with_changes(name="", weight_format="bf16", engine="transformers", kv_format="bf16",
                                          options=(), tp=1, pp=1, gpu_layers=None, kv_offload=False),)
    if a.stored and not any(sc.weight_format == "stored" for sc in scenarios):
        gguf = quantized_gguf(a)
        base = scenarios[0] if scenarios else Scenario()
        engine = "llamacpp" if gguf else base.engine
        kv = get_engine(engine).default_kv_format if gguf else base.kv_format  # llama.cpp's f16 cache, as the CLI's
        scenarios = (base.with_changes(name="as stored in the file", weight_format="stored", engine=engine,
                                       kv_format=kv, tp=1),) + scenarios
    if a.native_format and not a.stored and not any(sc.weight_format == a.native_format for sc in scenarios):
        base = scenarios[0] if scenarios else Scenario()  # a pre-quantized release, as vLLM loads it
        released = base.with_changes(name="as released", weight_format=a.native_format,
                                     engine=default_engine(a.native_format, a.native_format), tp=1, gpu_layers=None,
                                     kv_offload=False)
        scenarios = (_runnable(released, a),) + scenarios
    if a != session.architecture:  # runs measured another model go, and so do the links to them
        scenarios = tuple(sc.with_changes(run_id=None) for sc in scenarios)
        return session.with_changes(architecture=a, preset=preset, scenarios=scenarios, runs=())
    return session.with_changes(architecture=a, preset=preset, scenarios=scenarios)


def unrunnable(session: Session, a: Architecture) -> list[str]:
    """Why each of the session's scenarios that `switch_architecture` leaves out cannot run model `a`."""
    return [why for sc in session.scenarios if (why := _refusal(_placed(sc, a), a))]


def _placed(sc: Scenario, a: Architecture) -> Scenario:
    """`sc` on model `a`: bf16 where it ran a file's own tensors and `a` has none, within its positions, on an engine
    that runs it where its own does not (`_runnable`)."""
    own = sc.with_changes(weight_format="bf16") if sc.weight_format == "stored" and not a.stored else sc
    return _runnable(_within_positions(own, a), a)


def _runnable(sc: Scenario, a: Architecture) -> Scenario:
    """`sc`, or `sc` on its format's default engine when its own refuses model `a` and that one does not."""
    fallback = default_engine(sc.weight_format)
    if fallback == sc.engine or not _refuses(sc, a):
        return sc
    moved = sc.with_changes(engine=fallback, options=())
    return sc if _refuses(moved, a) else moved


def _refuses(sc: Scenario, a: Architecture) -> bool:
    """Whether the scenario's engine refuses model `a` with its options (`Engine.check`)."""
    return _refusal(sc, a) is not None


def _refusal(sc: Scenario, a: Architecture) -> str | None:
    """The scenario's engine's refusal of model `a` with its options (`Engine.check`), or None."""
    engine = get_engine(sc.engine)
    try:
        engine.check(a, sc, engine.resolve(dict(sc.options)))
    except InputError as exc:
        return str(exc)
    return None


def _within_positions(sc: Scenario, a: Architecture) -> Scenario:
    limit = a.max_position_embeddings
    if not limit or sc.extrapolate or sc.longest_sequence <= limit:
        return sc
    return sc.with_changes(context_tokens=min(sc.context_tokens, limit),
                           sequence_tokens=tuple(min(t, limit) for t in sc.sequence_tokens))


def attach_run(session: Session, run: MeasuredRun) -> Session:
    """Link `run` to the scenario with its settings (adding that scenario if the session has none); the run
    that scenario linked to before is dropped."""
    key = settings_key(run.scenario)
    index = next((i for i, sc in enumerate(session.scenarios) if settings_key(sc) == key), None)
    scenarios = list(session.scenarios)
    if index is None:
        scenarios.append(run.scenario)
        index = len(scenarios) - 1
    old = scenarios[index].run_id
    scenarios[index] = scenarios[index].with_changes(run_id=run.id)
    attached = replace(run, scenario=settings_key(run.scenario))
    runs = tuple(r for r in session.runs if r.id not in (old, run.id)) + (attached,)
    return session.with_changes(scenarios=tuple(scenarios), runs=runs)


def adopt_llamacpp_log(session: Session, text: str) -> Session:
    """The model and the load a llama.cpp log reports, as the session's model and a scenario with the log's
    buffers attached as its measured run (`memviz.core.importers.llamacpp_log`)."""
    from memviz.core.importers.llamacpp_log import architecture_of, read_llamacpp_load, scenario_of
    from memviz.core.importers.logs import parse_log

    load = read_llamacpp_load(text)
    a = architecture_of(load)
    sc = scenario_of(load, a).with_changes(name="from the llama.cpp log")
    run = MeasuredRun.from_log("llamacpp", parse_log(text).bytes, sc)
    return attach_run(switch_architecture(session, a, None), run)


def adopt_vllm_log(session: Session, text: str, gpu: str) -> Session:
    """The settings a vLLM log reports, on the session's model and `gpu` (the log names neither), as a scenario
    with the log's figures attached as its measured run (`memviz.core.importers.vllm_log`)."""
    from memviz.core.importers.logs import parse_log
    from memviz.core.importers.vllm_log import vllm_scenario

    sc = vllm_scenario(text, session.architecture, gpu).with_changes(name="from the vLLM log")
    return attach_run(session, MeasuredRun.from_log("vllm", parse_log(text).bytes, sc))


@dataclass(frozen=True)
class Calibration:
    """What the stored probe runs of this machine teach, by calibration key (`calibration_key`)."""

    overhead: dict[str, int | None] = field(default_factory=dict)  # median measured overhead, bytes
    band: dict[str, float | None] = field(default_factory=dict)  # largest peak error, a fraction


def attach_mmproj(session: Session, encoders: tuple) -> Session:
    """The session's model with the encoders of an mmproj file (`gguf_file.read_mmproj`) in place of its own, and
    every llama.cpp / Ollama scenario loading it (option mmproj, llama-server --mmproj)."""
    a = session.architecture.with_changes(encoders=tuple(encoders))
    scenarios = tuple(sc.with_changes(options=tuple(sorted({**dict(sc.options), "mmproj": True}.items())))
                      if get_engine(sc.engine).has_option("mmproj") else sc for sc in session.scenarios)
    return session.with_changes(architecture=a, scenarios=scenarios)


def read_calibration(folder: Path | None = None) -> Calibration:
    from memviz.core import calibration

    runs = calibration.load_runs(folder)
    return Calibration({k: calibration.calibrated_overhead(runs, k) for k in calibration.CALIBRATION_KEYS},
                       {k: calibration.residual_band(runs, k) for k in calibration.CALIBRATION_KEYS})


def apply_calibrated_overhead(session: Session, cal: Calibration) -> Session:
    """Each scenario's runtime overhead set to the calibrated value of its group (engine, device,
    bitsandbytes); scenarios without runs of their group are unchanged."""
    from memviz.core.calibration import scenario_calibration_key

    def calibrated(sc: Scenario) -> int | None:
        return cal.overhead.get(scenario_calibration_key(sc))

    return session.with_changes(scenarios=tuple(
        sc.with_changes(runtime_overhead_bytes=calibrated(sc), allocator_fraction=0.0) if calibrated(sc) is not None
        else sc for sc in session.scenarios))


def probe_source(session: Session, engine: str = "transformers") -> tuple[list[str], str]:
    """What the probe of `engine` can run for the session's model: a preset, a config.json, a GGUF file
    (llama.cpp), else nothing — with a description for the user."""
    a = session.architecture
    if session.preset:
        return ["--preset", session.preset], f"preset {session.preset} (random-initialised weights, no download)"
    path = Path(a.source) if a.source and not a.source.startswith("preset ") else None
    if path is not None and path.is_file() and path.suffix.lower() == ".gguf":
        if engine == "llamacpp":
            return ["--gguf", str(path)], f"{path} (the GGUF file itself)"
        return [], f"{path} is a GGUF file: measure it with the llama.cpp engine"
    if path is not None and path.is_file() and path.suffix.lower() == ".json" and not path.name.endswith(".index.json"):
        return ["--config", str(path)], f"{path} (random-initialised weights)"
    if path is not None and path.exists():
        folder = path if path.is_dir() else path.parent
        if (folder / "config.json").exists():
            return ["--config", str(folder / "config.json")], f"{folder / 'config.json'} (random-initialised weights)"
    return [], ("the current model has no preset or config.json the probe can build (hand-edited models): "
                "give a model folder or a GGUF file")


def set_shape(session: Session, context_tokens: int, sequences: int, rows: list[int] | None = None) -> Session:
    """Every scenario (or those at `rows`) at `context_tokens` per sequence and `sequences` at once; per-sequence
    lengths are replaced by the uniform shape."""
    chosen = set(range(len(session.scenarios)) if rows is None else rows)
    return session.with_changes(scenarios=tuple(
        sc.with_changes(context_tokens=context_tokens, batch=sequences, sequence_tokens=()) if i in chosen else sc
        for i, sc in enumerate(session.scenarios)))


def sort_by_total(session: Session, totals: list[int]) -> Session:
    """Scenarios in increasing order of `totals` (their estimates' bytes, in the session's order)."""
    order = sorted(range(len(session.scenarios)), key=lambda i: totals[i])
    return session.with_changes(scenarios=tuple(session.scenarios[i] for i in order))


def add_planned(session: Session, scenarios: list[Scenario], gpus: list[str]) -> Session:
    """Planner candidates appended to the scenario table (each keeps its engine, formats, split and GPU), and
    their GPUs added to the session's capacity lines."""
    known = set(session.scenarios)
    added = tuple(sc for sc in scenarios if sc not in known)
    return session.with_changes(scenarios=session.scenarios + added,
                                gpus=tuple(dict.fromkeys([*session.gpus, *gpus])))
