"""Make the README's pictures offscreen, and check them on item geometry.

    python scripts/screenshots.py            # all pictures into resources/screenshots/
    python scripts/screenshots.py --check    # only the checks, nothing written

The main window at 1280x720, 1920x1080 and 1920x1080 at 1.5x scale (QT_SCALE_FACTOR, each in its own
process), the Plan tab at 1600x1000, the two exported charts of the README, and the README's example outputs: every code block that
starts with "$ memviz ..." is run again and its output written under the command. Each window picture is checked before it is
saved: the window fits the screen, no two bar labels overlap, every bar label lies inside the plot,
the legend lies inside the chart. A failed check exits 1 naming it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "screenshots"
WINDOWS = (("window-1280x720.png", 1280, 720, "1"), ("window.png", 1920, 1080, "1"),
           ("window-1920x1080@1.5x.png", 1920, 1080, "1.5"), ("plan.png", 1600, 1000, "1"))
EXPORTS = (
    ["--preset", "llama-3.1-70b", "--weights", "bf16,fp8,awq-int4,bnb-nf4,Q4_K_M,Q3_K_M", "--context", "32768",
     "--gpu", "h100-80g,rtx-a6000", "--chart", "compare", "--width", "1600", "--out", "compare.png"],
    ["--preset", "llama-3.1-8b", "--weights", "bf16,fp8,awq-int4,Q4_K_M", "--context", "8192", "--batch", "4",
     "--gpu", "rtx4090,l40s", "--chart", "sweep", "--log-x", "--width", "1600", "--out", "sweep.png"],
)


def problems(window) -> list[str]:
    """What a reader would see wrong in the window's compare chart."""
    chart = window.compare
    plot = chart.plot_item.vb.sceneBoundingRect()
    out = []
    rects = [label.sceneBoundingRect() for label in chart.labels]
    out += [f"bar label {i} leaves the plot" for i, r in enumerate(rects) if not plot.contains(r)]
    out += [f"bar labels {i} and {j} overlap" for (i, a), (j, b) in itertools.combinations(enumerate(rects), 2)
            if a.intersects(b)]
    if not chart.layout_item.sceneBoundingRect().contains(chart.legend.sceneBoundingRect()):
        out.append("the legend is cut off")
    return out


def show_plan(window, app) -> list[str]:
    """The Plan tab with the README's example: Llama-3.1-70B, 8,192 tokens × 2, on 2 RTX 4090s or one H100."""
    from memviz.core.presets import get_preset
    from memviz.gui.export import _settle

    window.set_architecture(get_preset("llama-3.1-70b").architecture(), "llama-3.1-70b")
    window.tabs.setCurrentWidget(window.plan_view)
    window._refresh_visible()
    pv = window.plan_view
    pv.gpus.setText("rtx4090x2, h100-80g")
    pv.context.setValue(8192)
    pv.concurrency.setValue(2)
    pv.run()
    _settle(pv.chart)
    app.processEvents()
    chart = pv.chart
    ok = chart.layout_item.sceneBoundingRect().contains(chart.legend.sceneBoundingRect())
    return [] if ok else ["the Pareto legend is cut off"]


def shoot(name: str, width: int, height: int, check_only: bool) -> int:
    """In this process (its QT_SCALE_FACTOR already set): the window at width x height logical pixels."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["MEMVIZ_DATA_DIR"] = str(Path(os.environ.get("TMPDIR", "/tmp")) / "memviz-screenshots")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from memviz.gui import settings
    from memviz.gui.export import _settle
    from memviz.gui.main_window import MainWindow

    settings.use_path(str(Path(os.environ["MEMVIZ_DATA_DIR"]) / "settings.ini"))  # never the user's preferences
    window = MainWindow()
    window.confirm_discard = lambda: True
    window.resize(width, height)
    window.show()
    _settle(window.compare)
    app.processEvents()
    found = problems(window)
    if name == "plan.png":
        found += show_plan(window, app)
    hint = window.minimumSizeHint()
    if hint.height() > height or hint.width() > width:
        found.append(f"the window needs {hint.width()}x{hint.height()}, more than the screen")
    for p in found:
        print(f"{name}: {p}", file=sys.stderr)
    if not found and not check_only:
        window.grab().save(str(OUT / name))
        print(OUT / name)
    return 1 if found else 0


def readme_outputs(check_only: bool) -> int:
    """Run each README block's "$ memviz ..." command and put its output under it; 1 if one changed (with
    --check) or failed."""
    import re
    import shlex

    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    failed = 0

    def rerun(m: re.Match) -> str:
        nonlocal failed
        command = m.group(1)
        r = subprocess.run([sys.executable, "-m", "memviz", *shlex.split(command)[1:]], capture_output=True, text=True,
                           env={**os.environ, "COLUMNS": "120"})
        if r.returncode:
            print(f"README: '{command}' failed: {r.stderr.strip()}", file=sys.stderr)
            failed = 1
            return m.group(0)
        return f"```\n$ {command}\n{r.stdout.rstrip()}\n```"

    new = re.sub(r"```\n\$ (memviz [^\n]+)\n.*?\n```", rerun, text, flags=re.S)
    if new != text:
        if check_only:
            print("README: example outputs are out of date (run scripts/screenshots.py)", file=sys.stderr)
            return 1
        readme.write_text(new, encoding="utf-8")
        print(readme)
    return failed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="check only, write nothing")
    p.add_argument("--one", nargs=3, metavar=("NAME", "WIDTH", "HEIGHT"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        return shoot(args.one[0], int(args.one[1]), int(args.one[2]), args.check)
    failed = 0
    for name, width, height, scale in WINDOWS:
        env = {**os.environ, "QT_SCALE_FACTOR": scale, "QT_QPA_PLATFORM": "offscreen"}
        cmd = [sys.executable, __file__, "--one", name, str(width), str(height)] + (["--check"] if args.check else [])
        failed |= subprocess.run(cmd, env=env).returncode
    failed |= readme_outputs(args.check)
    if not args.check:
        for export in EXPORTS:
            out = str(OUT / export[-1])
            cmd = [sys.executable, "-m", "memviz", "export", *export[:-1], out]
            failed |= subprocess.run(cmd, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}).returncode
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
