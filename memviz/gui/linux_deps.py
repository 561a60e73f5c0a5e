"""The system libraries Qt's xcb platform plugin loads on Linux, checked before Qt starts.

Without one of them Qt aborts with "Could not load the Qt platform plugin xcb", and its hint names
the wrong library. The list is what PySide6's `libqxcb.so` and `libQt6XcbQpa.so.6` link (ldd, PySide6
6.11), as Debian packages; a library is missing when the dynamic loader cannot find its soname.
"""

from __future__ import annotations

import ctypes.util
import os
import sys

#: library name as ctypes.util.find_library takes it -> the Debian / Ubuntu package holding it
XCB_LIBRARIES = {
    "xcb": "libxcb1", "X11-xcb": "libx11-xcb1", "xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4",
    "xcb-image": "libxcb-image0", "xcb-keysyms": "libxcb-keysyms1", "xcb-randr": "libxcb-randr0",
    "xcb-render-util": "libxcb-render-util0", "xcb-render": "libxcb-render0", "xcb-shape": "libxcb-shape0",
    "xcb-shm": "libxcb-shm0", "xcb-sync": "libxcb-sync1", "xcb-util": "libxcb-util1", "xcb-xfixes": "libxcb-xfixes0",
    "xcb-xkb": "libxcb-xkb1", "xkbcommon-x11": "libxkbcommon-x11-0", "xkbcommon": "libxkbcommon0", "EGL": "libegl1",
    "GL": "libgl1", "fontconfig": "libfontconfig1", "dbus-1": "libdbus-1-3",
}


def uses_xcb() -> bool:
    """Whether Qt will pick its xcb (X11) plugin: Linux, no platform chosen (or xcb), an X display, no Wayland."""
    chosen = os.environ.get("QT_QPA_PLATFORM", "")
    if not sys.platform.startswith("linux") or chosen not in ("", "xcb"):
        return False
    return chosen == "xcb" or (bool(os.environ.get("DISPLAY")) and not os.environ.get("WAYLAND_DISPLAY"))


def missing_packages(find=ctypes.util.find_library) -> list[str]:
    """Debian packages whose libraries the xcb plugin needs and the loader cannot find."""
    return [package for library, package in XCB_LIBRARIES.items() if find(library) is None]


def startup_problem() -> str | None:
    """One line saying what to install (or to set) before the window can open, or None."""
    if sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return ("no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); run memviz in a desktop "
                "session, or use 'memviz export' with QT_QPA_PLATFORM=offscreen")
    if not uses_xcb():
        return None
    missing = missing_packages()
    if not missing:
        return None
    return f"Qt's X11 (xcb) platform needs system libraries that are missing: sudo apt-get install {' '.join(missing)}"
