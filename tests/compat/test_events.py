"""The event log's reads on a real Unleash (each of `VERSIONS`) and on the sandbox playing it
(`target`; issue 38, `sandbox.store.events`): which reads each release has (the newest 100, a
flag's, the search from 6.10, the event creators from 6.10), the item's fields per release, the
search's filters (`IS:`, `IS_ANY_OF:`, dates, text, `id` from 7.6), its paging and its 400s, and
what a context field's events record. Other tests add events meanwhile: each assertion filters
on this test's own flag and field names."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx

from tests.compat.conftest import per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

ITEM = {"id", "type", "createdBy", "createdAt", "createdByUserId", "data", "preData", "tags",
        "featureName", "project", "environment"}  # fmt: skip
GROUPED = {"groupType", "groupId"}
SEARCHED = {"label", "summary"}
PATTERN = "^(IS|IS_ANY_OF):(.*?)(,([a-zA-Z0-9_]+))*$"


def _flags(http: httpx.Client, unique: Callable[[str], str], count: int) -> list[str]:
    names = [unique("evflag") for _ in range(count)]
    for name in names:
        made = http.post("/api/admin/projects/default/features", json={"name": name})
        assert made.status_code == 201, made.text
    return names


def test_the_newest_events_and_a_flags(target: Peer, unique: Callable[[str], str]) -> None:
    with target.raw() as http:
        names = _flags(http, unique, 2)
        try:
            latest = http.get("/api/admin/events", params={"limit": 5, "type": "x"})
            flag = http.get(f"/api/admin/events/{names[1]}")
            project = http.get("/api/admin/events", params={"project": "default"})
        finally:
            target.remove_flags(http, names)
    assert latest.status_code == 200
    body = latest.json()
    assert set(body) == {"version", "events", "totalEvents"}
    events = body["events"]
    assert len(events) == 100 <= body["totalEvents"]  # limit and type ignored
    # newest first (5.12 and 6.10 by time: events of one moment not always by id)
    times = [e["createdAt"] for e in events]
    assert times == sorted(times, reverse=True)
    grouped = per_version(target, {"5.12 6.10": set(), "7.6 8.2": GROUPED})
    assert all(ITEM <= set(e) <= ITEM | grouped for e in events)  # some types are in no group
    mine = [e for e in events if e["featureName"] in names and e["type"] == "feature-created"]
    assert all(set(e) == ITEM | grouped for e in mine)
    assert [e["featureName"] for e in mine] == names[::-1]
    created = mine[0]
    assert created["createdBy"] == "admin" and created["createdByUserId"] == -42
    assert created["data"]["name"] == names[1] and created["preData"] is None
    assert created["project"] == "default" and created["tags"] == []
    assert flag.status_code == 200
    of_flag = flag.json()
    assert of_flag["toggleName"] == names[1] and of_flag["totalEvents"] >= 1
    assert {e["featureName"] for e in of_flag["events"]} == {names[1]}
    assert "feature-created" in {e["type"] for e in of_flag["events"]}
    projected, in_project = project.json()["events"], project.json()["totalEvents"]
    shown = per_version(target, {"5.12 6.10": 100, "7.6 8.2": 50})
    assert len(projected) == min(shown, in_project)
    assert {e["project"] for e in projected} == {"default"}


def test_the_search(target: Peer, unique: Callable[[str], str]) -> None:
    with target.raw() as http:
        names = _flags(http, unique, 3)
        try:
            _search(target, http, names)
        finally:
            target.remove_flags(http, names)


def _search(target: Peer, http: httpx.Client, names: list[str]) -> None:
    def search(**params: Any) -> dict[str, Any]:
        answer = http.get("/api/admin/search/events", params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()  # type: ignore[no-any-return]

    absent = http.get("/api/admin/search/events")
    creators = http.get("/api/admin/event-creators")
    if not target.since(6, 10):
        assert absent.status_code == creators.status_code == 404
        return
    assert {"id": -42, "name": "Unleash Admin Token"} in creators.json()

    created = "IS:feature-created"
    mine = search(type=created, feature=f"IS_ANY_OF:{','.join(names)}")
    assert set(mine) == {"events", "total"} and mine["total"] == 3
    assert [e["featureName"] for e in mine["events"]] == names[::-1]
    fields = ITEM | SEARCHED | per_version(target, {"5.12 6.10": set(), "7.6 8.2": GROUPED})
    assert all(set(e) == fields for e in mine["events"])
    assert mine["events"][0]["label"] == "Flag created"

    assert search(type=created, feature=f"IS:{names[0]}")["total"] == 1
    assert search(type=created, feature=f"IS:{names[0]}", createdBy="IS:-42")["total"] == 1
    assert search(feature=f"IS:{names[0]}", project="IS:flagdesk-compat-nowhere")["total"] == 0
    page = search(type=created, feature=f"IS_ANY_OF:{','.join(names)}", offset=1, limit=1)
    assert [e["featureName"] for e in page["events"]] == [names[1]] and page["total"] == 3
    past = search(type=created, feature=f"IS:{names[0]}", offset=5)
    assert past["events"] == [] and past["total"] == 1

    by_text = search(query=names[2].upper(), type=created)
    assert [e["featureName"] for e in by_text["events"]] == [names[2]]

    today = datetime.now(UTC).strftime("%Y-%m-%d")
    dated = {"type": created, "feature": f"IS:{names[0]}"}
    assert search(**dated, to=f"IS:{today}")["total"] == 1
    assert search(**dated, **{"from": f"IS:{today}"})["total"] == 1
    assert search(**dated, to="IS:2000-01-01")["total"] == 0

    assert len(search(limit=5000)["events"]) == 50  # back to the default
    assert len(search(limit="abc")["events"]) == 50

    one = mine["events"][0]["id"]
    by_id = search(id=f"IS:{one}")
    honoured = per_version(target, {"5.12": None, "6.10": False, "7.6 8.2": True})
    assert (by_id["total"] == 1) is honoured

    dates = r"^(IS):\d{4}-\d{2}-\d{2}$"
    for name, sent, pattern in (("type", "feature-created", PATTERN),
                                ("from", f"IS:{today}T10:00:00Z", dates)):  # fmt: skip
        bad = http.get("/api/admin/search/events", params={name: sent})
        assert bad.status_code == 400, bad.text
        assert bad.json()["details"] == [{
            "message": f'The `/query/{name}` property must match pattern "{pattern}". '
            f'You sent "{sent}".', "path": f"/query/{name}"}]  # fmt: skip


def test_a_context_fields_events(target: Peer, unique: Callable[[str], str]) -> None:
    name = unique("evctx")
    field = {"name": name, "description": "d1", "legalValues": [{"value": "a"}]}
    edit = {"name": name, "description": "d2", "stickiness": True}
    with target.raw() as http:
        assert http.post("/api/admin/context", json=field).status_code == 201
        assert http.put(f"/api/admin/context/{name}", json=edit).status_code == 200
        assert http.delete(f"/api/admin/context/{name}").status_code == 200
        kinds = {"context-field-created", "context-field-updated", "context-field-deleted"}
        latest = http.get("/api/admin/events").json()["events"]
    mine = [e for e in latest if e["type"] in kinds and name in str(e["data"] or e["preData"])]
    deleted, updated, created = mine
    assert created["data"] == {**field, "stickiness": False} and created["preData"] is None
    assert updated["preData"] == {**field, "stickiness": False}
    assert updated["data"] == edit
    assert deleted["data"] is None
    # the field as stored: 5.12 keeps the sort order it gave (10), and its own creation time
    before = deleted["preData"]
    assert before == {
        "name": name, "createdAt": before["createdAt"], "stickiness": True, "description": "d2",
        "legalValues": [], "sortOrder": per_version(target, {"5.12": 10, "6.10 7.6 8.2": 0}),
    }  # fmt: skip
    assert before["createdAt"][:16] == created["createdAt"][:16]


def test_the_search_by_body(target: Peer, unique: Callable[[str], str]) -> None:
    """`POST /api/admin/events/search`: 5.12 and 6.10 only; a page of at most 100."""
    with target.raw() as http:
        names = _flags(http, unique, 3)
        try:
            asked = {"type": "feature-created", "feature": names[1]}
            found = http.post("/api/admin/events/search", json=asked)
            page = http.post("/api/admin/events/search",
                             json={"query": names[0], "limit": 1, "offset": 0})  # fmt: skip
            too_many = http.post("/api/admin/events/search", json={"limit": 500})
        finally:
            target.remove_flags(http, names)
    if not per_version(target, {"5.12 6.10": True, "7.6 8.2": False}):
        assert found.status_code == page.status_code == too_many.status_code == 404
        return
    assert found.status_code == 200, found.text
    body = found.json()
    assert set(body) == {"version", "events", "totalEvents"} and body["totalEvents"] == 1
    assert [e["featureName"] for e in body["events"]] == [names[1]]
    assert set(body["events"][0]) == ITEM
    assert [e["featureName"] for e in page.json()["events"]] == [names[0]]
    assert too_many.status_code == 400


def test_an_api_tokens_events(target: Peer, unique: Callable[[str], str]) -> None:
    """The token without its secret, before and after (an update's `data` says every project,
    whatever the token's: measured)."""
    name = unique("evtoken")
    asked = {"tokenName": name, "type": "client", "environment": "development",
             "projects": ["default"]}  # fmt: skip
    until = "2030-01-01T00:00:00.000Z"
    with target.raw() as http:
        made = http.post("/api/admin/api-tokens", json=asked)
        assert made.status_code == 201, made.text
        secret, created_at = made.json()["secret"], made.json()["createdAt"]
        assert http.put(f"/api/admin/api-tokens/{secret}", json={"expiresAt": until}).is_success
        assert http.delete(f"/api/admin/api-tokens/{secret}").is_success
        kinds = {"api-token-created", "api-token-updated", "api-token-deleted"}
        latest = http.get("/api/admin/events").json()["events"]
    mine = [e for e in latest if e["type"] in kinds and name in str(e["data"] or e["preData"])]
    deleted, updated, created = mine
    logged_at = created["data"]["createdAt"]  # the answer's time, written to the millisecond
    assert datetime.fromisoformat(logged_at) == datetime.fromisoformat(created_at)
    assert logged_at.endswith("Z") and len(logged_at) == len("2026-01-02T03:04:05.006Z")
    extra = per_version(target, {"5.12 6.10": {"username": name}, "7.6": {},
                                 "8.2": {"secure": False}})  # fmt: skip
    token = {"tokenName": name, "type": "client", "environment": "development",
             "project": "default", "projects": ["default"], "createdAt": logged_at,
             "alias": None, **extra}  # fmt: skip
    assert created["data"] == token and created["preData"] is None
    assert (created["project"], created["environment"]) == ("default", "development")
    assert updated["preData"] == {**token, "seenAt": None, "expiresAt": None}
    assert updated["data"] == {**token, "seenAt": None, "expiresAt": until, "project": "*",
                               "projects": ["*"]}  # fmt: skip
    assert (updated["project"], updated["environment"]) == ("*", "development")
    assert deleted["preData"] == {**token, "seenAt": None, "expiresAt": until}
    assert deleted["data"] is None and deleted["project"] == "default"
    assert all("secret" not in str(e["data"]) + str(e["preData"]) for e in mine)


def test_a_personal_tokens_events(target: Peer, unique: Callable[[str], str]) -> None:
    """`data` alone, made and deleted: `{id, description, expiresAt, secure}` on 8.2; the
    secret masked before (the body, then the whole token)."""
    name = unique("evpat")
    until = "2030-01-01T00:00:00.000Z"
    pat = target.require_pat()
    with httpx.Client(base_url=target.url, headers={"Authorization": pat}, timeout=30) as http:
        made = http.post("/api/admin/user/tokens", json={"description": name, "expiresAt": until})
        assert made.status_code == 201, made.text
        token = made.json()
        assert http.delete(f"/api/admin/user/tokens/{token['id']}").status_code == 200
    with target.raw() as http:
        latest = http.get("/api/admin/events").json()["events"]
    mine = [e for e in latest if e["type"].startswith("pat-") and name in str(e["data"])]
    deleted, created = mine
    assert created["preData"] is None and deleted["preData"] is None
    assert created["createdByUserId"] == deleted["createdByUserId"] == token["userId"]
    logged = {"id": token["id"], "description": name, "expiresAt": until, "secure": False}
    if target.since(8, 0):
        assert created["data"] == deleted["data"] == logged
        return
    assert created["data"] == {"description": name, "expiresAt": until, "secret": "***"}
    made_at = deleted["data"].pop("createdAt")
    assert datetime.fromisoformat(made_at) == datetime.fromisoformat(token["createdAt"])
    assert deleted["data"] == {"id": token["id"], "description": name, "expiresAt": until,
                               "secret": "***", "seenAt": None,
                               "userId": token["userId"]}  # fmt: skip


def test_a_users_events(target: Peer, unique: Callable[[str], str]) -> None:
    """A user made, renamed and deleted: each event holds the user before and after as
    Unleash's `mapUserToData` writes it (id, name, username, email, root role id)."""
    email = f"{unique('evuser')}@example.com"
    with target.raw() as http:
        made = http.post("/api/admin/user-admin", json={"email": email, "name": "Ev",
                                                        "rootRole": 3})  # fmt: skip
        assert made.status_code == 201, made.text
        uid = made.json()["id"]
        assert http.put(f"/api/admin/user-admin/{uid}", json={"name": "Eve"}).status_code == 200
        assert http.delete(f"/api/admin/user-admin/{uid}").status_code == 200
        latest = http.get("/api/admin/events").json()["events"]
    kinds = {"user-created", "user-updated", "user-deleted"}
    mine = [e for e in latest if e["type"] in kinds and email in str(e["data"] or e["preData"])]
    deleted, updated, created = mine
    user = {"id": uid, "name": "Ev", "email": email, "rootRole": 3}  # no username: left out
    assert (created["preData"], created["data"]) == (None, user)
    assert (updated["preData"], updated["data"]) == (user, {**user, "name": "Eve"})
    assert (deleted["preData"], deleted["data"]) == ({**user, "name": "Eve"}, None)
