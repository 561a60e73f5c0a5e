"""The core imports neither Qt nor torch (checked in a fresh interpreter)."""

import json
import subprocess
import sys


def test_core_imports_no_qt_and_no_torch():
    code = (
        "import json, sys\n"
        "import memviz.core.estimate, memviz.core.fit, memviz.core.presets, memviz.core.speed, memviz.cli\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'pyqtgraph', 'torch', 'transformers'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
