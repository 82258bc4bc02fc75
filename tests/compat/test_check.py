"""`flagdesk check` as a user runs it, against the real Unleash peer (each of `VERSIONS`) and,
the same tests (`target`), against the sandbox playing that version (`flagdesk serve
--as-version`); and a comparison of what check finds on the two, every tool and action.

(`tests/api` covers `check` against the sandbox; here it is only what a real server makes of it.)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.api.capabilities import NEEDS_PAT
from app.registry import version_rows
from tests.compat.conftest import RELEASES, per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

REPO = Path(__file__).resolve().parents[2]
EXIT_OK, EXIT_UNREACHABLE, EXIT_UNAUTHORISED = 0, 3, 4


def check(
    url: str, token: str, *extra: str, client_token: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGDESK_")}
    env["FLAGDESK_TOKEN"] = token
    if client_token:
        env["FLAGDESK_CLIENT_TOKEN"] = client_token
    return subprocess.run(
        [sys.executable, "-m", "app", "check", "--url", url, *extra],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def check_json(
    url: str, token: str, *, client_token: str | None = None, status: int = EXIT_OK
) -> dict[str, Any]:
    done = check(url, token, "--json", client_token=client_token)
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def available(out: dict[str, Any]) -> set[str]:
    return {key for key, op in out["operations"].items() if op["available"]}


def test_admin_token(target: Peer) -> None:
    out = check_json(target.url, target.admin_token)
    assert out["reachable"] is True and out["authorised"] is True
    assert out["url"] == target.url
    release = RELEASES[target.line]
    assert out["server"] == {
        "kind": "unleash",
        "version": release,
        "edition": "Open Source",
        "label": f"Unleash {release} (Open Source)",
    }
    token = {"kind": "admin", "label": "admin API token", "user": None, "admin": True}
    assert out["token"] == token
    # the archive endpoint went in 7.0; the search API stands in for it
    assert out["archiveEndpoint"] is per_version(target, {"5.12 6.10": True, "7.6 8.2": False})
    ops = out["operations"]
    assert available(out) == {
        "users",
        "inactive_users",
        "archived_features",
        "context_usage",
        "api_tokens",
        # issue 36: the built-in roles (listed through the users), the clean-up report, and who
        # can do what where (from the root roles alone on open source)
        "roles",
        "cleanup",
        "access_overview",
        # issue 37: comparing and promoting (flags and their configuration are open source's)
        "compare",
        # issue 38: the statistics, maintenance mode and CORS origins (open source's), and the
        # event log (every release: the search from 6.0, 5.x's search by body)
        "instance",
        "events",
    }
    assert "Enterprise" in ops["groups"]["reason"]
    assert ops["project_dashboard"]["reason"] == per_version(target, {
        "5.12": "The personal dashboard needs Unleash 6.3 or later; this server is 5.12.8",
        "6.10 7.6 8.2": NEEDS_PAT,
    })  # fmt: skip
    assert "client" in ops["metrics_upload"]["reason"]
    assert ops["archived_features"].get("note", "") == per_version(target, {
        "5.12 6.10": "",
        "7.6 8.2": "through the feature search API: this server has no archive endpoint "
        "(removed in Unleash 7.0)",
    })  # fmt: skip
    assert target.admin_token not in json.dumps(out)
    # per action (app.registry): Unleash OSS has every action but the groups', the service
    # accounts', the custom roles' and the banners' (Enterprise's) and project access's (Pro's and
    # Enterprise's) (and the metrics upload, which needs a client token besides this one, and a
    # user's personal access tokens, which an admin API token has no user for, and the promote's
    # imports, which Unleash refuses with an admin API token)
    actions = out["actions"]
    done = {key for key, action in actions.items() if action["available"]}
    assert done == {key for key in actions
                    if not key.startswith(("groups.", "metrics.", "personal_tokens.",
                                           "service_accounts.", "roles.",
                                           "project_access.", "banners."))
                    and key != "compare.import"}  # fmt: skip
    assert "needs a personal access token" in actions["compare.import"]["reason"]
    assert "Custom roles need Unleash Enterprise" in actions["roles.create"]["reason"]
    assert "Pro or Enterprise" in actions["project_access.grant"]["reason"]
    # issue 38: banners are Enterprise's (5.7+)
    assert "Banners need Unleash Enterprise" in actions["banners.create"]["reason"]
    assert "Banners need Unleash Enterprise" in ops["banners"]["reason"]
    assert "Enterprise" in ops["service_accounts"]["reason"]
    assert "Enterprise" in actions["service_accounts.create_token"]["reason"]
    assert "client" in actions["metrics.upload"]["reason"]
    assert "Enterprise" in actions["groups.delete"]["reason"]
    assert "needs a personal access token" in ops["personal_tokens"]["reason"]
    assert "needs a personal access token" in actions["personal_tokens.delete"]["reason"]


def test_admin_token_with_a_client_token(target: Peer) -> None:
    client_token = target.require_client_token()
    out = check_json(target.url, target.admin_token, client_token=client_token)
    assert out["operations"]["metrics_upload"]["available"] is True
    assert out["token"]["kind"] == "admin"


def test_personal_access_token(target: Peer) -> None:
    out = check_json(target.url, target.require_pat())
    assert out["server"]["version"] == RELEASES[target.line]
    assert out["token"]["kind"] == "personal"
    assert out["token"]["user"].lower() == "admin"  # Unleash: its username; the sandbox: "Admin"
    assert out["token"]["admin"] is True
    assert out["actions"]["compare.import"]["available"] is True  # a user's token may import
    assert out["operations"]["project_dashboard"] == per_version(target, {
        "5.12": {"available": False, "reason": "The personal dashboard needs Unleash 6.3 or "
                 "later; this server is 5.12.8"},
        "6.10 7.6 8.2": {"available": True},
    })  # fmt: skip
    assert "Enterprise" in out["operations"]["groups"]["reason"]


def test_client_token_as_the_token(target: Peer) -> None:
    """Every version refuses a client token on the admin API; check says what the token is good
    for."""
    out = check_json(target.url, target.require_client_token())
    assert out["token"]["kind"] == "client"
    assert available(out) == {"metrics_upload"}
    done = {key for key, action in out["actions"].items() if action["available"]}
    assert done == {"metrics.upload"}  # its tool's one action; none of the admin API's


def test_text_report(target: Peer) -> None:
    done = check(target.url, target.admin_token)
    assert done.returncode == EXIT_OK, done.stderr
    assert f"Unleash {RELEASES[target.line]} (Open Source)" in done.stdout
    assert "admin API token (Admin root role)" in done.stdout
    assert "Enterprise" in done.stdout


def test_bogus_token_is_unauthorised(target: Peer) -> None:
    secret = f"flagdesk-compat-bogus-{time.time_ns()}"
    out = check_json(target.url, f"*:*.{secret}", status=EXIT_UNAUTHORISED)
    assert out["reachable"] is True and out["authorised"] is False
    assert out["error"]["kind"] == "Unauthorized"
    assert out["error"]["status"] == 401
    assert secret not in json.dumps(out)

    done = check(target.url, f"*:*.{secret}")
    assert done.returncode == EXIT_UNAUTHORISED
    assert "unauthorised" in done.stderr and secret not in done.stderr + done.stdout


def test_closed_port_is_unreachable(peer: Peer) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, and nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    out = check_json(url, peer.admin_token, status=EXIT_UNREACHABLE)
    assert out["reachable"] is False and out["authorised"] is False
    assert out["url"] == url
    assert out["error"]["kind"] == "ConnectionRefused"
    assert "refused" in out["error"]["message"]


#: the tokens a connection can hold: (main token, client token beside it)
CONNECTIONS = {
    "admin API token": ("admin_token", None),
    "admin API token and a client token": ("admin_token", "client_token"),
    "personal access token": ("pat", None),
    "client token": ("client_token", None),
}


def test_the_sandbox_playing_this_version_finds_the_same(peer: Peer, twin: Peer) -> None:
    """`flagdesk check --json` against the real server and against `flagdesk serve
    --as-version` of its version: the same availability, reason and note for every tool and
    action, with each kind of connection."""
    for connection, (main, beside) in CONNECTIONS.items():
        found = []
        for server in (peer, twin):
            out = check_json(server.url, getattr(server, main),
                             client_token=getattr(server, beside) if beside else None)  # fmt: skip
            found.append({key: out[key] for key in ("server", "archiveEndpoint", "operations",
                                                    "actions")})  # fmt: skip
        assert found[0] == found[1], connection


def test_the_version_table_holds_on_this_server(peer: Peer) -> None:
    """The README's table (`app.registry.version_rows`) says of this release what `flagdesk
    check` finds here, with an admin's personal access token and a client token: "yes" where it
    works (the note where it differs), "no"/"Enterprise" where it does not."""
    out = check_json(peer.url, peer.require_pat(), client_token=peer.require_client_token())
    found = {**out["operations"], **out["actions"]}
    release = RELEASES[peer.line]
    for key, cells in version_rows():
        cell, there = cells[release], found[key]
        assert there["available"] is cell.startswith("yes"), (key, cell, there)
        if cell.startswith("no: needs "):
            assert cell.removeprefix("no: needs ") in there["reason"], (key, cell, there)
        if cell == "Enterprise":
            assert "Enterprise" in there["reason"], (key, there)
        if "search API" in cell:
            assert "search API" in there["note"], (key, there)
