"""`flagdesk diff` run as a subprocess over snapshot files: exit 0 when the same, 1 when they
differ with the summary and the differences grouped; two environments of one file
(`FILE:production FILE:staging`); `--json` the comparison's object; `--markdown FILE` written
0600 and `-` printed; the filters and maps reaching the engine; and the usage errors (exit 2):
a profile that is not saved, a file that is missing or no snapshot (the file,
the JSON path, the problem), an unknown kind, a bad map, an environment the file lacks."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.snapshot.files import save
from app.snapshot.model import Snapshot
from sandbox.process import SandboxProcess
from tests.app.snapshot_examples import environment, flag, shop

ROOT = Path(__file__).resolve().parents[2]


def flagdesk(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLAGDESK_DATA_DIR": str(cwd / "data"),
           "FLAGDESK_CONFIG_DIR": str(cwd / "config"), "PYTHONPATH": str(ROOT)}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "app", "diff", *map(str, args)],
        capture_output=True, text=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


def saved(tmp_path: Path, name: str, document: dict[str, Any]) -> Path:
    path = tmp_path / name
    save(Snapshot.model_validate(document), path)
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """The example server, and the same with production's rollout at 50 and a segment more."""
    changed = shop()
    environment(flag(changed, "checkout-v2"), "production")["strategies"][0]["parameters"][
        "rollout"
    ] = "50"
    changed["segments"].append({"name": "vip", "description": "big spenders"})
    return saved(tmp_path, "source.json", changed), saved(tmp_path, "target.json", shop())


