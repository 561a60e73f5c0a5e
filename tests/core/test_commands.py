"""The session edits the window applies, called without Qt."""

from memviz.core import commands
from memviz.core.estimate import Scenario
from memviz.core.presets import get_preset
from memviz.core.runs import MeasuredRun
from memviz.core.session import Session

LLAMA = get_preset("llama-3.2-1b").architecture()


def session(*scenarios: Scenario) -> Session:
    return Session(architecture=LLAMA, preset="llama-3.2-1b", scenarios=scenarios or (Scenario(),))


def test_attach_run_links_by_id_and_replaces_the_older_run():
    s = session(Scenario(name="mine", batch=1))
    s = commands.attach_run(s, MeasuredRun("a", "probe", Scenario(batch=1), {"weights": 1}))
    assert len(s.scenarios) == 1 and s.scenarios[0].run_id == "a" and s.scenarios[0].name == "mine"
    s = commands.attach_run(s, MeasuredRun("b", "probe", Scenario(batch=1), {"weights": 2}))
    assert [r.id for r in s.runs] == ["b"] and s.scenarios[0].run_id == "b"
    s = commands.attach_run(s, MeasuredRun("c", "probe", Scenario(batch=4), {"weights": 3}))
    assert len(s.scenarios) == 2 and [r.id for r in s.runs] == ["b", "c"]


def test_a_renamed_scenario_keeps_its_run_and_an_edited_one_shows_it_stale():
    from memviz.core.runs import for_scenario, is_stale

    s = commands.attach_run(session(Scenario(batch=1)), MeasuredRun("a", "probe", Scenario(batch=1), {"weights": 1}))
    renamed = s.scenarios[0].with_changes(name="renamed")
    assert for_scenario(s.runs, renamed).id == "a" and not is_stale(s.runs[0], renamed)
    edited = s.scenarios[0].with_changes(gpu="h100-80g")
    assert for_scenario(s.runs, edited).id == "a" and is_stale(s.runs[0], edited)


def test_switching_model_drops_runs_and_their_links():
    s = commands.attach_run(session(Scenario()), MeasuredRun("a", "probe", Scenario(), {"weights": 1}))
    other = commands.switch_architecture(s, get_preset("qwen2.5-0.5b").architecture(), "qwen2.5-0.5b")
    assert other.runs == () and all(sc.run_id is None for sc in other.scenarios)


def test_switching_to_an_imported_gguf_adds_a_stored_llamacpp_scenario(tmp_path):
    from memviz.core.arch import StoredTensor

    gguf = LLAMA.with_changes(stored=(StoredTensor("blk.0.attn_q.weight", (2048, 2048), "attention", 0, "Q4_K", 10),),
                              source=str(tmp_path / "m.gguf"))
    s = commands.switch_architecture(session(Scenario(weight_format="stored")), gguf, None)
    assert s.scenarios[0].weight_format == "stored"
    s = commands.switch_architecture(session(Scenario()), gguf, None)
    assert s.scenarios[0].engine == "llamacpp" and s.scenarios[0].name == "as stored in the file"
    back = commands.switch_architecture(s, LLAMA, "llama-3.2-1b")
    assert all(sc.weight_format != "stored" for sc in back.scenarios)


def test_switching_to_a_pre_quantized_release_adds_it_as_released():
    """gpt-oss ships MXFP4 experts: the session shows the release beside the user's scenarios, once."""
    gpt_oss = get_preset("gpt-oss-20b").architecture()
    s = commands.switch_architecture(session(Scenario()), gpt_oss, "gpt-oss-20b")
    first = s.scenarios[0]
    assert (first.name, first.weight_format, first.engine) == ("as released", "mxfp4-moe", "vllm")
    assert len(commands.switch_architecture(s, gpt_oss, "gpt-oss-20b").scenarios) == len(s.scenarios)


def test_calibrated_overhead_applies_per_engine_group():
    s = session(Scenario(device="cpu"), Scenario(engine="llamacpp", device="cpu", kv_format="fp16"), Scenario())
    cal = commands.Calibration(overhead={"cpu": 400, "llamacpp:cpu": 60})
    out = commands.apply_calibrated_overhead(s, cal)
    assert [sc.runtime_overhead_bytes for sc in out.scenarios] == [400, 60, None]
    assert commands.apply_calibrated_overhead(s, commands.Calibration()) == s


