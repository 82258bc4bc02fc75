"""A virtual X display of one's own (Xvfb), for the bundle's benchmark and its tests
(bench/gui_startup.py --bundle, packaging/tests/test_bundle.py).

The display number is drawn at random from a high range rather than left to Xvfb's
`-displayfd` search, which starts at :0 and judges a number free by its lock file in /tmp: on a
machine where other sessions have a /tmp of their own but share the abstract socket namespace,
that search handed out a number whose socket another session's Xvfb held (our Xvfb then exited
and the clients reached the other one). A number in use makes Xvfb exit: another is drawn."""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import shutil
import subprocess
from collections.abc import Iterator


def _answers(display: str) -> bool:
    x11 = ctypes.CDLL("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x11.XOpenDisplay(display.encode())
    if not dpy:
        return False
    x11.XCloseDisplay(dpy)
    return True


@contextlib.contextmanager
def virtual_display(tries: int = 5) -> Iterator[str]:
    """Start Xvfb (1280x800, 24 bits, no TCP), yield its DISPLAY (":N"), stop it."""
    server = shutil.which("Xvfb")
    if server is None:
        raise RuntimeError("Xvfb is missing: run packaging/bootstrap.sh bundle")
    for _ in range(tries):
        read_fd, write_fd = os.pipe()
        number = random.randint(200, 9000)
        # -noreset: by default the server resets when its last client leaves, and a client
        # connecting meanwhile is refused; the check below is such a last client, and the next
        # one (the benchmark's window watcher) was refused in 5 of 120 starts without it, 0 with
        proc = subprocess.Popen([server, f":{number}", "-displayfd", str(write_fd), "-screen", "0",
                                 "1280x800x24", "-nolisten", "tcp", "-noreset"],
                                pass_fds=[write_fd], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        os.close(write_fd)
        with os.fdopen(read_fd) as ready:  # Xvfb writes the number once it serves, else exits
            served = ready.readline().strip() == str(number)
        display = f":{number}"
        if served and proc.poll() is None and _answers(display):
            try:
                yield display
            finally:
                proc.terminate()
                proc.wait(10)
            return
        proc.terminate()
        proc.wait(10)
    raise RuntimeError(f"Xvfb did not start a display in {tries} tries")
