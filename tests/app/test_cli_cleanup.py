"""`flagdesk cleanup report [--days N] [--json]` run as a subprocess against sandboxes over HTTP:
on what `flagdesk serve --scale` makes, the plain report grouped by kind with the planted counts
and the command each kind's action takes, one line for a part that is not available here; the
JSON object's shape; `--days` moving the "not seen" count; a personal access token adding the
user's own tokens; an open-source release played without groups saying so; nothing changed on
the server; and the exit statuses of the other commands (2 bad usage, 3 unreachable, 4 a token
that may not)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.api.models import ApiTokenList
from sandbox import demo
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import as_json, run_flagdesk
from tests.conftest import personal_token_of

COUNTS = {
    "api_token_expired": 1_000,
    "api_token_never_seen": 1_001,  # and the client token `flagdesk serve` keeps
    "api_token_not_seen": 1_000,
    "group_empty": 20,
    "user_inactive": 112,  # and the demo's 12
    "service_account_unused": 9,  # and the demo's ci-deploy-bot
    "role_unused": 4,
}


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    with SandboxProcess(tmp_path_factory.mktemp("cli-cleanup") / "s.sqlite3", "--scale") as sb:
        yield sb


def flagdesk(
    sb: SandboxProcess | str, *args: str, data: Path, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_flagdesk(("cleanup", "report"), sb, args, data, token)


def test_the_plain_report_is_grouped_by_kind_with_counts(
    scaled: SandboxProcess, tmp_path: Path
) -> None:
    done = flagdesk(scaled, data=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Clean-up report of {scaled.url}, 20")
    assert lines[0].endswith("UTC; not seen or not used: 30 days or more")
    headings = [line for line in lines if ": " in line and not line.startswith(("…", " "))
                and line.split(":")[0][:1].isupper()]  # fmt: skip
    assert headings[1:8] == [
        "API tokens expired: 1,000 · api_tokens.delete: flagdesk tokens delete ID",
        "API tokens never seen: 1,001 · api_tokens.delete: flagdesk tokens delete ID",
        "API tokens not seen lately: 1,000 · api_tokens.delete: flagdesk tokens delete ID",
        "Groups with no members: 20 · groups.delete: flagdesk groups delete ID",
        "Inactive users: 112 · inactive_users.delete: flagdesk users inactive delete --ids ID",
        "Service accounts with no token used lately: 9 · service_accounts.delete: flagdesk "
        "service-accounts delete ID",
        "Custom roles nobody holds: 4 · roles.delete: flagdesk roles delete ID",
    ]
    assert headings[8].startswith("Your personal access tokens: not available here: This needs "
                                  "a personal access token")  # fmt: skip
    assert lines[-1] == f"3,146 findings on {scaled.url} (nothing was changed)"
    assert lines[3].split() == ["ID", "NAME", "DETAIL", "WHY"]  # a table under each heading
    client = next(line for line in lines if "  client  " in line and "never seen" in line)
    assert client.startswith("…")  # named by its last four characters
    group = next(line for line in lines if "Scale group 200 " in line)
    assert "no members, created 20" in group


def test_json_days_and_nothing_changed(scaled: SandboxProcess, tmp_path: Path) -> None:
    with scaled.admin() as http:
        before = ApiTokenList.model_validate(http.get("/api/admin/api-tokens").json()).tokens
    out = as_json(flagdesk(scaled, "--json", data=tmp_path))
    assert list(out) == ["command", "server", "days", "asOf", "counts", "total", "unavailable",
                         "findings", "exit_status"]  # fmt: skip
    assert out["command"] == "report" and out["exit_status"] == 0 and out["days"] == 30
    assert out["counts"] == COUNTS and out["total"] == 3_146
    assert [u["what"] for u in out["unavailable"]] == ["your personal access tokens"]
    assert out["unavailable"][0]["kinds"] == ["pat_expired", "pat_never_used", "pat_not_used"]
    first = out["findings"][0]
    assert list(first) == ["kind", "id", "name", "detail", "why", "since", "action", "tool"]
    assert first["kind"] == "api_token_expired" and first["action"] == "api_tokens.delete"
    assert first["since"].endswith("Z") and len(first["id"]) == 5
    week = as_json(flagdesk(scaled, "--json", "--days", "7", data=tmp_path))
    assert week["days"] == 7
    assert week["counts"] == {
        **COUNTS,
        "api_token_not_seen": demo.tokens_not_seen_for(7),
        "service_account_unused": demo.service_accounts_unused_for(7),
    }
    with scaled.admin() as http:
        after = ApiTokenList.model_validate(http.get("/api/admin/api-tokens").json()).tokens
    assert [(t.secret, t.expiresAt) for t in after] == [(t.secret, t.expiresAt) for t in before]
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # no journal, no snapshot


def test_a_personal_access_token_lists_its_users_tokens(
    scaled: SandboxProcess, tmp_path: Path
) -> None:
    token = personal_token_of(scaled, "admin")
    out = as_json(flagdesk(scaled, "--json", data=tmp_path, token=token))
    assert out["unavailable"] == []
    assert out["counts"] == {**COUNTS, "pat_expired": 3, "pat_never_used": 2, "pat_not_used": 1}
    text = flagdesk(scaled, data=tmp_path, token=token).stdout
    assert "Your personal access tokens expired: 3 · personal_tokens.delete: flagdesk pats " \
        "delete ID" in text  # fmt: skip
    assert "Your personal access tokens not used lately: 1" in text


def test_an_open_source_release_says_groups_are_not_available(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--as-version", "8.2") as sb:
        done = flagdesk(sb, data=tmp_path)
        out = as_json(flagdesk(sb, "--json", data=tmp_path))
    assert done.returncode == 0, done.stderr
    assert ("Groups: not available here: User groups need Unleash Enterprise: this server has "
            "no groups endpoint") in done.stdout.splitlines()  # fmt: skip
    assert "group_empty" not in out["counts"]
    assert [u["what"] for u in out["unavailable"]] == [
        "your personal access tokens",
        "groups",
        "service accounts",
        "custom roles",
    ]
    assert "Service accounts: not available here: Service accounts need Unleash Enterprise" in \
        done.stdout  # fmt: skip
    assert "Custom roles: not available here: " in done.stdout


def test_exit_statuses(scaled: SandboxProcess, tmp_path: Path) -> None:
    usage = flagdesk(scaled, "--days", "-1", data=tmp_path)
    assert usage.returncode == 2 and "-1: a number of days is 0 or more" in usage.stderr
    viewer = flagdesk(scaled, "--json", data=tmp_path,
                      token=personal_token_of(scaled, "zoltan.horvath"))  # fmt: skip
    assert viewer.returncode == 4 and "Admin root role" in viewer.stderr
    client = flagdesk(scaled, data=tmp_path, token=scaled.client_token)
    assert client.returncode == 4, client.stderr
    gone = flagdesk("http://127.0.0.1:9", data=tmp_path)
    assert gone.returncode == 3, gone.stderr
