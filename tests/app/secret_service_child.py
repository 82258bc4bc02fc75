"""Run inside `dbus-run-session` by test_secret_service.py: start a real GNOME keyring (Secret
Service) in a private home, then save, read and remove a profile's tokens through it.
Prints one JSON object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

home = Path(sys.argv[1])
os.environ["HOME"] = str(home)
os.environ["XDG_DATA_HOME"] = str(home / "data")
os.environ["XDG_CONFIG_HOME"] = str(home / "config")
daemon = subprocess.run(
    ["gnome-keyring-daemon", "--unlock", "--components=secrets"],
    input=b"test password",
    capture_output=True,
    timeout=30,
    check=True,
)
for line in daemon.stdout.decode().splitlines():
    key, _, value = line.partition("=")
    if key:
        os.environ[key] = value

from app.connection import spec_of  # noqa: E402 (after the keyring's environment is set)
from app.profiles import Profile, ProfileStore, keyring_status  # noqa: E402

TOKEN = "*:*.secret-service-admin-token-0123456789"
CLIENT = "default:development.secret-service-client-token"
store = ProfileStore(home / "flagdesk")
store.save(Profile(name="Real", url="https://flags.example.com"), token=TOKEN, client_token=CLIENT)
again = ProfileStore(home / "flagdesk")  # as a new start would read it
spec = spec_of(again.get("Real"), again)
files = "".join(p.read_text() for p in (home / "flagdesk").iterdir() if p.is_file())
again.remove("Real")
import keyring  # noqa: E402

print(json.dumps({
    "status": keyring_status(),
    "token": spec.token,
    "client_token": spec.client_token,
    "in_files": TOKEN in files or CLIENT in files,
    "token_store": again.profiles() == [] and "removed",
    "left": keyring.get_password("flagdesk", "Real/admin"),
}))  # fmt: skip
