import pytest

from memviz.core import calibration as cal
from memviz.core.errors import InputError

ENV = {"device": "cpu", "device_name": "x86_64", "driver": None, "torch": "2.13", "transformers": "5.24", "dtype": "fp32",
       "engine": "transformers", "batch": 2, "prompt": 128, "new": 8}


def result(overhead, peak, est_peak):
    return {"partial": False, "measured": {"weights": 1, "kv_cache": 1, "activations": 1, "overhead": overhead, "peak": peak},
            "estimate": {"weights": 1, "kv_cache": 1, "activations": 1, "overhead": 1, "peak": est_peak}, "timings": {},
            "model": "m", "context_tokens": 135}


def test_store_list_calibrate_export_delete(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMVIZ_DATA_DIR", str(tmp_path))
    a = cal.save_run(ENV, result(400, 1000, 950))
    cal.save_run(ENV, result(420, 1000, 1080))
    cal.save_run(ENV, result(410, 1000, 1000))
    runs = cal.load_runs()
    assert len(runs) == 3 and runs[0].machine["torch"] == "2.13"
    assert cal.calibrated_overhead(runs, "cpu") == 410
    assert cal.residual_band(runs, "cpu") == pytest.approx(0.08)
    assert cal.calibrated_overhead(runs, "cuda") is None and cal.residual_band(runs, "cuda") is None
    out = cal.export_runs(tmp_path / "all.json")
    assert out.read_text().count('"id"') == 3
    cal.delete_run(a.id)
    assert len(cal.load_runs()) == 2
    with pytest.raises(InputError):
        cal.delete_run("../etc")
    (tmp_path / "runs" / "broken.json").write_text("{")
    assert len(cal.load_runs()) == 2


def test_partial_runs_are_not_stored(tmp_path):
    with pytest.raises(InputError):
        cal.save_run(ENV, {**result(1, 2, 3), "partial": True}, tmp_path)


def test_bitsandbytes_runs_calibrate_bitsandbytes_scenarios_only(tmp_path):
    from memviz.core.estimate import Scenario

    cal.save_run(ENV, result(350, 1000, 1000), tmp_path)
    cal.save_run({**ENV, "quant": "bnb-nf4"}, result(430, 1000, 900), tmp_path)
    runs = cal.load_runs(tmp_path)
    assert cal.calibrated_overhead(runs, "cpu") == 350
    assert cal.calibrated_overhead(runs, "cpu+bitsandbytes") == 430
    assert cal.residual_band(runs, "cpu+bitsandbytes") == pytest.approx(0.1)
    assert cal.scenario_calibration_key(Scenario(device="cpu", weight_format="bnb-nf4")) == "cpu+bitsandbytes"
    assert cal.scenario_calibration_key(Scenario(device="cuda", weight_format="llm-int8")) == "cuda+bitsandbytes"
    assert cal.scenario_calibration_key(Scenario(device="cpu", weight_format="gptq-int4")) == "cpu"


def test_runs_calibrate_their_own_engine_only(tmp_path):
    from memviz.core.estimate import Scenario

    cal.save_run(ENV, result(400, 1000, 950), tmp_path)
    cal.save_run({**ENV, "engine": "llamacpp"}, result(60, 70, 160), tmp_path)
    runs = cal.load_runs(tmp_path)
    assert cal.calibrated_overhead(runs, "cpu") == 400
    assert cal.calibrated_overhead(runs, "llamacpp:cpu") == 60
    key = cal.scenario_calibration_key(Scenario(engine="llamacpp", device="cpu", kv_format="fp16"))
    assert key == "llamacpp:cpu" and key in cal.CALIBRATION_KEYS
    assert cal.calibrated_overhead(runs, cal.scenario_calibration_key(Scenario(engine="vllm"))) is None


def test_stored_runs_are_parsed_like_every_measured_run(tmp_path):
    import json

    from memviz.core.estimate import Scenario

    good = cal.save_run(ENV, {**result(400, 1000, 950), "scenario": Scenario(batch=2).to_dict()}, tmp_path)
    bad = json.loads((tmp_path / f"{good.id}.json").read_text())
    bad["id"], bad["measured"]["peak"] = "bad", -5
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    runs = cal.load_runs(tmp_path)
    assert [r.id for r in runs] == [good.id]  # the damaged one is skipped, not half-read
    run = runs[0].measured_run()
    assert run.scenario.batch == 2 and run.measured["overhead"] == 400 and run.stored_run == good.id


@pytest.mark.parametrize("damage", [{"machine": []}, {"settings": None}, {"measured": "x"}, {"created": "soon"},
                                    {"measured": {"peak": -1}}, {"timings": {"ttft_s": "x"}}, {"id": None}])
def test_a_damaged_run_file_is_skipped_and_named(tmp_path, damage):
    import json

    good = cal.save_run(ENV, result(400, 1000, 950), tmp_path)
    data = json.loads((tmp_path / f"{good.id}.json").read_text())
    data.update(damage)
    (tmp_path / "damaged.json").write_text(json.dumps(data))
    skipped: list[str] = []
    runs = cal.load_runs(tmp_path, skipped)
    assert [r.id for r in runs] == [good.id]
    assert len(skipped) == 1 and skipped[0].startswith("damaged.json")
