"""`flagdesk check`: connect, and say what works on this server with this token."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from app.api import errors as e
from app.commands.connection import (
    EXIT_OK,
    EXIT_UNAUTHORISED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    ConnectionSpec,
    UsageError,
    add_connection_arguments,
    connection_from_args,
)
from app.commands.output import echo, json_text, visible
from app.registry import EVERY_TOOL

if TYPE_CHECKING:  # light to import: the parser is built for every `flagdesk` command
    from app.api.capabilities import Capabilities
    from app.api.client import AdminClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_connection_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


async def probe(client: AdminClient) -> Capabilities:
    async with client:
        return await client.capabilities()


def run(args: argparse.Namespace) -> int:
    try:
        spec = connection_from_args(args)
        client = spec.client()  # reads --ca-bundle: ValueError when it cannot
    except (UsageError, ValueError) as exc:
        echo(f"flagdesk check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        caps = asyncio.run(probe(client))
    except (e.ServerUnreachable, e.BadResponse) as exc:
        return _failed(args, spec, EXIT_UNREACHABLE, "unreachable", exc)
    except (e.Unauthorized, e.Forbidden) as exc:
        return _failed(args, spec, EXIT_UNAUTHORISED, "unauthorised", exc)
    except e.ClientError as exc:
        return _failed(args, spec, EXIT_UNREACHABLE, "failed", exc)
    if args.json:
        print(json_text({"reachable": True, "authorised": True, **caps.to_json()}))
    else:
        print(report(caps))  # each line made visible in report()
    return EXIT_OK


def report(caps: Capabilities) -> str:
    """The text of `flagdesk check`: what the server said (its version, the reasons) made
    `visible`, line by line."""
    lines = [
        visible(f"Server   {caps.base_url}"),
        visible(f"         {caps.server_label}"),
        visible(f"Token    {caps.token_label}" + (" (Admin root role)" if caps.is_admin else "")),
        "",
    ]
    width = max(
        len(title)
        for tool in EVERY_TOOL
        for title in (tool.title, *(f"  {action.title}" for action in tool.actions))
    )
    indent = " " * (width + 9)
    columns = max(60, shutil.get_terminal_size((100, 24)).columns)

    def line(title: str, available: bool, why: str) -> None:
        head = f"  {title:<{width}}  {'yes' if available else 'no '}  "
        if not why:
            lines.append(head.rstrip())
        else:
            lines.extend(
                textwrap.wrap(visible(why), columns, initial_indent=head, subsequent_indent=indent)
            )

    for tool in EVERY_TOOL:
        availability = caps.operation(tool)
        line(tool.title, availability.available, availability.reason or availability.note)
        if availability.available:  # an action the tool's window cannot do here: why
            for action in tool.actions:
                done = caps.action(action)
                if not done.available:
                    line(f"  {action.title}", False, done.reason)
    return "\n".join(lines)


def _failed(
    args: argparse.Namespace, spec: ConnectionSpec, status: int, state: str, exc: e.ClientError
) -> int:
    if args.json:
        out: dict[str, Any] = {
            "url": spec.url,
            "reachable": status != EXIT_UNREACHABLE,
            "authorised": False,
            "error": {"kind": type(exc).__name__, "message": str(exc)},
        }
        if isinstance(exc, e.ApiError):
            out["error"]["status"] = exc.status
        print(json_text(out))
    else:
        echo(f"flagdesk check: {state}: {exc}", file=sys.stderr)
    return status
