"""The promote planner over snapshots (`app.actions.promote.plan_promote`), no server: the
requests in dependency order (context fields, tag types, segments, definitions, project
environments; then flags, tags, dependencies, strategies, variants, on/off), the two stages (a
segment stage 1 makes is named "(created in stage 1)" and stage 2 is planned again with its
id, refused if it would say anything else), what is left out and why, two environments of one
snapshot mapped, `--delete-extra` off by default, and a promote of what is the same planning
nothing. The undo's plan from the journal's entries (`plan_undo_promote`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from app.actions.journal import Entry, State
from app.actions.promote import PromotePlan, Selection, plan_promote, plan_undo_promote
from app.snapshot.compare import compare
from app.snapshot.model import Snapshot
from tests.app.snapshot_examples import copy_of, environment, flag, shop

IDS = {"beta-users": 7}


def _plan(
    source: dict[str, Any],
    target: dict[str, Any],
    *,
    ids: dict[str, int] | None = None,
    delete_extra: bool = False,
    **filters: Any,
) -> PromotePlan:
    theirs, ours = Snapshot.model_validate(source), Snapshot.model_validate(target)
    maps = {k: filters.pop(k) for k in ("map_project", "map_env") if k in filters}
    comparison = compare(theirs, ours, **filters, **maps)
    selection = Selection(delete_extra=delete_extra)
    return plan_promote(
        theirs, ours, comparison, selection, None, segment_ids=IDS if ids is None else ids, **maps
    )


def _empty_of(document: dict[str, Any]) -> dict[str, Any]:
    """The same server with no flags, segments, context fields, custom strategies, people."""
    empty = copy_of(document)
    for key in (
        "flags",
        "segments",
        "contextFields",
        "strategies",
        "users",
        "groups",
        "roles",
        "projectAccess",
        "apiTokens",
    ):
        empty[key] = []
    empty["tagTypes"] = [t for t in empty["tagTypes"] if t["name"] == "simple"]
    return empty


def _lines(planned: tuple[Any, ...]) -> list[str]:
    return [p.line for p in planned]


def test_the_same_plans_nothing() -> None:
    plan = _plan(shop(), shop())
    assert plan.nothing_to_do and plan.lines() == []


def test_everything_to_an_empty_server_in_dependency_order_and_two_stages() -> None:
    plan = _plan(shop(), _empty_of(shop()), ids={})
    first = _lines(plan.first)
    assert first == [
        "POST /api/admin/context  context field “region” (2 legal values)",
        "POST /api/admin/segments  segment “beta-users” (1 constraint)",
        "POST /api/admin/strategies  strategy “by-team” (1 parameter)",
    ]
    assert plan.pending == {"beta-users"}
    second = _lines(plan.second)
    # the flags first (a dependency needs both), then each flag's tags, dependencies and per
    # environment its strategies, variants and, last, on
    assert second[:2] == [
        "POST /api/admin/projects/web-shop/features  flag “checkout-v2” (release)",
        "POST /api/admin/projects/default/features  flag “dark-mode” (experiment)",
    ]
    base = "/api/admin/projects/web-shop/features/checkout-v2/environments"
    assert second[2:6] == [
        "PUT /api/admin/features/checkout-v2/tags  tags +simple:beta",
        f"POST {base}/staging/strategies  flexibleRollout (rollout 100; 1 constraint; segment "
        "“beta-users” (created in stage 1))",
        f"POST {base}/staging/strategies  default “staff”",
        f"POST {base}/staging/on  “checkout-v2” on in staging",
    ]
    assert second[6:8] == [
        f"POST {base}/production/strategies  flexibleRollout (rollout 25)",
        f"POST {base}/production/strategies  default “staff”",
    ]
    dark = "/api/admin/projects/default/features/dark-mode"
    assert second[8:] == [
        f"POST {dark}/dependencies  depends on “checkout-v2” (enabled)",
        f"POST {dark}/environments/production/strategies  default",
        f"POST {dark}/environments/production/on  “dark-mode” on in production",
    ]
    # a new flag's environment variants: Unleash 8.2 refuses them (deprecated): said
    assert any("dark-mode" in x.object and "variants" in x.why for x in plan.left_out)
    # people and access: said once a kind
    assert [x.line for x in plan.left_out if x.kind == "users"] == [
        "users (2: ada@example.com, bob@example.com): not promoted: people and access are not "
        "configuration"
    ]
    # stage 2 again, with the segment's id: the same lines, the id in the body
    again = plan.second_stage({"beta-users": 42})
    assert _lines(again) == second
    body = json.loads(again[3].request.body)
    assert body["segments"] == [42] and body["sortOrder"] == 0
    assert json.loads(plan.second[3].request.body)["segments"] == [0]  # provisional


def test_stage_two_is_not_sent_when_stage_one_left_a_segment_missing() -> None:
    plan = _plan(shop(), _empty_of(shop()), ids={})
    with pytest.raises(ValueError, match="no segment beta-users after stage 1"):
        plan.second_stage({})


def test_a_changed_strategy_is_updated_by_the_targets_id_and_the_switch_comes_last() -> None:
    source, target = shop(), shop()
    staging = environment(flag(source, "checkout-v2"), "staging")
    staging["strategies"][0]["parameters"]["rollout"] = "50"
    environment(flag(target, "checkout-v2"), "staging")["strategies"][0]["id"] = "target-id"
    environment(flag(source, "checkout-v2"), "production")["enabled"] = True
    plan = _plan(source, target)
    base = "/api/admin/projects/web-shop/features/checkout-v2/environments"
    assert _lines(plan.second) == [
        f"PUT {base}/staging/strategies/target-id  flexibleRollout (rollout 50; 1 constraint; "
        "segment “beta-users”) (was flexibleRollout (rollout 100; 1 constraint; segment "
        "“beta-users”))",
        f"POST {base}/production/on  “checkout-v2” on in production",
    ]
    body = json.loads(plan.second[0].request.body)
    assert body["parameters"]["rollout"] == "50" and body["segments"] == [7]
    assert not plan.first and not plan.pending


def test_only_in_target_stays_unless_delete_extra() -> None:
    source, target = _empty_of(shop()), shop()
    source["tagTypes"] = target["tagTypes"]
    kept = _plan(source, target)
    assert kept.nothing_to_do
    assert kept.kept_extra > 0
    assert any("does not delete the target's own" in x for x in kept.lines())
    deleted = _plan(source, target, delete_extra=True)
    lines = _lines(deleted.second)
    assert (
        "DELETE /api/admin/projects/web-shop/features/checkout-v2  flag “checkout-v2” "
        "archived (only in the target)" in lines
    )
    # what the archived flags still use stays (Unleash counts an archived flag's strategies)
    assert not any("/api/admin/segments/" in x for x in lines)
    assert (
        "DELETE /api/admin/strategies/by-team  strategy “by-team” (only in the target, "
        "unused)" in lines
    )


def test_a_strategy_only_in_the_target_is_deleted_only_with_delete_extra() -> None:
    source, target = shop(), shop()
    environment(flag(source, "checkout-v2"), "production")["strategies"].pop()
    assert _plan(source, target).nothing_to_do
    lines = _lines(_plan(source, target, delete_extra=True).second)
    assert lines == [
        "DELETE /api/admin/projects/web-shop/features/checkout-v2/environments/"
        "production/strategies/p-2  default “staff” deleted (only in the target)"
    ]


def test_two_environments_of_one_snapshot_map_staging_to_production() -> None:
    document = shop()
    plan = _plan(document, document, map_env={"staging": "production"})
    lines = _lines(plan.second)
    assert lines and all("/environments/production/" in x for x in lines), lines
    assert any("PUT " in x and "p-1" in x and "(rollout 100; 1 constraint" in x for x in lines)
    assert lines[-1].endswith("“checkout-v2” on in production")


def test_what_cannot_be_promoted_is_left_out_with_why() -> None:
    source, target = shop(), _empty_of(shop())
    target["projects"] = [p for p in target["projects"] if p["id"] == "default"]
    target["environments"] = [e for e in target["environments"] if e["name"] != "staging"]
    source["strategies"] = []  # by-team unknown to the target, and not brought
    environment(flag(source, "dark-mode"), "production")["strategies"].append(
        {"name": "by-team", "sortOrder": 1, "parameters": {"teams": "a"}}
    )
    unread = copy_of(target)
    unread["unread"] = {"groups": "Unleash Enterprise only"}
    plan = _plan(source, unread, ids={})
    why = {x.line for x in plan.left_out}
    assert (
        "projects web-shop: the target has no such project: flagdesk does not create "
        "projects (create it on the target first)" in why
    )
    assert (
        "flags web-shop/checkout-v2: the target has no project 'web-shop': flagdesk does "
        "not create projects" in why
    )
    assert any("strategy 'by-team': the target has no such custom strategy" in x for x in why)
    assert "groups: not compared: the target did not read them (Unleash Enterprise only)" in why
    assert any(x.startswith("environments staging: an environment is not created") for x in why)
    # a segment of a project the target lacks is not made either
    assert (
        "segments beta-users: the target has no project 'web-shop': flagdesk does not "
        "create projects" in why
    )


def test_a_project_environment_the_target_lacks_is_added_in_stage_one() -> None:
    source, target = shop(), shop()
    target["projects"][0]["environments"] = ["development"]
    plan = _plan(source, target, kinds=["projects", "flags"])
    assert _lines(plan.first) == [
        "POST /api/admin/projects/default/environments  environment “production” added to "
        "project “default”"
    ]
    assert json.loads(plan.first[0].request.body) == {"environment": "production"}


def _entry(i: int, before: dict[str, Any], method: str, path: str) -> Entry:
    return Entry(
        f"e{i}",
        datetime.now(UTC),
        "compare.promote",
        "c",
        "http://s",
        "admin",
        None,
        [before["kind"], before["object"]],
        before,
        {"method": method, "path": path},
        State.DONE,
        200,
    )


def test_the_undo_archives_a_flag_the_promote_made_and_puts_a_changed_one_back() -> None:
    before = shop()
    before["flags"] = [f for f in before["flags"] if f["name"] != "dark-mode"]
    now = shop()
    environment(flag(now, "checkout-v2"), "production")["strategies"][0]["parameters"][
        "rollout"
    ] = "50"
    common = {"snapshot": "s.json", "promote": "p1", "stage": 2, "kind": "flags"}
    entries = [
        _entry(
            1, {**common, "object": "dark-mode"}, "POST", "/api/admin/projects/default/features"
        ),
        _entry(
            2,
            {**common, "object": "checkout-v2", "environment": "production"},
            "PUT",
            "/api/admin/projects/web-shop/features/checkout-v2/environments/production/"
            "strategies/p-1",
        ),
    ]
    plan, cannot = plan_undo_promote(
        Snapshot.model_validate(before), Snapshot.model_validate(now), entries, IDS
    )
    lines = _lines(plan.first + plan.second)
    assert (
        "DELETE /api/admin/projects/default/features/dark-mode  flag “dark-mode” archived "
        "(only in the target)" in lines
    )
    assert any(
        x.startswith(
            "PUT /api/admin/projects/web-shop/features/checkout-v2/environments/"
            "production/strategies/p-1  flexibleRollout (rollout 25)"
        )
        for x in lines
    )
    assert cannot == []
    doubtful = [
        *entries[:1],
        Entry(
            "e3",
            datetime.now(UTC),
            "compare.promote",
            "c",
            "http://s",
            "admin",
            None,
            [],
            {**common, "object": "x"},
            None,
            State.IN_DOUBT,
        ),
    ]
    with pytest.raises(ValueError, match="in doubt"):
        plan_undo_promote(
            Snapshot.model_validate(before), Snapshot.model_validate(now), doubtful, IDS
        )


def test_the_undo_takes_back_only_the_environments_the_promote_wrote_to() -> None:
    """A promote set checkout-v2's description and its production rollout; someone changed its
    staging rollout since. The undo puts back the description and production, and leaves
    staging as it is now; a promote that wrote to no environment (the description alone) takes
    back no environment's change."""
    before = shop()
    now = shop()
    changed = flag(now, "checkout-v2")
    changed["description"] = "The newer checkout"  # the promote
    environment(changed, "production")["strategies"][0]["parameters"]["rollout"] = "50"  # too
    environment(changed, "staging")["strategies"][0]["parameters"]["rollout"] = "10"  # since
    common = {"snapshot": "s.json", "promote": "p1", "stage": 2, "kind": "flags",
              "object": "checkout-v2"}  # fmt: skip
    described = _entry(1, common, "PATCH", "/api/admin/projects/web-shop/features/checkout-v2")
    rolled = _entry(
        2,
        {**common, "environment": "production"},
        "PUT",
        "/api/admin/projects/web-shop/features/checkout-v2/environments/production/strategies/p-1",
    )
    theirs, ours = Snapshot.model_validate(before), Snapshot.model_validate(now)

    def undo(*entries: Entry) -> list[str]:
        plan, cannot = plan_undo_promote(theirs, ours, entries, IDS)
        assert cannot == []
        return _lines(plan.first + plan.second)

    both = undo(described, rolled)
    put_back = ("PUT /api/admin/projects/web-shop/features/checkout-v2  flag “checkout-v2”: "
                'description "The newer checkout" → "The new checkout"')  # fmt: skip
    assert put_back in both, both
    assert any("/environments/production/strategies/p-1  flexibleRollout (rollout 25)" in x
               for x in both), both  # fmt: skip
    assert not any("/environments/staging/" in x for x in both), both
    assert undo(described) == [put_back]
