"""`flagdesk serve`: run the embedded sandbox server. Light to import (the parser is built for
every `flagdesk` command): the arguments come from `sandbox.options` (standard library only); the
sandbox, uvicorn and Starlette are imported by `run()`."""

from __future__ import annotations

import argparse
import sys

from sandbox.options import DESCRIPTION, add_arguments, options_of, refusal

__all__ = ["DESCRIPTION", "add_arguments", "run"]


def run(args: argparse.Namespace) -> int:
    options = options_of(args)
    problem = refusal(options)  # before the database is made and its tokens printed
    if problem:
        print(f"flagdesk serve: {problem}", file=sys.stderr)
        return 2
    from sandbox.server import serve

    return serve(options)
