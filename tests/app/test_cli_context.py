"""`flagdesk context list|usage|delete` against sandboxes over HTTP, as a subprocess (and in
process where a terminal is pretended): the list and a field's usage as text and JSON;
--dry-run prints the exact request and changes nothing; without a terminal and without --yes
nothing changes; a field in use is refused with its usage and nothing sent; the terminal's
question; --yes deletes with a snapshot and a journal entry, read back from the server; the
exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk
from tests.faults import closed_port


def flagdesk(
    sb: SandboxProcess | str, *args: str, data: Path, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`flagdesk context ARGS --url <sandbox>` with stdin not a terminal."""
    return run_flagdesk(("context",), sb, args, data, token)


def field_names(sb: SandboxProcess) -> set[str]:
    with sb.admin() as http:
        return {f["name"] for f in http.get("/api/admin/context").json()}


def test_list_and_usage_as_text_and_json(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    text = flagdesk(demo_sandbox, "list", data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STICKY", "LEGAL", "VALUES", "USED", "IN", "FLAGS",
                                "DESCRIPTION"]  # fmt: skip
    region = next(line for line in lines if line.startswith("region "))
    assert region.split()[:3] == ["region", "yes", "4"]
    assert lines[-1] == f"{len(field_names(demo_sandbox))} context fields on {demo_sandbox.url}"
    listed = as_json(flagdesk(demo_sandbox, "list", "--json", data=tmp_path))
    assert {f["name"] for f in listed["contextFields"]} == field_names(demo_sandbox)

    usage = as_json(flagdesk(demo_sandbox, "usage", "region", "--json", data=tmp_path))
    with demo_sandbox.admin() as http:
        served = http.get("/api/admin/context/region/strategies").json()["strategies"]
    assert usage["count"] == len(served) > 0
    assert [s["id"] for s in usage["strategies"]] == [s["id"] for s in served]
    text = flagdesk(demo_sandbox, "usage", "region", data=tmp_path)
    assert text.stdout.splitlines()[0].split() == ["PROJECT", "FLAG", "ENVIRONMENT", "STRATEGY",
                                                   "STRATEGY", "ID"]  # fmt: skip
    assert text.stdout.splitlines()[-1].startswith(f"“region” is used by {len(served)} strategies")
    unused = flagdesk(demo_sandbox, "usage", "tenantId", data=tmp_path)
    assert unused.stdout == f"No strategy uses “tenantId” on {demo_sandbox.url}\n"
    assert not (tmp_path / "journal").exists()  # reading journals nothing


def test_dry_run_and_no_terminal_change_nothing(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    dry = flagdesk(demo_sandbox, "delete", "tenantId", "--dry-run", data=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == "DELETE /api/admin/context/tenantId\n"
    assert "nothing was sent" in dry.stderr
    as_object = as_json(flagdesk(demo_sandbox, "delete", "tenantId", "--dry-run", "--json",
                                 data=tmp_path))  # fmt: skip
    assert as_object["request"] == {"method": "DELETE", "path": "/api/admin/context/tenantId",
                                    "body": None}  # fmt: skip
    refused = flagdesk(demo_sandbox, "delete", "tenantId", data=tmp_path)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "--yes" in refused.stderr and "nothing was deleted" in refused.stderr
    assert as_json(flagdesk(demo_sandbox, "delete", "tenantId", "--json",
                            data=tmp_path))["exit_status"] == 2  # fmt: skip
    assert "tenantId" in field_names(demo_sandbox)
    assert not (tmp_path / "journal").exists()


def test_a_field_in_use_is_refused_with_its_usage(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(demo_sandbox, "delete", "region", "--yes", data=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].split()[:3] == ["PROJECT", "FLAG", "ENVIRONMENT"]
    assert "“region” cannot be deleted:" in result.stderr
    assert "Nothing was sent." in result.stderr
    out = as_json(flagdesk(demo_sandbox, "delete", "region", "--yes", "--json", data=tmp_path))
    assert out["exit_status"] == 1 and out["strategies"] and "cannot be deleted" in out["error"]
    assert "region" in field_names(demo_sandbox)
    assert not (tmp_path / "journal").exists()


def test_yes_deletes_with_a_snapshot_and_a_journal_entry(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    out = as_json(flagdesk(sandbox, "delete", "tenantId", "--yes", "--json", data=tmp_path))
    assert (out["exit_status"], out["deleted"], out["status"]) == (0, "tenantId", 200)
    assert "tenantId" not in field_names(sandbox)
    folder = journal_folder(sandbox.url, tmp_path)
    snapshot = Path(out["snapshot"])
    assert snapshot.parent == folder and snapshot.suffix == ".json"
    saved = json.loads(snapshot.read_text())
    assert saved["name"] == "tenantId" and saved["description"].startswith("Customer account")
    (entry,) = read_journal(folder / JOURNAL_NAME)
    assert (entry.action, entry.ids, entry.state, entry.status) == (
        "context_fields.delete", ["tenantId"], State.DONE, 200)  # fmt: skip
    assert entry.before == {"field": "tenantId", "snapshot": snapshot.name}
    gone = flagdesk(sandbox, "delete", "tenantId", "--yes", data=tmp_path)
    assert gone.returncode == 1 and "404" in gone.stderr


def test_exit_statuses(demo_sandbox: SandboxProcess, tmp_path: Path, personal_token: Any) -> None:
    down = flagdesk(f"http://127.0.0.1:{closed_port()}", "list", data=tmp_path)
    assert down.returncode == 3 and "Cannot reach" in down.stderr
    viewer = personal_token(demo_sandbox, "uma.iyer")
    refused = flagdesk(demo_sandbox, "delete", "tenantId", "--yes", "--json", data=tmp_path,
                       token=viewer)  # fmt: skip
    assert refused.returncode == 4 and as_json(refused)["http_status"] == 403
    assert "tenantId" in field_names(demo_sandbox)


def test_on_a_terminal_it_asks_and_only_yes_deletes(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["context", "delete", "tenantId", "--url", sandbox.url]
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(argv) == 1
    said = capsys.readouterr().err
    assert said.startswith(f"The context field “tenantId” will be deleted on {sandbox.url} "
                           f"(connection “{sandbox.url}”). No strategy uses it.\n")  # fmt: skip
    assert "Delete the context field “tenantId”? [y/N]" in said and "nothing was deleted" in said
    assert "tenantId" in field_names(sandbox)
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.startswith("Deleted the context field “tenantId” on ")
    assert "tenantId" not in field_names(sandbox)
