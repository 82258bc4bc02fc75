"""The comparison engine (`app.snapshot.compare`): for every kind an object only in the source,
only in the target and changed; a flag's strategies matched by content whatever their ids,
added, removed and changed, and an order change as a difference of its own; two environments
of one snapshot through `map_env`, projects through `map_project`; the filters (kinds,
projects, tags, names); the counts and tree; the JSON and Markdown, stable; and the time taken
by 10,000 flags x 3 environments x 2 strategies (printed, not asserted)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from app.snapshot.compare import (
    KIND_KEYS,
    Change,
    Comparison,
    Difference,
    compare,
    field_differences,
)
from app.snapshot.model import Snapshot
from tests.app.snapshot_examples import environment, flag, rollout, shop, snapshot, strategy

Edit = Callable[[dict[str, Any]], Any]


def differences(source: dict[str, Any], target: dict[str, Any], **options: Any) -> list[str]:
    """Each difference as one line: `key: change old -> new`."""
    found = compare(Snapshot.model_validate(source), Snapshot.model_validate(target), **options)
    return [line(d) for d in found.differences]


def line(d: Difference) -> str:
    if d.change is Change.ONLY_IN_SOURCE:
        return f"{d.key}: only in source"
    if d.change is Change.ONLY_IN_TARGET:
        return f"{d.key}: only in target"
    return f"{d.key}: {d.change} {json.dumps(d.old)} -> {json.dumps(d.new)}"


def edited(edit: Edit) -> dict[str, Any]:
    document = shop()
    edit(document)
    return document


def test_a_snapshot_is_the_same_as_itself() -> None:
    same = compare(snapshot(), snapshot())
    assert same.same and same.differences == ()
    assert same.counts["flags"] == {c: 0 for c in Change}
    assert list(same.counts) == list(KIND_KEYS)


# one object of each kind: added to the source (only in source), and a field of it changed
NEW_OBJECTS: dict[str, tuple[str, dict[str, Any], str, Any]] = {
    "projects": ("projects", {"id": "mobile", "name": "Mobile"}, "name", "Apps"),
    "environments": ("environments", {"name": "qa", "type": "test"}, "type", "development"),
    "flags": ("flags", {"name": "new-search", "project": "default"}, "stale", True),
    "segments": ("segments", {"name": "vip"}, "description", "big spenders"),
    "context-fields": ("contextFields", {"name": "plan"}, "stickiness", True),
    "tag-types": ("tagTypes", {"name": "team"}, "icon", "people"),
    "strategies": ("strategies", {"name": "by-host"}, "deprecated", True),
    "users": ("users", {"email": "cy@example.com"}, "rootRole", "Viewer"),
    "groups": ("groups", {"name": "ops"}, "rootRole", "Editor"),
    "roles": ("roles", {"name": "Auditor", "type": "custom"}, "description", "reads"),
    "project-access": ("projectAccess", {"project": "default", "role": "Member"}, "users",
                       ["bob@example.com"]),
    "api-tokens": ("apiTokens", {"tokenName": "ci", "type": "client"}, "environment",
                   "development"),
}  # fmt: skip
KEYS = {
    "projects": "project mobile",
    "environments": "environment qa",
    "flags": "flag default/new-search",
    "segments": "segment vip",
    "context-fields": "context field plan",
    "tag-types": "tag type team",
    "strategies": "strategy definition by-host",
    "users": "user cy@example.com",
    "groups": "group ops",
    "roles": "role Auditor",
    "project-access": "project access default \u203a Member",
    "api-tokens": "API token ci (client)",
}


@pytest.mark.parametrize("kind", KIND_KEYS)
def test_every_kind_only_in_source_only_in_target_and_changed(kind: str) -> None:
    field, item, name, value = NEW_OBJECTS[kind]
    with_it = edited(lambda d: d[field].append(dict(item)))
    assert differences(with_it, shop()) == [f"{KEYS[kind]}: only in source"]
    assert differences(shop(), with_it) == [f"{KEYS[kind]}: only in target"]
    changed = edited(lambda d: d[field].append({**item, name: value}))
    found = compare(Snapshot.model_validate(changed), Snapshot.model_validate(with_it))
    if kind == "project-access":  # a list of names differs name by name
        expected = f"{KEYS[kind]} \u203a user bob@example.com: only in source"
    else:
        default = False if kind in ("flags", "context-fields", "strategies") else None
        before = json.dumps(item.get(name, default))
        expected = f"{KEYS[kind]} \u203a {name}: changed {before} -> {json.dumps(value)}"
    assert [line(d) for d in found.differences] == [expected]
    assert found.counts[kind][str(found.differences[0].change)] == 1


def test_whole_objects_carry_their_fields() -> None:
    with_it = edited(lambda d: d["segments"].append({"name": "vip", "description": "big"}))
    (only,) = compare(Snapshot.model_validate(with_it), snapshot()).differences
    assert (only.old, only.new) == (None, {"description": "big"})  # empty fields left out
    (gone,) = compare(snapshot(), Snapshot.model_validate(with_it)).differences
    assert (gone.old, gone.new) == (only.new, None)


def test_flag_fields_tags_dependencies_and_variants() -> None:
    def edit(d: dict[str, Any]) -> None:
        checkout = flag(d, "checkout-v2")
        checkout.update(description="Checkout, again", impressionData=True)
        checkout["tags"] = [{"type": "simple", "value": "ga"}]
        dark = flag(d, "dark-mode")
        dark["dependencies"] = [{"feature": "checkout-v2", "enabled": False}]
        environment(dark, "production")["variants"][0]["weight"] = 500

    assert differences(edited(edit), shop()) == [
        "flag web-shop/checkout-v2 \u203a description: "
        'changed "The new checkout" -> "Checkout, again"',
        "flag web-shop/checkout-v2 \u203a impressionData: changed false -> true",
        "flag web-shop/checkout-v2 \u203a tag simple:beta: only in target",
        "flag web-shop/checkout-v2 \u203a tag simple:ga: only in source",
        "flag default/dark-mode \u203a dependency checkout-v2 \u203a enabled: "
        "changed true -> false",
        "flag default/dark-mode \u203a production \u203a variants: changed "
        '[{"name": "dark", "weight": 1000, "payload": {"type": "string", "value": "night"}}] -> '
        '[{"name": "dark", "weight": 500, "payload": {"type": "string", "value": "night"}}]',
    ]  # fmt: skip


def test_a_flag_on_in_one_environment_only_and_an_environment_only_one_side_has() -> None:
    def edit(d: dict[str, Any]) -> None:
        environment(flag(d, "checkout-v2"), "production")["enabled"] = True
        flag(d, "dark-mode")["environments"].append({"name": "development", "enabled": True})

    assert differences(edited(edit), shop()) == [
        "flag web-shop/checkout-v2 \u203a production \u203a enabled: changed false -> true",
        "flag default/dark-mode \u203a development: only in source",
    ]


# ---------------------------------------------------------------------------- strategies


def production_strategies(d: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = environment(flag(d, "checkout-v2"), "production")["strategies"]
    return found


def test_strategies_are_matched_by_content_not_by_id() -> None:
    def new_ids(d: dict[str, Any]) -> None:
        for s in production_strategies(d):
            s["id"] = "other-" + s["id"]

    assert differences(edited(new_ids), shop()) == []


def test_a_changed_rollout_constraint_segment_and_title() -> None:
    def edit(d: dict[str, Any]) -> None:
        first, second = production_strategies(d)
        first["parameters"]["rollout"] = "50"
        first["constraints"] = [{"contextName": "region", "operator": "IN", "values": ["eu"]}]
        first["segments"] = ["beta-users"]
        second["disabled"] = True

    assert differences(edited(edit), shop()) == [
        "flag web-shop/checkout-v2 \u203a production \u203a strategy flexibleRollout #1 \u203a "
        'parameters.rollout: changed "25" -> "50"',
        "flag web-shop/checkout-v2 \u203a production \u203a strategy flexibleRollout #1 \u203a "
        "constraints: changed [] -> "
        '[{"contextName": "region", "operator": "IN", "values": ["eu"]}]',
        "flag web-shop/checkout-v2 \u203a production \u203a strategy flexibleRollout #1 \u203a "
        'segments: changed [] -> ["beta-users"]',
        "flag web-shop/checkout-v2 \u203a production \u203a strategy default \u201cstaff\u201d #2 "
        "\u203a disabled: changed false -> true",
    ]  # fmt: skip


def test_a_strategy_added_and_one_removed() -> None:
    def edit(d: dict[str, Any]) -> None:
        strategies = production_strategies(d)
        strategies.pop(1)  # default "staff": only in the target
        strategies.append(strategy("userWithId", 5, id="n-1", parameters={"userIds": "7"}))

    found = compare(Snapshot.model_validate(edited(edit)), snapshot())
    assert [line(d) for d in found.differences] == [
        "flag web-shop/checkout-v2 \u203a production \u203a strategy userWithId #2: only in source",
        "flag web-shop/checkout-v2 \u203a production \u203a strategy default \u201cstaff\u201d "
        "#2: only in target",
    ]
    added, removed = found.differences
    assert added.new == {"name": "userWithId", "disabled": False, "parameters": {"userIds": "7"},
                         "sortOrder": 5}  # fmt: skip
    assert removed.old["title"] == "staff" and removed.new is None


def test_pairs_by_name_title_and_order_first_then_by_name() -> None:
    """Two rollouts on each side: the one with the same title and place pairs first, so only
    the other's rollout differs, even though their ids and list order are swapped."""

    def two(d: dict[str, Any], second_rollout: str) -> None:
        production_strategies(d)[:] = [
            rollout("10", 0, id="a", title="eu"),
            rollout(second_rollout, 1, id="b", title="us"),
        ]

    source = edited(lambda d: two(d, "30"))
    production_strategies(source).reverse()
    for s in production_strategies(source):
        s["id"] = s["id"] + "-copied"
    assert differences(source, edited(lambda d: two(d, "20"))) == [
        "flag web-shop/checkout-v2 \u203a production \u203a strategy flexibleRollout "
        '\u201cus\u201d #2 \u203a parameters.rollout: changed "20" -> "30"',
    ]
    # titles changed too: paired by name, in order
    renamed = edited(lambda d: two(d, "20"))
    for s in production_strategies(renamed):
        s["title"] = s["title"].upper()
    assert [d.path[-1] for d in compare(Snapshot.model_validate(renamed),
                                        Snapshot.model_validate(edited(lambda d: two(d, "20")))
                                        ).differences] == ["title", "title"]  # fmt: skip


