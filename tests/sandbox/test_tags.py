"""Tag types, tags and a flag's tags as Unleash 8.2 serves them (measured on the 8.2 peer): the
shipped `simple` type, creating (201), validating (200 `{valid, tagType}`, 409), replacing (200)
and deleting (200; 404 "Could not find tag-type") tag types, taking their tags with them; tags
(201, trimmed; 409; `{version, tag}`; 404 "No tag with type: [t] and value [v]"); a flag's
tags (POST 201 making the tag, PUT added and removed, DELETE 200; 404 "No feature flag found"
and "Could not find feature with name x"; 400 "Tag type 'x' does not exist"), the events
with `preData`/`data`, the Viewer's 403, and the demo's tags (an `--empty` sandbox has only
`simple`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx

from app.api.models import TagItem, Tags, TagType, TagTypes, TagTypeWithVersion, TagWithVersion
from sandbox import db
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

PersonalToken = Callable[[SandboxProcess, str], str]


def payloads(sb: SandboxProcess, kind: str) -> list[tuple[object, ...]]:
    """Each event of `kind`: its flag, `preData` and `data` (JSON read back)."""
    conn = db.connect(sb.db)
    try:
        rows = conn.execute(
            "SELECT e.feature, p.pre_data, p.data FROM events e"
            " LEFT JOIN event_data p ON p.event_id = e.id WHERE e.type = ? ORDER BY e.id",
            (kind,),
        ).fetchall()
    finally:
        conn.close()
    return [(r[0], r[1] and json.loads(r[1]), r[2] and json.loads(r[2])) for r in rows]


def test_tag_types_created_validated_replaced_and_deleted(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        r = http.post(
            "/api/admin/tag-types",
            json={"name": "squad", "description": "Owners", "color": "#00ff00"},
        )
        assert r.status_code == 201, r.text
        assert r.headers["location"] == "tag-types/squad"
        assert r.json() == {"name": "squad", "description": "Owners", "color": "#00ff00"}
        r = http.post("/api/admin/tag-types/validate", json={"name": "free", "icon": "i"})
        assert r.status_code == 200 and r.json() == {
            "valid": True,
            "tagType": {"name": "free", "icon": "i"},
        }
        for path in ("/api/admin/tag-types", "/api/admin/tag-types/validate"):
            body = assert_error(http.post(path, json={"name": "squad"}), 409, "NameExistsError")
            assert body["message"] == "There already exists a tag-type with the name squad"
        assert_error(
            http.post("/api/admin/tag-types", json={"name": "a b"}), 400, "ValidationError"
        )
        assert_error(http.post("/api/admin/tag-types", json={"name": "x"}), 400, "ValidationError")
        assert_error(
            http.post("/api/admin/tag-types", json={"name": "ok", "color": "red"}),
            400,
            "ValidationError",
        )

        r = http.put("/api/admin/tag-types/squad", json={"description": "The owners"})
        assert (r.status_code, r.content) == (200, b"")
        one = TagTypeWithVersion.model_validate(http.get("/api/admin/tag-types/squad").json())
        assert (one.version, one.tagType.description, one.tagType.color) == (
            1,
            "The owners",
            "#00ff00",
        )
        assert http.put("/api/admin/tag-types/nope", json={"description": "x"}).status_code == 200

        # a type's tags, and their use on flags, go with it
        assert (
            http.post(
                "/api/admin/features/checkout-kill-switch/tags",
                json={"type": "squad", "value": "alpha"},
            ).status_code
            == 201
        )
        r = http.delete("/api/admin/tag-types/squad")
        assert (r.status_code, r.content) == (200, b"")
        body = assert_error(http.get("/api/admin/tag-types/squad"), 404, "NotFoundError")
        assert body["message"] == "Could not find tag-type"
        assert_error(http.delete("/api/admin/tag-types/squad"), 404, "NotFoundError")
        assert http.get("/api/admin/tags/squad").json() == {"version": 1, "tags": []}
        assert all(
            t["type"] != "squad"
            for t in http.get("/api/admin/features/checkout-kill-switch/tags").json()["tags"]
        )

    assert payloads(sandbox, "tag-type-created")[-1][2] == {
        "name": "squad",
        "description": "Owners",
        "color": "#00ff00",
    }
    assert payloads(sandbox, "tag-type-updated")[0][2] == {
        "name": "squad",
        "description": "The owners",
    }
    deleted = payloads(sandbox, "tag-type-deleted")[-1]
    assert (
        deleted[1]
        == {"name": "squad", "description": "The owners", "icon": None, "color": "#00ff00"}
        and deleted[2] is None
    )


def test_tags_created_read_and_deleted(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        r = http.post("/api/admin/tags", json={"type": "team", "value": "  search  "})
        assert r.status_code == 201, r.text
        made = TagWithVersion.model_validate(r.json())
        assert (made.tag.type, made.tag.value) == ("team", "search")
        assert r.headers["location"] == "tags/team/search"
        body = assert_error(
            http.post("/api/admin/tags", json={"type": "team", "value": "search"}),
            409,
            "NameExistsError",
        )
        assert body["message"] == "A tag of [object Object] already exists"  # Unleash's words
        r = http.post("/api/admin/tags", json={"type": "nope", "value": "search"})
        assert assert_error(r, 400, "BadDataError")["message"] == "Tag type 'nope' does not exist"
        assert_error(
            http.post("/api/admin/tags", json={"type": "team", "value": "x"}),
            400,
            "ValidationError",
        )

        got = TagWithVersion.model_validate(http.get("/api/admin/tags/team/search").json())
        assert got.tag.value == "search"
        of_team = Tags.model_validate(http.get("/api/admin/tags/team").json()).tags
        assert "search" in [t.value for t in of_team] and {t.type for t in of_team} == {"team"}
        every = Tags.model_validate(http.get("/api/admin/tags").json()).tags
        assert [(t.type, t.value) for t in every] == sorted((t.type, t.value) for t in every)
        assert http.get("/api/admin/tags/nope").json() == {"version": 1, "tags": []}

        assert http.delete("/api/admin/tags/team/search").status_code == 200
        body = assert_error(http.get("/api/admin/tags/team/search"), 404, "NotFoundError")
        assert body["message"] == "No tag with type: [team] and value [search]"
        assert http.delete("/api/admin/tags/team/search").status_code == 200  # gone: 200 still
    assert [p[2] for p in payloads(sandbox, "tag-created")][-1] == {
        "type": "team",
        "value": "search",
    }
    assert payloads(sandbox, "tag-deleted")[0][2] == {"type": "team", "value": "search"}


def test_a_flags_tags(sandbox: SandboxProcess) -> None:
    flag = "/api/admin/features/tagged-flag/tags"
    with sandbox.admin() as http:
        assert (
            http.post(
                "/api/admin/projects/default/features", json={"name": "tagged-flag"}
            ).status_code
            == 201
        )
        assert http.get(flag).json() == {"version": 1, "tags": []}
        r = http.post(flag, json={"type": "team", "value": "brand-new"})
        assert r.status_code == 201 and r.headers["location"] == "tagged-flag/tags"
        assert TagItem.model_validate(r.json()) == TagItem(type="team", value="brand-new")
        assert http.post(flag, json={"type": "team", "value": "brand-new"}).status_code == 201
        assert http.get("/api/admin/tags/team/brand-new").status_code == 200  # made with it
        r = http.post(flag, json={"type": "nope", "value": "brand-new"})
        assert assert_error(r, 400, "BadDataError")["message"] == "Tag type 'nope' does not exist"

        r = http.put(
            flag,
            json={
                "addedTags": [{"type": "simple", "value": "ui"}],
                "removedTags": [{"type": "team", "value": "brand-new"}],
            },
        )
        assert r.status_code == 200, r.text
        tags = Tags.model_validate(r.json()).tags
        assert [(t.type, t.value, t.color) for t in tags] == [("simple", "ui", "#FFFFFF")]
        assert Tags.model_validate(http.get(flag).json()).tags == tags

        r = http.delete(flag + "/simple/ui")
        assert (r.status_code, r.content) == (200, b"")
        assert http.delete(flag + "/simple/not-there").status_code == 200
        assert http.get(flag).json()["tags"] == []

        body = assert_error(http.get("/api/admin/features/nope/tags"), 404, "NotFoundError")
        assert body["message"] == "Could not find feature with name nope"
        for r in (
            http.post("/api/admin/features/nope/tags", json={"type": "team", "value": "ab"}),
            http.delete("/api/admin/features/nope/tags/team/ab"),
        ):
            assert assert_error(r, 404, "NotFoundError")["message"] == "No feature flag found"

    tagged = [p for p in payloads(sandbox, "feature-tagged") if p[0] == "tagged-flag"]
    assert [p[2] for p in tagged] == [{"type": "team", "value": "brand-new"}] * 2 + [
        {"type": "simple", "value": "ui"}
    ]
    untagged = [p for p in payloads(sandbox, "feature-untagged") if p[0] == "tagged-flag"]
    assert [p[1] for p in untagged] == [
        {"type": "team", "value": "brand-new"},
        {"type": "simple", "value": "ui"},
        {"type": "simple", "value": "not-there"},
    ]


def test_a_viewer_may_read_but_not_change(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    viewer = {"Authorization": personal_token(sandbox, "uma.iyer")}
    url = sandbox.url
    assert httpx.get(url + "/api/admin/tag-types", headers=viewer).status_code == 200
    for r in (
        httpx.post(url + "/api/admin/tag-types", json={"name": "vv"}, headers=viewer),
        httpx.delete(url + "/api/admin/tag-types/team", headers=viewer),
        httpx.post(url + "/api/admin/tags", json={"type": "team", "value": "vv"}, headers=viewer),
        httpx.delete(url + "/api/admin/features/x/tags/team/vv", headers=viewer),
    ):
        assert_error(r, 403, "NoAccessError")


def test_the_demo_has_tags_and_an_empty_sandbox_simple_alone(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    with demo_sandbox.admin() as http:
        types = TagTypes.model_validate(http.get("/api/admin/tag-types").json()).tagTypes
        assert [t.name for t in types] == ["simple", "team", "ticket"]
        tags = Tags.model_validate(http.get("/api/admin/tags").json()).tags
        assert {t.type for t in tags} == {"simple", "team", "ticket"}
        conn = db.connect(demo_sandbox.db)
        try:
            flag = conn.execute(
                "SELECT feature FROM feature_tags WHERE tag_type = 'ticket'"
                " ORDER BY feature LIMIT 1"
            ).fetchone()[0]
        finally:
            conn.close()
        on_flag = Tags.model_validate(http.get(f"/api/admin/features/{flag}/tags").json()).tags
        assert "ticket" in {t.type for t in on_flag} and all(t.color for t in on_flag)
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as sb, sb.admin() as http:
        assert TagTypes.model_validate(http.get("/api/admin/tag-types").json()).tagTypes == [
            TagType(
                name="simple",
                description="Used to simplify filtering of features",
                icon="#",
                color="#FFFFFF",
            )
        ]
        assert http.get("/api/admin/tags").json() == {"version": 1, "tags": []}
