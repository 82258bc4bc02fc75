"""Turning `--profile NAME` or `--url URL --token-env VAR` into an `AdminClient`."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from app.api.client import AdminClient, normalise_base_url
from app.profiles import ProfileError, ProfileStore

#: exit statuses every command shares
EXIT_OK = 0
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_UNAUTHORISED = 4


class UsageError(Exception):
    """Bad arguments or environment; `str()` says what to change. Exit status 2."""


@dataclass(frozen=True)
class ConnectionSpec:
    """Where to connect and with what; `repr` leaves the tokens out."""

    url: str
    token: str
    client_token: str | None = None
    verify_tls: bool = True
    ca_bundle: str | None = None
    label: str = ""

    def __repr__(self) -> str:
        return f"ConnectionSpec(url={self.url!r}, label={self.label!r})"

    def client(self) -> AdminClient:
        return AdminClient(
            self.url,
            self.token,
            client_token=self.client_token,
            verify_tls=self.verify_tls,
            ca_bundle=self.ca_bundle,
        )


def connection_from_args(args: argparse.Namespace) -> ConnectionSpec:
    if args.profile and args.url:
        raise UsageError("give either --profile or --url, not both")
    if args.profile:
        store = ProfileStore()
        try:
            profile = store.get(args.profile)
            token, client_token = store.tokens(profile)
        except ProfileError as exc:
            raise UsageError(str(exc)) from None
        if not token:
            where = {
                "keyring": "in the OS keyring",
                "file": f"in {store.tokens_file}",
                "memory": "it was kept in memory only, by a program that has exited",
            }[profile.token_store]
            raise UsageError(
                f"profile {profile.name!r} has no token ({where}); store one with "
                f"`flagdesk profiles add {profile.name} --url {profile.url} --replace`"
            )
        return ConnectionSpec(
            url=profile.url,
            token=token,
            client_token=os.environ.get(args.client_token_env) or client_token,
            verify_tls=profile.verify_tls and not args.insecure,
            ca_bundle=args.ca_bundle or profile.ca_bundle,
            label=f"profile {profile.name}",
        )
    if not args.url:
        raise UsageError(
            "say where to connect: --profile NAME, or --url URL with the token in the "
            f"environment variable named by --token-env (default {args.token_env})"
        )
    try:
        url = normalise_base_url(args.url)
    except ValueError as exc:
        raise UsageError(f"--url: {exc}") from None
    token = os.environ.get(args.token_env, "").strip()
    if not token:
        raise UsageError(
            f"the environment variable {args.token_env} holds no token: set it to an admin API "
            "token or a personal access token (or name another variable with --token-env)"
        )
    client_token = os.environ.get(args.client_token_env, "").strip() or None
    return ConnectionSpec(
        url=url,
        token=token,
        client_token=client_token,
        verify_tls=not args.insecure,
        ca_bundle=args.ca_bundle,
        label=url,
    )
