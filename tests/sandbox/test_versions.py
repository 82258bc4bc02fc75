"""`flagdesk serve --as-version`: the differences between the Unleash releases the sandbox plays
(`sandbox.versions`), over HTTP, each as the real release answers it (measured in tests/compat,
which also runs check's tests, tests/compat/test_versions.py and the error bodies against the
sandbox playing each version; here the same scenarios run against the sandbox alone, with no
peer)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from sandbox.process import SandboxProcess
from sandbox.versions import PLAYABLE, Played
from tests.compat import test_versions as scenarios
from tests.compat.conftest import Peer
from tests.compat.error_bodies import differences
from tests.conftest import personal_token_of

EMPTY_BULK = {"applications": [], "metrics": []}
SEARCH = "/api/admin/search/features"


def found(answer: httpx.Response) -> set[str]:
    """The names an answer lists: flags (`features`) or a field's users (`strategies`)."""
    assert answer.status_code == 200, answer.text
    body = answer.json()
    if "strategies" in body:
        return {s["featureName"] for s in body["strategies"]}
    return {f["name"] for f in body["features"]}


@pytest.mark.parametrize("line", list(PLAYABLE))
def test_the_release_played(tmp_path: Path, line: str) -> None:
    played = Played.of(line)
    older = {"5.12": 5, "6.10": 6, "7.6": 7, "8.2": 8}[line]
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", line) as sb, \
            sb.admin() as http, sb.client() as client:  # fmt: skip
        ui = http.get("/api/admin/ui-config").json()
        assert ui["version"] == PLAYABLE[line] == played.release
        assert ui["versionInfo"]["current"] == {"oss": PLAYABLE[line], "enterprise": ""}
        assert ui["environment"] == "Open Source" and "name" not in ui
        assert http.get("/api/admin/groups").status_code == 404  # open source: no groups

        archive = http.get("/api/admin/archive/features/default")
        assert archive.status_code == (200 if older < 7 else 404)
        archived = found(http.get(SEARCH, params={"project": "IS:default", "archived": "IS:true"}))
        by_lifecycle = found(
            http.get(SEARCH, params={"project": "IS:default", "lifecycle": "IS:archived"})
        )
        live = found(http.get("/api/admin/projects/default/features"))
        # a filter the release does not have is ignored: the search lists live flags
        assert archived <= live if older == 5 else not archived & live
        assert by_lifecycle <= live if older < 8 else not by_lifecycle & live
        if older == 6:  # the endpoint and the search list the same flags
            assert archived == found(archive)

        dashboard = http.get("/api/admin/personal-dashboard/default")
        assert dashboard.status_code == (404 if older == 5 else 500)  # no user behind the token
        if older == 5:
            assert "path you were looking for" in dashboard.json()["message"]

        # the admin API token on the client metrics endpoint: taken before 8.0
        sent = http.post("/api/client/metrics/bulk", json=EMPTY_BULK)
        assert sent.status_code == (202 if older < 8 else 403)
        assert client.post("/api/client/metrics/bulk", json=EMPTY_BULK).status_code == 202

        unknown = http.delete("/api/admin/archive/no-such-flag-anywhere")
        assert unknown.status_code == (404 if older < 8 else 200)
        if older < 8:
            word = "toggle" if older == 5 else "flag"
            assert unknown.json()["message"] == f"No feature {word} found"

        legal = http.post("/api/admin/context/environment/legal-values", json={"value": "x"})
        assert legal.status_code != 404 if older > 5 else legal.status_code == 404


def test_a_field_in_use_is_deleted_before_7_and_refused_from_7(tmp_path: Path) -> None:
    for line, kept in (("6.10", False), ("7.6", True)):
        with SandboxProcess(tmp_path / f"{line}.sqlite3", "--demo", "--as-version", line) as sb, \
                sb.admin() as http:  # fmt: skip
            fields = [f["name"] for f in http.get("/api/admin/context").json()]
            used = [n for n in fields if found(http.get(f"/api/admin/context/{n}/strategies"))]
            assert used, "the demo data uses a context field"
            name = used[0]
            answer = http.delete(f"/api/admin/context/{name}")
            assert answer.status_code == (409 if kept else 200), answer.text
            assert http.get(f"/api/admin/context/{name}").status_code == (200 if kept else 404)


