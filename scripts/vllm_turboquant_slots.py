"""Run vLLM's own TurboQuant sizing on a vLLM source tree and print it as JSON.

    python scripts/vllm_turboquant_slots.py SRC > tests/data/published/vllm_turboquant.json

SRC holds a vLLM source tree (`vllm/`, e.g. an unzipped PyPI wheel). The module
`model_executor/layers/quantization/turboquant/config.py` needs nothing of vLLM at run time (its ModelConfig import
is for type checking only), so it is loaded from its file and called: `TurboQuantConfig.from_cache_dtype(preset,
head_size).slot_size_aligned` for every preset and head size, and `get_boundary_skip_layers` for a dense model of
each layer count. memviz's `KVFormat.head_bytes` and `vllm_turboquant.boundary_layers` are tested against the result.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

HEAD_SIZES = (64, 72, 80, 96, 112, 128, 192, 256)
LAYER_COUNTS = (1, 2, 3, 4, 5, 16, 32, 61)


def main(src: Path) -> None:
    path = src / "vllm" / "model_executor" / "layers" / "quantization" / "turboquant" / "config.py"
    spec = importlib.util.spec_from_file_location("turboquant_config", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    config = module.TurboQuantConfig
    dense = lambda n: SimpleNamespace(is_hybrid=False, hf_text_config=SimpleNamespace(num_hidden_layers=n))  # noqa: E731
    print(json.dumps({
        "_source": f"vLLM {_version(src)}'s {path.relative_to(src)}, run by scripts/vllm_turboquant_slots.py",
        "slot_bytes": {p: {str(d): config.from_cache_dtype(p, d).slot_size_aligned for d in HEAD_SIZES}
                       for p in module.TQ_PRESETS},
        "boundary_layers": {str(n): [int(i) for i in config.get_boundary_skip_layers(dense(n))] for n in LAYER_COUNTS},
    }, indent=1))


def _version(src: Path) -> str:
    """The tree's release as its `vllm/_version.py` names it."""
    found = re.search(r"__version__\s*=\s*version\s*=\s*['\"]([^'\"]+)", (src / "vllm" / "_version.py").read_text())
    return found.group(1) if found else "?"


if __name__ == "__main__":
    main(Path(sys.argv[1]))
