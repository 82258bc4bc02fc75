"""`flagdesk check` against the sandbox: what it prints, its JSON, its exit statuses."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app import __version__
from app.api.capabilities import OPERATIONS
from sandbox.process import SandboxProcess


def flagdesk(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    for name in ("FLAGDESK_TOKEN", "FLAGDESK_CLIENT_TOKEN"):
        if env is None or name not in env:
            full.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
    )


def test_check_reports_every_operation(demo_sandbox: SandboxProcess) -> None:
    result = flagdesk(
        "check",
        "--url",
        demo_sandbox.url,
        env={"FLAGDESK_TOKEN": demo_sandbox.admin_token},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert demo_sandbox.url in out
    assert f"flagdesk sandbox {__version__}" in out
    assert "admin API token (Admin root role)" in out
    for title in OPERATIONS.values():
        assert title in out
    upload = next(line for line in out.splitlines() if "Metrics upload" in line)
    assert " no " in upload and "client" in upload
    assert demo_sandbox.admin_token not in out + result.stderr


def test_check_json_with_both_tokens(demo_sandbox: SandboxProcess) -> None:
    result = flagdesk(
        "check",
        "--url",
        demo_sandbox.url + "/",
        "--json",
        env={
            "FLAGDESK_TOKEN": demo_sandbox.admin_token,
            "FLAGDESK_CLIENT_TOKEN": demo_sandbox.client_token,
        },
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["reachable"] is True and report["authorised"] is True
    assert report["url"] == demo_sandbox.url
    assert report["server"] == {
        "kind": "sandbox",
        "version": __version__,
        "edition": "sandbox",
        "label": f"flagdesk sandbox {__version__}",
    }
    assert report["token"]["kind"] == "admin" and report["token"]["admin"] is True
    assert report["archiveEndpoint"] is True
    assert set(report["operations"]) == set(OPERATIONS)
    # all of them, but a user's own personal access tokens: an admin API token has no user
    mine = report["operations"].pop("personal_tokens")
    assert mine["available"] is False and "needs a personal access token" in mine["reason"]
    assert all(op["available"] for op in report["operations"].values()), report["operations"]
    assert demo_sandbox.client_token not in result.stdout


def test_check_with_a_token_from_another_variable(demo_sandbox: SandboxProcess) -> None:
    result = flagdesk(
        "check",
        "--url",
        demo_sandbox.url,
        "--token-env",
        "MY_UNLEASH_TOKEN",
        "--json",
        env={"MY_UNLEASH_TOKEN": demo_sandbox.client_token},
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["token"]["kind"] == "client"
    assert report["operations"]["metrics_upload"]["available"] is True
    assert report["operations"]["groups"]["available"] is False


def test_check_with_a_wrong_token_exits_4(demo_sandbox: SandboxProcess) -> None:
    token = "*:*.definitely-not-a-token-0123456789"
    text = flagdesk("check", "--url", demo_sandbox.url, env={"FLAGDESK_TOKEN": token})
    assert text.returncode == 4
    assert "401" in text.stderr and "token" in text.stderr
    assert token not in text.stderr + text.stdout
    as_json = flagdesk("check", "--url", demo_sandbox.url, "--json", env={"FLAGDESK_TOKEN": token})
    assert as_json.returncode == 4
    report = json.loads(as_json.stdout)
    assert report["reachable"] is True and report["authorised"] is False
    assert report["error"]["status"] == 401 and report["error"]["kind"] == "Unauthorized"


def test_check_of_a_closed_port_exits_3() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = flagdesk(
        "check", "--url", f"http://127.0.0.1:{port}", "--json", env={"FLAGDESK_TOKEN": "x"}
    )
    assert result.returncode == 3
    report = json.loads(result.stdout)
    assert report["reachable"] is False
    assert report["error"]["kind"] == "ConnectionRefused"
    assert "connection refused" in report["error"]["message"]


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        ((), {}, "--profile NAME, or --url URL"),
        (("--url", "http://127.0.0.1:9"), {}, "FLAGDESK_TOKEN holds no token"),
        (("--url", "127.0.0.1:4242"), {"FLAGDESK_TOKEN": "x"}, "no scheme"),
        (("--profile", "nowhere"), {}, "No profile named 'nowhere'"),
    ],
)
def test_check_usage_errors_exit_2(
    args: tuple[str, ...], env: dict[str, str], says: str, tmp_path: Path
) -> None:
    result = flagdesk("check", *args, env={"FLAGDESK_CONFIG_DIR": str(tmp_path), **env})
    assert result.returncode == 2
    assert says in result.stderr


def test_check_with_a_profile_imports_no_qt(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    env = {"FLAGDESK_CONFIG_DIR": str(tmp_path), "FLAGDESK_TOKEN": demo_sandbox.admin_token}
    added = flagdesk(
        "profiles", "add", "demo", "--url", demo_sandbox.url, "--token-store", "file", env=env
    )
    assert added.returncode == 0, added.stderr
    code = (
        "import sys, app.cli\n"
        "status = app.cli.main(['check', '--profile', 'demo', '--json'])\n"
        "gui = {'PySide6', 'shiboken6', 'qasync', 'ui'}\n"
        "qt = [m for m in sys.modules if m.split('.')[0] in gui]\n"
        "assert not qt, qt\n"
        "sys.exit(status)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "FLAGDESK_CONFIG_DIR": str(tmp_path)},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["server"]["kind"] == "sandbox"


def test_a_suggested_command_quotes_a_profile_name_with_spaces(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A profile whose token is gone: the command `flagdesk check` suggests can be pasted into
    a shell as it is, also when the name holds a space."""
    env = {"FLAGDESK_CONFIG_DIR": str(tmp_path), "FLAGDESK_TOKEN": demo_sandbox.admin_token}
    added = flagdesk("profiles", "add", "My Staging", "--url", demo_sandbox.url,
                     "--token-store", "file", env=env)  # fmt: skip
    assert added.returncode == 0, added.stderr
    (tmp_path / "tokens.json").write_text("{}\n")  # the token is no longer stored
    result = flagdesk(
        "check", "--profile", "My Staging", env={"FLAGDESK_CONFIG_DIR": str(tmp_path)}
    )
    assert result.returncode == 2
    command = result.stderr.split("`")[1]
    assert command == f"flagdesk profiles add 'My Staging' --url {demo_sandbox.url} --replace"
    assert shlex.split(command)[3] == "My Staging"
