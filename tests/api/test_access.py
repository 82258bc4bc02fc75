"""Who can do what where (`app.api.access`), computed from data made here (no server, no I/O):
the Admin root role everywhere, directly or through a group's root role; the Editor root role
in the default project only; project roles held directly and through groups, each named; a
Viewer with nothing; a service account holding a role; a custom root role named as not
evaluated; a project's people with their reasons, and its groups; on a server without project
access (open source) the answer from root roles alone, saying so; and finding a person."""

from __future__ import annotations

import pytest

from app.api.access import (
    ROOT_ONLY_NOTE,
    AccessData,
    GroupInfo,
    NoSuchPerson,
    Person,
    Reason,
    find_person,
    project_access,
    user_access,
)
from app.api.models import Project, ProjectAccess

OWNER, MEMBER = 4, 5
ROLES = [{"id": OWNER, "name": "Owner", "type": "project"},
         {"id": MEMBER, "name": "Member", "type": "project"}]  # fmt: skip

ADA = Person(1, "Ada", "ada@x.test", "ada", "User", "Admin")
EVE = Person(2, "Eve", "eve@x.test", "eve", "User", "Editor")
VIC = Person(3, "Vic", "vic@x.test", "vic", "User", "Viewer")
GIL = Person(4, "Gil", "gil@x.test", "gil", "User", "Viewer")  # Admin through a group
CUS = Person(5, "Cus", "cus@x.test", "cus", "User", "Auditor")  # a custom root role
BOT = Person(9, "Bot", "", "bot", "Service Account", "Viewer")


def data(project_access_served: bool = True) -> AccessData:
    projects = [Project(id=p, name=p.title()) for p in ("default", "shop", "pay", "empty")]
    access = {
        "shop": ProjectAccess.model_validate({
            "users": [{"id": 2, "roles": [OWNER]}, {"id": 9, "roles": [MEMBER],
                                                    "accountType": "Service Account"}],
            "groups": [{"id": 10, "name": "Squad", "roles": [MEMBER, OWNER]}],
            "roles": ROLES}),
        "pay": ProjectAccess.model_validate({
            "users": [{"id": 3, "roles": [MEMBER]}], "groups": [], "roles": ROLES}),
        "default": ProjectAccess.model_validate({"roles": ROLES}),
        "empty": ProjectAccess.model_validate({"roles": ROLES}),
    }  # fmt: skip
    return AccessData(
        projects=projects,
        people=[ADA, EVE, VIC, GIL, CUS, BOT],
        groups=[
            GroupInfo(10, "Squad", "", frozenset({2, 3})),
            GroupInfo(11, "Admins", "Admin", frozenset({4})),
            GroupInfo(12, "Editors", "Editor", frozenset({3})),
        ],
        access=access if project_access_served else {},
        project_access=project_access_served,
        role_names={1: "Admin", 2: "Editor", 3: "Viewer", OWNER: "Owner", MEMBER: "Member"},
    )


def reasons(answer: object, project: str) -> list[Reason]:
    holdings = getattr(answer, "holdings")  # noqa: B009
    return next(list(h.reasons) for h in holdings if h.project == project)


def test_a_users_projects_and_why() -> None:
    d = data()
    admin = user_access(d, ADA)
    assert [h.project for h in admin.holdings] == ["default", "shop", "pay", "empty"]
    assert reasons(admin, "pay") == [Reason("Admin", "root role")]

    editor = user_access(d, EVE)
    assert [h.project for h in editor.holdings] == ["default", "shop"]
    assert reasons(editor, "default") == [Reason("Editor", "root role")]
    assert reasons(editor, "shop") == [Reason("Owner", "directly"),
                                       Reason("Member", "group", "Squad"),
                                       Reason("Owner", "group", "Squad")]  # fmt: skip
    assert editor.holdings[1].roles == ["Owner", "Member"]
    assert [r.text for r in reasons(editor, "shop")] == [
        "Owner directly",
        "Member through group “Squad”",
        "Owner through group “Squad”",
    ]

    viewer = user_access(d, VIC)  # a Viewer: a group's Editor root role, Squad, pay directly
    assert [h.project for h in viewer.holdings] == ["default", "shop", "pay"]
    assert reasons(viewer, "default") == [Reason("Editor", "group root role", "Editors")]
    assert reasons(viewer, "default")[0].text == "Editor root role of group “Editors”"

    through_group = user_access(d, GIL)
    assert len(through_group.holdings) == 4
    assert reasons(through_group, "empty") == [Reason("Admin", "group root role", "Admins")]

    robot = user_access(d, BOT)
    assert [(h.project, h.roles) for h in robot.holdings] == [("shop", ["Member"])]

    custom = user_access(d, CUS)
    assert custom.holdings == [] and custom.unread == ["Auditor"]
    assert custom.to_json()["notEvaluated"] == ["Auditor"]
    assert editor.to_json()["projects"][0] == {
        "project": "default", "roles": ["Editor"],
        "why": [{"role": "Editor", "through": "root role"}]}  # fmt: skip


def test_a_projects_people() -> None:
    d = data()
    shop = project_access(d, "shop")
    by_id = {h.person.id: list(h.reasons) for h in shop.holdings}
    assert set(by_id) == {1, 2, 3, 4, 9}  # not the custom role's holder
    assert by_id[3] == [Reason("Member", "group", "Squad"), Reason("Owner", "group", "Squad")]
    assert by_id[9] == [Reason("Member", "directly")]
    assert shop.groups == [("Squad", ["Member", "Owner"], 2)]
    assert [p["name"] for p in shop.to_json()["people"]] == ["Ada", "Bot", "Eve", "Gil", "Vic"]
    default = project_access(d, "default")
    assert {h.person.id for h in default.holdings} == {1, 2, 3, 4}  # Admins and Editors
    with pytest.raises(KeyError, match="no project “nope”"):
        project_access(d, "nope")


def test_without_project_access_from_root_roles_only() -> None:
    d = data(project_access_served=False)
    editor = user_access(d, EVE)
    assert [h.project for h in editor.holdings] == ["default"]
    assert editor.note == ROOT_ONLY_NOTE and "root roles only" in editor.note
    assert editor.to_json()["projectAccess"] is False
    assert {h.person.id for h in project_access(d, "shop").holdings} == {1, 4}


def test_finding_a_person() -> None:
    d = data()
    assert find_person(d, " EVE@x.test ") is EVE
    assert find_person(d, "bot") is BOT
    assert find_person(d, "3") is VIC
    with pytest.raises(NoSuchPerson, match="“who”"):
        find_person(d, "who")
