"""Exact tensor sizes from safetensors headers (a file, a sharded index, or a model folder).

Only the header is read: 8 bytes of little-endian length N, then N bytes of JSON
mapping each tensor name to {dtype, shape, data_offsets} (safetensors format
spec). The header is untrusted input, so it is parsed by the `safetensors`
package itself (`safe_open`), which checks the header length against the file,
the JSON, the dtypes and that the offsets are in range, contiguous and match
each shape; memviz then adds the stored sizes. Tensor data is never read.
The architecture comes from the folder's `config.json`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from math import prod
from pathlib import Path

from memviz.core.arch import Architecture, StoredTensor, from_hf_config, load_config, load_processors
from memviz.core.errors import InputError
from memviz.core.importers.classify import layer_of, role_of

#: bytes per element of each safetensors dtype (safetensors `Dtype`); F4 packs two per byte
DTYPE_BYTES: dict[str, float] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "E8M0": 1, "I16": 2, "U16": 2, "F16": 2,
    "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8, "F4": 0.5, "F6_E2M3": 0.75, "F6_E3M2": 0.75,
    "C64": 8,
}


def read_header(path: Path) -> list[StoredTensor]:
    """Stored tensors of one .safetensors file, validated by the safetensors parser."""
    try:
        from safetensors import safe_open
    except ImportError:  # pragma: no cover - a declared dependency
        raise InputError("reading safetensors headers needs the 'safetensors' package (pip install safetensors)") from None
    if not path.is_file():
        raise InputError(f"no safetensors file at {path}")
    if path.stat().st_size < 8:
        raise InputError(f"{path}: truncated (shorter than the 8-byte header length)")
    out = []
    try:
        with safe_open(str(path), framework="numpy") as f:
            for name in f.keys():  # noqa: SIM118 (safe_open is not a mapping)
                sl = f.get_slice(name)
                dtype, shape = sl.get_dtype(), tuple(int(x) for x in sl.get_shape())
                if dtype not in DTYPE_BYTES:
                    raise InputError(f"{path}: tensor {name!r} has dtype {dtype!r}, which memviz does not know")
                nbytes = int(round(prod(shape) * DTYPE_BYTES[dtype]))
                out.append(StoredTensor(name, shape, role_of(name).value, layer_of(name), dtype, nbytes))
    except InputError:
        raise
    except Exception as exc:  # the Rust parser raises SafetensorError and friends
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{path}: not a valid safetensors file ({msg})") from None
    return out


def _shards(path: Path) -> tuple[list[Path], Path | None, int | None]:
    """(shard files, folder holding config.json, index total_size if any)."""
    if path.is_dir():
        index = sorted(path.glob("*.safetensors.index.json"))
        if index:
            return _shards(index[0])
        files = sorted(path.glob("*.safetensors"))
        if not files:
            raise InputError(f"{path}: no .safetensors files in this folder")
        return files, path, None
    if path.name.endswith(".index.json"):
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
            weight_map = index["weight_map"]
            files = sorted({path.parent / str(v) for v in weight_map.values()})
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: index is not valid JSON ({exc})") from None
        except (KeyError, TypeError, AttributeError):
            raise InputError(f"{path}: index has no 'weight_map' object") from None
        for f in files:
            if f.parent != path.parent:
                raise InputError(f"{path}: shard {f.name!r} points outside the model folder")
            if not f.exists():
                raise InputError(f"{path}: shard {f.name} listed in the index is missing")
        total = (index.get("metadata") or {}).get("total_size")
        return files, path.parent, int(total) if isinstance(total, (int, float)) else None
    return [path], path.parent, None


def read_safetensors(path: str | Path) -> Architecture:
    """Architecture from the folder's config.json with the exact stored tensors of the checkpoint."""
    p = Path(path)
    files, folder, index_total = _shards(p)
    stored: list[StoredTensor] = []
    for f in files:
        stored += read_header(f)
    if not stored:
        raise InputError(f"{p}: the checkpoint holds no tensors")
    config_path = folder / "config.json" if folder else None
    if config_path is None or not config_path.exists():
        raise InputError(f"{p}: no config.json next to the weights; memviz needs it for the architecture")
    arch = from_hf_config(load_config(config_path), name=folder.name, source=str(p), ref=str(folder),
                          processors=load_processors(folder))
    if arch.block_layers > 1:  # a checkpoint's layer index counts decoder layers of several sublayers
        stored = [replace(t, layer=layer_of(t.name, arch.block_layers)) for t in stored]
    warnings = list(arch.warnings)
    total = sum(t.nbytes for t in stored)
    if index_total is not None and index_total != total:
        warnings.append(f"index metadata total_size {index_total:,d} differs from the headers' {total:,d} bytes")
    unknown = [t.name for t in stored if t.role == "other"]
    if unknown:
        warnings.append(f"{len(unknown)} tensors of unknown role counted as 'other' (e.g. {unknown[0]})")
    return arch.with_changes(stored=tuple(stored), warnings=tuple(warnings))
