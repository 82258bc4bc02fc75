"""A token that cannot be an HTTP header value (a line break from a wrapped paste, a control
character, a character outside ASCII) is refused before any request, by every way a token comes
in: the environment variables of `--url`, a profile's stored token, `flagdesk profiles add`. The
error names where the token came from and the kind of character, never the token; it was
`Cannot reach ...: Illegal header value b'*:*.secret...'` (exit 3, the token whole) and, outside
ASCII, a bare `'ascii' codec can't encode`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.profiles import Profile, ProfileStore

SECRET = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def listener() -> Iterator[tuple[str, socket.socket]]:
    """A port that accepts connections and answers none: whether anything connected is read
    after the command ran (a connection waits in the backlog)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        s.setblocking(False)
        yield f"http://127.0.0.1:{s.getsockname()[1]}", s


def nothing_connected(s: socket.socket) -> bool:
    try:
        conn, _ = s.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


def flagdesk(
    *args: str, env: dict[str, str], config: Path | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("FLAGDESK_TOKEN", "FLAGDESK_CLIENT_TOKEN")
    }
    environment.update(env)
    if config is not None:
        environment["FLAGDESK_CONFIG_DIR"] = str(config)
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True, text=True, env=environment, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


BAD = {
    "a line break": f"*:*.{SECRET[:10]}\n{SECRET[10:]}",
    "a character outside ASCII": f"*:*.{SECRET[:10]}é{SECRET[10:]}",
    "a control character": f"*:*.{SECRET[:10]}\x1b{SECRET[10:]}",
}


def assert_refused(result: subprocess.CompletedProcess[str], where: str, kind: str) -> None:
    assert result.returncode == 2, result.stderr
    said = result.stderr + result.stdout
    assert where in said and kind in said, said
    for part in (SECRET[:10], SECRET[10:], "Illegal header", "codec"):
        assert part not in said, said


@pytest.mark.parametrize("kind", list(BAD))
def test_an_environment_token_that_cannot_be_a_header_is_refused_before_any_request(
    kind: str, listener: tuple[str, socket.socket]
) -> None:
    url, s = listener
    result = flagdesk("groups", "list", "--url", url, env={"FLAGDESK_TOKEN": BAD[kind]})
    assert_refused(result, "FLAGDESK_TOKEN", kind)
    assert "wrapped" in result.stderr or kind != "a line break"
    as_json = flagdesk("check", "--url", url, "--token-env", "MY_TOKEN", "--json",
                       env={"MY_TOKEN": BAD[kind]})  # fmt: skip
    assert_refused(as_json, "MY_TOKEN", kind)
    env = {"FLAGDESK_TOKEN": "*:*.fine", "FLAGDESK_CLIENT_TOKEN": BAD[kind]}
    client = flagdesk("groups", "list", "--url", url, "--json", env=env)
    assert_refused(client, "FLAGDESK_CLIENT_TOKEN", kind)
    assert json.loads(client.stdout)["exit_status"] == 2
    assert nothing_connected(s)


def test_a_profile_token_that_cannot_be_a_header_is_refused_naming_the_profile(
    tmp_path: Path, listener: tuple[str, socket.socket]
) -> None:
    url, s = listener
    store = ProfileStore(tmp_path)
    store.save(Profile(name="wrapped", url=url, token_store="file"), token="*:*.placeholder")
    tokens = json.loads(store.tokens_file.read_text())
    tokens["wrapped/admin"] = BAD["a line break"]  # an older flagdesk kept it, or a hand edit
    store.tokens_file.write_text(json.dumps(tokens))
    result = flagdesk("groups", "list", "--profile", "wrapped", env={}, config=tmp_path)
    assert_refused(result, "profile 'wrapped'", "a line break")
    assert str(store.tokens_file) in result.stderr
    assert nothing_connected(s)


@pytest.mark.parametrize("kind", list(BAD))
def test_profiles_add_refuses_such_a_token_and_saves_nothing(tmp_path: Path, kind: str) -> None:
    result = flagdesk("profiles", "add", "p", "--url", "http://127.0.0.1:1", "--token-store",
                      "file", env={"FLAGDESK_TOKEN": BAD[kind]}, config=tmp_path)  # fmt: skip
    assert_refused(result, "FLAGDESK_TOKEN", kind)
    assert ProfileStore(tmp_path).profiles() == []
    assert not (tmp_path / "tokens.json").exists()
