"""The sandbox's batch validate and import (`POST /api/admin/features-batch/validate` and
`/import`) over HTTP, as the reference measured Unleash (5.12.8 to 8.2.0, §3) and its source
does it: validate's errors and warnings in Unleash's words; the admin API token refused for
an import, a personal access token taking it; flags created or overwritten (strategies deleted
and made again with new ids in the data's sort order, tags replaced, metadata overwritten,
enabled state applied, segments matched by name, context fields and tag types created: where
the reference and 8.2 differ, as measured on 8.2); what import refuses leaves nothing; the
events; the releases' schemas (`links` before 7.0, a tag type's `color` on 5.x)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api import models as m
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of
from tests.sandbox.conftest import assert_error

VALIDATE = "/api/admin/features-batch/validate"
IMPORT = "/api/admin/features-batch/import"
EXPORT = "/api/admin/features-batch/export"
#: how Unleash's BadDataError begins its message
PREFIX = "Request validation failed: your request body or params contain invalid data"


def as_user(sb: SandboxProcess, username: str = "admin") -> httpx.Client:
    token = personal_token_of(sb, username)
    return httpx.Client(base_url=sb.url, headers={"Authorization": token}, timeout=30)


@pytest.fixture
def pat(sandbox: SandboxProcess) -> Iterator[httpx.Client]:
    with as_user(sandbox) as http:
        yield http


def data(*flags: str, project: str = "default", **more: Any) -> dict[str, Any]:
    """An export's data of `flags` (release flags of `project`) with `more` of its lists."""
    body: dict[str, Any] = {
        "features": [{"name": f, "type": "release", "project": project, "description": f"{f} d",
                      "stale": False, "impressionData": False, "archived": False}
                     for f in flags],
        "featureStrategies": [], "featureEnvironments": [], "contextFields": [],
        "featureTags": [], "segments": [], "tagTypes": [], "dependencies": [],
    }  # fmt: skip
    body.update(more)
    return body


def rollout(flag: str, percent: str, **more: Any) -> dict[str, Any]:
    return {"name": "flexibleRollout", "id": f"old-{flag}-{percent}", "featureName": flag,
            "title": None, "disabled": False, "constraints": [], "variants": [],
            "parameters": {"rollout": percent, "stickiness": "default", "groupId": flag},
            "segments": [], **more}  # fmt: skip


def flag_env(http: httpx.Client, project: str, flag: str, env: str) -> dict[str, Any]:
    answer = http.get(f"/api/admin/projects/{project}/features/{flag}/environments/{env}")
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_a_new_flag_is_created_with_its_strategies_tags_and_state(
    sandbox: SandboxProcess, pat: httpx.Client
) -> None:
    body = {"project": "default", "environment": "development", "data": data(
        "imp-new",
        featureStrategies=[rollout("imp-new", "30"), rollout("imp-new", "60")],
        featureEnvironments=[{"name": "imp-new", "featureName": "imp-new",
                              "environment": "development", "enabled": True, "variants": []}],
        featureTags=[{"featureName": "imp-new", "tagType": "imp-tt", "tagValue": "v1"}],
        tagTypes=[{"name": "imp-tt", "description": "made by import", "icon": "tag"}],
        contextFields=[{"name": "imp-ctx", "description": "c", "stickiness": False,
                        "sortOrder": 0, "legalValues": [{"value": "a"}]}],
    )}  # fmt: skip
    checked = pat.post(VALIDATE, json=body)
    assert checked.status_code == 200, checked.text
    assert checked.json() == {"errors": [], "warnings": [], "permissions": []}
    done = pat.post(IMPORT, json=body)
    assert done.status_code == 200, done.text
    assert done.content == b""
    env = flag_env(pat, "default", "imp-new", "development")
    assert env["enabled"] is True
    # no sort order in the data: 0 each, as 8.2 gives them (their order is not the data's)
    assert sorted((s["parameters"]["rollout"], s["sortOrder"]) for s in env["strategies"]) == [
        ("30", 0), ("60", 0)]  # fmt: skip
    assert not {s["id"] for s in env["strategies"]} & {"old-imp-new-30", "old-imp-new-60"}
    flag = pat.get("/api/admin/projects/default/features/imp-new").json()
    assert flag["description"] == "imp-new d"
    tags = pat.get("/api/admin/features/imp-new/tags").json()["tags"]
    assert [(t["type"], t["value"]) for t in tags] == [("imp-tt", "v1")]
    assert pat.get("/api/admin/tag-types/imp-tt").status_code == 200
    field = pat.get("/api/admin/context/imp-ctx").json()
    assert field["legalValues"] == [{"value": "a"}]
    conn = db.connect(sandbox.db)
    try:
        kinds = [r[0] for r in conn.execute(
            "SELECT type FROM events WHERE feature = 'imp-new' OR type IN"
            " ('features-imported', 'tag-type-created', 'context-field-created')"
            " ORDER BY id")]  # fmt: skip
    finally:
        conn.close()
    assert kinds[0] == "feature-created" and kinds[-1] == "features-imported"
    assert kinds.count("feature-strategy-add") == 2
    assert {"tag-type-created", "context-field-created", "feature-tagged",
            "feature-environment-enabled"} <= set(kinds)  # fmt: skip


