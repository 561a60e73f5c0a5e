"""Every outside input of the core, fuzzed (hypothesis): config.json fields, session files, stored probe runs,
and their hostile cases — each answer is a result or one InputError, never another exception. The case
counts and the slowest case of each surface: `pytest tests/core/test_hostile_inputs.py
--hypothesis-show-statistics`."""

import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memviz.core import calibration
from memviz.core.arch import Architecture, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset
from memviz.core.session import Session

PRESETS = Path(__file__).parents[2] / "memviz" / "data" / "presets"
CONFIGS = [json.loads(f.read_text())["config"] for f in sorted(PRESETS.glob("*.json"))]

numbers = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True), st.just(0),
                    st.just(-1), st.just(2**63), st.booleans())
json_value = st.recursive(st.none() | numbers | st.text(max_size=8),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                          max_size=3), max_leaves=6)
HOSTILE = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture])


def _config_case(draw):
    cfg = dict(draw(st.sampled_from(CONFIGS)))
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(sorted(cfg)) | st.text(max_size=12))
        cfg[key] = draw(json_value)
    return cfg


config_case = st.composite(lambda draw: _config_case(draw))()


@HOSTILE
@given(cfg=config_case)
def test_config_fields_of_any_value_give_a_model_or_one_error(cfg):
    try:
        a = from_hf_config(cfg)
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc).strip()
        return
    assert isinstance(a, Architecture)
    try:  # what imports also has to estimate without a traceback
        est = estimate(a, Scenario(context_tokens=min(1024, a.max_position_embeddings or 1024)))
    except InputError:
        return
    assert est.total > 0


def _session_dict() -> dict:
    a = get_preset("qwen2.5-0.5b").architecture()
    return Session(a, (Scenario(context_tokens=1024), Scenario(weight_format="Q4_K_M", engine="llamacpp"))).to_dict()


PATHS = [("scenarios", 0, "context_tokens"), ("scenarios", 1, "engine"), ("scenarios", 0, "options"),
         ("scenarios", 0, "gpu"), ("architecture", "num_layers"), ("architecture", "layer_types"), ("gpus",),
         ("unit",), ("runs",), ("scenarios",), ("architecture", "hidden_size"), ("scenarios", 0, "sequence_tokens"),
         ("format_version",), ("architecture",), ("scenarios", 0, "batch")]


@HOSTILE
@given(path=st.sampled_from(PATHS), value=json_value)
def test_session_files_with_any_field_replaced_open_or_are_one_error(path, value):
    d = _session_dict()
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        s = Session.from_dict(json.loads(json.dumps(d)))
    except InputError as exc:
        assert str(exc)
        return
    for sc in s.scenarios:  # what the window estimates before it takes the session: a result or one error
        try:
            estimate(s.architecture, sc)
        except InputError as exc:
            assert str(exc)


@pytest.mark.parametrize(("change", "needle"), [
    (lambda d: d["architecture"].update(num_layers=100_000, layer_types=["full_attention"] * 100_000), "num_layers"),
    (lambda d: d.update(scenarios=[d["scenarios"][0]] * 1001), "scenarios"),
    (lambda d: d.update(gpus=["h999"]), "GPU"),
    (lambda d: d["scenarios"][0].update(context_tokens=1e19), "context_tokens"),
])
def test_sessions_beyond_the_limits_are_refused_before_anything_is_replaced(change, needle):
    d = _session_dict()
    change(d)
    with pytest.raises(InputError, match=needle):
        Session.from_dict(d)


@HOSTILE
@given(doc=json_value)
def test_any_stored_run_file_is_skipped_and_named(tmp_path_factory, doc):
    folder = tmp_path_factory.mktemp("runs")
    (folder / "20260101-000000-abcdef.json").write_text(json.dumps(doc))
    skipped: list[str] = []
    runs = calibration.load_runs(folder, skipped)
    assert len(runs) + len(skipped) == 1


def _result(i: int) -> dict:
    return {"partial": False, "measured": {"weights": 100 + i, "kv_cache": 10, "activations": 5, "overhead": 50,
                                           "peak": 165 + i},
            "estimate": {"weights": 100, "kv_cache": 10, "activations": 6, "overhead": 40, "peak": 156},
            "timings": {"ttft_s": 0.1, "decode_tokens_per_s": 10.0}, "scenario": Scenario(device="cpu").to_dict()}