def test_only_the_four_releases_are_played() -> None:
    with pytest.raises(ValueError, match=r"not one of 5\.12, 6\.10, 7\.6, 8\.2"):
        Played.of("6.3")
    assert Played.of("8.2").archived_filter({"lifecycle": "IS:archived"})
    assert not Played.of("7.6").archived_filter({"lifecycle": "IS:archived"})
    assert Played.of("6.10").archived_filter({"archived": "IS:true"})
    assert not Played.of("5.12").archived_filter({"archived": "IS:true"})


def as_peer(sb: SandboxProcess) -> Peer:
    """The sandbox as the compat tests' `target` sees the sandbox playing a release."""
    return Peer(sb.url, sb.admin_token, sb.client_token, personal_token_of(sb, "admin"), "")


@pytest.mark.parametrize("line", list(PLAYABLE))
def test_the_compat_scenarios_on_the_release_played(tmp_path: Path, line: str) -> None:
    """tests/compat/test_versions.py's scenarios and the error bodies' shapes (each states what
    every release answers), against the sandbox playing `line`."""
    counter = itertools.count()
    unique: Callable[[str], str] = lambda kind: f"played-{kind}-{next(counter)}"  # noqa: E731
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", line) as sb:
        target = as_peer(sb)
        assert differences(target) == {}
        made = scenarios.Made(target)
        scenarios.test_a_field_put_and_the_sort_order(target, made, unique)
        scenarios.test_bulk_applications_without_strategies_or_started(target)
        scenarios.test_bulk_revive_delete_and_archive_through_another_project(target, made, unique)
        scenarios.test_a_second_reset_link_within_the_minute(target, made, unique, tmp_path)
        made.remove()

        # a root role without the permission: 403 PermissionError, from the checks before the
        # route (an id on every release), naming the permission
        conn = sqlite3.connect(sb.db)
        viewer = conn.execute("SELECT username FROM users WHERE root_role = 3 AND username"
                              " IS NOT NULL ORDER BY id LIMIT 1").fetchone()[0]  # fmt: skip
        conn.close()
        headers = {"Authorization": personal_token_of(sb, viewer)}
        with httpx.Client(base_url=sb.url, headers=headers) as http:
            refused = http.post("/api/admin/context", json={"name": "viewers-field"})
            listed = http.get("/api/admin/user-admin")
        for answer, permission in ((refused, "CREATE_CONTEXT_FIELD"), (listed, "ADMIN")):
            body = answer.json()
            assert answer.status_code == 403 and body["name"] == "PermissionError", body
            assert "id" in body and body["permissions"] == [permission]
            assert ("description" in body["details"][0]) is (line == "5.12")


def test_the_unplayed_sandbox_keeps_the_spec_s_error_bodies(tmp_path: Path) -> None:
    """Unplayed, the sandbox answers as the spec says (every error body with an `id`, the spec's
    names), and sets a context field's sort order to 0 on a PUT, as 6.10 to 8.2 do."""
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo") as sb, sb.admin() as http:
        unknown = http.get("/api/admin/user-admin/2000000000")
        assert unknown.status_code == 404 and set(unknown.json()) == {"id", "name", "message"}
        text = http.post("/api/admin/context", content=b"x", headers={"Content-Type": "text/plain"})
        assert (text.status_code, text.json()["name"]) == (415, "ContentTypeerror")
        made = http.post("/api/admin/context", json={"name": "s", "sortOrder": 4})
        assert made.status_code == 201
        assert http.put("/api/admin/context/s", json={"sortOrder": 7}).status_code == 200
        assert http.get("/api/admin/context/s").json()["sortOrder"] == 0