def test_an_order_change_is_a_difference_of_its_own() -> None:
    def swap(d: dict[str, Any]) -> None:
        first, second = production_strategies(d)
        first["sortOrder"], second["sortOrder"] = 1, 0

    found = compare(Snapshot.model_validate(edited(swap)), snapshot())
    (order,) = found.differences
    assert order.key == "flag web-shop/checkout-v2 \u203a production \u203a strategy order"
    assert order.change is Change.ORDER
    assert (order.old, order.new) == (["flexibleRollout", "default \u201cstaff\u201d"],
                                      ["default \u201cstaff\u201d", "flexibleRollout"])  # fmt: skip
    assert found.counts["flags"]["order changed"] == 1

    def spread(d: dict[str, Any]) -> None:  # other numbers, the same order: no difference
        for s in production_strategies(d):
            s["sortOrder"] = s["sortOrder"] * 10 + 3

    assert differences(edited(spread), shop()) == []


# -------------------------------------------------------------------- mapped environments


def test_two_environments_of_one_snapshot() -> None:
    """production (source) against staging (target) of the same snapshot: the flag that is on
    in staging and off in production, the rollout, the constraint and segment staging's
    rollout has, the flag only production has; other environments left out."""
    one = snapshot()
    found = compare(one, one, kinds=["flags", "projects"], map_env={"production": "staging"})
    assert [line(d) for d in found.differences] == [
        "project default \u203a environment staging: only in source",
        "flag web-shop/checkout-v2 \u203a staging \u203a enabled: changed true -> false",
        "flag web-shop/checkout-v2 \u203a staging \u203a strategy flexibleRollout #1 \u203a "
        'parameters.rollout: changed "100" -> "25"',
        "flag web-shop/checkout-v2 \u203a staging \u203a strategy flexibleRollout #1 \u203a "
        'constraints: changed [{"contextName": "region", "operator": "IN", "values": ["eu", '
        '"us"]}] -> []',
        "flag web-shop/checkout-v2 \u203a staging \u203a strategy flexibleRollout #1 \u203a "
        'segments: changed ["beta-users"] -> []',
        "flag default/dark-mode \u203a staging: only in source",
    ]  # fmt: skip
    assert compare(one, one, map_env={"staging": "staging"}).same


