"""Turning `--profile NAME` or `--url URL --token-env VAR` into an `AdminClient`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
from typing import TYPE_CHECKING

from app.connection import ConnectionSpec, MissingToken, spec_of
from app.profiles import ProfileError, ProfileStore

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "ConnectionSpec",
    "UsageError",
    "add_connection_arguments",
    "client_from_args",
    "connection_from_args",
]

#: exit statuses every command shares
EXIT_OK = 0
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_UNAUTHORISED = 4


class UsageError(Exception):
    """Bad arguments or environment; `str()` says what to change. Exit status 2."""


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """`--profile NAME`, or `--url URL` with the tokens read from environment variables (a token
    in argv would show in the process list and the shell history)."""
    where = parser.add_argument_group("connection")
    where.add_argument("--profile", metavar="NAME", help="a saved connection profile")
    where.add_argument("--url", metavar="URL", help="the server's base URL")
    where.add_argument("--token-env", metavar="VAR", default="FLAGDESK_TOKEN",
                       help="environment variable holding the admin API token or personal "
                       "access token (default: FLAGDESK_TOKEN)")  # fmt: skip
    where.add_argument("--client-token-env", metavar="VAR", default="FLAGDESK_CLIENT_TOKEN",
                       help="environment variable holding a client token, for metrics "
                       "(default: FLAGDESK_CLIENT_TOKEN; optional)")  # fmt: skip
    where.add_argument("--ca-bundle", metavar="FILE", help="trust this CA bundle as well")
    where.add_argument("--insecure", action="store_true",
                       help="INSECURE: do not verify the server's TLS certificate")  # fmt: skip


def connection_from_args(args: argparse.Namespace) -> ConnectionSpec:
    if args.profile and args.url:
        raise UsageError("give either --profile or --url, not both")
    if args.profile:
        store = ProfileStore()
        try:
            profile = store.get(args.profile)
            spec = spec_of(profile, store)
        except MissingToken as exc:
            raise UsageError(
                f"{exc} Store one with `flagdesk profiles add {shlex.quote(profile.name)} "
                f"--url {shlex.quote(profile.url)} --replace`."
            ) from None
        except ProfileError as exc:
            raise UsageError(str(exc)) from None
        client_token = os.environ.get(args.client_token_env, "").strip()
        kept = f"kept {store.token_place(profile, 'admin')}"
        checked(spec.token, f"the token of profile {profile.name!r} ({kept})")
        if client_token:
            checked(client_token, f"the environment variable {args.client_token_env}")
        else:
            checked(spec.client_token, f"the client token of profile {profile.name!r} ({kept})")
        return dataclasses.replace(
            spec,
            client_token=client_token or spec.client_token,
            verify_tls=spec.verify_tls and not args.insecure,
            ca_bundle=args.ca_bundle or spec.ca_bundle,
            label=f"profile {profile.name}",
        )
    if not args.url:
        raise UsageError(
            "say where to connect: --profile NAME, or --url URL with the token in the "
            f"environment variable named by --token-env (default {args.token_env})"
        )
    spec = url_connection(args, args.url)
    if not spec.token:
        raise UsageError(
            f"the environment variable {args.token_env} holds no token: set it to an admin API "
            "token or a personal access token (or name another variable with --token-env)"
        )
    return spec


def client_from_args(args: argparse.Namespace) -> tuple[AdminClient, str]:
    """The client of the command line's connection (`connection_from_args`), and the name the
    journal files its changes under: the profile's, or the URL (as the window names it).
    Raises `UsageError` for that, and for a CA bundle that cannot be read."""
    spec = connection_from_args(args)
    try:
        client = spec.client()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return client, args.profile or spec.url


def checked(token: str | None, where: str) -> None:
    """Refuse a token that cannot be sent as a header value (`app.api.sending.check_token`),
    naming `where` it came from, as a `UsageError`: before any request, never quoting it."""
    from app.api.sending import UnusableToken, check_token

    try:
        check_token(token, where[0].upper() + where[1:])
    except UnusableToken as exc:
        raise UsageError(f"{exc} Nothing was sent.") from None


def url_connection(args: argparse.Namespace, url: str) -> ConnectionSpec:
    """A connection to `url` (checked, then named by it) with the tokens of the environment
    variables that --token-env and --client-token-env name (either may be empty) and the TLS
    options of the command line."""
    from app.api.client import normalise_base_url

    try:
        url = normalise_base_url(url)
    except ValueError as exc:
        raise UsageError(f"--url: {exc}") from None
    token = os.environ.get(args.token_env, "").strip()
    client_token = os.environ.get(args.client_token_env, "").strip() or None
    checked(token, f"the environment variable {args.token_env}")
    checked(client_token, f"the environment variable {args.client_token_env}")
    return ConnectionSpec(
        url=url,
        token=token,
        client_token=client_token,
        verify_tls=not args.insecure,
        ca_bundle=args.ca_bundle,
        label=url,
    )