def test_an_existing_flag_is_overwritten_and_validate_warns(
    sandbox: SandboxProcess, pat: httpx.Client
) -> None:
    base = "/api/admin/projects/default/features"
    assert pat.post(base, json={"name": "imp-old", "description": "before"}).status_code == 201
    strategies = f"{base}/imp-old/environments/development/strategies"
    for percent in ("10", "20"):
        made = pat.post(strategies, json={"name": "flexibleRollout",
                                          "parameters": {"rollout": percent}})  # fmt: skip
        assert made.status_code == 200, made.text
    assert pat.post("/api/admin/features/imp-old/tags",
                    json={"type": "simple", "value": "gone"}).status_code == 201  # fmt: skip
    body = {"project": "default", "environment": "development", "data": data(
        "imp-old", featureStrategies=[rollout("imp-old", "70")],
        featureTags=[{"featureName": "imp-old", "tagType": "simple", "tagValue": "added"}],
        tagTypes=[{"name": "simple", "description": "", "icon": None}],
    )}  # fmt: skip
    warned = pat.post(VALIDATE, json=body).json()
    assert warned["errors"] == [] and warned["warnings"] == [{
        "message": "The following features already exist in this project and will be "
        "overwritten:", "affectedItems": ["imp-old"]}]  # fmt: skip
    assert pat.post(IMPORT, json=body).status_code == 200
    env = flag_env(pat, "default", "imp-old", "development")
    assert [s["parameters"]["rollout"] for s in env["strategies"]] == ["70"]
    tags = pat.get("/api/admin/features/imp-old/tags").json()["tags"]
    assert [t["value"] for t in tags] == ["added"]  # "gone" went (measured on 8.2)
    assert pat.get(f"{base}/imp-old").json()["description"] == "imp-old d"


def test_the_admin_token_is_refused_and_validate_takes_it(sandbox: SandboxProcess) -> None:
    body = {"project": "default", "environment": "development", "data": data("imp-admin")}
    with sandbox.admin() as http:
        assert http.post(VALIDATE, json=body).status_code == 200
        refused = assert_error(http.post(IMPORT, json=body), 400, "BadDataError")
        assert refused["message"] == (
            "Request validation failed: your request body or params contain invalid data: "
            "You can't use an admin token to import features. Please use either a personal "
            "access token (https://docs.getunleash.io/concepts/api-tokens-and-client-keys"
            "#personal-access-tokens) or a service account "
            "(https://docs.getunleash.io/concepts/service-accounts)."
        )
        assert http.get("/api/admin/projects/default/features/imp-admin").status_code == 404