def test_environments_permissions_and_tokens_follow_the_map() -> None:
    one = snapshot()
    found = compare(one, one, kinds=["environments", "roles", "api-tokens"],
                    map_env={"production": "staging"})  # fmt: skip
    assert [line(d) for d in found.differences] == [
        'environment staging \u203a type: changed "test" -> "production"',
        "environment staging \u203a sortOrder: changed 2 -> 3",
        "role Deployer \u203a permission UPDATE_FEATURE_ENVIRONMENT@staging: only in source",
        "API token shop-backend (backend): only in source",
    ]


def test_map_project_renames_the_source_projects() -> None:
    def move(d: dict[str, Any]) -> None:
        for p in d["projects"]:
            p["id"] = {"web-shop": "shop"}.get(p["id"], p["id"])
        for f in d["flags"]:
            f["project"] = {"web-shop": "shop"}.get(f["project"], f["project"])
        d["segments"][0]["project"] = "shop"
        d["projectAccess"][0]["project"] = "shop"
        d["apiTokens"][0]["projects"] = ["shop"]

    moved = edited(move)
    assert differences(moved, shop(), kinds=["projects", "flags"]) != []
    mapped = {"shop": "web-shop", "default": "default"}
    assert differences(moved, shop(), map_project=mapped) == []
    # only the mapped projects: web-shop alone leaves default's flag and project out
    assert differences(moved, edited(lambda d: flag(d, "dark-mode").update(stale=True)),
                       map_project={"shop": "web-shop"}) == []  # fmt: skip


