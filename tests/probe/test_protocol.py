import pytest

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
