"""`flagdesk stats`, `flagdesk maintenance`, `flagdesk cors` and `flagdesk banners` (issue 38)
against sandboxes over HTTP, as subprocesses (and in process where a terminal is pretended): the
statistics as text, JSON and the server's CSV; maintenance said, switched on (every other change
then refused with exit 1 naming maintenance, reads going on), --dry-run's exact request, refused
without a terminal and without --yes, switched off by `flagdesk journal undo`; the CORS origins
listed, set (a bad origin refused naming it, nothing sent), the list before set again by undo;
banners created, changed, deleted and the deletion undone; on a played open-source release the
banners refused with exit status 4, nothing sent, and the CORS origins set by 5.x's route."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from app import cli
from app.actions.journal import JOURNAL_NAME, Entry, journal_folder, read_journal
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk


def flagdesk(words: tuple[str, ...], sb: SandboxProcess, *args: str,
             data: Path) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return run_flagdesk(words, sb, args, data, None)


def maintenance_on(sb: SandboxProcess) -> bool:
    with sb.admin() as http:
        return bool(http.get("/api/admin/maintenance").json()["enabled"])


def origins(sb: SandboxProcess) -> list[str]:
    with sb.admin() as http:
        return list(http.get("/api/admin/ui-config").json()["frontendApiOrigins"])


def entries(sb: SandboxProcess, data: Path) -> list[Entry]:
    return read_journal(journal_folder(sb.url, data) / JOURNAL_NAME)


def test_stats_as_text_json_and_csv(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    text = flagdesk(("stats",), demo_sandbox, data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["STATISTIC", "VALUE"]
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[1:-1] if " " in line}
    assert rows["passwordAuthEnabled"] == "yes"
    assert rows["clientApps"].startswith("7d=")
    assert lines[-1].endswith(f"statistics of {demo_sandbox.url}")
    shown = as_json(flagdesk(("stats",), demo_sandbox, "--json", data=tmp_path))
    stats = shown["statistics"]
    assert stats["featureToggles"] > 0 and stats["instanceId"] and len(stats["sum"]) == 64
    assert rows["featureToggles"] == str(stats["featureToggles"])

    target = tmp_path / "stats.csv"
    written = flagdesk(("stats",), demo_sandbox, "--csv", str(target), data=tmp_path)
    assert written.returncode == 0, written.stderr
    header, row = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert header[:3] == ["timestamp", "instanceId", "versionOSS"]
    assert dict(zip(header, row, strict=True))["instanceId"] == stats["instanceId"]
    assert target.stat().st_mode & 0o777 == 0o600
    nowhere = flagdesk(("stats",), demo_sandbox, "--csv", str(tmp_path / "no" / "s.csv"),
                       data=tmp_path)  # fmt: skip
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr
    both = flagdesk(("stats",), demo_sandbox, "--json", "--csv", str(target), data=tmp_path)
    assert both.returncode == 2


def test_maintenance_on_refuses_changes_and_undo_switches_it_off(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    said = as_json(flagdesk(("maintenance",), sandbox, "--json", data=tmp_path))
    assert said["enabled"] is False
    dry = flagdesk(("maintenance",), sandbox, "on", "--dry-run", data=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == "POST /api/admin/maintenance"
    assert dry.stdout.splitlines()[-1] == '{"enabled":true}'
    assert "Dry run: nothing was sent" in dry.stderr and not maintenance_on(sandbox)
    asking = flagdesk(("maintenance",), sandbox, "on", data=tmp_path)
    assert asking.returncode == 2 and "--yes" in asking.stderr and not maintenance_on(sandbox)

    on = as_json(flagdesk(("maintenance",), sandbox, "on", "--yes", "--json", data=tmp_path))
    assert (on["enabled"], on["changed"], on["status"]) == (True, True, 204)
    assert maintenance_on(sandbox)
    again = flagdesk(("maintenance",), sandbox, "on", "--yes", data=tmp_path)
    assert again.returncode == 0 and "already" in again.stdout
    try:
        # every change is refused meanwhile, saying why; reads go on
        refused = flagdesk(("cors", "set"), sandbox, "https://a.example", "--yes", data=tmp_path)
        assert refused.returncode == 1, refused.stderr
        assert "maintenance mode" in refused.stderr and "flagdesk maintenance off" in refused.stderr
        assert flagdesk(("stats",), sandbox, "--json", data=tmp_path).returncode == 0
        assert origins(sandbox) == ["*"]
        listed = entries(sandbox, tmp_path)
        switch = next(e for e in listed if e.action == "instance.maintenance")
        undone = flagdesk(("journal", "undo"), sandbox, switch.id, "--yes", data=tmp_path)
        assert undone.returncode == 0, undone.stderr
        assert not maintenance_on(sandbox)
    finally:
        with sandbox.admin() as http:
            http.post("/api/admin/maintenance", json={"enabled": False})


def test_maintenance_asks_on_a_terminal(sandbox: SandboxProcess, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(["maintenance", "on", "--url", sandbox.url]) == 1
    asked = capsys.readouterr().err
    assert "Maintenance mode will be switched on" in asked
    assert "refuses every change" in asked and "Reads" in asked
    assert asked.rstrip().endswith("nothing was changed")
    assert not maintenance_on(sandbox)


def test_cors_list_set_refuse_and_undo(sandbox: SandboxProcess, tmp_path: Path) -> None:
    listed = flagdesk(("cors", "list"), sandbox, data=tmp_path)
    assert listed.stdout.splitlines()[0] == "*"
    bad = flagdesk(("cors", "set"), sandbox, "https://ok.example", "https://x.example/", "--yes",
                   data=tmp_path)  # fmt: skip
    assert bad.returncode == 2
    assert (
        "Invalid origin: https://x.example/" in bad.stderr and "Nothing was changed" in bad.stderr
    )
    assert flagdesk(("cors", "set"), sandbox, "--yes", data=tmp_path).returncode == 2
    dry = flagdesk(("cors", "set"), sandbox, "https://a.example", "--dry-run", data=tmp_path)
    assert dry.stdout.splitlines()[0] == "POST /api/admin/ui-config/cors"
    assert dry.stdout.splitlines()[-1] == '{"frontendApiOrigins":["https://a.example"]}'
    done = as_json(flagdesk(("cors", "set"), sandbox, "https://a.example",
                            "http://localhost:3000", "--yes", "--json", data=tmp_path))  # fmt: skip
    assert done["was"] == ["*"] and done["changed"] is True
    assert origins(sandbox) == ["https://a.example", "http://localhost:3000"]
    none = as_json(flagdesk(("cors", "set"), sandbox, "--none", "--yes", "--json", data=tmp_path))
    assert none["origins"] == [] and origins(sandbox) == []
    last = [e for e in entries(sandbox, tmp_path) if e.action == "instance.cors"][-1]
    undone = flagdesk(("journal", "undo"), sandbox, last.id, "--yes", data=tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert origins(sandbox) == ["https://a.example", "http://localhost:3000"]


def test_banners_made_changed_deleted_and_brought_back(sandbox: SandboxProcess,
                                                       tmp_path: Path) -> None:  # fmt: skip
    made = as_json(flagdesk(("banners", "create"), sandbox, "--message", "Upgrade **Friday**",
                            "--variant", "warning", "--yes", "--json", data=tmp_path))  # fmt: skip
    banner = made["banner"]
    assert (banner["message"], banner["variant"], banner["enabled"]) == (
        "Upgrade **Friday**", "warning", True)  # fmt: skip
    changed = as_json(flagdesk(("banners", "edit"), sandbox, str(made["id"]), "--off",
                               "--message", "Upgrade Monday", "--yes", "--json",
                               data=tmp_path))  # fmt: skip
    assert (changed["banner"]["enabled"], changed["banner"]["variant"]) == (False, "warning")
    listed = flagdesk(("banners", "list"), sandbox, data=tmp_path)
    assert listed.stdout.splitlines()[1].split()[:4] == [str(made["id"]), "no", "warning", "no"]
    empty = flagdesk(("banners", "create"), sandbox, "--message", "", "--yes", data=tmp_path)
    assert empty.returncode == 2 and "--message" in empty.stderr
    unknown = flagdesk(("banners", "delete"), sandbox, "999", "--yes", data=tmp_path)
    assert unknown.returncode == 2 and "no banner" in unknown.stderr
    gone = flagdesk(("banners", "delete"), sandbox, str(made["id"]), "--yes", data=tmp_path)
    assert gone.returncode == 0, gone.stderr
    deletion = [e for e in entries(sandbox, tmp_path) if e.action == "banners.delete"][-1]
    back = flagdesk(("journal", "undo"), sandbox, deletion.id, "--yes", data=tmp_path)
    assert back.returncode == 0, back.stderr
    again = as_json(flagdesk(("banners", "list"), sandbox, "--json", data=tmp_path))["banners"]
    assert [(b["message"], b["enabled"]) for b in again] == [("Upgrade Monday", False)]
    assert again[0]["id"] != made["id"]


def test_a_banner_the_server_would_refuse_is_named_by_its_option_or_field(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A link that is no address, path or "dialog" is refused before anything is sent (as the
    window refuses it); a banner holding control characters (a server may hold what its form
    refuses) names the field that holds them until an option replaces it."""
    import json

    from sandbox import db

    bad_link = flagdesk(("banners", "create"), sandbox, "--message", "Hi", "--link",
                        "status page", "--yes", data=tmp_path)  # fmt: skip
    assert bad_link.returncode == 2
    assert "--link: The link “status page” is neither a web address" in bad_link.stderr
    conn = db.connect(sandbox.db)
    try:
        with conn:
            body = {"message": "Hi", "enabled": True, "linkText": "\x1b]0;x\x07"}
            conn.execute("INSERT INTO banners(body, created_at) VALUES(?, 0)", (json.dumps(body),))
    finally:
        conn.close()
    (held,) = as_json(flagdesk(("banners", "list"), sandbox, "--json", data=tmp_path))["banners"]
    refused = flagdesk(("banners", "edit"), sandbox, str(held["id"]), "--off", "--yes",
                       data=tmp_path)  # fmt: skip
    assert refused.returncode == 2
    assert "the banner's linkText (as the server holds it)" in refused.stderr
    assert "Nothing was sent" in refused.stderr and "Traceback" not in refused.stderr
    fixed = flagdesk(("banners", "edit"), sandbox, str(held["id"]), "--off", "--link-text",
                     "More", "--yes", data=tmp_path)  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    (now,) = as_json(flagdesk(("banners", "list"), sandbox, "--json", data=tmp_path))["banners"]
    assert (now["linkText"], now["enabled"]) == ("More", False)


def test_open_source_has_no_banners_and_5x_sets_cors_its_way(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--as-version", "5.12") as sb:
        listed = flagdesk(("banners", "list"), sb, data=tmp_path)
        assert listed.returncode == 4 and "Banners need Unleash Enterprise" in listed.stderr
        made = flagdesk(("banners", "create"), sb, "--message", "x", "--yes", data=tmp_path)
        assert made.returncode == 4 and entries(sb, tmp_path) == []
        dry = flagdesk(("cors", "set"), sb, "https://old.example", "--dry-run", data=tmp_path)
        assert dry.stdout.splitlines()[0] == "POST /api/admin/ui-config"
        done = flagdesk(("cors", "set"), sb, "https://old.example", "--yes", data=tmp_path)
        assert done.returncode == 0, done.stderr
        assert origins(sb) == ["https://old.example"]
