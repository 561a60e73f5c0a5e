"""The README's window pictures pass their geometry checks at 1280x720, 1920x1080 and 1.5x scale."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "scripts" / "screenshots.py"


def test_screenshot_script_checks_pass():
    r = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
