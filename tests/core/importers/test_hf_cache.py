import json

from memviz.core.importers import import_path
from memviz.core.importers.hf_cache import cached_models
from memviz.core.presets import get_preset


def make_cache(root, repo="tiny-org/tiny-llama"):
    """The hub cache layout: models--org--name/{blobs,snapshots/<commit>,refs/main}, files as links to blobs."""
    base = root / f"models--{repo.replace('/', '--')}"
    (base / "blobs").mkdir(parents=True)
    commit = "0" * 40
    snap = base / "snapshots" / commit
    snap.mkdir(parents=True)
    (base / "refs").mkdir()
    (base / "refs" / "main").write_text(commit)
    blob = base / "blobs" / "abc123"
    blob.write_text(json.dumps(get_preset("llama-3.2-1b").config))
    (snap / "config.json").symlink_to(blob)
    return snap


def test_cached_models_lists_and_loads(tmp_path):
    snap = make_cache(tmp_path)
    models = cached_models(tmp_path)
    assert [m.repo_id for m in models] == ["tiny-org/tiny-llama"]
    assert models[0].has_config and not models[0].has_weights and models[0].size_on_disk > 0
    assert import_path(models[0].snapshot).hidden_size == 2048
    assert models[0].snapshot == snap


def test_missing_cache_is_empty(tmp_path):
    assert cached_models(tmp_path / "nothing") == []
