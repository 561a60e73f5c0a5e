"""The Breakdown tab's engine rows carry the figures the estimate computed."""

from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset
from memviz.core.units import Unit, format_bytes
from memviz.gui.breakdown import engine_rows


def test_the_vision_encoders_profile_pass_is_a_row_with_the_estimates_bytes():
    a = get_preset("qwen3.5-35b-a3b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=65536)
    est = estimate(a, sc)
    rows = {r[0]: r for r in engine_rows(est, Unit.GiB)}
    ep = est.engine_facts["encoder_profile"]
    assert rows["vision encoder's profile pass"][1:3] == ("1 image(s) x 16,384 tokens", format_bytes(ep["peak_bytes"], Unit.GiB, 3))
    assert est.devices[0].activations >= ep["peak_bytes"]
    text_only = estimate(a, sc.with_changes(options={"language_model_only": True}))
    assert "vision encoder's profile pass" not in {r[0] for r in engine_rows(text_only, Unit.GiB)}
