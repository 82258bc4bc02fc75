"""Compatibility tests against a REAL Unleash (the peer kit in `../shared/peers/unleash`): the
latest release of each major version still in use, `VERSIONS` (`.ci/run` runs this folder
against each).

They run only when `UNLEASH_BASE_URL` is set, as `.ci/run` does after starting the peer:

    ../shared/peers/unleash/run-unleash.sh
    set -a; . /var/tmp/unleash-peer/run/unleash.env; set +a
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest tests/compat

Tokens come from UNLEASH_ADMIN_TOKEN, UNLEASH_CLIENT_TOKEN and UNLEASH_ADMIN_PAT, the peer's
database from DATABASE_URL. The peer keeps its state between runs, so every user, feature and
application a test creates has a name of its own (`unique`), and is removed again afterwards
(`cleanup`) so that runs do not pile up archived features or inactive users.

Every test states what each version answers: where versions differ, the expectation is
`per_version(peer, {"5.12 6.10": a, "7.6 8.2": b})`, which must name every one of `VERSIONS`
exactly once (a test never skips or does less on a version). A peer of a version not in
`VERSIONS` fails every test that asks, rather than passing on guesses.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of

HERE = Path(__file__).resolve().parent
SKIP_REASON = (
    "UNLEASH_BASE_URL is not set: the compat tests need a real Unleash (5.12, 6.10, 7.6 or "
    "8.2). Start one with "
    "../shared/peers/unleash/run-unleash.sh, then `set -a; . /var/tmp/unleash-peer/run/"
    "unleash.env; set +a` (or run .ci/run, which does both)"
)
#: one id per test run, in every name a test creates (the peer's database outlives runs)
RUN_ID = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:6]}"
#: the Unleash versions the suite states its expectations for (major.minor), oldest first: the
#: latest release of each major version on the npm registry, as `.ci/run` starts them
VERSIONS = ("5.12", "6.10", "7.6", "8.2")
#: their exact releases
RELEASES = {"5.12": "5.12.8", "6.10": "6.10.1", "7.6": "7.6.5", "8.2": "8.2.0"}

T = TypeVar("T")


#: how many compat tests this run leaves out for want of a peer (said once, at the end)
_LEFT_OUT: list[int] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark this folder's tests `compat`; with no peer set, leave them all out, said in one line
    at the end of the run (`pytest_terminal_summary`)."""
    ours = [item for item in items if item.path.is_relative_to(HERE)]
    for item in ours:
        item.add_marker(pytest.mark.compat)
    if ours and not os.environ.get("UNLEASH_BASE_URL"):
        items[:] = [item for item in items if not item.path.is_relative_to(HERE)]
        config.hook.pytest_deselected(items=ours)
        _LEFT_OUT.append(len(ours))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _LEFT_OUT:
        terminalreporter.write_line(f"compat: {sum(_LEFT_OUT)} tests not run: {SKIP_REASON}")


