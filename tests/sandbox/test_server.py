"""The sandbox as a whole: persistence, tokens, supporting routes, the command line."""

from __future__ import annotations

import subprocess
import sys

import httpx

from app.api.models import ContextField, Health, ProjectList, UiConfig, UserList
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store import Store
from tests.sandbox.conftest import assert_error


def test_data_and_tokens_persist_across_a_restart(tmp_path):
    path = tmp_path / "p.sqlite3"
    with SandboxProcess(path) as first, first.admin() as http:
        r = http.post("/api/admin/groups", json={"name": "Survivors"})
        assert r.status_code == 201
        users = len(http.get("/api/admin/user-admin").json()["users"])
    # no tokens given this time: the ones stored in the database still work, none is printed
    second = SandboxProcess(path)
    second.admin_token, second.client_token = "", ""
    second.start()
    try:
        assert not any(" token " in line for line in second.output)
        headers = {"Authorization": first.admin_token}
        groups = httpx.get(second.url + "/api/admin/groups", headers=headers).json()["groups"]
        assert "Survivors" in [g["name"] for g in groups]
        assert (
            len(httpx.get(second.url + "/api/admin/user-admin", headers=headers).json()["users"])
            == users
        )
    finally:
        second.stop()


def test_tokens_are_generated_and_printed_once(tmp_path):
    sb = SandboxProcess(tmp_path / "t.sqlite3", "--empty")
    sb.admin_token, sb.client_token = "", ""
    sb.start()
    sb.stop()
    printed = [line for line in sb.output if " token " in line]
    assert len(printed) == 2
    admin = next(line for line in printed if "admin" in line).rsplit(" ", 1)[1].strip()
    assert admin.startswith("*:*.") and len(admin) > 30
    conn = db.connect(tmp_path / "t.sqlite3")
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM tokens").fetchone()[0] == 2
    conn.close()


def test_empty_database_has_no_demo_data(tmp_path):
    with SandboxProcess(tmp_path / "e.sqlite3", "--empty") as sb, sb.admin() as http:
        users = UserList.model_validate(http.get("/api/admin/user-admin").json())
        assert [u.username for u in users.users] == ["admin"]
        assert {r.name for r in users.rootRoles} == {"Admin", "Editor", "Viewer"}
        # no demo project: only the `default` one every server has, with no flags
        projects = ProjectList.model_validate(http.get("/api/admin/projects").json()).projects
        assert [(p.id, p.featureCount) for p in projects] == [("default", 0)]


def test_an_empty_sandbox_is_a_fresh_server(tmp_path):
    """`--empty` is what a fresh Unleash has: the `default` project and the `development` and
    `production` environments, so a flag can be made, given strategies in both environments and
    archived without creating anything else first."""
    with SandboxProcess(tmp_path / "f.sqlite3", "--empty") as sb, sb.admin() as http:
        projects = http.get("/api/admin/projects").json()["projects"]
        assert [(p["id"], p["name"]) for p in projects] == [("default", "Default")]
        assert http.get("/api/admin/projects/default/features").json()["features"] == []
        dashboard = http.get("/api/admin/personal-dashboard/default")
        assert dashboard.status_code == 200, dashboard.text
        assert dashboard.json()["onboardingStatus"] == {"status": "onboarding-started"}
        r = http.post("/api/admin/projects/default/features", json={"name": "first-flag"})
        assert r.status_code == 201, r.text
        for env in ("development", "production"):
            r = http.post(
                f"/api/admin/projects/default/features/first-flag/environments/{env}/strategies",
                json={"name": "default"},
            )
            assert r.status_code == 200, r.text
        assert http.delete("/api/admin/projects/default/features/first-flag").status_code == 202
        archived = http.get("/api/admin/archive/features/default").json()["features"]
    assert [f["name"] for f in archived] == ["first-flag"]
    assert [e["name"] for e in archived[0]["environments"]] == ["development", "production"]


def test_a_database_from_before_gets_what_a_fresh_server_has(tmp_path):
    """A database made while `--empty` made no `default` project gets it at the next start;
    what it holds stays."""
    path = tmp_path / "old.sqlite3"
    conn = db.connect(path)
    Store(conn).initialise()
    conn.execute("DELETE FROM projects WHERE id = 'default'")
    conn.close()
    with SandboxProcess(path) as sb, sb.admin() as http:
        assert not any("created sandbox database" in line for line in sb.output)
        projects = http.get("/api/admin/projects").json()["projects"]
        assert [p["id"] for p in projects] == ["default"]
        assert len(http.get("/api/admin/user-admin").json()["users"]) == 1  # no demo data