# -------------------------------------------------------------------------------- filters


def busy_source() -> dict[str, Any]:
    def edit(d: dict[str, Any]) -> None:
        flag(d, "checkout-v2")["stale"] = True
        flag(d, "dark-mode")["stale"] = True
        d["segments"][0]["description"] = "beta"
        d["users"][0]["name"] = "Ada L."

    return edited(edit)


def test_filter_by_kind() -> None:
    assert differences(busy_source(), shop(), kinds=["segments", "users"]) == [
        'segment beta-users \u203a description: changed null -> "beta"',
        'user ada@example.com \u203a name: changed "Ada" -> "Ada L."',
    ]
    with pytest.raises(ValueError, match="no kind 'flag': choose among projects, environments"):
        compare(snapshot(), snapshot(), kinds=["flag"])


def test_filter_by_project_tag_and_name() -> None:
    assert differences(busy_source(), shop(), projects=["default"]) == [
        "flag default/dark-mode \u203a stale: changed false -> true",
        'user ada@example.com \u203a name: changed "Ada" -> "Ada L."',
    ]
    assert differences(busy_source(), shop(), kinds=["flags"], tags=["simple:beta"]) == [
        "flag web-shop/checkout-v2 \u203a stale: changed false -> true",
    ]
    assert differences(busy_source(), shop(), names=["dark-*", "ada@*"]) == [
        "flag default/dark-mode \u203a stale: changed false -> true",
        'user ada@example.com \u203a name: changed "Ada" -> "Ada L."',
    ]
    assert differences(busy_source(), shop(), names=["web-shop/*"]) == [
        "flag web-shop/checkout-v2 \u203a stale: changed false -> true",
    ]


