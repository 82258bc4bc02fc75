"""`python -m sandbox`: `flagdesk serve` alone, as `SandboxProcess` starts it. The same arguments
(`sandbox.options`), without the rest of the `flagdesk` program: `python -m app serve` also imports
every other command's module (the profile store and pydantic models among them), about 60 ms more
of the child's start, which the GUI waits for before its first data (`bench/gui_startup.py`)."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence

from sandbox.options import DESCRIPTION, add_arguments, options_of


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    # the server's imports (Starlette, uvicorn, pydantic, the wire models) make objects by the
    # hundred thousand, and the collector ran over them again and again: about a tenth of the boot,
    # which the GUI waits for before its first data. What they made lives as long as the
    # process: frozen, out of the collector's way, once they are in.
    gc.disable()
    # pydantic looks for plugins (entry points of every installed distribution: 10-15 ms) as
    # its first model is made; the sandbox has none to load
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        from sandbox.server import serve
    finally:
        gc.freeze()
        gc.enable()
    return serve(options_of(args))


if __name__ == "__main__":
    sys.exit(main())
