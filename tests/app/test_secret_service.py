"""Tokens in a real OS keyring: a GNOME keyring (Secret Service over D-Bus) started for the
test in a private D-Bus session and home. `make test` installs gnome-keyring on Debian."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("secret_service_child.py")
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")),
    reason="needs dbus-run-session and gnome-keyring-daemon (Debian: dbus-bin gnome-keyring)",
)


def test_tokens_round_trip_through_a_real_secret_service(tmp_path: Path) -> None:
    out = subprocess.run(
        ["dbus-run-session", "--", sys.executable, str(CHILD), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    usable, backend = result["status"]
    assert usable and backend == "SecretService.Keyring"
    assert result["token"] == "*:*.secret-service-admin-token-0123456789"
    assert result["client_token"] == "default:development.secret-service-client-token"
    assert result["in_files"] is False  # only in the keyring
    assert result["token_store"] == "removed" and result["left"] is None