def test_the_same_is_exit_0(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a.json", shop()), saved(tmp_path, "b.json", shop())
    result = flagdesk(a, b, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{a} (source) against {b} (target): the same (projects, ")
    assert result.stderr == ""


def test_different_is_exit_1_with_the_summary_then_the_differences(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    source, target = files
    result = flagdesk(source, target, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        f"{source} (source) against {target} (target): 2 differences",
        "  flags: 1 changed",
        "  segments: 1 only in source",
        "",
        "Flags (values: target \u2192 source)",
        "  web-shop/checkout-v2",
        "    production \u203a strategy flexibleRollout #1 \u203a parameters.rollout: 25 \u2192 50",
        "",
        "Segments (values: target \u2192 source)",
        "  vip",
        '    (the whole object): only in source: {"description":"big spenders"}',
    ]


def test_two_environments_of_one_file(tmp_path: Path) -> None:
    one = saved(tmp_path, "shop.json", shop())
    result = flagdesk(f"{one}:production", f"{one}:staging", "--kinds", "flags", "--json",
                      cwd=tmp_path)  # fmt: skip
    assert result.returncode == 1, result.stderr
    out = json.loads(result.stdout)
    assert out["exit_status"] == 1 and out["same"] is False
    assert (out["source"], out["target"]) == (f"{one}:production", f"{one}:staging")
    assert [d["key"] for d in out["differences"]][:2] == [
        "flag web-shop/checkout-v2 \u203a staging \u203a enabled",
        "flag web-shop/checkout-v2 \u203a staging \u203a strategy flexibleRollout #1 \u203a "
        "parameters.rollout",
    ]
    assert out["counts"] == {"flags": {"only in source": 1, "only in target": 0, "changed": 4,
                                       "order changed": 0}}  # fmt: skip
    # the same environment on both sides: the same
    same = flagdesk(f"{one}:staging", f"{one}:staging", cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr


def test_json_is_the_comparison(files: tuple[Path, Path], tmp_path: Path) -> None:
    source, target = files
    result = flagdesk(source, target, "--json", cwd=tmp_path)
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert set(out) == {"command", "source", "target", "same", "kinds", "total", "notCompared",
                        "counts", "differences", "exit_status"}  # fmt: skip
    assert out["total"] == 2 and out["command"] == "diff"
    assert out["differences"][0]["old"] == "25" and out["differences"][0]["new"] == "50"
    again = flagdesk(source, target, "--json", cwd=tmp_path)
    assert again.stdout == result.stdout  # stable


def test_markdown_to_a_file_and_to_standard_output(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    source, target = files
    report = tmp_path / "diff.md"
    result = flagdesk(source, target, "--markdown", report, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.endswith(f"Markdown written to {report}\n")
    text = report.read_text()
    assert text.startswith(f"# Comparison of {source} (source) with {target} (target)\n")
    assert "## Segments\n\n| object | where | change | target | source |\n" in text
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    printed = flagdesk(source, target, "--markdown", "-", cwd=tmp_path)
    assert printed.stdout == text and printed.returncode == 1


def test_filters_and_maps_reach_the_engine(files: tuple[Path, Path], tmp_path: Path) -> None:
    source, target = files
    only_segments = flagdesk(source, target, "--kinds", "segments", "--json", cwd=tmp_path)
    assert [d["kind"] for d in json.loads(only_segments.stdout)["differences"]] == ["segments"]
    by_name = flagdesk(source, target, "--name", "checkout-*", "--json", cwd=tmp_path)
    assert [d["object"] for d in json.loads(by_name.stdout)["differences"]] == [
        "web-shop/checkout-v2"
    ]
    by_project = flagdesk(source, target, "--project", "default", "--kinds", "flags,segments",
                          cwd=tmp_path)  # fmt: skip
    assert by_project.returncode == 0, by_project.stdout
    by_tag = flagdesk(source, target, "--tag", "simple:beta", "--kinds", "flags", cwd=tmp_path)
    assert by_tag.returncode == 1
    mapped = flagdesk(source, target, "--map-env", "production=staging", "--kinds", "flags",
                      "--json", cwd=tmp_path)  # fmt: skip
    keys = [d["key"] for d in json.loads(mapped.stdout)["differences"]]
    assert "flag web-shop/checkout-v2 \u203a staging \u203a enabled" in keys
    assert all("production" not in key for key in keys)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("prod", "{target}"), "No profile named 'prod' (profiles: none saved yet)"),
        (("{source}", "prod:production"), "No profile named 'prod'"),
        (("{source}", "missing.json"), "missing.json: no such file"),
        (("{source}", "{target}", "--kinds", "flag"), "--kinds flag: choose among projects, "
         "environments, flags"),
        (("{source}", "{target}", "--map-env", "production"), "--map-env production: write it "
         "as SOURCE_NAME=TARGET_NAME"),
        (("{source}", "{target}", "--map-env", "prod=staging"), "the source has no environment "
         "'prod' (it has development, staging, production)"),
        (("{source}:qa", "{target}"), "the source has no environment 'qa'"),
        (("{source}:production", "{target}", "--map-env", "production=staging"),
         "--map-env and FILE:ENVIRONMENT say the same"),
        (("{source}", "{target}", "--tag", "beta"), "--tag beta: write it as TYPE:VALUE"),
        (("{source}", "{broken}"), "broken.json at $.flags[0].name: missing field"),
        (("{source}", "{target}", "--markdown", "{tmp}/none/d.md"), "the Markdown was not "
         "written"),
    ],
    ids=["profile", "profile-env", "missing", "kind", "map", "map-name", "env", "both", "tag",
         "broken", "markdown-folder"],
)  # fmt: skip
def test_usage_errors_are_exit_2(
    files: tuple[Path, Path], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    source, target = files
    broken = shop()
    del broken["flags"][0]["name"]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    given = [a.format(source=source, target=target, broken=tmp_path / "broken.json",
                      tmp=tmp_path) for a in args]  # fmt: skip
    result = flagdesk(*given, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("flagdesk diff: ")
    assert message in result.stderr
    assert result.stdout == ""
    as_json = flagdesk(*given, "--json", cwd=tmp_path) if "--markdown" not in args else None
    if as_json is not None:
        out = json.loads(as_json.stdout)
        assert out["exit_status"] == 2 and message in out["error"]


def test_argparse_usage_is_exit_2(tmp_path: Path) -> None:
    result = flagdesk("only-one.json", cwd=tmp_path)
    assert result.returncode == 2
    assert "the following arguments are required: TARGET" in result.stderr


HOSTILE = "\x1b]0;PWNED\x07\x9b31m"
#: a control character that is not a line break
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def test_control_characters_in_names_are_shown_escaped(tmp_path: Path) -> None:
    """A name from a snapshot (a server's text) never drives the terminal: text, Markdown
    printed or written, escapes; --json is JSON with the C1 controls escaped as well."""
    hostile = shop()
    hostile["segments"].append({"name": f"seg{HOSTILE}", "description": f"a\nb{HOSTILE}"})
    source = saved(tmp_path, "hostile.json", hostile)
    target = saved(tmp_path, "shop.json", shop())
    report = tmp_path / "d.md"
    for args in ((), ("--markdown", "-"), ("--markdown", report)):
        result = flagdesk(source, target, *args, cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        if args[-1:] != (report,):
            assert "seg\\x1b]0;PWNED\\x07\\x9b31m" in result.stdout
        assert not RAW.search(result.stdout)
    written = report.read_text()
    assert "| seg\\x1b]0;PWNED\\x07\\x9b31m |" in written
    assert "\x1b" not in written and "\x9b" not in written
    as_json = flagdesk(source, target, "--json", cwd=tmp_path)
    assert "\x9b" not in as_json.stdout and "\\u009b31m" in as_json.stdout
    assert json.loads(as_json.stdout)["differences"][0]["object"] == f"seg{HOSTILE}"


def test_a_live_server_against_its_snapshot_and_two_of_its_environments(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A profile's server read now: the same as the snapshot just taken (exit 0); after a
    change on the server, "what changed since" (exit 1, the change named)."""
    env = {**os.environ, "FLAGDESK_CONFIG_DIR": str(tmp_path / "config"),
           "FLAGDESK_TOKEN": sandbox.admin_token, "PYTHONPATH": str(ROOT)}  # fmt: skip
    added = subprocess.run(
        [sys.executable, "-m", "app", "profiles", "add", "demo", "--url", sandbox.url,
         "--token-store", "file"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    taken = subprocess.run(
        [sys.executable, "-m", "app", "snapshot", "--profile", "demo", "-o",
         str(tmp_path / "before.json")],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert taken.returncode == 0, taken.stderr
    same = flagdesk(tmp_path / "before.json", "demo", cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr
    with sandbox.admin() as http:
        made = http.post("/api/admin/segments", json={"name": "Night owls", "constraints": []})
        assert made.status_code == 201, made.text
    since = flagdesk("demo", tmp_path / "before.json", "--kinds", "segments", cwd=tmp_path)
    assert since.returncode == 1, since.stdout + since.stderr
    assert "Night owls" in since.stdout and "only in source" in since.stdout


def test_snapshots_taken_then_compared_offline_find_what_the_live_compare_finds(
    tmp_path: Path,
) -> None:
    """Two demo sandboxes, the second changed (a rollout, a flag turned off, a segment made, a
    flag archived): `flagdesk diff` of both servers read now, and of snapshots of them taken
    with `flagdesk snapshot` then compared with no server, find the same differences."""
    from tests.app.test_cli_promote import Cli

    with (
        SandboxProcess(tmp_path / "a.sqlite3", "--demo") as a,
        SandboxProcess(tmp_path / "b.sqlite3", "--demo") as b,
    ):
        cli = Cli(tmp_path)
        cli.profile("a", a)
        cli.profile("b", b)
        with b.admin() as http:
            flags = http.get("/api/admin/projects/default/features").json()["features"]
            name = flags[0]["name"]
            where = f"/api/admin/projects/default/features/{name}/environments/development"
            strategies = http.get(f"{where}/strategies").json()
            changed = {**strategies[0], "title": "changed by hand"}
            changed.pop("id")
            done = http.put(f"{where}/strategies/{strategies[0]['id']}", json=changed)
            assert done.status_code == 200, done.text
            assert http.post(f"{where}/off").status_code == 200
            made = http.post("/api/admin/segments", json={"name": "Night owls", "constraints": []})
            assert made.status_code == 201, made.text
            archived = http.delete(f"/api/admin/projects/default/features/{flags[1]['name']}")
            assert archived.status_code == 202, archived.text
        live = cli("diff", "a", "b", "--json")
        assert live.returncode == 1, live.stdout + live.stderr
        files = cli.snapshot("a", tmp_path / "a.json"), cli.snapshot("b", tmp_path / "b.json")
    offline = cli("diff", *files, "--json")  # the servers are gone
    assert offline.returncode == 1, offline.stdout + offline.stderr
    found_live, found_offline = json.loads(live.stdout), json.loads(offline.stdout)
    assert found_offline["differences"] == found_live["differences"]
    assert found_offline["counts"] == found_live["counts"]
    objects = {d["object"] for d in found_live["differences"]}
    assert {f"default/{name}", f"default/{flags[1]['name']}", "Night owls"} <= objects
