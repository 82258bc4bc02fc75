"""`flagdesk serve`: run the embedded sandbox server. Light to import (the parser is built for
every `flagdesk` command): the arguments come from `sandbox.options` (standard library only); the
sandbox, uvicorn and Starlette are imported by `run()`."""

from __future__ import annotations

import argparse

from sandbox.options import DESCRIPTION, add_arguments, options_of

__all__ = ["DESCRIPTION", "add_arguments", "run"]


def run(args: argparse.Namespace) -> int:
    from sandbox.server import serve

    return serve(options_of(args))