def test_probe_source_names_a_gguf_for_llamacpp_only(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    s = Session(architecture=LLAMA.with_changes(source=str(f)), scenarios=(Scenario(),))
    assert commands.probe_source(s, "llamacpp")[0] == ["--gguf", str(f)]
    assert commands.probe_source(s, "transformers")[0] == []
    assert commands.probe_source(session(), "transformers")[0] == ["--preset", "llama-3.2-1b"]


def test_switching_model_keeps_contexts_within_its_positions():
    gpt2 = get_preset("gpt2").architecture()
    s = commands.switch_architecture(session(Scenario(context_tokens=8192), Scenario(context_tokens=512),
                                             Scenario(context_tokens=8192, extrapolate=True)), gpt2, "gpt2")
    assert [sc.context_tokens for sc in s.scenarios] == [1024, 512, 8192]



def test_switching_to_a_model_an_engine_refuses_moves_its_scenarios_to_their_formats_engine():
    """vLLM does not run DeepSeek-V4 in memviz: its rows move to the engine their format defaults to (transformers for
    fp8, llama.cpp for a GGUF mix), so the model loads; the other rows stay as they were, and a switch back keeps
    the moved rows where they went (undo restores them). vLLM 0.34 runs no GGUF file at all: that row moves for
    Llama too."""
    from memviz.core.estimate import estimate

    v4 = get_preset("deepseek-v4-flash-base").architecture()
    s = session(Scenario(engine="vllm", weight_format="fp8"), Scenario(engine="llamacpp", weight_format="Q4_K_M"),
                Scenario(engine="vllm", weight_format="Q4_K_M"))
    moved = commands.switch_architecture(s, v4, "deepseek-v4-flash-base")
    assert [sc.engine for sc in moved.scenarios] == ["transformers", "llamacpp", "llamacpp"]
    assert all(estimate(v4, sc).total > 0 for sc in moved.scenarios)
    assert [sc.engine for sc in commands.switch_architecture(s, LLAMA, "llama-3.2-1b").scenarios] == [
        "vllm", "llamacpp", "llamacpp"]


def test_a_release_vllm_does_not_run_opens_on_its_formats_engine():
    """DeepSeek-V4-Flash's release config (FP8 layers, FP4 experts): the "as released" scenario goes to vLLM, which
    memviz does not model for DeepSeek-V4, so it opens in transformers, and the model loads."""
    from memviz.core.arch import from_hf_config
    from memviz.core.estimate import estimate

    cfg = {**get_preset("deepseek-v4-flash-base").config, "expert_dtype": "fp4",
           "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
    v4 = from_hf_config(cfg)
    s = commands.switch_architecture(session(Scenario(engine="vllm", weight_format="fp8")), v4, None)
    released = s.scenarios[0]
    assert (released.name, released.weight_format, released.engine) == (
        "as released", "fp8-block-mxfp4-moe", "transformers")
    assert all(estimate(v4, sc).total > 0 for sc in s.scenarios)


def test_an_mmproj_file_replaces_the_encoders_and_is_loaded_by_llamacpp_scenarios_only():
    from memviz.core.towers import VISION, Encoder

    a = get_preset("gemma-3-27b").architecture()
    s = Session(architecture=a, scenarios=(Scenario(engine="vllm"), Scenario(engine="llamacpp", weight_format="Q4_K_M",
                                                                           options=(("n_ubatch", 256),))))
    tower = Encoder(VISION, "mmproj pixtral", 10, (), 20, "/models/mmproj.gguf")
    out = commands.attach_mmproj(s, (tower,))
    assert out.architecture.encoders == (tower,)
    assert out.scenarios[0] == s.scenarios[0]
    assert dict(out.scenarios[1].options) == {"n_ubatch": 256, "mmproj": True}


def test_rows_no_engine_runs_for_the_new_model_are_left_out_and_named():
    """A GGUF mix of a model llama.cpp has no architecture for has no engine to move to: left out, with the reason;
    a session of only such rows keeps one bf16 row on transformers."""
    from memviz.core.arch import from_hf_config
    from tests.core.engines.test_longcat_flash import RELEASED

    longcat = from_hf_config(RELEASED)
    s = session(Scenario(name="gguf", engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16"),
                Scenario(name="bf16", engine="vllm"))
    assert [sc.name for sc in commands.switch_architecture(s, longcat, None).scenarios] == ["bf16"]
    (why,) = commands.unrunnable(s, longcat)
    assert "cannot run longcat_flash" in why
    only = commands.switch_architecture(session(s.scenarios[0]), longcat, None).scenarios
    assert [(sc.engine, sc.weight_format) for sc in only] == [("transformers", "bf16")]
    assert commands.unrunnable(session(Scenario(engine="vllm")), longcat) == []
