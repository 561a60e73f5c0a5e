"""Models already in the local Hugging Face cache (`huggingface_hub.scan_cache_dir`); nothing is downloaded.

The optional config fetch by model id is the only network access memviz makes,
and only when the user asks for it (`fetch_config`), never at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memviz.core.errors import InputError


@dataclass(frozen=True)
class CachedModel:
    repo_id: str
    snapshot: Path  # the newest revision's folder
    size_on_disk: int
    has_config: bool
    has_weights: bool


def cached_models(cache_dir: str | Path | None = None) -> list[CachedModel]:
    """Model repositories in the cache (newest revision each), largest first."""
    try:
        from huggingface_hub import scan_cache_dir
        from huggingface_hub.errors import CacheNotFound
    except ImportError:  # pragma: no cover - a declared dependency
        raise InputError("listing the Hugging Face cache needs 'huggingface_hub' (pip install huggingface_hub)") from None
    try:
        info = scan_cache_dir(cache_dir)
    except CacheNotFound:
        return []
    except OSError as exc:
        raise InputError(f"cannot read the Hugging Face cache: {exc}") from None
    out = []
    for repo in info.repos:
        if repo.repo_type != "model" or not repo.revisions:
            continue
        rev = max(repo.revisions, key=lambda r: r.last_modified)
        names = {f.file_name for f in rev.files}
        out.append(CachedModel(
            repo_id=repo.repo_id, snapshot=Path(rev.snapshot_path), size_on_disk=repo.size_on_disk,
            has_config="config.json" in names,
            has_weights=any(n.endswith((".safetensors", ".gguf")) for n in names),
        ))
    return sorted(out, key=lambda m: -m.size_on_disk)


def fetch_config(repo_id: str, cache_dir: str | Path | None = None) -> Path:
    """NETWORK: download only `config.json` of `repo_id` into the cache (explicit user action)."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:  # pragma: no cover
        raise InputError("fetching a config needs 'huggingface_hub'") from None
    try:
        return Path(hf_hub_download(repo_id, "config.json", cache_dir=cache_dir))
    except Exception as exc:  # network, 404, gated repos...
        raise InputError(f"could not fetch config.json of {repo_id!r}: {str(exc).splitlines()[0]}") from None
