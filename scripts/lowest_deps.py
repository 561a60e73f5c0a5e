"""Print the lowest versions pyproject.toml declares for the core's dependencies, as pip pins (`name==X`).

CI installs them in a separate environment and runs the core tests, so a declared lower bound is one the
code really works with. The GUI's (PySide6, pyqtgraph) are left out: the core never imports them."""

import re
import sys
from pathlib import Path

import tomllib

GUI = {"pyside6-essentials", "pyqtgraph"}


def main() -> int:
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    pins = []
    for spec in project["dependencies"]:
        m = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)", spec)
        if m is None:
            print(f"no lower bound in {spec!r}", file=sys.stderr)
            return 2
        if m.group(1).lower() not in GUI:
            pins.append(f"{m.group(1)}=={m.group(2)}")
    print(" ".join(pins))
    return 0


if __name__ == "__main__":
    sys.exit(main())
