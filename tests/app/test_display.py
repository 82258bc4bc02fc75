"""Before Qt can abort with "Could not load the Qt platform plugin xcb", `flagdesk` names the
missing system libraries, their Debian packages and the one command that installs them
(app/display.py); with no display at all it suggests xvfb-run or `flagdesk serve`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app import display

ROOT = Path(__file__).resolve().parents[2]


def _qt_root() -> Path:
    import PySide6

    return Path(PySide6.__file__).parent / "Qt"


def _ldd(path: Path) -> set[str]:
    result = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return {line.split()[0] for line in result.stdout.splitlines() if "=>" in line}


@pytest.mark.skipif(sys.platform != "linux", reason="the xcb plugin is Linux's")
def test_the_list_covers_every_library_of_the_xcb_plugin_outside_qt() -> None:
    qt = _qt_root()
    linked = _ldd(qt / "plugins" / "platforms" / "libqxcb.so") | _ldd(
        qt / "lib" / "libQt6XcbQpa.so.6"
    )
    # what the plugin itself needs for X11, keyboards, GL and fonts; Qt's own libraries and
    # the ICU it ships, the C/C++ runtimes and the libraries those pull in are not the point
    wanted = {
        name for name in linked
        if re.match(r"lib(xcb|X11|xkbcommon|GL|EGL|glib|gthread|fontconfig|freetype|dbus)", name)
    }  # fmt: skip
    assert wanted, linked
    assert wanted - display.XCB_LIBRARIES.keys() == set()


def _missing(*sonames: str):  # type: ignore[no-untyped-def]
    return lambda soname: soname not in sonames


def test_a_missing_library_is_named_with_its_package_and_the_setup_command() -> None:
    env = {"DISPLAY": ":0"}
    message = display.window_problem(env, loads=_missing("libxcb-cursor.so.0"))
    assert "libxcb-cursor.so.0" in message
    # from a clone: the setup that installs every package a window needs
    assert f"{ROOT / 'packaging' / 'bootstrap.sh'} run" in message
    assert "flagdesk serve" in message


def test_outside_a_clone_the_apt_get_line_names_each_package_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(display, "_bootstrap_script", lambda: None)
    message = display.window_problem(
        {"DISPLAY": ":0"},
        loads=_missing("libxcb-cursor.so.0", "libglib-2.0.so.0", "libgthread-2.0.so.0"),
    )
    assert "sudo apt-get install libglib2.0-0 libxcb-cursor0\n" in message + "\n"
    assert "bootstrap.sh" not in message


def test_no_display_suggests_xvfb_run_or_serve() -> None:
    message = display.window_problem({}, loads=_missing())
    assert message == display.NO_DISPLAY_ADVICE
    assert "xvfb-run flagdesk" in message and "flagdesk serve" in message


@pytest.mark.parametrize(
    ("env", "xcb"),
    [
        ({"DISPLAY": ":0"}, True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, True),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, False),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "xcb"}, True),
        ({"WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "wayland;xcb"}, False),
        ({"QT_QPA_PLATFORM": "offscreen"}, False),
    ],
)
def test_the_libraries_are_checked_only_when_qt_will_use_xcb(
    env: dict[str, str], xcb: bool
) -> None:
    assert display.uses_xcb(env) is xcb
    message = display.window_problem(env, loads=_missing("libxcb-cursor.so.0"))
    assert ("libxcb-cursor0" in message or "libxcb-cursor.so.0" in message) is xcb


def test_flagdesk_says_so_and_exits_before_loading_qt(tmp_path: Path) -> None:
    """`flagdesk` with no command, in a child whose dynamic loader cannot find libxcb-cursor
    (the loader is the one faked thing): exit status 2, the message, and Qt never imported."""
    code = (
        "import ctypes, sys\n"
        "real = ctypes.CDLL\n"
        "class CDLL(real):\n"
        "    def __init__(self, name, *a, **k):\n"
        "        if name == 'libxcb-cursor.so.0':\n"
        "            raise OSError(name + ': cannot open shared object file')\n"
        "        super().__init__(name, *a, **k)\n"
        "ctypes.CDLL = CDLL\n"
        "from app.cli import main\n"
        "status = main([])\n"
        "print('qt imported' if 'PySide6' in sys.modules else 'qt not imported')\n"
        "sys.exit(status)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":99"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=60)  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stdout.strip() == "qt not imported"
    assert "libxcb-cursor.so.0" in result.stderr
    assert "packaging/bootstrap.sh run" in result.stderr
