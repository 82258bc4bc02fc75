"""Compatibility tests against a REAL Unleash 8.2 (the peer kit in `../shared/peers/unleash`).

They run only when `UNLEASH_BASE_URL` is set, as `.ci/run` does after starting the peer:

    ../shared/peers/unleash/run-unleash.sh
    set -a; . /var/tmp/unleash-peer/run/unleash.env; set +a
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest tests/compat

Tokens come from UNLEASH_ADMIN_TOKEN, UNLEASH_CLIENT_TOKEN and UNLEASH_ADMIN_PAT, the peer's
database from DATABASE_URL. The peer keeps its state between runs, so every user, feature and
application a test creates has a name of its own (`unique`), and is removed again afterwards
(`cleanup`) so that runs do not pile up archived features or inactive users.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
SKIP_REASON = (
    "UNLEASH_BASE_URL is not set: the compat tests need a real Unleash 8.2. Start one with "
    "../shared/peers/unleash/run-unleash.sh, then `set -a; . /var/tmp/unleash-peer/run/"
    "unleash.env; set +a` (or run .ci/run, which does both)"
)
#: one id per test run, in every name a test creates (the peer's database outlives runs)
RUN_ID = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:6]}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark this folder's tests `compat`; skip them all, with the reason, when no peer is set."""
    skip = None if os.environ.get("UNLEASH_BASE_URL") else pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.compat)
            if skip is not None:
                item.add_marker(skip)


@dataclass(frozen=True)
class Peer:
    """Where the real Unleash runs and the tokens it accepts; `repr` leaves the tokens out."""

    url: str
    admin_token: str = field(repr=False)
    client_token: str = field(repr=False)
    pat: str = field(repr=False)
    database_url: str = field(repr=False)

    def require_pat(self) -> str:
        if not self.pat:
            pytest.skip("UNLEASH_ADMIN_PAT is not set (run-unleash.sh writes it to unleash.env)")
        return self.pat

    def require_client_token(self) -> str:
        if not self.client_token:
            pytest.skip("UNLEASH_CLIENT_TOKEN is not set (run-unleash.sh writes it to unleash.env)")
        return self.client_token

    def sql(self, statement: str) -> None:
        """Run one SQL statement in the peer's database (for states no API can make)."""
        if not self.database_url:
            pytest.skip("DATABASE_URL is not set (run-unleash.sh writes it to unleash.env)")
        if shutil.which("psql") is None:
            pytest.skip("psql is not installed (the postgresql-client package)")
        subprocess.run(
            ["psql", self.database_url, "-v", "ON_ERROR_STOP=1", "-q", "-c", statement],
            check=True,
            timeout=60,
            stdout=subprocess.DEVNULL,
        )

    def raw(self) -> httpx.Client:
        """A plain HTTP client with the admin token, for looking behind flagdesk's back and for
        cleaning up (flagdesk has no delete operations)."""
        return httpx.Client(
            base_url=self.url, headers={"Authorization": self.admin_token}, timeout=30
        )


@pytest.fixture(scope="session")
def peer() -> Peer:
    url = os.environ.get("UNLEASH_BASE_URL", "").strip()
    if not url:
        pytest.skip(SKIP_REASON)
    admin_token = os.environ.get("UNLEASH_ADMIN_TOKEN", "").strip()
    if not admin_token:
        pytest.skip("UNLEASH_ADMIN_TOKEN is not set (run-unleash.sh writes it to unleash.env)")
    return Peer(
        url=url.rstrip("/"),
        admin_token=admin_token,
        client_token=os.environ.get("UNLEASH_CLIENT_TOKEN", "").strip(),
        pat=os.environ.get("UNLEASH_ADMIN_PAT", "").strip(),
        database_url=os.environ.get("DATABASE_URL", "").strip(),
    )


_counter = itertools.count(1)


@pytest.fixture(scope="session")
def unique() -> Callable[[str], str]:
    """`unique("feature")` -> `flagdesk-compat-feature-<run id>-<n>`: a name no run used before
    (valid as a feature name, an app name and the local part of an email address)."""

    def make(kind: str) -> str:
        return f"flagdesk-compat-{kind}-{RUN_ID}-{next(_counter)}"

    return make


@dataclass
class Cleanup:
    """What a test created on the peer, removed when the test ends."""

    users: list[int] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    sql: list[str] = field(default_factory=list)


@pytest.fixture
def cleanup(peer: Peer) -> Iterator[Cleanup]:
    created = Cleanup()
    yield created
    for statement in created.sql:
        peer.sql(statement)
    with peer.raw() as http:
        for user_id in created.users:
            http.delete(f"/api/admin/user-admin/{user_id}")
        for name in created.features:
            # archive (a no-op 202 when archived already), then delete from the archive for good
            http.delete(f"/api/admin/projects/default/features/{name}")
            http.delete(f"/api/admin/archive/{name}")