def test_what_the_target_lacks_is_an_error_and_the_import_leaves_nothing(
    sandbox: SandboxProcess, pat: httpx.Client
) -> None:
    assert pat.post("/api/admin/context", json={
        "name": "imp-legal", "legalValues": [{"value": "a"}]}).status_code == 201  # fmt: skip
    cases = [
        ({"featureStrategies": [{**rollout("imp-x", "5"), "name": "imp-missing-strat"}]},
         "We detected the following custom strategy that needs to be created first:",
         ["imp-missing-strat"], "Some of the strategies you are trying to import are not "
         "supported.", ["imp-missing-strat is not supported."]),
        ({"featureStrategies": [rollout("imp-x", "5", segments=[777])],
          "segments": [{"id": 777, "name": "imp-missing-seg"}]},
         "We detected the following segments that need to be created first:",
         ["imp-missing-seg"], "Unsupported segments: imp-missing-seg", None),
        ({"contextFields": [{"name": "imp-legal", "legalValues": [{"value": "b"}]}]},
         "We detected the following context fields that do not have matching legal values "
         "with the imported ones:", ["imp-legal"],
         "Some of the context fields you are trying to import are not supported.",
         ["imp-legal is not supported."]),
    ]  # fmt: skip
    for more, said, affected, refusal, details in cases:
        body = {"project": "default", "environment": "development",
                "data": data("imp-x", "imp-y", **more)}  # fmt: skip
        assert pat.post(VALIDATE, json=body).json()["errors"] == [
            {"message": said, "affectedItems": affected}]  # fmt: skip
        refused = assert_error(pat.post(IMPORT, json=body), 400, "BadDataError")
        said = [d["message"] for d in refused["details"]]  # type: ignore[union-attr]
        assert said == (details or [refusal])
        assert refused["message"] == PREFIX + (
            ". Refer to the `details` list for more information." if details else f": {refusal}"
        )
        for name in ("imp-x", "imp-y"):
            assert pat.get(f"/api/admin/projects/default/features/{name}").status_code == 404
    assert pat.get("/api/admin/context/imp-legal").json()["legalValues"] == [{"value": "a"}]


def test_a_segment_is_matched_by_name_and_a_failure_midway_rolls_back(
    sandbox: SandboxProcess, pat: httpx.Client
) -> None:
    made = pat.post("/api/admin/segments", json={"name": "imp-seg", "constraints": []})
    assert made.status_code == 201, made.text
    local = made.json()["id"]
    body = {"project": "default", "environment": "development", "data": data(
        "imp-seg-flag", featureStrategies=[rollout("imp-seg-flag", "40", segments=[local + 500])],
        segments=[{"id": local + 500, "name": "imp-seg"}])}  # fmt: skip
    assert pat.post(IMPORT, json=body).status_code == 200
    exported = pat.post(EXPORT, json={"environment": "development",
                                      "features": ["imp-seg-flag"]}).json()  # fmt: skip
    assert [s["segments"] for s in exported["featureStrategies"]] == [[local]]
    # a variant of a bad weight fails after the flag was written: nothing of it stays
    bad = {"project": "default", "environment": "development", "data": data(
        "imp-rolled-back", featureEnvironments=[{
            "name": "imp-rolled-back", "featureName": "imp-rolled-back", "enabled": False,
            "variants": [{"name": "a", "weight": 100, "weightType": "fix"}]}])}  # fmt: skip
    assert pat.post(IMPORT, json=bad).status_code == 400
    assert pat.get("/api/admin/projects/default/features/imp-rolled-back").status_code == 404


def test_unknown_project_and_environment(pat: httpx.Client) -> None:
    body = {"project": "nope", "environment": "development", "data": data("imp-p")}
    refused = assert_error(pat.post(IMPORT, json=body), 404, "NotFoundError")
    assert refused["message"] == "Active project with id nope does not exist"
    body = {"project": "default", "environment": "nope", "data": data("imp-e")}
    refused = assert_error(pat.post(IMPORT, json=body), 404, "NotFoundError")
    assert refused["message"] == "Could not find imp-e in nope"
    assert pat.post(VALIDATE, json=body).json() == {"errors": [], "warnings": [],
                                                    "permissions": []}  # fmt: skip


def test_the_body_s_schema(pat: httpx.Client) -> None:
    missing = pat.post(IMPORT, json={"project": "default", "environment": "development"})
    assert missing.status_code == 400
    extra = pat.post(VALIDATE, json={"project": "default", "environment": "development",
                                     "data": {**data("imp-s"), "more": 1}})  # fmt: skip
    assert extra.status_code == 400 and "more" in extra.text
    empty = {"features": [], "featureStrategies": [], "tagTypes": []}
    ok = pat.post(VALIDATE, json={"project": "default", "environment": "development",
                                  "data": empty})  # fmt: skip
    assert ok.json() == {"errors": [], "warnings": [], "permissions": []}


