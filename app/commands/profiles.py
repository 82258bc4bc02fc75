"""`flagdesk profiles list|show|add|remove`: the connection profiles the GUI uses too."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from typing import Any

from app.commands.connection import EXIT_OK, EXIT_USAGE
from app.commands.output import echo
from app.profiles import NoKeyring, Profile, ProfileError, ProfileStore, keyring_status

STORE_LABELS = {
    "keyring": "OS keyring",
    "file": "plain-text file",
    "memory": "memory (until the program exits)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="list the profiles")
    listing.add_argument("--json", action="store_true", help="print JSON")
    show = sub.add_parser("show", help="show one profile (never its tokens)")
    show.add_argument("name")
    show.add_argument("--json", action="store_true", help="print JSON")
    add = sub.add_parser(
        "add",
        help="add (or with --replace, change) a profile",
        description="Tokens are read from environment variables (or asked for on a terminal), "
        "never from the command line, and kept in the OS keyring. Without a usable keyring "
        "nothing is saved unless --token-store file is given: the tokens then go to a "
        "plain-text file readable only by you.",
    )
    add.add_argument("name")
    add.add_argument("--url", required=True, help="the server's base URL")
    add.add_argument("--token-env", metavar="VAR", default="FLAGDESK_TOKEN",
                     help="variable holding the admin API token or personal access token "
                     "(default FLAGDESK_TOKEN; asked for on a terminal when unset)")  # fmt: skip
    add.add_argument("--client-token-env", metavar="VAR", default="FLAGDESK_CLIENT_TOKEN",
                     help="variable holding a client token, for metrics (optional)")  # fmt: skip
    add.add_argument("--ca-bundle", metavar="FILE", help="trust this CA bundle as well")
    add.add_argument("--insecure", action="store_true",
                     help="INSECURE: do not verify the server's TLS certificate")  # fmt: skip
    add.add_argument("--token-store", choices=("keyring", "file"), default="keyring",
                     help="where tokens are kept (file: plain text, only yours)")  # fmt: skip
    add.add_argument("--replace", action="store_true", help="change an existing profile")
    remove = sub.add_parser("remove", help="remove a profile and its stored tokens")
    remove.add_argument("name")


def run(args: argparse.Namespace, store: ProfileStore | None = None) -> int:
    store = store or ProfileStore()
    try:
        return {"list": _list, "show": _show, "add": _add, "remove": _remove}[args.action](
            args, store
        )
    except NoKeyring as exc:
        echo(
            f"flagdesk profiles: {exc.reason}: nothing was saved. No OS keyring can keep the "
            f"token here. Run again with --token-store file to keep tokens in {exc.file_path} "
            "(plain text, readable only by you).",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except ProfileError as exc:
        echo(f"flagdesk profiles: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _describe(profile: Profile, store: ProfileStore) -> dict[str, Any]:
    out: dict[str, Any] = profile.model_dump()
    out["last_used"] = store.last == profile.name
    if profile.token_store == "file":
        out["token_file"] = str(store.tokens_file)
    return out


def _list(args: argparse.Namespace, store: ProfileStore) -> int:
    profiles = store.profiles()
    if args.json:
        print(json.dumps([_describe(p, store) for p in profiles], indent=2))
        return EXIT_OK
    if not profiles:
        echo("No profiles yet: add one with `flagdesk profiles add NAME --url URL`.")
        return EXIT_OK
    width = max(len(p.name) for p in profiles)
    last = store.last
    for p in profiles:
        mark = "*" if p.name == last else " "
        tls = "" if p.verify_tls else "  (TLS NOT VERIFIED)"
        echo(f"{mark} {p.name:<{width}}  {p.url}{tls}")
    return EXIT_OK


def _show(args: argparse.Namespace, store: ProfileStore) -> int:
    profile = store.get(args.name)
    if args.json:
        print(json.dumps(_describe(profile, store), indent=2))
        return EXIT_OK
    where = STORE_LABELS[profile.token_store]
    if profile.token_store == "file":
        where += f" {store.tokens_file}"
    echo(f"Profile      {profile.name}")
    echo(f"URL          {profile.url}")
    tls = "verified" if profile.verify_tls else "NOT VERIFIED (insecure)"
    echo(f"TLS          {tls}" + (f", CA bundle {profile.ca_bundle}" if profile.ca_bundle else ""))
    echo(f"Tokens in    {where}")
    echo(f"Client token {'yes' if profile.has_client_token else 'no'}")
    return EXIT_OK


def _read_token(var: str, what: str, *, required: bool) -> str | None:
    from app.api.sending import UnusableToken, check_token

    value = os.environ.get(var, "").strip()
    where = f"The environment variable {var}"
    if not value and required and sys.stdin.isatty():
        value = getpass.getpass(f"{what} (not echoed): ").strip()
        where = f"The {what} typed"
    if value:
        try:
            check_token(value, where)
        except UnusableToken as exc:
            raise ProfileError(f"{exc} Nothing was saved.") from None
        return value
    if required:
        raise ProfileError(f"no token: set {var} to the {what}, or run this on a terminal")
    return None


def _add(args: argparse.Namespace, store: ProfileStore) -> int:
    if args.token_store == "keyring":
        usable, description = keyring_status()
        if not usable:
            raise NoKeyring(description, store.tokens_file)
    try:
        profile = Profile(
            name=args.name,
            url=args.url,
            verify_tls=not args.insecure,
            ca_bundle=args.ca_bundle,
            token_store=args.token_store,
        )
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ProfileError(_first_problem(exc)) from None
    token = _read_token(
        args.token_env, "admin API token or personal access token", required=not args.replace
    )
    client_token = _read_token(args.client_token_env, "client token", required=False)
    store.save(
        profile,
        token=token,
        client_token=client_token,
        replace=args.name if args.replace else None,
    )
    where = STORE_LABELS[profile.token_store]
    if profile.token_store == "file":
        where += f" {store.tokens_file} (readable only by you, not encrypted)"
    echo(f"Saved profile {profile.name!r}; tokens kept in the {where}.")
    if not profile.verify_tls:
        echo("Warning: TLS certificates of this server will NOT be verified.", file=sys.stderr)
    return EXIT_OK


def _remove(args: argparse.Namespace, store: ProfileStore) -> int:
    store.remove(args.name)
    echo(f"Removed profile {args.name!r} and its stored tokens.")
    return EXIT_OK


def _first_problem(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        return f"{field}: {message}"
    return str(exc)
