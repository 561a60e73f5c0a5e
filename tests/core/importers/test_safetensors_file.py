import json
import struct

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.importers import import_path
from memviz.core.importers.safetensors_file import read_safetensors

from .files import TINY_CONFIG, write_safetensors_model


def _data_bytes(tensors) -> int:
    return sum(a.nbytes for a in tensors.values())


@pytest.mark.parametrize("sharded", [False, True])
def test_weights_equal_tensor_data_exactly(tmp_path, sharded):
    tensors = write_safetensors_model(tmp_path / "m", sharded=sharded)
    a = read_safetensors(tmp_path / "m")
    assert sum(t.nbytes for t in a.stored) == _data_bytes(tensors)
    assert a == from_hf_config(TINY_CONFIG).with_changes(name=a.name, stored=a.stored)
    e = estimate(a, Scenario(weight_format="stored", context_tokens=1024))
    assert e.bytes["weights"] == _data_bytes(tensors)
    if not sharded:  # file = 8-byte length + header + data
        f = tmp_path / "m" / "model.safetensors"
        (n,) = struct.unpack("<Q", f.read_bytes()[:8])
        assert f.stat().st_size - 8 - n == _data_bytes(tensors)


def test_gptq_layout_roles_and_bytes(tmp_path):
    tensors = write_safetensors_model(tmp_path / "q", gptq=True)
    a = import_path(tmp_path / "q" / "model.safetensors")
    by_name = {t.name: t for t in a.stored}
    assert by_name["model.layers.1.mlp.down_proj.qweight"].storage == "I32"
    assert by_name["model.layers.1.mlp.down_proj.scales"].role == "mlp"
    assert by_name["model.layers.1.mlp.down_proj.scales"].layer == 1
    assert by_name["lm_head.weight"].role == "lm_head" and by_name["lm_head.weight"].storage == "F16"
    assert sum(t.nbytes for t in a.stored) == _data_bytes(tensors)


def test_index_total_size_mismatch_is_noted(tmp_path):
    write_safetensors_model(tmp_path / "m", sharded=True)
    idx = tmp_path / "m" / "model.safetensors.index.json"
    d = json.loads(idx.read_text())
    d["metadata"]["total_size"] += 2
    idx.write_text(json.dumps(d))
    assert any("differs" in w for w in read_safetensors(idx).warnings)


def _valid_file(tmp_path):
    write_safetensors_model(tmp_path / "m")
    return tmp_path / "m" / "model.safetensors"


def test_bad_files(tmp_path):
    f = _valid_file(tmp_path)
    raw = f.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    cases = {
        "truncated": raw[:5],
        "header longer than file": struct.pack("<Q", len(raw) * 4) + raw[8:],
        "cut data": raw[: 8 + n + 10],
        "not json": raw[:8] + b"{" * n + raw[8 + n:],
    }
    header = json.loads(raw[8 : 8 + n])
    name = next(k for k in header if k != "__metadata__")
    bad = dict(header)
    bad[name] = {**header[name], "data_offsets": [0, 10**12]}
    cases["offset out of range"] = _rebuild(bad, raw[8 + n:])
    bad = dict(header)
    bad[name] = {**header[name], "dtype": "Q9"}
    cases["unknown dtype"] = _rebuild(bad, raw[8 + n:])
    for label, content in cases.items():
        f.write_bytes(content)
        with pytest.raises(InputError) as err:
            read_safetensors(f)
        assert str(f) in str(err.value), label


def _rebuild(header: dict, data: bytes) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


def test_bad_index_and_missing_pieces(tmp_path):
    write_safetensors_model(tmp_path / "m", sharded=True)
    idx = tmp_path / "m" / "model.safetensors.index.json"
    idx.write_text("not json")
    with pytest.raises(InputError, match="not valid JSON"):
        read_safetensors(idx)
    idx.write_text(json.dumps({"weight_map": {"a": "../../etc/passwd"}}))
    with pytest.raises(InputError, match="outside"):
        read_safetensors(idx)
    idx.write_text(json.dumps({"weight_map": {"a": "model-00009.safetensors"}}))
    with pytest.raises(InputError, match="missing"):
        read_safetensors(idx)
    (tmp_path / "n").mkdir()
    write_safetensors_model(tmp_path / "n")
    (tmp_path / "n" / "config.json").unlink()
    with pytest.raises(InputError, match="config.json"):
        read_safetensors(tmp_path / "n")