def test_supporting_routes(demo_sandbox):
    assert Health.model_validate(httpx.get(demo_sandbox.url + "/health").json()).health == "GOOD"
    with demo_sandbox.admin() as http:
        config = UiConfig.model_validate(http.get("/api/admin/ui-config").json())
        assert config.name == "flagdesk sandbox" and config.version
        projects = ProjectList.model_validate(http.get("/api/admin/projects").json()).projects
        assert {p.id for p in projects} == {"default", "web-shop", "payments", "mobile-app"}
        assert sum(p.featureCount or 0 for p in projects) == 45
        users = UserList.model_validate(http.get("/api/admin/user-admin").json()).users
        assert len(users) >= 40
        one = http.get(f"/api/admin/user-admin/{users[3].id}").json()
        assert one["id"] == users[3].id
        fields = [ContextField.model_validate(f) for f in http.get("/api/admin/context").json()]
        assert {"userId", "appName", "region"} <= {f.name for f in fields}
        region = next(f for f in fields if f.name == "region")
        assert region.usedInFeatures and len(region.legalValues) == 4
        assert_error(http.get("/api/admin/no-such-route"), 404, "NotFoundError")
        spec = httpx.get(demo_sandbox.url + "/docs/openapi.json").json()
        for path in (
            "/api/admin/groups",
            "/api/admin/user-admin/{id}",
            "/api/admin/archive/features/{projectId}",
            "/api/admin/personal-dashboard/{projectId}",
            "/api/admin/context/{contextField}/strategies",
            "/api/admin/user-admin/inactive",
            "/api/client/metrics/bulk",
        ):
            assert path in spec["paths"], path
        assert "BulkMetrics" in spec["components"]["schemas"]


def test_feature_create_conflict_and_unknown_project(sandbox):
    with sandbox.admin() as http:
        assert (
            http.post("/api/admin/projects/default/features", json={"name": "dup-flag"}).status_code
            == 201
        )
        assert_error(
            http.post("/api/admin/projects/default/features", json={"name": "dup-flag"}),
            409,
            "NameExistsError",
        )
        assert_error(
            http.post("/api/admin/projects/nope/features", json={"name": "x"}), 404, "NotFoundError"
        )
        assert_error(
            http.delete("/api/admin/projects/default/features/not-there"), 404, "NotFoundError"
        )


def test_non_loopback_host_warns_and_a_busy_port_is_a_clear_error(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run(
            [sys.executable, "-m", "app", "serve", "--host", "0.0.0.0", "--port", str(port),
             "--db", str(tmp_path / "w.sqlite3"), "--empty"],
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
    assert "warning: serving on 0.0.0.0" in r.stderr
    assert r.returncode == 2
    assert f"cannot listen on 0.0.0.0:{port}" in r.stderr
    assert "Traceback" not in r.stderr


def test_serve_imports_no_qt(tmp_path):
    code = (
        "import sys, app.cli, sandbox.server, sandbox.app;"
        "print([m for m in sys.modules if m.startswith(('PySide6', 'shiboken'))])"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_the_sandbox_imports_only_the_wire_contract_of_app():
    """The sandbox's layer rule: of flagdesk it imports the wire contract (`app.api.models`,
    `app.api.wire`, and the version in `app`), never Qt, a view-model or the GUI."""
    code = (
        "import importlib, pkgutil, sys, sandbox\n"
        "for found in pkgutil.walk_packages(sandbox.__path__, 'sandbox.'):\n"
        "    importlib.import_module(found.name)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('app', 'ui', 'PySide6', 'shiboken6'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["app", "app.api", "app.api.models", "app.api.wire"]


def test_scale_adds_users_and_archived_flags(tmp_path):
    with (
        SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--scale", "300") as sb,
        sb.admin() as http,
    ):
        users = http.get("/api/admin/user-admin").json()["users"]
        inactive = http.get("/api/admin/user-admin/inactive").json()["inactiveUsers"]
        archived = http.get("/api/admin/archive/features/default").json()["features"]
    assert len(users) == 45 + 300
    scaled = [u for u in inactive if u["email"].endswith("@scale.example.com")]
    assert len(scaled) == 300  # every one of them inactive
    assert len([u for u in scaled if u["seenAt"] is None]) == 60  # a fifth never logged in
    assert len([f for f in archived if f["name"].startswith("scale-")]) == 300


def test_each_route_is_built_once_when_the_areas_declare_it(tmp_path):
    """The app serves the routes its areas' routers built, not copies FastAPI builds again on
    the first request reaching each router (what `include_router` does: a tenth of a second of
    the GUI's wait for its first data, `bench/sandbox_boot.py`), and what they declare they
    answer is only made into JSON schemas for the OpenAPI document (`sandbox.routes.answers`)."""
    from fastapi.routing import APIRoute

    from sandbox.app import create_app
    from sandbox.routes import server_info, users

    conn = db.connect(tmp_path / "s.sqlite3")
    store = Store(conn)
    store.initialise()
    app = create_app(store)
    declared = {id(route) for route in (*server_info.router.routes, *users.router.routes)}
    served = {id(route) for route in app.routes if isinstance(route, APIRoute)}
    assert declared <= served
    # no serialiser built for the answers' bodies as the routes were declared: only the
    # OpenAPI document needs them, and it still says what each body is
    assert all(not route.response_fields for route in users.router.routes)
    ui_config = app.openapi()["paths"]["/api/admin/ui-config"]["get"]["responses"]
    assert ui_config["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/UiConfig"
    }
    assert ui_config["401"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }
    conn.close()
