"""Dependencies point one way: no module of the core (nor the probe protocol, which the app reads) imports
Qt, pyqtgraph, torch or transformers — each imported alone in a fresh interpreter."""

import json
import pkgutil
import subprocess
import sys

import pytest

import memviz.core

FORBIDDEN = ("PySide6", "pyqtgraph", "torch", "transformers", "accelerate", "bitsandbytes", "llama_cpp")
MODULES = sorted(m.name for m in pkgutil.walk_packages(memviz.core.__path__, "memviz.core.")) + [
    "memviz.probe.protocol", "memviz.cli"]


def test_every_core_module_is_listed():
    assert {"memviz.core.report", "memviz.core.session", "memviz.core.calibration", "memviz.core.importers.gguf_file",
            "memviz.core.engines.llamacpp_cpu"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_no_gui_and_no_ml_framework(module):
    code = (f"import json, sys\nimport {module}\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
