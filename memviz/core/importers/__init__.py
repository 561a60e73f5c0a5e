"""Importers: model files and engine logs turned into the core's architecture and measurements.

Headers only, never tensor data: safetensors headers (`safetensors_file`), GGUF
metadata and tensor infos through the `gguf` package's memory-mapped reader
(`gguf_file`), the local Hugging Face cache (`hf_cache`), and engine logs (`logs`).
"""

from __future__ import annotations

from pathlib import Path

from memviz.core.arch import Architecture
from memviz.core.errors import InputError


def import_path(path: str | Path) -> Architecture:
    """Architecture (with exact stored tensors where a weight file is found) from a
    config.json, a safetensors file / index / folder, or a GGUF file."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file or folder: {p}")
    if p.suffix.lower() == ".gguf":
        from memviz.core.importers.gguf_file import read_gguf

        return read_gguf(p)
    if p.suffix.lower() == ".safetensors" or p.name.endswith(".safetensors.index.json") or (
        p.is_dir() and any(p.glob("*.safetensors"))
    ):
        from memviz.core.importers.safetensors_file import read_safetensors

        return read_safetensors(p)
    if p.is_dir() and (ggufs := sorted(p.glob("*.gguf"))):
        from memviz.core.importers.gguf_file import read_gguf

        return read_gguf(ggufs[0])
    from memviz.core.arch import from_config_path

    return from_config_path(p)
