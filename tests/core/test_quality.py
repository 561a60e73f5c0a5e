"""Quality evidence: every bundled record loads, validates and carries a source; matching says how close it is."""

import json

import pytest

from memviz.core.errors import InputError
from memviz.core.presets import get_preset
from memviz.core.quality import evidence, match, parse_evidence, quality


def test_every_record_has_a_source_and_sane_numbers():
    records = evidence()
    assert len(records) >= 50
    for e in records:
        assert e.source_url.startswith("https://") and e.source_title and e.metric
        assert e.kind in ("weights", "kv") and e.parameters_b > 0 and e.baseline > 0
        assert -5 < e.loss_pct < 1000


def test_llama3_8b_q4_k_m_is_the_scoreboards_figure():
    """llama.cpp's scoreboard: Q4_K_M without imatrix 6.407115 against f16 6.233160 − its own 0.001524."""
    m = match("Q4_K_M", "weights", get_preset("llama-3.1-8b").architecture(), 8.0)
    assert m.closeness == "same family" and m.evidence.model == "Llama-3-8B"
    assert m.loss_pct == pytest.approx((6.407115 / 6.231636 - 1) * 100)


def test_size_decides_within_a_family():
    a70 = get_preset("llama-3.1-70b").architecture()
    assert match("Q4_K_M", "weights", a70, 70.6).evidence.model == "Llama-2-70B"
    assert match("Q4_K_M", "weights", get_preset("llama-3.1-8b").architecture(), 8.0).evidence.model == "Llama-3-8B"


def test_reference_no_evidence_and_other_families_are_said():
    a = get_preset("qwen3-8b").architecture()
    assert match("bf16", "weights", a, 8.2).loss_pct == 0 and match("fp16", "kv", a, 8.2).closeness == "reference"
    none = match("bnb-nf4", "weights", a, 8.2)
    assert none.closeness == "no evidence" and none.loss_pct is None
    q = quality(a, "bnb-nf4", "bf16", 8.2)
    assert q.loss_pct is None and q.tier == 2
    borrowed = quality(a, "Q8_0", "fp16", 8.2)
    assert borrowed.weights.closeness == "another model" and borrowed.tier == 1 and "another model" in borrowed.describe()
    assert match("q4_0", "kv", a, 8.2).closeness == "no evidence"  # nothing read for a q4_0 cache: said, not guessed


def test_benchmark_loss_is_relative_to_the_16_bit_score():
    m = match("fp8", "weights", get_preset("llama-3.1-70b").architecture(), 70.6)
    assert m.evidence.higher_is_better and m.loss_pct == pytest.approx((m.evidence.baseline - m.evidence.value)
                                                                         / m.evidence.baseline * 100)


@pytest.mark.parametrize("mutate", [
    lambda r: r.pop("source"), lambda r: r["source"].update(url="http://x"), lambda r: r.update(baseline=0),
    lambda r: r.update(value="nan"), lambda r: r.update(kind="speed"), lambda r: r.update(parameters_b=-1),
])
def test_bad_records_are_refused(mutate):
    good = {"format": "Q8_0", "kind": "weights", "model": "M", "family": "llama", "parameters_b": 8, "metric": "perplexity",
            "higher_is_better": False, "baseline": 6.0, "value": 6.1, "source": {"title": "t", "url": "https://e"}}
    parse_evidence(json.dumps({"schema": "memviz.quality-evidence/1", "records": [good]}))
    mutate(good)
    with pytest.raises(InputError):
        parse_evidence(json.dumps({"schema": "memviz.quality-evidence/1", "records": [good]}))


def test_foreign_file_is_refused():
    with pytest.raises(InputError):
        parse_evidence(json.dumps({"records": []}))
