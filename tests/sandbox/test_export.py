"""The sandbox's batch export (`POST /api/admin/features-batch/export`, Unleash 8.2's
exportResultSchema) over HTTP: one environment's flags with their strategies (segment ids),
enabled state and variants, tags, parents, and what they use (context fields, segments, tag
types); chosen by name, by project or by tag, every live flag for an empty list; its answer
agrees with each flag's own answer; an unknown environment is a 404; `features-exported` is
recorded."""

from __future__ import annotations

import json

import httpx

from app.api import models as m
from sandbox import db
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

EXPORT = "/api/admin/features-batch/export"


def export(http: httpx.Client, **query: object) -> m.ExportResult:
    """The export, validated as `exportResultSchema`: the sandbox builds it as plain data, which
    must be what the model would have sent, to the byte's meaning."""
    answer = http.post(EXPORT, json=query)
    assert answer.status_code == 200, answer.text
    found = m.ExportResult.model_validate(answer.json())
    assert json.loads(found.model_dump_json(exclude_unset=True)) == answer.json()
    return found


def test_one_environment_of_every_flag_agrees_with_each_flags_answer(
    demo_sandbox: SandboxProcess,
) -> None:
    with demo_sandbox.admin() as http:
        found = export(http, environment="production", features=[])
        listed = {
            p: http.get(f"/api/admin/projects/{p}/features").json()["features"]
            for p in ("default", "web-shop", "payments", "mobile-app")
        }
        live = {f["name"]: p for p, features in listed.items() for f in features}
        assert {f.name for f in found.features} == set(live)
        by_flag: dict[str, list[m.ExportStrategy]] = {}
        for strategy in found.featureStrategies:
            assert strategy.featureName is not None
            by_flag.setdefault(strategy.featureName, []).append(strategy)
        enabled = {e.featureName: e for e in found.featureEnvironments}
        for name in sorted(live)[:12]:
            own = m.Feature.model_validate(http.get(
                f"/api/admin/projects/{live[name]}/features/{name}",
                params={"variantEnvironments": "true"}).json())  # fmt: skip
            production = next(e for e in own.environments if e.name == "production")
            assert [(s.id, s.name, s.parameters, s.segments) for s in production.strategies] == [
                (s.id, s.name, s.parameters, s.segments) for s in by_flag.get(name, [])
            ]
            assert enabled[name].enabled == production.enabled
            assert enabled[name].variants == production.variants
    used = {i for s in found.featureStrategies for i in s.segments}
    assert {s.id for s in found.segments} == used and used  # the demo's "Beta testers"
    assert {t.tagType for t in found.featureTags} == {t.name for t in found.tagTypes}
    assert found.dependencies and all(d.dependencies for d in found.dependencies)
    fields = {f.name for f in found.contextFields}
    assert fields >= {c["contextName"] for s in found.featureStrategies for c in s.constraints}


def test_chosen_by_name_project_or_tag_and_the_event(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        shop = export(http, environment="staging", project="web-shop")
        assert shop.features and {f.project for f in shop.features} == {"web-shop"}
        one = shop.features[0].name
        assert [f.name for f in export(http, environment="development",
                                       features=[one]).features] == [one]  # fmt: skip
        tag = export(http, environment="development", features=[]).featureTags[0]
        tagged = export(http, environment="development", tag=f"{tag.tagType}:{tag.tagValue}")
        assert tag.featureName in {f.name for f in tagged.features}
        missing = http.post(EXPORT, json={"environment": "qa", "features": []})
        assert assert_error(missing, 404, "NotFoundError")["message"] == (
            "Could not find environment qa")  # fmt: skip
    conn = db.connect(sandbox.db)
    try:
        rows = conn.execute("SELECT count(*) FROM events WHERE type = 'features-exported'")
        assert rows.fetchone()[0] == 4
    finally:
        conn.close()