def test_an_export_imported_into_another_sandbox_exports_the_same(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    with demo_sandbox.admin() as http:
        source = http.post(EXPORT, json={"environment": "production",
                                         "project": "web-shop"}).json()  # fmt: skip
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as empty, as_user(empty) as target:
        for s in source["segments"]:
            target.post("/api/admin/segments", json={"name": s["name"], "constraints": []})
        body = {"project": "default", "environment": "production", "data": source}
        assert target.post(VALIDATE, json=body).json()["errors"] == []
        done = target.post(IMPORT, json=body)
        assert done.status_code == 200, done.text
        again = target.post(EXPORT, json={"environment": "production",
                                          "project": "default"}).json()  # fmt: skip

    def shape(export: dict[str, Any]) -> dict[str, Any]:
        names = {s["id"]: s["name"] for s in export["segments"]}
        return {
            "features": sorted((f["name"], f["type"], f["description"])
                               for f in export["features"]),
            "strategies": sorted(
                (s["featureName"], s["name"], repr(sorted(s["parameters"].items())),
                 repr([{k: v for k, v in c.items() if v is not None} for c in s["constraints"]]),
                 repr(s["variants"]),
                 repr(sorted(names[i] for i in s["segments"])))
                for s in export["featureStrategies"]),
            "enabled": sorted((e["name"], e["enabled"], repr(e["variants"]))
                              for e in export["featureEnvironments"]),
            "tags": sorted(repr(t) for t in export["featureTags"]),
        }  # fmt: skip

    assert shape(again) == shape(source)


@pytest.mark.parametrize(("line", "docs", "takes_links", "takes_colour", "project"), [
    ("5.12", "reference", False, False, "Project"),
    ("6.10", "reference", False, True, "Active project"),
    ("7.6", "concepts", True, True, "Active project"),
    ("8.2", "concepts", True, True, "Active project"),
])  # fmt: skip
def test_as_each_release_answers(
    tmp_path: Path, line: str, docs: str, takes_links: bool, takes_colour: bool, project: str
) -> None:
    with SandboxProcess(tmp_path / "played.sqlite3", "--demo", "--as-version", line) as sb:
        body = {"project": "default", "environment": "development", "data": data("imp-v")}
        with sb.admin() as http:
            refused = http.post(IMPORT, json=body)
        assert refused.status_code == 400
        assert f"https://docs.getunleash.io/{docs}/service-accounts" in refused.json()["message"]
        with as_user(sb) as http:
            linked = http.post(VALIDATE, json={**body, "data": {**body["data"], "links": []}})
            assert (linked.status_code == 200) is takes_links, linked.text
            colour = {"name": "imp-c", "description": "", "icon": None, "color": "#aabbcc"}
            coloured = {**body, "data": data("imp-v", tagTypes=[colour])}
            assert (http.post(VALIDATE, json=coloured).status_code == 200) is takes_colour
            unknown = http.post(IMPORT, json={**body, "project": "nope"})
            assert unknown.json()["message"] == f"{project} with id nope does not exist"
            assert http.post(IMPORT, json=body).status_code == 200


def test_the_validation_answer_is_the_model() -> None:
    found = m.ImportValidation.model_validate(
        {"errors": [{"message": "x", "affectedItems": ["a"]}], "warnings": [],
         "permissions": []})  # fmt: skip
    assert found.errors[0].affectedItems == ["a"]


def test_sort_order_metadata_left_out_and_a_flag_without_strategies(
    sandbox: SandboxProcess, pat: httpx.Client
) -> None:
    """As measured on 8.2: the data's sort order is kept; metadata left out is set to its
    default; a flag the data gives no strategy is left with none there."""
    base = "/api/admin/projects/default/features"
    made = pat.post(base, json={"name": "imp-meta", "type": "experiment", "description": "d",
                                "impressionData": True})  # fmt: skip
    assert made.status_code == 201, made.text
    strategies = f"{base}/imp-meta/environments/development/strategies"
    assert pat.post(strategies, json={"name": "flexibleRollout"}).status_code == 200
    rolls = ["50", "40", "30"]
    ordered = [rollout("imp-order", x, sortOrder=10 - i) for i, x in enumerate(rolls)]
    body = {"project": "default", "environment": "development", "data": {
        **data("imp-order", featureStrategies=ordered), "features": [
            {"name": "imp-order"}, {"name": "imp-meta"}]}}  # fmt: skip
    assert pat.post(IMPORT, json=body).status_code == 200
    env = flag_env(pat, "default", "imp-order", "development")
    assert [(s["parameters"]["rollout"], s["sortOrder"]) for s in env["strategies"]] == [
        ("30", 8), ("40", 9), ("50", 10)]  # fmt: skip
    assert flag_env(pat, "default", "imp-meta", "development")["strategies"] == []
    meta = pat.get(f"{base}/imp-meta").json()
    assert (meta["type"], meta.get("description"), meta["impressionData"], meta["stale"]) == (
        "release", None, False, False)  # fmt: skip
