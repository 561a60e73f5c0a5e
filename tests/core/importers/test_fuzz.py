"""Fuzz the file parsers over mutated real headers: every input ends in an Architecture or an
InputError — never another exception, a hang or a huge allocation (hypothesis; the case count
is set by FUZZ_EXAMPLES, default 150 per parser)."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.importers.gguf_file import read_gguf
from memviz.core.importers.safetensors_file import read_safetensors

from .files import write_gguf_model, write_safetensors_model

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    d = tmp_path_factory.mktemp("orig")
    write_safetensors_model(d / "st")
    write_gguf_model(d / "tiny.gguf")
    return (d / "st" / "model.safetensors").read_bytes(), (d / "tiny.gguf").read_bytes(), (d / "st" / "config.json").read_text()


mutation = st.one_of(
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, 4095), st.integers(0, 255)), min_size=1, max_size=8)),
    st.tuples(st.just("truncate"), st.integers(0, 6000)),
    st.tuples(st.just("u64"), st.tuples(st.integers(0, 600), st.integers(0, 2**64 - 1))),
)


def mutate(raw: bytes, m) -> bytes:
    kind, arg = m
    b = bytearray(raw)
    if kind == "flip":
        for pos, val in arg:
            if pos < len(b):
                b[pos] = val
    elif kind == "truncate":
        b = b[:arg]
    else:
        pos, val = arg
        b[pos : pos + 8] = val.to_bytes(8, "little")
    return bytes(b)


def check(fn, path):
    try:
        result = fn(path)
    except InputError as exc:
        assert str(exc)
    else:
        assert isinstance(result, Architecture)


@FUZZ
@given(m=mutation)
def test_fuzz_safetensors(tmp_path, originals, m):
    folder = tmp_path / "st"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(originals[2])
    (folder / "model.safetensors").write_bytes(mutate(originals[0], m))
    check(read_safetensors, folder / "model.safetensors")


@FUZZ
@given(m=mutation)
def test_fuzz_gguf(tmp_path, originals, m):
    path = tmp_path / "f.gguf"
    path.write_bytes(mutate(originals[1], m))
    check(read_gguf, path)
