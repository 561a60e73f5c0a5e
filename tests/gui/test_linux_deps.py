"""Before Qt starts on Linux, a missing xcb library is named with the command that installs it."""

import subprocess
import sys

from memviz.gui import linux_deps


def test_missing_libraries_are_named_as_packages(monkeypatch):
    monkeypatch.setattr(linux_deps.sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(linux_deps, "missing_packages", lambda: ["libxcb-icccm4", "libxcb-keysyms1"])
    assert linux_deps.startup_problem() == ("Qt's X11 (xcb) platform needs system libraries that are missing: "
                                            "sudo apt-get install libxcb-icccm4 libxcb-keysyms1")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert linux_deps.startup_problem() is None


def test_the_lookup_maps_sonames_to_packages():
    found = {"xcb-cursor": None, "xcb-icccm": None}
    missing = linux_deps.missing_packages(lambda lib: None if lib in found else f"lib{lib}.so")
    assert missing == ["libxcb-cursor0", "libxcb-icccm4"]


def test_the_app_without_a_display_says_so_and_exits_2(monkeypatch):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    r = subprocess.run([sys.executable, "-m", "memviz"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and "no display" in r.stderr and len(r.stderr.splitlines()) == 1
