"""Dependencies between flags as Unleash 8.2 keeps them (measured on the 8.2 peer): adding one
(200, again: replaced), 8.2's refusals in its order (404 for a child or parent of another
project, 403 `InvalidOperationError` for a flag on itself, a grandparent or grandchild, a parent
that is not there or archived), deleting one or all (200; 404 when there is none), whether any
exist, the flags a flag could depend on, the events with `data`, the Viewer's 403, and the
demo's three (none in an `--empty` sandbox)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx

from sandbox import db
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

PersonalToken = Callable[[SandboxProcess, str], str]
P = "/api/admin/projects"


def rows(sb: SandboxProcess, sql: str, *args: object) -> list[tuple[object, ...]]:
    conn = db.connect(sb.db)
    try:
        return [tuple(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


def flags(http: httpx.Client, project: str, *names: str) -> None:
    for name in names:
        r = http.post(f"{P}/{project}/features", json={"name": name})
        assert r.status_code == 201, r.text


def test_add_replace_and_remove_dependencies_with_events(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        flags(http, "default", "dep-parent", "dep-child", "dep-other")
        r = http.post(
            f"{P}/default/features/dep-child/dependencies", json={"feature": "dep-parent"}
        )
        assert (r.status_code, r.content) == (200, b"")
        r = http.post(
            f"{P}/default/features/dep-child/dependencies",
            json={"feature": "dep-parent", "enabled": True, "variants": ["blue"]},
        )
        assert r.status_code == 200
        r = http.post(
            f"{P}/default/features/dep-other/dependencies",
            json={"feature": "dep-parent", "enabled": False, "variants": ["red"]},
        )
        assert r.status_code == 200
        assert http.get(f"{P}/default/dependencies").json() is True
        # the flag's own answer holds its parents, the parent's its children (as 8.2's)
        child = http.get(f"{P}/default/features/dep-child").json()
        assert child["dependencies"] == [
            {"feature": "dep-parent", "enabled": True, "variants": ["blue"]}]  # fmt: skip
        parent = http.get(f"{P}/default/features/dep-parent").json()
        assert parent["children"] == ["dep-child", "dep-other"] and parent["dependencies"] == []
        options = http.get(f"{P}/default/features/dep-child/parents").json()
        assert "dep-parent" in options and "dep-other" not in options and "dep-child" not in options
        assert options == sorted(options)

        r = http.delete(f"{P}/default/features/dep-child/dependencies/nope")
        assert assert_error(r, 404, "NotFoundError")["message"] == (
            'No dependency on "nope" for feature "dep-child" in project "default".'
        )
        r = http.delete(f"{P}/default/features/dep-child/dependencies/dep-parent")
        assert (r.status_code, r.content) == (200, b"")
        r = http.delete(f"{P}/default/features/dep-child/dependencies")
        assert assert_error(r, 404, "NotFoundError")["message"] == (
            'Feature "dep-child" has no dependencies to remove in project "default".'
        )
        assert http.delete(f"{P}/default/features/dep-other/dependencies").status_code == 200

    kept = rows(
        sandbox, "SELECT parent, child FROM feature_dependencies WHERE parent = 'dep-parent'"
    )
    assert kept == []
    events = rows(
        sandbox,
        "SELECT e.type, e.project, e.feature, p.data FROM events e LEFT JOIN event_data p"
        " ON p.event_id = e.id WHERE e.feature IN ('dep-child', 'dep-other')"
        " AND e.type LIKE 'feature-dependenc%' ORDER BY e.id",
    )
    assert [(e[0], e[2], e[3] and json.loads(str(e[3]))) for e in events] == [
        ("feature-dependency-added", "dep-child", {"feature": "dep-parent", "enabled": True}),
        ("feature-dependency-added", "dep-child",
         {"feature": "dep-parent", "enabled": True, "variants": ["blue"]}),
        ("feature-dependency-added", "dep-other",
         {"feature": "dep-parent", "enabled": False, "variants": ["red"]}),
        ("feature-dependency-removed", "dep-child", {"feature": "dep-parent"}),
        ("feature-dependencies-removed", "dep-other", None),
    ]  # fmt: skip
    assert {e[1] for e in events} == {"default"}


def test_unleashs_rules(sandbox: SandboxProcess) -> None:
    add = "/api/admin/projects/{}/features/{}/dependencies"
    with sandbox.admin() as http:
        flags(http, "default", "rule-parent", "rule-child", "rule-grandchild", "rule-archived")
        flags(http, "payments", "rule-elsewhere")
        assert http.delete(f"{P}/default/features/rule-archived").status_code == 202
        assert http.post(add.format("default", "rule-child"),
                         json={"feature": "rule-parent"}).status_code == 200  # fmt: skip

        def refused(project: str, child: str, parent: str, status: int, name: str) -> str:
            r = http.post(add.format(project, child), json={"feature": parent})
            return str(assert_error(r, status, name)["message"])

        both = 'Cannot add the dependency. Both the parent and the child feature must belong to project "{}".'  # noqa: E501
        assert refused("default", "nope", "rule-parent", 404, "NotFoundError") == both.format(
            "default"
        )
        assert refused("payments", "rule-child", "rule-parent", 404, "NotFoundError") == (
            both.format("payments")
        )
        assert refused("default", "rule-grandchild", "rule-elsewhere", 404, "NotFoundError") == (
            both.format("default")
        )
        assert refused("default", "rule-child", "rule-child", 403, "InvalidOperationError") == (
            "A feature flag cannot depend on itself."
        )
        assert refused(
            "default", "rule-grandchild", "rule-child", 403, "InvalidOperationError"
        ) == (
            "Transitive dependency detected. Cannot add a dependency to the feature that has "
            "parent dependency."
        )
        assert refused(
            "default", "rule-parent", "rule-grandchild", 403, "InvalidOperationError"
        ) == (
            "Transitive dependency detected. Cannot add a dependency to the feature that other "
            "features depend on."
        )
        for parent in ("nope", "rule-archived"):
            assert refused("default", "rule-grandchild", parent, 403, "InvalidOperationError") == (
                f"No active feature {parent} exists"
            )
        r = http.post(add.format("default", "rule-grandchild"), json={"enabled": True})
        assert_error(r, 400, "ValidationError")
    assert rows(sandbox, "SELECT count(*) FROM feature_dependencies WHERE child LIKE 'rule-%'") == [
        (1,)
    ]


def test_a_viewer_may_read_but_not_change(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    viewer = {"Authorization": personal_token(sandbox, "uma.iyer")}
    url = sandbox.url + P
    assert httpx.get(url + "/default/dependencies", headers=viewer).json() is True
    for r in (
        httpx.post(url + "/default/features/a/dependencies", json={"feature": "b"}, headers=viewer),
        httpx.delete(url + "/default/features/a/dependencies", headers=viewer),
        httpx.delete(url + "/default/features/a/dependencies/b", headers=viewer),
    ):
        assert_error(r, 403, "NoAccessError")


def test_the_demo_has_three_and_an_empty_sandbox_none(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    found = rows(
        demo_sandbox,
        "SELECT f.project, d.parent, d.child, d.enabled, d.variants FROM feature_dependencies d"
        " JOIN features f ON f.name = d.child JOIN features p ON p.name = d.parent"
        " WHERE p.project = f.project AND f.archived_at IS NULL AND p.archived_at IS NULL"
        " ORDER BY f.project",
    )
    assert [(r[0], r[3], r[4]) for r in found] == [
        ("default", 1, '["blue"]'), ("payments", 0, None), ("web-shop", 1, None)]  # fmt: skip
    with demo_sandbox.admin() as http:
        assert http.get(f"{P}/default/dependencies").json() is True
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as sb, sb.admin() as http:
        assert http.get(f"{P}/default/dependencies").json() is False
