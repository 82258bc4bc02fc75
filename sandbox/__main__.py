"""`python -m sandbox`: `flagdesk serve` alone, as `SandboxProcess` starts it. The same arguments
(`sandbox.options`), without the rest of the `flagdesk` program: `python -m app serve` also imports
every other command's module (the profile store and pydantic models among them), about 60 ms more
of the child's start, which the GUI waits for before its first data (`bench/gui_startup.py`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app import startup
from sandbox.options import DESCRIPTION, add_arguments, options_of, refusal


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    options = options_of(args)
    problem = refusal(options)
    if problem:
        print(f"flagdesk serve: {problem}", file=sys.stderr)
        return 2
    # the server's imports (Starlette, uvicorn, pydantic, the wire models) live as long as the
    # process: made with the collector off, then frozen out of its way (app.startup)
    startup.start_without_collector()
    startup.quiet_libraries()
    try:
        from sandbox.server import serve
    finally:
        startup.start_made()
    return serve(options)


if __name__ == "__main__":
    sys.exit(main())
