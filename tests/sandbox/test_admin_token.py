"""The admin API token is no user's (issue 35, item 2): as on Unleash, where an admin token acts
as "admin" with the creator id -42 ("Unleash Admin Token") whoever the users are, deleting or
demoting user 1 leaves it an Admin; what it changes is still attributed to it."""

from __future__ import annotations

from collections.abc import Callable

from app.api.models import PersonalDashboardProjectDetails
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error


def admin_routes_answer(sb: SandboxProcess) -> None:
    with sb.admin() as http:
        assert http.get("/api/admin/user-admin").status_code == 200
        assert http.get("/api/admin/user-admin/inactive").status_code == 200
        me = http.get("/api/admin/user").json()
        assert {"permission": "ADMIN"} in me["permissions"]
        assert me["user"]["type"] == "admin"
        r = http.post("/api/admin/projects/default/features", json={"name": "after-user-1"})
        assert r.status_code == 201, r.text


def test_deleting_user_1_keeps_the_admin_token_an_admin(sandbox: SandboxProcess) -> None:
    """`flagdesk users delete 1 --yes` (the other Admins let it through) locked the token out:
    every Admin route answered 403 until a restart."""
    with sandbox.admin() as http:
        assert http.delete("/api/admin/user-admin/1").status_code == 200
        assert http.get("/api/admin/user-admin/1").status_code == 404
    admin_routes_answer(sandbox)


def test_demoting_user_1_keeps_the_admin_token_an_admin(
    sandbox: SandboxProcess, personal_token: Callable[[SandboxProcess, str], str]
) -> None:
    with sandbox.admin() as http:
        r = http.put("/api/admin/user-admin/1", json={"rootRole": "Viewer"})
        assert r.status_code == 200 and r.json()["rootRole"] == 3
    admin_routes_answer(sandbox)
    # the demoted user's own token is a Viewer's now: the role is the user's, not the token's
    with sandbox.admin() as http:
        username = http.get("/api/admin/user-admin/1").json()["username"]
    viewer = personal_token(sandbox, username)
    with SandboxProcess.admin(sandbox) as http:
        http.headers["Authorization"] = viewer
        assert_error(http.get("/api/admin/user-admin"), 403, "NoAccessError")


def test_what_the_admin_token_changes_is_attributed_to_it(sandbox: SandboxProcess) -> None:
    """As Unleash 8.2 logs it: `createdBy` "admin", the token's name, and no user's id (the
    dashboard's latest events read the creator's picture by that id: none)."""
    with sandbox.admin() as http:
        assert http.delete("/api/admin/user-admin/1").status_code == 200
        r = http.post("/api/admin/projects/default/features", json={"name": "by-the-token"})
        assert r.status_code == 201
        d = PersonalDashboardProjectDetails.model_validate(
            http.get("/api/admin/personal-dashboard/default").json()
        )
    latest = d.latestEvents[0]
    assert latest.createdBy == "admin"
    assert latest.summary is not None and "by-the-token" in latest.summary
    # the token holds the root Admin role whoever the users are, and no project role
    assert [(x.name, x.type) for x in d.roles] == [("Admin", "root")]
    from sandbox import db

    conn = db.connect(sandbox.db)
    try:
        row = conn.execute(
            "SELECT created_by, created_by_user_id FROM events WHERE feature = 'by-the-token'"
        ).fetchone()
    finally:
        conn.close()
    assert (row[0], row[1]) == ("admin", -42)