# ------------------------------------------------------------------------ counts and output


def busy() -> Comparison:
    def edit(d: dict[str, Any]) -> None:
        production_strategies(d)[0]["parameters"]["rollout"] = "50"
        d["segments"].append({"name": "vip"})
        d["users"].pop()
        d["groups"][0]["description"] = "x" * 200  # long: collapsed

    return compare(Snapshot.model_validate(edited(edit)), snapshot())


def test_counts_tree_and_same() -> None:
    found = busy()
    assert not found.same
    counted = {k: {c: n for c, n in v.items() if n} for k, v in found.counts.items()}
    assert {k: v for k, v in counted.items() if v} == {
        "flags": {"changed": 1},
        "segments": {"only in source": 1},
        "users": {"only in target": 1},
        "groups": {"changed": 1},
    }  # fmt: skip
    assert list(found.tree) == ["flags", "segments", "users", "groups"]
    assert list(found.tree["users"]) == ["bob@example.com"]
    assert found.summary()[0] == "flags: 1 changed"


def test_json_is_stable_and_complete() -> None:
    first, second = busy().to_json(), busy().to_json()
    assert json.dumps(first) == json.dumps(second)
    assert first["same"] is False and first["total"] == 4
    assert first["differences"][0] == {
        "kind": "flags",
        "object": "web-shop/checkout-v2",
        "path": ["production", "strategy flexibleRollout #1", "parameters.rollout"],
        "key": "flag web-shop/checkout-v2 \u203a production \u203a strategy flexibleRollout #1 "
        "\u203a parameters.rollout",
        "change": "changed",
        "old": "25",
        "new": "50",
    }
    assert first["counts"]["users"]["only in target"] == 1


def test_markdown_is_a_table_per_kind_values_short() -> None:
    text = busy().to_markdown()
    assert text == busy().to_markdown()
    assert (
        "## Flags\n\n| object | where | change | target | source |\n|---|---|---|---|---|\n" in text
    )
    assert ("| web-shop/checkout-v2 | production \u203a strategy flexibleRollout #1 \u203a "
            "parameters.rollout | changed | 25 | 50 |") in text  # fmt: skip
    assert "| vip | | only in source | |" not in text  # an empty cell is empty, the row whole
    assert "| vip |  | only in source |  | " in text
    long_row = next(row for row in text.splitlines() if row.startswith("| shop-team"))
    assert "x" * 59 + "\u2026" in long_row and "x" * 61 not in long_row
    assert compare(snapshot(), snapshot()).to_markdown().endswith("No differences in projects, "
                                                                  "environments, flags, segments, "
                                                                  "context-fields, tag-types, "
                                                                  "strategies, users, groups, "
                                                                  "roles, project-access, "
                                                                  "api-tokens.\n")  # fmt: skip


# ---------------------------------------------------------------------------------- speed


def big(rollout_of: Callable[[int], str]) -> Snapshot:
    document = shop()
    document["flags"] = [
        {"name": f"flag-{n:05}", "project": "web-shop", "environments": [
            {"name": env, "enabled": n % 2 == 0, "strategies": [
                rollout(rollout_of(n), 0, id=f"{n}-{env}-1", constraints=[
                    {"contextName": "region", "operator": "IN", "values": ["eu", "us"]}]),
                strategy("default", 1, id=f"{n}-{env}-2", title="staff"),
            ]} for env in ("development", "staging", "production")
        ]}
        for n in range(10_000)
    ]  # fmt: skip
    return Snapshot.model_validate(document)


