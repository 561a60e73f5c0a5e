"""Hostile GGUF headers are refused from their declared sizes before gguf's reader walks them (these files used to
read for ever; how fast the refusal is: benchmarks/bench_hostile_gguf.py)."""

import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memviz.core.errors import InputError
from memviz.core.importers.gguf_file import read_gguf


def header(tensors: int, keys: list[bytes]) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensors, len(keys)) + b"".join(keys)


def key(name: bytes, kind: int, payload: bytes) -> bytes:
    return struct.pack("<Q", len(name)) + name + struct.pack("<I", kind) + payload


@pytest.mark.parametrize(("body", "needle"), [
    (header(0, [key(b"a", 9, struct.pack("<IQ", 0, 2**40))]), "runs past the end"),
    (header(0, [key(b"a", 9, struct.pack("<IQ", 8, 50_000_000))]), "more than any model has"),
    (header(2**40, []), "more than a model file holds"),
    (header(0, [key(b"a", 8, struct.pack("<Q", 2**60))]), "runs past the end"),
    (header(0, [key(b"a", 77, b"")]), "unknown GGUF value type"),
])
def test_declared_sizes_beyond_the_file_are_refused_at_once(tmp_path, body, needle):
    path = tmp_path / "m.gguf"
    path.write_bytes(body + b"\0" * 64)
    with pytest.raises(InputError, match=needle):
        read_gguf(path)


def test_a_truncated_header_is_named(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF\3\0")
    with pytest.raises(InputError, match="truncated"):
        read_gguf(path)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=300))
def test_any_bytes_after_the_magic_give_an_input_error_or_a_model(tmp_path_factory, tail):
    path = tmp_path_factory.mktemp("g") / "m.gguf"
    path.write_bytes(b"GGUF" + tail)
    with contextlib.suppress(InputError):  # a model, or one clear error: never a traceback, never a hang
        read_gguf(path)
