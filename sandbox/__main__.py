"""`python -m sandbox`: `flagdesk serve` alone, as `SandboxProcess` starts it. The same arguments
(`sandbox.options`), without the rest of the `flagdesk` program: `python -m app serve` also imports
every other command's module (the profile store and pydantic models among them), about 60 ms more
of the child's start, which the GUI waits for before its first data (`bench/gui_startup.py`)."""

from __future__ import annotations

import argparse
import gc
import importlib.util
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
        uvicorn_without_its_command_line()
        from sandbox.server import serve
    finally:
        gc.freeze()
        gc.enable()
    return serve(options_of(args))


def uvicorn_without_its_command_line() -> None:
    """Import uvicorn's `Config` and `Server` without its package's `__init__`, which imports
    its command line (`uvicorn.main`: click, and the reload and worker supervisors with
    multiprocessing) for a `uvicorn` command this process never runs: about 0.02 s of the
    child's boot, which the window waits for before its first data (`bench/sandbox_boot.py`).
    The package is made from its spec, unexecuted, and given the two names the sandbox uses;
    its submodules import as usual. Here only, in a process that is the server and nothing else:
    elsewhere (the tests' in-process servers) uvicorn is imported whole. Where uvicorn is
    already imported, or is not a package with these two modules, its own `__init__` runs."""
    if "uvicorn" in sys.modules:
        return
    spec = importlib.util.find_spec("uvicorn")
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    sys.modules["uvicorn"] = package
    try:
        from uvicorn.config import Config
        from uvicorn.server import Server
    except ImportError:
        del sys.modules["uvicorn"]  # the next `import uvicorn` runs its `__init__`
        return
    package.Config = Config  # type: ignore[attr-defined]
    package.Server = Server  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
