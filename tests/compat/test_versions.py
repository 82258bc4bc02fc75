"""What the Unleash releases answer differently, each test run against the real release and
then against the sandbox playing it (`target`: `flagdesk serve --as-version`), with the same
requests and the same expectations, so the sandbox's emulation (`sandbox.versions`) is checked
against the real answers on every run of the matrix.

Measured on 5.12.8, 6.10.1, 7.6.5 and 8.2.0 (2026-11-26, the peers of `.ci/run`), by hand with
curl first and then by these tests:

- a context field's `PUT` never changes its sort order on 5.12 (4 stays 4, whether the body
  leaves it out or sends 7 or 0); 6.10, 7.6 and 8.2 set it to 0 whatever is sent (their schema
  strips `sortOrder` from the body; Unleash's `fieldToRow` then writes `0`);
- a bulk-metrics application without `strategies`: 400 with an empty body on 5.12, 202 on the
  others; without `started`: 400, empty, on all four;
- `POST /api/admin/projects/<unknown>/revive`: 200 on 5.12 (nothing to revive), 404 "Active
  project with id ... does not exist" from 6.10; `.../delete`: 200 on all; a flag of another
  project named in either, or in `.../archive`: 403 `InvalidOperationError` on all four;
- a second password-reset link for the same user within a minute: 429 `RateLimitError` from
  6.10; 500 `UnknownError` "Cannot read properties of undefined (reading 'toString')" on 5.12,
  which makes no new link (its `reset_tokens` row count stays), and gives one again after the
  minute; flagdesk's CLI reports it with exit status 1, journaled as failed, with a hint.
- the error bodies, in test_error_bodies.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from tests.compat.conftest import Peer, per_version
from tests.compat.test_user_actions import past_the_limit

USERS = "/api/admin/user-admin"


class Made:
    """What a test makes on its target, removed afterwards (from the real peer as its other
    tests do; the sandbox is the test session's own)."""

    def __init__(self, target: Peer) -> None:
        self.target = target
        self.fields: list[str] = []
        self.users: list[int] = []
        self.flags: list[str] = []

    def remove(self) -> None:
        with self.target.raw() as http:
            for name in self.fields:
                http.delete(f"/api/admin/context/{name}")
            for user in self.users:
                http.delete(f"{USERS}/{user}")
            self.target.remove_flags(http, self.flags)


@pytest.fixture
def made(target: Peer) -> Iterator[Made]:
    things = Made(target)
    yield things
    things.remove()


def name_of(unique: Callable[[str], str], kind: str) -> str:
    """A name of the run's own for `kind`; the sandbox's too (both sides are asked alike)."""
    return unique(kind) + f"-{uuid.uuid4().hex[:4]}"


def test_a_field_put_and_the_sort_order(
    target: Peer, made: Made, unique: Callable[[str], str]
) -> None:
    name = name_of(unique, "sort").replace("-", "")
    kept = per_version(target, {"5.12": 4, "6.10 7.6 8.2": 0})
    with target.raw() as http:
        created = http.post("/api/admin/context", json={"name": name, "sortOrder": 4})
        assert created.status_code == 201, created.text
        made.fields.append(name)
        for body in ({"description": "left out"}, {"sortOrder": 7}, {"sortOrder": 0}):
            assert http.put(f"/api/admin/context/{name}", json=body).status_code == 200
            assert http.get(f"/api/admin/context/{name}").json()["sortOrder"] == kept, body


def test_bulk_applications_without_strategies_or_started(target: Peer) -> None:
    started = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    application = {"appName": "flagdesk-compat-versions", "environment": "development",
                   "instanceId": "i", "interval": 10_000, "started": started}  # fmt: skip
    headers = {"Authorization": target.require_client_token()}
    with httpx.Client(base_url=target.url, timeout=30, headers=headers) as http:

        def send(app: dict[str, object]) -> httpx.Response:
            return http.post("/api/client/metrics/bulk",
                             json={"applications": [app], "metrics": []})  # fmt: skip

        assert send({**application, "strategies": []}).status_code == 202
        no_strategies = send(application)
        assert no_strategies.status_code == per_version(target, {"5.12": 400, "6.10 7.6 8.2": 202})
        assert no_strategies.content == b""
        no_started = send({k: v for k, v in {**application, "strategies": []}.items()
                           if k != "started"})  # fmt: skip
        assert (no_started.status_code, no_started.content) == (400, b"")


def test_bulk_revive_delete_and_archive_through_another_project(
    target: Peer, made: Made, unique: Callable[[str], str]
) -> None:
    live, archived = name_of(unique, "other-live"), name_of(unique, "other-archived")
    with target.raw() as http:
        for name in (live, archived):
            made_flag = http.post("/api/admin/projects/default/features", json={"name": name})
            assert made_flag.status_code == 201, made_flag.text
            made.flags.append(name)
        assert http.delete(f"/api/admin/projects/default/features/{archived}").status_code == 202
        unknown = "/api/admin/projects/no-such-project"
        for features in ([], [name_of(unique, "none")]):
            revived = http.post(f"{unknown}/revive", json={"features": features})
            assert revived.status_code == per_version(target, {"5.12": 200, "6.10 7.6 8.2": 404})
            if revived.status_code == 404:
                message = "Active project with id no-such-project does not exist"
                assert revived.json()["message"] == message
            assert http.post(f"{unknown}/delete", json={"features": features}).status_code == 200
        for verb, name in (("revive", archived), ("delete", archived), ("archive", live)):
            refused = http.post(f"{unknown}/{verb}", json={"features": [name]})
            status = (
                403 if verb != "revive" else per_version(target, {"5.12": 403, "6.10 7.6 8.2": 404})
            )
            assert refused.status_code == status, (verb, refused.text)
            if status == 403:
                assert refused.json()["name"] == "InvalidOperationError"
                assert 'does not match the project provided in request URL ("no-such-project")' \
                    in refused.json()["message"]  # fmt: skip
        listed = http.get("/api/admin/projects/default/features").json()["features"]
        assert live in {f["name"] for f in listed} and archived not in {f["name"] for f in listed}


def flagdesk_users(target: Peer, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`flagdesk users ARGS --url <target>` with the admin token, stdin not a terminal."""
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env |= {"FLAGDESK_TOKEN": target.admin_token, "FLAGDESK_DATA_DIR": str(data)}
    return subprocess.run(
        [sys.executable, "-m", "app", "users", *args, "--url", target.url],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


def test_a_second_reset_link_within_the_minute(
    target: Peer, made: Made, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """Through `flagdesk users reset-password` (the path the window's action takes too): the
    first link is printed; the second is the server's refusal, 429 or 5.12's 500, said with
    what to do and journaled as failed."""
    email = f"{name_of(unique, 'reset')}@example.com"
    with target.raw() as http:
        user = past_the_limit(http, USERS, {"email": email, "rootRole": "Viewer",
                                             "sendEmail": False})  # fmt: skip
        assert user.status_code == 201, user.text
        made.users.append(user.json()["id"])
    user_id = str(user.json()["id"])
    first = flagdesk_users(target, tmp_path, "reset-password", user_id)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"{target.url}/reset-password?token=")
    second = flagdesk_users(target, tmp_path, "reset-password", user_id)
    assert second.returncode == 1
    status = per_version(target, {"5.12": 500, "6.10 7.6 8.2": 429})
    assert f"{status} " in second.stderr
    assert per_version(target, {
        "5.12": "Unleash 5.12 fails like this on a second reset link for the same user within "
                "a minute (later versions answer 429): no link was made; try again in a minute",
        "6.10 7.6 8.2": "You can only send one new reset password email per minute, per user.",
    }) in second.stderr  # fmt: skip
    entries = read_journal(journal_folder(target.url, tmp_path) / JOURNAL_NAME)
    assert [(e.state, e.status) for e in entries] == [(State.DONE, 200), (State.FAILED, status)]
