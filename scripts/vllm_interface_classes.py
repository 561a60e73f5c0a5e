"""Which architectures vLLM's model registry runs with a class that implements an interface, read from its sources.

    python scripts/vllm_interface_classes.py SRC [INTERFACE] > found.json

SRC holds a vLLM source tree (`vllm/`, e.g. an unzipped PyPI wheel); INTERFACE is one of
`model_executor/models/interfaces.py`'s protocols, SupportsLoRA by default. The registry's `*_MODELS` tables map
each architecture to (module, class); each class's bases are followed through the modules' imports until the
interface is found or the bases leave vLLM. Prints {"yes": [...], "no": [...], "unknown": [...]} (unknown: a module
or class the walk could not find). tests/data/published/vllm_registry.json keeps the "yes" lists of 0.34.0 for
SupportsLoRA ("lora") and SupportsEagle3 ("eagle3"); `memviz.core.engines.vllm_lora.NO_LORA` and
`vllm_eagle3.NO_EAGLE3` the model types whose class is not in them.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

MODELS = "vllm.model_executor.models"


class Sources:
    """The modules of a vLLM source tree, parsed on demand."""

    def __init__(self, src: Path) -> None:
        self.src = src
        self.trees: dict[str, tuple[ast.Module | None, bool]] = {}

    def tree(self, module: str) -> tuple[ast.Module | None, bool]:
        """(the module's syntax tree or None, whether it is a package's __init__)."""
        if module not in self.trees:
            base = self.src / module.replace(".", "/")
            path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.exists()), None)
            self.trees[module] = (ast.parse(path.read_text()), path.name == "__init__.py") if path else (None, False)
        return self.trees[module]

    def imports(self, module: str) -> dict[str, tuple[str, str]]:
        """Each name a module imports with `from ... import`: (the module it comes from, its name there)."""
        tree, package = self.tree(module)
        out = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                parts = module.split(".") if package else module.split(".")[:-1]
                if node.level:
                    parts = parts[: len(parts) - (node.level - 1)]
                    origin = ".".join(parts + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                for alias in node.names:
                    out[alias.asname or alias.name] = (origin, alias.name)
        return out

    def implements(self, interface: str, module: str, cls: str, seen: frozenset = frozenset()) -> bool | None:
        """Whether class `cls` of `module` has `interface` among its bases; None where the walk cannot find it."""
        tree, _ = self.tree(module)
        if (module, cls) in seen or tree is None:
            return None
        seen = seen | {(module, cls)}
        imports = self.imports(module)
        node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if node is None:  # re-exported from another module
            return self.implements(interface, *imports[cls], seen) if cls in imports else None
        for base in node.bases:
            base = base.value if isinstance(base, ast.Subscript) else base
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            if name == interface:
                return True
            origin = imports.get(name, (module, name)) if name else None
            if origin and self.implements(interface, *origin, seen):
                return True
        return False


def registry(src: Path) -> dict[str, tuple[str, str]]:
    """Architecture name -> (module, class) from the registry's `*_MODELS` tables."""
    out = {}
    for node in ast.parse((src / "vllm/model_executor/models/registry.py").read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if getattr(target, "id", "").endswith("_MODELS") and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Tuple) and len(value.elts) == 2:
                    module = value.elts[0].value
                    out[key.value] = (module if module.startswith("vllm.") else f"{MODELS}.{module}",
                                      value.elts[1].value)
    return out


def main(src: Path, interface: str) -> dict[str, list[str]]:
    sources = Sources(src)
    found = {arch: sources.implements(interface, *where) for arch, where in registry(src).items()}
    return {label: sorted(a for a, v in found.items() if v is value)
            for label, value in (("yes", True), ("no", False), ("unknown", None))}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "SupportsLoRA"), indent=1))
