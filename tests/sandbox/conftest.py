from __future__ import annotations

from collections.abc import Callable

import pytest

from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store import Store


@pytest.fixture
def personal_token() -> Callable[[SandboxProcess, str], str]:
    """A personal access token for the user with `username`, written straight into the running
    sandbox's database (the sandbox has no login page to make one through)."""

    def make(sb: SandboxProcess, username: str) -> str:
        conn = db.connect(sb.db)
        try:
            row = conn.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
            assert row is not None, username
            return Store(conn).create_personal_token(int(row[0]))
        finally:
            conn.close()

    return make


def assert_error(response: object, status: int, name: str) -> dict[str, object]:
    """The response is the spec's error body with this status and error name."""
    import httpx

    assert isinstance(response, httpx.Response)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["name"] == name, body
    assert isinstance(body["id"], str) and body["id"]
    assert isinstance(body["message"], str) and body["message"]
    return body  # type: ignore[no-any-return]
