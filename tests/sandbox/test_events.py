"""The event log's reads as the sandbox serves them (issue 38; measured on the real releases,
`sandbox.store.events`): the newest 100 events with `preData`/`data`, a project's (50 on 8.2,
100 on 5.x), a flag's, the event search's filters (`IS:`, `IS_ANY_OF:`, dates, text), paging
and its 400s, who made events, the search absent on 5.x and its `id` filter ignored on 6.x, and
a filtered page of 100,000 events read through the indexes."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from sandbox import db
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

PATTERN = "^(IS|IS_ANY_OF):(.*?)(,([a-zA-Z0-9_]+))*$"


def make_flag(http: httpx.Client, name: str, project: str = "default") -> None:
    r = http.post(f"/api/admin/projects/{project}/features", json={"name": name})
    assert r.status_code == 201, r.text


def test_the_newest_events_with_what_changed(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        make_flag(http, "ev-first")
        r = http.post(
            "/api/admin/projects/default/features/ev-first/environments/development/strategies",
            json={"name": "default"},
        )
        assert r.status_code == 200, r.text
        latest = http.get("/api/admin/events", params={"type": "x", "limit": 3, "offset": 2})
    assert latest.status_code == 200
    body = latest.json()
    assert set(body) == {"version", "events", "totalEvents"} and body["version"] == 1
    events = body["events"]
    assert len(events) == 100 < body["totalEvents"]  # the demo's history and more
    assert [e["id"] for e in events] == sorted((e["id"] for e in events), reverse=True)
    added, created = events[0], events[1]
    assert set(added) == {"id", "type", "createdBy", "createdAt", "createdByUserId", "data",
                          "preData", "tags", "featureName", "project", "environment",
                          "groupType", "groupId"}  # fmt: skip
    assert added["groupType"] == "transaction" and len(added["groupId"]) == 26
    assert added["type"] == "feature-strategy-add" and added["environment"] == "development"
    assert added["data"]["name"] == "default" and added["preData"] is None
    assert created["type"] == "feature-created" and created["featureName"] == "ev-first"
    assert created["data"]["name"] == "ev-first" and created["project"] == "default"
    assert created["createdBy"] == "admin" and created["createdByUserId"] == -42
    assert created["tags"] == [] and created["createdAt"].endswith("Z")


def test_a_project_and_a_flag(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        for n in range(3):
            make_flag(http, f"ev-flag-{n}")
        # the demo's web shop has more than 50 events
        project = http.get("/api/admin/events", params={"project": "web-shop"}).json()
        flag = http.get("/api/admin/events/ev-flag-1").json()
        nobody = http.get("/api/admin/events/ev-never").json()
    assert len(project["events"]) == 50  # unplayed, as 8.2
    assert {e["project"] for e in project["events"]} == {"web-shop"}
    conn = db.connect(sandbox.db)
    try:
        count = conn.execute("SELECT count(*) FROM events WHERE project = 'web-shop'").fetchone()
    finally:
        conn.close()
    assert project["totalEvents"] == count[0] > 50
    assert flag["toggleName"] == "ev-flag-1" and flag["totalEvents"] == 1
    assert [e["type"] for e in flag["events"]] == ["feature-created"]
    assert nobody == {"version": 1, "toggleName": "ev-never", "events": [], "totalEvents": 0}


def test_the_search_filters_and_pages(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        for n in range(5):
            make_flag(http, f"ev-search-{n}")
        r = http.post(
            "/api/admin/projects/default/features/ev-search-0/environments/production/strategies",
            json={"name": "default"},
        )
        assert r.status_code == 200

        def search(**params: object) -> dict[str, object]:
            answer = http.get("/api/admin/search/events", params=params)  # type: ignore[arg-type]
            assert answer.status_code == 200, answer.text
            return answer.json()  # type: ignore[no-any-return]

        mine = search(query="EV-SEARCH", limit=1000)
        assert mine["total"] == 6
        events = mine["events"]
        assert isinstance(events, list)
        assert [e["featureName"] for e in events] == ["ev-search-0", *(
            f"ev-search-{n}" for n in (4, 3, 2, 1, 0))]  # fmt: skip
        assert events[0]["label"] == "Flag strategy added" and "summary" in events[0]

        one = search(type="IS:feature-strategy-add", feature="IS:ev-search-0")
        assert one["total"] == 1
        either = search(feature="IS_ANY_OF:ev-search-1,ev-search-2", createdBy="IS:-42")
        assert either["total"] == 2
        assert search(feature="IS:ev-search-0", environment="IS:production")["total"] == 1
        assert search(feature="IS:ev-search-0", project="IS:nowhere")["total"] == 0

        page = search(query="ev-search", offset=2, limit=2)
        assert [e["featureName"] for e in page["events"]] == ["ev-search-3", "ev-search-2"]
        assert page["total"] == 6
        assert search(query="ev-search", offset=10)["events"] == []
        assert len(search()["events"]) == 50  # type: ignore[arg-type]
        for bad in (5000, 0, "abc"):  # back to 50
            assert len(search(limit=bad)["events"]) == 50  # type: ignore[arg-type]
        assert len(search(limit=1000)["events"]) > 50  # type: ignore[arg-type]

        today = datetime.now(UTC).strftime("%Y-%m-%d")
        assert search(query="ev-search", to=f"IS:{today}")["total"] == 6
        assert search(query="ev-search", **{"from": f"IS:{today}"})["total"] == 6
        assert search(query="ev-search", **{"from": "IS:2999-01-01"})["total"] == 0
        assert search(query="ev-search", to="IS:2000-01-01")["total"] == 0

        wanted = events[3]["id"]  # type: ignore[index]
        assert [e["id"] for e in search(id=f"IS:{wanted}")["events"]] == [wanted]

        bare = assert_error(http.get("/api/admin/search/events?type=feature-created"), 400,
                            "ValidationError")  # fmt: skip
        assert bare["details"] == [{
            "message": f'The `/query/type` property must match pattern "{PATTERN}".'
            ' You sent "feature-created".', "path": "/query/type"}]  # fmt: skip
        dated = assert_error(http.get(f"/api/admin/search/events?from=IS:{today}T10:00:00Z"),
                             400, "ValidationError")  # fmt: skip
        assert dated["details"][0]["path"] == "/query/from"
        by_name = http.get("/api/admin/search/events?createdBy=IS:admin")
        assert by_name.status_code == 500  # as 8.2: the name taken for a user id


def test_who_made_events(sandbox: SandboxProcess, personal_token: object) -> None:
    with sandbox.admin() as http:
        make_flag(http, "ev-creator")
        creators = http.get("/api/admin/event-creators")
    assert creators.status_code == 200
    listed = creators.json()
    assert {"id": -42, "name": "Unleash Admin Token"} in listed
    assert all(set(c) == {"id", "name"} for c in listed)
    assert [c["id"] for c in listed] == sorted({c["id"] for c in listed})


RELEASES = [("5.12", False, 100), ("6.10", True, 100), ("7.6", True, 50)]


@pytest.mark.parametrize(("line", "searched", "project_count"), RELEASES)
def test_what_each_release_has(
    tmp_path: Path, line: str, searched: bool, project_count: int
) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", line) as sb, \
            sb.admin() as http:  # fmt: skip
        for n in range(40):  # past 100 events in the demo's web shop
            make_flag(http, f"ev-played-{n}", "web-shop")
        project = http.get("/api/admin/events", params={"project": "web-shop"}).json()
        assert len(project["events"]) == project_count < project["totalEvents"]
        assert ("groupId" in project["events"][0]) is (line == "7.6")
        search = http.get("/api/admin/search/events", params={"id": "IS:1"})
        creators = http.get("/api/admin/event-creators")
        if not searched:
            assert search.status_code == creators.status_code == 404
            return
        assert creators.status_code == 200
        assert search.status_code == 200
        honoured = line != "6.10"  # 6.x ignores `id`
        assert (search.json()["total"] == 1) is honoured


def test_a_page_of_100000_events(tmp_path: Path) -> None:
    path = tmp_path / "big.sqlite3"
    with SandboxProcess(path, "--empty") as sb:
        pass  # its schema
    conn = sqlite3.connect(path)
    now = int(time.time() * 1000)
    kinds = ("feature-created", "feature-updated", "feature-strategy-add", "segment-created")
    with conn:
        conn.executemany(
            "INSERT INTO events(type, project, feature, environment, created_by,"
            " created_by_user_id, created_at, summary) VALUES(?, 'default', ?, ?, 'admin', ?, ?,"
            " 'x')",
            ((kinds[n % 4], f"big-{n % 5000}", "development" if n % 3 else None, -42 - n % 2,
              now - (100_000 - n) * 1000) for n in range(100_000)),
        )  # fmt: skip
    conn.close()
    with SandboxProcess(path) as sb, sb.admin() as http:
        http.get("/api/admin/search/events", params={"limit": 1})  # warm
        for params in (
            {"limit": 1000},
            {"type": "IS:segment-created", "offset": 20_000, "limit": 100},
            {"feature": "IS:big-17", "limit": 100},
            {"createdBy": "IS:-43", "environment": "IS:development", "limit": 1000},
            {"from": "IS:2000-01-01", "limit": 1000},
        ):
            started = time.perf_counter()
            r = http.get("/api/admin/search/events", params=params)
            took = time.perf_counter() - started
            assert r.status_code == 200, r.text
            assert r.json()["events"], params
            assert took < 0.5, (params, took)
        assert http.get("/api/admin/search/events", params={"feature": "IS:big-17"}).json()[
            "total"] == 20  # fmt: skip


def test_a_context_fields_events_say_what_changed(sandbox: SandboxProcess) -> None:
    """As the 8.2 peer logged them (measured): the body sent, then the field before and the body
    sent, then the whole field before."""
    with sandbox.admin() as http:
        field = {"name": "ev-ctx", "description": "d1", "legalValues": [{"value": "a"}]}
        assert http.post("/api/admin/context", json=field).status_code == 201
        edit = {"name": "ev-ctx", "description": "d2", "stickiness": True}
        assert http.put("/api/admin/context/ev-ctx", json=edit).status_code == 200
        assert http.delete("/api/admin/context/ev-ctx").status_code == 200
        kinds = "IS_ANY_OF:context-field-created,context-field-updated,context-field-deleted"
        events = http.get("/api/admin/search/events", params={"type": kinds, "limit": 3})
    deleted, updated, created = events.json()["events"]
    assert created["data"] == {**field, "stickiness": False} and created["preData"] is None
    assert updated["preData"] == {**field, "stickiness": False}
    assert updated["data"] == edit
    assert deleted["data"] is None
    assert deleted["preData"] == {
        "name": "ev-ctx", "createdAt": created["createdAt"], "sortOrder": 0, "stickiness": True,
        "description": "d2", "legalValues": [],
    }  # fmt: skip
    assert [e["label"] for e in (created, updated, deleted)] == [
        "Context field created", "Context field updated", "Context field deleted"]  # fmt: skip


@pytest.mark.parametrize("line", ["5.12", "6.10", "7.6", None])
def test_the_search_by_body(tmp_path: Path, line: str | None) -> None:
    """`POST /api/admin/events/search` on 5.x and 6.x (404 from 7.0, 405 unplayed): filters,
    a page of at most 100, and the count without the text (measured on 5.12 and 6.10)."""
    played = ("--as-version", line) if line else ()
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", *played) as sb, sb.admin() as http:
        for n in range(3):
            make_flag(http, f"ev-body-{n}")
        asked = {"type": "feature-created", "feature": "ev-body-1"}
        found = http.post("/api/admin/events/search", json=asked)
        if line not in ("5.12", "6.10"):  # unplayed, a method the path is not served with
            assert found.status_code == (405 if line is None else 404)
            return
        assert found.status_code == 200, found.text
        body = found.json()
        assert set(body) == {"version", "events", "totalEvents"} and body["totalEvents"] == 1
        assert [e["featureName"] for e in body["events"]] == ["ev-body-1"]
        page = http.post("/api/admin/events/search", json={"type": "feature-created",
                                                            "limit": 2, "offset": 1})  # fmt: skip
        assert [e["featureName"] for e in page.json()["events"]] == ["ev-body-1", "ev-body-0"]
        texts = http.post("/api/admin/events/search", json={"query": "EV-BODY", "limit": 100})
        everything = http.get("/api/admin/events").json()["totalEvents"]
        assert len(texts.json()["events"]) == 3 and texts.json()["totalEvents"] == everything
        assert http.post("/api/admin/events/search", json={}).json()["events"] == (
            http.get("/api/admin/events").json()["events"])  # fmt: skip
        for bad in ({"limit": 500}, {"limit": 0}, {"offset": -1}):
            assert http.post("/api/admin/events/search", json=bad).status_code == 400


def _last(http: httpx.Client, kinds: str, n: int) -> list[dict[str, object]]:
    """The newest `n` events of the types `kinds` (comma-separated), oldest first."""
    found = http.get("/api/admin/search/events", params={"type": f"IS_ANY_OF:{kinds}",
                                                         "limit": n})  # fmt: skip
    assert found.status_code == 200, found.text
    return list(reversed(found.json()["events"]))


def test_people_and_access_events_say_what_changed(sandbox: SandboxProcess) -> None:
    """Users, groups, roles, service accounts and their tokens, project access and a deleted
    flag: each change's event holds the object before (`preData`) and after (`data`), as
    Unleash's events of those types do (`mapUserToData`, the group and role services,
    `ProjectAccess*` events, `FeatureDeletedEvent`)."""
    with sandbox.admin() as http:
        made = http.post("/api/admin/user-admin", json={"email": "ev@x.example", "name": "Ev",
                                                        "rootRole": 3})  # fmt: skip
        assert made.status_code == 201, made.text
        uid = made.json()["id"]
        assert http.put(f"/api/admin/user-admin/{uid}", json={"name": "Eve"}).status_code == 200
        group = http.post(
            "/api/admin/groups", json={"name": "ev-group", "users": [{"user": {"id": uid}}]}
        )
        assert group.status_code == 201, group.text
        gid = group.json()["id"]
        assert http.put(f"/api/admin/groups/{gid}",
                        json={"name": "ev-group", "description": "d", "users": []}
                        ).status_code == 200  # fmt: skip
        access = f"/api/admin/projects/default/users/{uid}/roles"
        assert (
            http.post(
                "/api/admin/projects/default/access",
                json={"roles": [5], "groups": [gid], "users": [uid]},
            ).status_code
            == 200
        )
        assert http.put(access, json={"roles": [4]}).status_code == 200
        assert http.delete(access).status_code == 200
        assert http.delete(f"/api/admin/groups/{gid}").status_code == 200
        assert http.delete(f"/api/admin/user-admin/{uid}").status_code == 200
        role = http.post(
            "/api/admin/roles",
            json={
                "name": "ev-role",
                "type": "root-custom",
                "permissions": [{"name": "CREATE_ADDON"}],
            },
        )
        assert role.status_code == 200, role.text
        rid = role.json()["roles"]["id"]
        assert http.put(f"/api/admin/roles/{rid}", json={
            "name": "ev-role", "type": "root-custom", "description": "more",
            "permissions": []}).status_code == 200  # fmt: skip
        assert http.delete(f"/api/admin/roles/{rid}").status_code == 200
        account = http.post(
            "/api/admin/service-account",
            json={"name": "Ev bot", "username": "ev-bot", "rootRole": 3},
        )
        assert account.status_code == 201, account.text
        aid = account.json()["id"]
        assert http.put(f"/api/admin/service-account/{aid}",
                        json={"name": "Ev robot"}).status_code == 200  # fmt: skip
        token = http.post(
            f"/api/admin/service-account/{aid}/token",
            json={"description": "ci", "expiresAt": "2099-01-01T00:00:00Z"},
        )
        assert token.status_code == 201, token.text
        tid, secret = token.json()["id"], token.json()["secret"]
        assert http.delete(f"/api/admin/service-account/{aid}/token/{tid}").status_code == 200
        assert http.delete(f"/api/admin/service-account/{aid}").status_code == 200
        make_flag(http, "ev-gone")
        assert http.delete("/api/admin/projects/default/features/ev-gone").status_code == 202
        assert http.delete("/api/admin/archive/ev-gone").status_code == 200

        users = _last(http, "user-created,user-updated,user-deleted", 3)
        groups = _last(http, "group-created,group-updated,group-deleted", 3)
        granted = _last(http, "project-access-added,project-access-user-roles-updated,"
                        "project-access-user-roles-deleted", 3)  # fmt: skip
        roles = _last(http, "role-created,role-updated,role-deleted", 3)
        accounts = _last(http, "service-account-created,service-account-updated,"
                         "service-account-deleted", 3)  # fmt: skip
        tokens = _last(http, "pat-created,pat-deleted", 2)
        (deleted,) = _last(http, "feature-deleted", 1)

    ev = {"id": uid, "name": "Ev", "email": "ev@x.example", "rootRole": 3}  # no username
    assert [(e["preData"], e["data"]) for e in users] == [
        (None, ev),
        (ev, {**ev, "name": "Eve"}),
        ({**ev, "name": "Eve"}, None),
    ]
    assert groups[0]["data"]["users"] == [uid] and groups[0]["preData"] is None
    assert groups[1]["preData"]["users"] == [uid] and groups[1]["data"]["users"] == []
    assert groups[1]["data"]["description"] == "d" and groups[2]["data"] is None
    assert groups[2]["preData"]["name"] == "ev-group"
    assert granted[0]["data"] == {"roles": [{"roleId": 5, "groupIds": [gid], "userIds": [uid]}]}
    assert (granted[1]["preData"], granted[1]["data"]) == (
        {"roles": [5], "userId": uid},
        {"roles": [4], "userId": uid},
    )
    assert granted[2]["preData"] == {"roles": [4], "userId": uid} and granted[2]["data"] is None
    assert roles[0]["data"]["permissions"] == [{"name": "CREATE_ADDON"}]
    assert roles[1]["preData"]["permissions"] == [{"name": "CREATE_ADDON"}]
    assert roles[1]["data"]["permissions"] == [] and roles[1]["data"]["description"] == "more"
    assert roles[2]["preData"]["name"] == "ev-role" and roles[2]["data"] is None
    assert accounts[0]["data"] == {"id": aid, "name": "Ev bot", "username": "ev-bot",
                                   "rootRole": 3}  # fmt: skip
    assert accounts[1]["data"]["name"] == "Ev robot" and accounts[1]["preData"]["name"] == "Ev bot"
    assert accounts[2]["preData"]["username"] == "ev-bot" and accounts[2]["data"] is None
    assert [(e["type"], e["data"]["id"], e["data"]["description"]) for e in tokens] == [
        ("pat-created", tid, "ci"),
        ("pat-deleted", tid, "ci"),
    ]
    assert deleted["preData"]["name"] == "ev-gone" and deleted["preData"]["project"] == "default"
    assert deleted["data"] is None
    # no secret in any of them
    assert secret not in str([users, groups, granted, roles, accounts, tokens, deleted])


@pytest.mark.parametrize("groups", [True, False])
def test_the_search_items_made_by_sqlite_are_the_rows_items(
    sandbox: SandboxProcess, groups: bool
) -> None:
    """The search's page is JSON text SQLite makes (`sandbox.store.events._sql_item`): the same
    items, keys in the same order, as `_item` makes of the rows (what the newest events and a
    flag's events give), with data of every kind: text beyond ASCII, ungrouped types (a
    token's, a tag's), none."""
    from sandbox.store import Store
    from sandbox.store.events import _ITEM_QUERY, EventQuery, _item

    with sandbox.admin() as http:
        described = 'Åsa\'s "flag" ✓ \\ \u2028'
        made = http.post("/api/admin/projects/default/features",
                         json={"name": "ev-sql", "description": described})  # fmt: skip
        assert made.status_code == 201, made.text
        token = http.post("/api/admin/api-tokens", json={
            "tokenName": "ev-sql", "type": "client", "environment": "development",
            "projects": ["default"]})  # fmt: skip
        assert token.status_code == 201, token.text
        tagged = http.post("/api/admin/features/ev-sql/tags", json={"type": "simple",
                                                                    "value": "ev"})  # fmt: skip
        assert tagged.status_code == 201, tagged.text
    conn = db.connect(sandbox.db)
    try:
        body = Store(conn).search_events(EventQuery(limit=1000), groups=groups)
        rows = conn.execute(f"{_ITEM_QUERY} ORDER BY e.id DESC LIMIT 1000").fetchall()
    finally:
        conn.close()
    page = json.loads(body)
    expected = [_item(r, searched=True, groups=groups) for r in rows]
    assert page["events"] == expected and page["total"] == len(rows)
    assert [list(item) for item in page["events"]] == [list(item) for item in expected]
    kinds = {item["type"] for item in expected}
    assert {"feature-created", "api-token-created", "feature-tagged"} <= kinds
