"""The batch validate and import (`POST /api/admin/features-batch/validate`, `/import`) on the
real Unleash and on the sandbox playing its release (`target`): what a promote in batches
relies on (`app.actions.promote`, "In batches") holds on both.

Measured here (and on 8.2.0 by hand first): an import creates a flag with the data's metadata
(stale included) and overwrites an existing flag's metadata
(description, type, impression data, stale), what it leaves out set to its default, but a
description left out, which 5.12 keeps; it puts the data's tags in place of the flag's (the
reference's "tags added, not removed" did not hold: Unleash's `deleteTagsForFeatures`); it
deletes the flag's strategies in the environment and creates the data's with new ids, keeping
the data's `sortOrder` (so the source's order survives), 0 each without one; a flag the data
gives no strategy is left with none there; it writes an environment's variants for any flag
(where `PUT .../variants` refuses one without any from 6.0), and an empty list leaves them;
the parents of a flag the data gives none are kept. The admin API token is refused with the
release's link; validate names a strategy type the target lacks.

Timing (`test_an_import_of_500_flags_is_one_request` prints it): 500 new flags with 2
strategies each, on in development, in one import took 14.6 s on Unleash 8.2.0 (the peer, its
PostgreSQL on the same two cores, load average 4.2 from other tests meanwhile); 13.7 s on
5.12.8, 14.9 s on 6.10.1, 13.8 s on 7.6.5 (2026-12-07). About 10 ms a flag or strategy: an
import spares the round trips, not Unleash's work (`app.api.client.IMPORT_S_PER_ITEM` allows
20 ms)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.compat.conftest import Cleanup, Peer, per_version

VALIDATE = "/api/admin/features-batch/validate"
IMPORT = "/api/admin/features-batch/import"
PROJECT, ENV = "default", "development"


def as_user(target: Peer) -> httpx.Client:
    return httpx.Client(base_url=target.url, headers={"Authorization": target.require_pat()},
                        timeout=300)  # fmt: skip


def rollout(flag: str, percent: str, **more: Any) -> dict[str, Any]:
    return {"name": "flexibleRollout", "featureName": flag, "constraints": [], "variants": [],
            "parameters": {"rollout": percent, "stickiness": "default", "groupId": flag},
            "segments": [], "disabled": False, **more}  # fmt: skip


def body(features: list[dict[str, Any]], strategies: list[dict[str, Any]],
         **more: Any) -> dict[str, Any]:  # fmt: skip
    return {"project": PROJECT, "environment": ENV,
            "data": {"features": features, "featureStrategies": strategies, "tagTypes": [],
                     **more}}  # fmt: skip


def environment(http: httpx.Client, flag: str) -> dict[str, Any]:
    answer = http.get(f"/api/admin/projects/{PROJECT}/features/{flag}",
                      params={"variantEnvironments": "true"})  # fmt: skip
    assert answer.status_code == 200, answer.text
    return next(e for e in answer.json()["environments"] if e["name"] == ENV)  # type: ignore[no-any-return]


def test_what_an_import_does_to_a_flag(
    target: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    flag, bare, parent = unique("import"), unique("import-bare"), unique("import-parent")
    fresh = unique("import-fresh")
    cleanup.features += [flag, bare, parent, fresh]
    features = f"/api/admin/projects/{PROJECT}/features"
    with as_user(target) as http:
        for name, made in ((flag, {"type": "experiment", "description": "before",
                                   "impressionData": True}),
                           (bare, {}), (parent, {})):  # fmt: skip
            answer = http.post(features, json={"name": name, **made})
            assert answer.status_code == 201, answer.text
        strategies = f"{features}/{bare}/environments/{ENV}/strategies"
        eleven = {"rollout": "11", "stickiness": "default", "groupId": bare}
        made = http.post(strategies, json={"name": "flexibleRollout", "parameters": eleven})
        assert made.status_code == 200, made.text
        assert http.post(f"/api/admin/features/{flag}/tags",
                         json={"type": "simple", "value": "gone"}).status_code == 201  # fmt: skip
        assert http.post(f"{features}/{flag}/dependencies",
                         json={"feature": parent}).status_code == 200  # fmt: skip
        variants = [{"name": "blue", "weight": 1000, "weightType": "variable",
                     "stickiness": "default"}]  # fmt: skip
        ordered = [rollout(flag, x, sortOrder=10 - i) for i, x in enumerate(("50", "40", "30"))]
        sent = body(
            [{"name": flag, "stale": True}, {"name": bare, "description": "", "type": "release"},
             {"name": fresh, "stale": True, "type": "operational", "impressionData": True}],
            ordered,
            featureEnvironments=[{"name": flag, "featureName": flag, "environment": ENV,
                                  "enabled": False, "variants": variants}],
            featureTags=[{"featureName": flag, "tagType": "simple", "tagValue": "added"}],
            tagTypes=[{"name": "simple"}],
        )  # fmt: skip
        checked = http.post(VALIDATE, json=sent)
        assert checked.status_code == 200, checked.text
        assert checked.json()["errors"] == []
        assert sorted(checked.json()["warnings"][-1]["affectedItems"]) == sorted([flag, bare])
        done = http.post(IMPORT, json=sent)
        assert done.status_code == 200, done.text
        assert done.content == b""
        there = environment(http, flag)
        assert [(s["parameters"]["rollout"], s["sortOrder"]) for s in there["strategies"]] == [
            ("30", 8), ("40", 9), ("50", 10)]  # fmt: skip
        assert [v["name"] for v in there["variants"]] == ["blue"]
        assert environment(http, bare)["strategies"] == []
        meta = http.get(f"{features}/{flag}").json()
        assert (meta["type"], meta["impressionData"], meta["stale"]) == ("release", False, True)
        assert meta.get("description") == per_version(
            target, {"5.12": "before", "6.10 7.6 8.2": None}
        )
        assert [d["feature"] for d in meta.get("dependencies") or []] == [parent]
        made = http.get(f"{features}/{fresh}").json()  # created by the import, stale as sent
        assert (made["type"], made["impressionData"], made["stale"]) == ("operational", True, True)
        tags = http.get(f"/api/admin/features/{flag}/tags").json()["tags"]
        assert [t["value"] for t in tags] == ["added"]
        # variants left out, or an empty list: the environment's stay
        again = body([{"name": flag, "stale": True}], ordered, featureEnvironments=[{
            "name": flag, "featureName": flag, "environment": ENV, "enabled": False,
            "variants": []}])  # fmt: skip
        assert http.post(IMPORT, json=again).status_code == 200
        assert [v["name"] for v in environment(http, flag)["variants"]] == ["blue"]


def test_the_admin_token_and_a_missing_strategy_type(
    target: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    flag = unique("import-refused")
    cleanup.features.append(flag)
    sent = body([{"name": flag}], [rollout(flag, "5", name="flagdesk-compat-no-such-type")])
    with httpx.Client(base_url=target.url, headers={"Authorization": target.admin_token},
                      timeout=60) as http:  # fmt: skip
        checked = http.post(VALIDATE, json=sent)
        assert checked.status_code == 200, checked.text
        assert checked.json()["errors"] == [{
            "message": "We detected the following custom strategy that needs to be created "
            "first:", "affectedItems": ["flagdesk-compat-no-such-type"]}]  # fmt: skip
        refused = http.post(IMPORT, json=body([{"name": flag}], []))
        assert refused.status_code == 400
        docs = per_version(target, {"5.12 6.10": "reference", "7.6 8.2": "concepts"})
        assert refused.json()["message"] == (
            "Request validation failed: your request body or params contain invalid data: "
            "You can't use an admin token to import features. Please use either a personal "
            f"access token (https://docs.getunleash.io/{docs}/api-tokens-and-client-keys"
            f"#personal-access-tokens) or a service account (https://docs.getunleash.io/{docs}"
            "/service-accounts)."
        )
    with as_user(target) as http:
        refused = http.post(IMPORT, json=sent)
        assert refused.status_code == 400
        assert refused.json()["message"] == (
            "Request validation failed: your request body or params contain invalid data. "
            "Refer to the `details` list for more information.")  # fmt: skip
        assert [d["message"] for d in refused.json()["details"]] == [
            "flagdesk-compat-no-such-type is not supported."]  # fmt: skip
        gone = http.get(f"/api/admin/projects/{PROJECT}/features/{flag}")
        assert gone.status_code == 404


def test_an_import_of_500_flags_is_one_request(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    """500 flags with 2 strategies each, one import on the real server: all there after; the
    time it took printed (the module's docstring keeps 8.2's)."""
    names = [f"{unique('bulk')}" for _ in range(500)]
    cleanup.features += names
    sent = body([{"name": n, "type": "release", "description": "bulk"} for n in names],
                [rollout(n, x, sortOrder=i) for n in names for i, x in enumerate(("20", "80"))],
                featureEnvironments=[{"name": n, "featureName": n, "environment": ENV,
                                      "enabled": True, "variants": []} for n in names])  # fmt: skip
    with as_user(peer) as http:
        started = time.perf_counter()
        done = http.post(IMPORT, json=sent)
        took = time.perf_counter() - started
        assert done.status_code == 200, done.text
        print(f"\nUnleash {peer.version}: 500 flags x 2 strategies imported in {took:.1f} s")
        listed = http.get(f"/api/admin/projects/{PROJECT}/features").json()["features"]
        assert set(names) <= {f["name"] for f in listed}