@dataclass(frozen=True)
class Peer:
    """Where the real Unleash runs and the tokens it accepts; `repr` leaves the tokens out."""

    url: str
    admin_token: str = field(repr=False)
    client_token: str = field(repr=False)
    pat: str = field(repr=False)
    database_url: str = field(repr=False)

    @cached_property
    def version(self) -> str:
        """The release the server says it is (`GET /api/admin/ui-config`), e.g. "5.12.8"."""
        with self.raw() as http:
            answer = http.get("/api/admin/ui-config")
        answer.raise_for_status()
        return str(answer.json()["version"])

    @property
    def line(self) -> str:
        """Its major.minor, one of `VERSIONS` (else the test fails: no expectation to hold)."""
        line = ".".join(self.version.split(".")[:2])
        if line not in VERSIONS:
            pytest.fail(f"Unleash {self.version} is not one of the versions {VERSIONS} the "
                        "compat suite states expectations for")  # fmt: skip
        return line

    def since(self, major: int, minor: int = 0) -> bool:
        """Whether this server is that version or later."""
        return tuple(int(n) for n in self.line.split(".")) >= (major, minor)

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

    def query(self, statement: str) -> str:
        """One SQL query's answer in the peer's database, unaligned (for what no API tells)."""
        if not self.database_url:
            pytest.skip("DATABASE_URL is not set (run-unleash.sh writes it to unleash.env)")
        done = subprocess.run(["psql", self.database_url, "-At", "-c", statement], check=True,
                              timeout=60, capture_output=True, text=True)  # fmt: skip
        return done.stdout.strip()

    @property
    def lifecycle_race(self) -> bool:
        """Unleash 6.10, 7.6 and 8.2 record a flag's lifecycle stages in event handlers that
        can run seconds (10 s and more under load) after the flag was created or archived; if
        the flag was deleted for good meanwhile, the insert fails a foreign key, which none of
        them catches: the server exits (measured on 7.6.5 and 8.2.0 under load, and on 6.10.1
        when CI ran the older versions' suites side by side: `FeatureLifecycleService.
        featureArchived`, "violates foreign key constraint", then every request refused).
        5.12 records no lifecycle."""
        return per_version(self, {"5.12": False, "6.10 7.6 8.2": True})

    def settle(self, *features: str) -> None:
        """Before flags are deleted for good on purpose: wait (up to 90 s) until 6.10, 7.6 or 8.2
        has recorded their first and their archived lifecycle stage (see `lifecycle_race`)."""
        if not features or not self.lifecycle_race:
            return
        names = ", ".join(f"'{name}'" for name in features)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            counted = self.query(
                "SELECT count(*) FROM (SELECT DISTINCT feature, stage FROM feature_lifecycles"
                f" WHERE feature IN ({names}) AND stage IN ('initial', 'archived')) AS recorded"
            )
            if int(counted or 0) >= 2 * len(set(features)):
                return
            time.sleep(0.25)
        raise AssertionError(f"Unleash recorded no archived stage for {features} in 90 s")

    def prune_leftovers(self) -> None:
        """Delete for good, in the database, the flags earlier runs of this suite left archived:
        `remove_flags` leaves them archived on 6.10, 7.6 and 8.2, and the batch import's test
        makes 500 a run. Past 3,000 of them, reading the default project's archive through 7.6's
        and 8.2's search (50 a page, 15 requests a minute) took minutes a read, and a peer kept
        between runs (`.ci/run`'s state folders) gains them every run. Only those archived over
        an hour ago: their lifecycle stages are long recorded (`lifecycle_race`), and another
        run sharing the peer has its own still in use. Nothing without DATABASE_URL and psql;
        a refusal (a flag another depends on) leaves them and says so."""
        if not self.database_url or shutil.which("psql") is None:
            return
        done = subprocess.run(
            ["psql", self.database_url, "-v", "ON_ERROR_STOP=1", "-q", "-c",
             "DELETE FROM features WHERE name LIKE 'flagdesk-compat-%'"
             " AND archived_at < now() - interval '1 hour'"],
            timeout=120, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            print(f"compat: earlier runs' archived flags left on {self.url}: {done.stderr}")

    def remove_flags(self, http: httpx.Client, features: list[str]) -> None:
        """Archive the flags a test made (a no-op 202 when archived already), then delete them
        from the archive for good, but on 6.10, 7.6 and 8.2, where that can stop the server
        (`lifecycle_race`; the shared 8.2 peer serves others too): there they stay archived."""
        for name in features:
            http.delete(f"/api/admin/projects/default/features/{name}")
        if not self.lifecycle_race:
            for name in features:
                http.delete(f"/api/admin/archive/{name}")

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
    found = Peer(
        url=url.rstrip("/"),
        admin_token=admin_token,
        client_token=os.environ.get("UNLEASH_CLIENT_TOKEN", "").strip(),
        pat=os.environ.get("UNLEASH_ADMIN_PAT", "").strip(),
        database_url=os.environ.get("DATABASE_URL", "").strip(),
    )
    found.prune_leftovers()
    return found


@pytest.fixture(scope="session")
def second(peer: Peer) -> Peer:
    """A second real Unleash of the peer's release, side by side (`UNLEASH_SECOND_BASE_URL`,
    `UNLEASH_SECOND_ADMIN_TOKEN`, `UNLEASH_SECOND_ADMIN_PAT`, `UNLEASH_SECOND_DATABASE_URL`: the
    variables of its `unleash.env`, renamed), for what needs two servers (promoting from one to
    the other). `.ci/run` starts one beside the last version's peer, as issue 37 asks of 8.2:
    a run that expects that release and has no second server fails rather than leave the test
    out; elsewhere (the older versions' runs, a developer's peer alone) the test is skipped."""
    url = os.environ.get("UNLEASH_SECOND_BASE_URL", "").strip()
    if not url:
        last = RELEASES[VERSIONS[-1]]
        if os.environ.get("UNLEASH_EXPECTED_VERSION", "").strip() == last:
            pytest.fail(f"UNLEASH_SECOND_BASE_URL is not set: .ci/run starts a second {last} "
                        "beside the first for the tests that need two")  # fmt: skip
        pytest.skip("UNLEASH_SECOND_BASE_URL is not set (a second real Unleash of the peer's "
                    "release: .ci/run starts one for the last version)")  # fmt: skip
    found = Peer(
        url=url.rstrip("/"),
        admin_token=os.environ.get("UNLEASH_SECOND_ADMIN_TOKEN", "").strip(),
        client_token="",
        pat=os.environ.get("UNLEASH_SECOND_ADMIN_PAT", "").strip(),
        database_url=os.environ.get("UNLEASH_SECOND_DATABASE_URL", "").strip(),
    )
    assert found.url != peer.url, "the second Unleash is the peer itself"
    assert found.version == peer.version, (found.version, peer.version)
    return found


def per_version(peer: Peer, table: Mapping[str, T]) -> T:
    """What the peer's version answers, from `table`, whose keys are space-separated lists of
    `VERSIONS` that together name each of them exactly once ("5.12 6.10": a, "7.6 8.2": b)."""
    named = [line for key in table for line in key.split()]
    if sorted(named) != sorted(VERSIONS):
        raise AssertionError(f"expectations name {named}, not each of {VERSIONS} once")
    return next(value for key, value in table.items() if peer.line in key.split())


@pytest.fixture(scope="session")
def twin(peer: Peer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """The sandbox playing the peer's version (`flagdesk serve --as-version`), with an admin API
    token, a client token and a personal access token of its `admin`, as the peer has: the tests
    that take `target` run against both, and test_check compares what `flagdesk check` finds."""
    db_path = tmp_path_factory.mktemp("twin") / "twin.sqlite3"
    with SandboxProcess(db_path, "--demo", "--as-version", peer.line) as sb:
        yield Peer(sb.url, sb.admin_token, sb.client_token, personal_token_of(sb, "admin"), "")


@pytest.fixture(params=["unleash", "sandbox"])
def target(request: pytest.FixtureRequest, peer: Peer) -> Peer:
    """The real peer, then the sandbox playing its version (`twin`): one test, both servers."""
    if request.param == "unleash":
        return peer
    twin: Peer = request.getfixturevalue("twin")
    return twin


@pytest.fixture(scope="session", autouse=True)
def expected_release(peer: Peer) -> None:
    """The peer is the release `.ci/run` started (UNLEASH_EXPECTED_VERSION), when it says."""
    expected = os.environ.get("UNLEASH_EXPECTED_VERSION", "").strip()
    if expected:
        assert peer.version == expected, f"the peer runs {peer.version}, not {expected}"
    assert peer.version == RELEASES[peer.line], (peer.version, RELEASES)


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

    peer: Peer

    users: list[int] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    sql: list[str] = field(default_factory=list)


@pytest.fixture
def cleanup(peer: Peer) -> Iterator[Cleanup]:
    created = Cleanup(peer)
    yield created
    for statement in created.sql:
        peer.sql(statement)
    with peer.raw() as http:
        for user_id in created.users:
            http.delete(f"/api/admin/user-admin/{user_id}")
        peer.remove_flags(http, created.features)