def test_concurrent_stores_all_land_whole(tmp_path):
    """Eight threads store 25 runs each into one folder: 200 whole files, none torn."""
    env = {"device": "cpu", "device_name": "x", "engine": "transformers"}
    errors: list[Exception] = []

    def store(k: int) -> None:
        try:
            for i in range(25):
                calibration.save_run(env, _result(k * 25 + i), tmp_path)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=store, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    skipped: list[str] = []
    runs = calibration.load_runs(tmp_path, skipped)
    assert not errors and not skipped and len(runs) == 200 and len({r.id for r in runs}) == 200


def test_an_unwritable_runs_folder_is_an_os_error_and_reads_as_empty(tmp_path):
    """A data folder that cannot be written (here a file where the folder should be: refused even to root, whom
    a read-only mode does not stop): storing raises OSError, which the probe reports without losing its
    result (memviz.probe.runner), and reading finds no runs."""
    blocked = tmp_path / "runs"
    blocked.write_text("not a folder")
    with pytest.raises(OSError):
        calibration.save_run({"device": "cpu"}, _result(0), blocked)
    assert calibration.load_runs(blocked) == []


def test_every_whole_number_field_is_bounded():
    """Each of the architecture's whole-number fields refuses 2**63 in one line, without building anything of that
    size first (a fuzzed DeepSeek-V4 config's index_head_dim of 2**63 overflowed numpy in the KV sum; a layer
    count of 2**63 sized the per-layer lists before validation)."""
    import dataclasses

    a = get_preset("llama-3.1-8b").architecture()
    for f in dataclasses.fields(Architecture):
        if f.type in ("int", "int | None"):
            with pytest.raises(InputError, match=f.name):
                a.with_changes(**{f.name: 2**63})
    cfg = json.loads((PRESETS / "deepseek-v4-flash-base.json").read_text())["config"]
    with pytest.raises(InputError, match="indexer_head_dim"):
        from_hf_config({**cfg, "index_head_dim": 2**63})


def test_a_count_of_streams_listed_one_by_one_is_bounded_before_anything_is_built():
    """AltUp's streams are tensors memviz lists one by one: a fuzzed Gemma 3n config with altup_num_inputs of
    10**9 (within the whole-number bound) held 24 GB before the OOM killer stopped it; it is one InputError now."""
    from tests.core.engines.test_gemma3n import E2B

    assert from_hf_config({**E2B, "altup_num_inputs": 4}).altup_inputs == 4
    for streams in (1, 65, 10**9):
        with pytest.raises(InputError, match="altup_num_inputs must be from 2 to 64"):
            from_hf_config({**E2B, "altup_num_inputs": streams})


@pytest.mark.parametrize(("cfg", "needle"), [
    ({"model_type": "bamba", "num_hidden_layers": 2**31 - 1, "attn_layer_indices": [1]}, "num_hidden_layers"),
    ({"model_type": "chameleon", "vq_config": {"num_res_blocks": 10**7}}, "num_res_blocks"),
    ({"model_type": "chameleon", "vq_config": {"channel_multiplier": [1] * 10**6}}, "channel_multiplier"),
    ({"model_type": "janus", "vq_config": {"channel_multiplier": [1, "2"]}}, "channel_multiplier")])
def test_counts_looped_over_are_bounded_before_the_loop(cfg, needle):
    """A fuzz of transformers' default configs (25 mutations of each of 230 types) found two inputs that ran for
    minutes: Bamba's layer types listed for 2**31 - 1 layers before the layer count was checked, and a VQ-GAN's
    resnet blocks counted one by one for num_res_blocks of 10**7. Each is one InputError now."""
    text = {"hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
            "num_hidden_layers": 2}
    with pytest.raises(InputError, match=needle):
        from_hf_config({**text, **cfg})


def test_fuzzed_tower_and_layer_fields_are_one_error():
    """Two more the fuzz found: a Qwen3.5 vision tower whose merged token outgrows the largest image (a
    StopIteration from the token search) and Mistral Large 4's kv_source_layers given as a number (a TypeError)."""
    from memviz.core.towers import most_tokens

    with pytest.raises(InputError, match="larger than the largest image"):
        most_tokens(16_777_216, 10**6)
    assert most_tokens(16_777_216, 32) == 16_384
    cfg = {"model_type": "mistral_large4_text", "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
           "num_hidden_layers": 2, "intermediate_size": 128, "kv_source_layers": 0}
    with pytest.raises(InputError, match="kv_source_layers"):
        from_hf_config(cfg)
