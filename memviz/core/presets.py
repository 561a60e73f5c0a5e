"""Bundled presets: the config fields of real models, with where they came from.

Each preset is a JSON file in `memviz/data/presets/` holding the model's published
`config.json` fields, the repository they were taken from and the published
parameter count (with its precision) that the inventory is tested against. They
are read through `importlib.resources`, so an installed package and a checkout
load them the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from memviz.core.arch import Architecture, from_hf_config
from memviz.core.errors import InputError


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    repo: str
    source: str
    config: dict[str, Any]
    published_parameters: int
    published_precision: str  # "exact" or the rounding step of the published figure, e.g. "1e9"
    published_source: str
    transformers_parameters: int
    checkpoint_buffers: int = 0  # checkpoint tensors transformers keeps as buffers, not parameters
    note: str = ""
    published_includes_encoders: bool = False  # the published figure counts the vision tower and projector too

    def architecture(self) -> Architecture:
        return from_hf_config(self.config, name=self.name, source=f"preset {self.key}: {self.source}", ref=self.repo)


@lru_cache(maxsize=1)
def all_presets() -> dict[str, Preset]:
    """Every bundled preset by key (the file name without .json), sorted by key."""
    folder = resources.files("memviz.data") / "presets"
    out: dict[str, Preset] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        d = json.loads(entry.read_text(encoding="utf-8"))
        key = entry.name[: -len(".json")]
        pub = d["published"]
        out[key] = Preset(
            key=key, name=d["name"], repo=d.get("repo", ""), source=d["source"], config=d["config"],
            published_parameters=int(pub["parameters"]), published_precision=pub["precision"],
            published_source=pub["source"], transformers_parameters=int(d["transformers_parameters"]),
            checkpoint_buffers=int(d.get("checkpoint_buffers", 0)), note=d.get("note", ""),
            published_includes_encoders=bool(pub.get("includes_encoders", False)),
        )
    return out


def get_preset(key: str) -> Preset:
    """Preset by key, case-insensitive; an unknown key names the close matches."""
    presets = all_presets()
    k = key.strip().lower()
    if k in presets:
        return presets[k]
    matches = [p for p in presets if k in p]
    if len(matches) == 1:
        return presets[matches[0]]
    hint = f" (did you mean: {', '.join(matches)})" if matches else " (run 'memviz presets' for the list)"
    raise InputError(f"unknown preset {key!r}{hint}")