def test_ten_thousand_flags_compare_quickly() -> None:
    source, target = big(lambda n: "50"), big(lambda n: "50" if n % 100 else "60")
    started = time.perf_counter()
    found = compare(source, target)
    took = time.perf_counter() - started
    print(f"\n10,000 flags x 3 environments x 2 strategies compared in {took:.3f} s "
          f"({len(found.differences)} differences)")  # fmt: skip
    assert len(found.differences) == 300


def test_an_empty_description_and_none_are_the_same() -> None:
    """Unleash answers "" or null for a description left empty, by release: no difference."""

    def described(text: str | None) -> Edit:
        def edit(d: dict[str, Any]) -> None:
            for field in ("projects", "segments", "contextFields", "tagTypes", "strategies",
                          "groups", "roles", "flags"):  # fmt: skip
                for item in d[field]:
                    item["description"] = text
            d["users"][0]["name"] = text

        return edit

    assert differences(edited(described("")), edited(described(None))) == []
    assert len(differences(edited(described("x")), edited(described(None)))) == 12


def test_a_list_one_side_did_not_read_is_not_compared_and_said_so() -> None:
    """Open source has no groups: its snapshot says so (`unread`), and a comparison with a
    server that has groups leaves them out, saying why, instead of calling every group "only
    in source"."""
    oss = shop()
    oss["groups"] = []
    oss["unread"] = {"groups": "Unleash Enterprise only"}
    found = compare(snapshot(shop()), snapshot(oss))
    assert "groups" not in found.kinds and not any(d.kind == "groups" for d in found.differences)
    assert found.not_compared == (
        ("groups", "the target did not read them (Unleash Enterprise only)"),
    )
    assert found.same  # nothing else differs
    assert found.to_json()["notCompared"] == {"groups": "the target did not read them "
                                              "(Unleash Enterprise only)"}  # fmt: skip
    assert "Groups not compared: the target did not read them" in found.text_lines()[1]
    assert "Groups not compared" in found.to_markdown()
    both = compare(snapshot(oss), snapshot(oss), kinds=["groups", "users"])
    assert both.kinds == ("users",) and both.not_compared[0][1] == (
        "the source did not read them (Unleash Enterprise only); the target did not read them "
        "(Unleash Enterprise only)"
    )


def test_unread_names_only_lists_of_a_snapshot() -> None:
    bad = shop()
    bad["unread"] = {"gropus": "typo"}
    with pytest.raises(ValueError, match="names no list of a snapshot: gropus"):
        snapshot(bad)


def test_two_plain_values_compared_field_by_field() -> None:
    """`field_differences` (the event log's preData and data): a field added, removed or
    changed, an object's parameters one by one, in the new value's order then the removed;
    a side that is no object compared whole."""
    before = {"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default"},
              "constraints": [], "gone": 1}  # fmt: skip
    after = {"name": "flexibleRollout", "parameters": {"rollout": "75", "stickiness": "default"},
             "constraints": [{"contextName": "region"}], "title": "EU"}  # fmt: skip
    found = [(d.where, d.change, d.old, d.new) for d in field_differences(before, after)]
    assert found == [
        ("parameters.rollout", Change.CHANGED, "50", "75"),
        ("constraints", Change.CHANGED, [], [{"contextName": "region"}]),
        ("title", Change.ONLY_IN_SOURCE, None, "EU"),
        ("gone", Change.ONLY_IN_TARGET, 1, None),
    ]
    assert field_differences(after, after) == []
    made = field_differences(None, {"name": "x"}, object="x")
    assert [(d.path, d.change, d.key) for d in made] == [((), Change.ONLY_IN_SOURCE, "flag x")]
    assert [d.change for d in field_differences({"a": 1}, None)] == [Change.ONLY_IN_TARGET]
    assert [d.change for d in field_differences("a", "b")] == [Change.CHANGED]
