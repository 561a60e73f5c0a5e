import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memviz.probe.protocol import decode, encode


def test_round_trip():
    line = encode("phase", name="load", bytes={"weights": 12})
    assert "\n" not in line
    msg = decode(line)
    assert msg.event == "phase" and msg.data["bytes"]["weights"] == 12


@pytest.mark.parametrize("line", ["", "hello", "{not json", '{"v": 2, "event": "phase"}', '{"v": 1, "event": "nope"}',
                                  "[1, 2]", '{"v": 1}'])
def test_non_messages_are_none(line):
    assert decode(line) is None


def test_unknown_event_cannot_be_encoded():
    with pytest.raises(ValueError):
        encode("party")


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300) | st.builds(lambda body: '{"v": 1, "event": ' + body, st.text(max_size=80)))
def test_any_line_decodes_to_a_message_or_none(line):
    """Whatever the probe's child prints (half lines, stderr mixed in, JSON of any shape): a message or nothing."""
    from memviz.probe.protocol import Message

    msg = decode(line)
    assert msg is None or (isinstance(msg, Message) and isinstance(msg.data, dict))


def test_the_probes_quantized_caches_are_the_cores():
    """The probe names its QuantizedCache kinds without importing the core at start-up; they are the core's."""
    from memviz.core.engines.transformers_cache import QUANTIZED_CACHES
    from memviz.probe.runner import QUANTIZED_CACHES as PROBE_KINDS

    assert tuple(QUANTIZED_CACHES) == PROBE_KINDS
