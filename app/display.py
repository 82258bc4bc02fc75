"""Can a window open here? Checked before Qt is imported, so that a machine without a display,
or without the system libraries of Qt's X11 platform plugin (xcb), gets a sentence naming what
is missing and the one command that installs it, instead of Qt's own abort ("Could not load the
Qt platform plugin "xcb" ... Reinstalling the application may fix this problem").

A leaf: the standard library only. The libraries are tried with `ctypes` (a `dlopen` each, which
Qt would do a moment later anyway: `bench/gui_startup.py` reports the check's cost), by their
sonames, found the way the dynamic loader finds them: the system's folders, and in the bundle the
libraries it carries (its bootloader puts them on the loader's path)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

#: what Qt's xcb plugin (`libqxcb.so`) and `libQt6XcbQpa` link against outside Qt, soname:
#: Debian package (`tests/app/test_display.py` checks this against `ldd` of the plugin); the
#: C and C++ runtimes are left out: without them nothing would have started
XCB_LIBRARIES: Mapping[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libEGL.so.1": "libegl1",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
}

#: the platforms that need no display server
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb")


def has_display(environ: Mapping[str, str] = os.environ) -> bool:
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform.startswith(HEADLESS_PLATFORMS):
        return True
    if sys.platform != "linux":
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def uses_xcb(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether Qt will open its xcb (X11) platform: asked for, or the default on Linux unless
    a Wayland session is there to take it."""
    if sys.platform != "linux":
        return False
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(";")[0].split(":")[0] == "xcb"
    return not environ.get("WAYLAND_DISPLAY")


def _loads(soname: str) -> bool:
    import ctypes  # only when Qt will use X11: the offscreen and Wayland starts skip it

    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_xcb_libraries(loads: Callable[[str], bool] = _loads) -> list[str]:
    """The sonames of `XCB_LIBRARIES` the dynamic loader cannot load here."""
    return [soname for soname in XCB_LIBRARIES if not loads(soname)]


def _bootstrap_script() -> Path | None:
    """`packaging/bootstrap.sh` of the clone this copy of flagdesk runs from, if it does."""
    if getattr(sys, "frozen", False):
        return None
    script = Path(__file__).resolve().parents[1] / "packaging" / "bootstrap.sh"
    return script if script.is_file() else None


def missing_libraries_advice(missing: list[str]) -> str:
    """What to tell a person whose machine lacks `missing` (sonames of `XCB_LIBRARIES`)."""
    packages = sorted({XCB_LIBRARIES[soname] for soname in missing})
    lines = [
        "flagdesk: the window cannot open: Qt's X11 platform plugin (xcb) needs system "
        "libraries that are not installed: " + ", ".join(missing) + ".",
    ]
    script = _bootstrap_script()
    if script is not None:
        lines.append(f"Install them with: {script} run   (as root, or with sudo)")
    else:
        lines.append("Install them with: sudo apt-get install " + " ".join(packages))
    lines.append(
        "Without a window: `flagdesk serve` runs the sandbox server, and every other "
        "`flagdesk` command works headless."
    )
    return "\n".join(lines)


NO_DISPLAY_ADVICE = (
    "flagdesk: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set): run "
    "`xvfb-run flagdesk` for a virtual screen, or `flagdesk serve` for the sandbox server alone."
)


def window_problem(
    environ: Mapping[str, str] = os.environ, loads: Callable[[str], bool] = _loads
) -> str:
    """Why a window cannot open here, as a message for the person; "" when nothing is known
    to stop it."""
    if not has_display(environ):
        return NO_DISPLAY_ADVICE
    if uses_xcb(environ):
        missing = missing_xcb_libraries(loads)
        if missing:
            return missing_libraries_advice(missing)
    return ""
