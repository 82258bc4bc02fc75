"""The sandbox as a whole: persistence, tokens, supporting routes, the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
    assert r.returncode == 2
    assert f"cannot listen on 0.0.0.0:{port}" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "w.sqlite3").exists()  # refused before the database is made

    with subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--host", "0.0.0.0", "--port", "0",
         "--db", str(tmp_path / "w.sqlite3"), "--empty"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ) as serving:  # fmt: skip
        try:
            assert serving.stderr is not None
            assert "warning: serving on 0.0.0.0" in serving.stderr.readline()
        finally:
            serving.terminate()


def test_serve_imports_no_qt(tmp_path):
    code = (
        "import sys, app.cli, sandbox.server, sandbox.app;"
        "print([m for m in sys.modules if m.startswith(('PySide6', 'shiboken'))])"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_the_sandbox_imports_only_the_wire_contract_of_app():
    """The sandbox's layer rule: of flagdesk it imports the wire contract (`app.api.models`,
    `app.api.wire`, and the version in `app`) and leaves (`app.startup`, for its process's
    start), never Qt, a view-model or the GUI."""
    code = (
        "import importlib, pkgutil, sys, sandbox\n"
        "for found in pkgutil.walk_packages(sandbox.__path__, 'sandbox.'):\n"
        "    importlib.import_module(found.name)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('app', 'ui', 'PySide6', 'shiboken6'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["app", "app.api", "app.api.models", "app.api.wire", "app.startup"]


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


def test_the_document_lists_what_is_served_and_is_made_when_asked(tmp_path):
    """Each endpoint is declared once (`sandbox.routes.endpoint`): the routes served and the
    operations of the OpenAPI document are the same, groups left out of both when the app
    serves none; the document is made on its first request only (the GUI waits for the
    boot), with each answer's body as its model's schema."""
    from starlette.routing import Route

    from sandbox.app import OPENAPI_PATH, create_app, openapi

    conn = db.connect(tmp_path / "s.sqlite3")
    store = Store(conn)
    store.initialise()
    for groups in (True, False):
        app = create_app(store, groups=groups)
        assert app.state.openapi is None
        served = {
            (method, route.path)
            for route in app.routes
            if isinstance(route, Route) and route.path != OPENAPI_PATH
            for method in route.methods or ()
        }
        document = openapi(app)
        documented = {
            (method.upper(), path)
            for path, operations in document["paths"].items()
            for method in operations
        }
        assert served == documented
        # 8: API tokens, 3: personal ones, 7: service accounts, 8: roles; with the groups 7:
        # project access and the access overview
        # flag extras (issue 37, slice 2): 9 segments, 15 tags, 5 dependencies, 7 strategies;
        # 21: flag configuration (issue 37, slice 1)
        # and 1: the batch export, 2: the batch validate and import
        flag_extras = 9 + 15 + 5 + 7 + 21 + 1 + 2
        # instance settings (issue 38): 6 (statistics, CSV, maintenance, CORS), 6 banners
        flag_extras += 6 + 6
        flag_extras += 4  # the event log (issue 38): its four reads
        flag_extras += 1  # login history (issue 38): its one read
        assert len(served) == 41 + 8 + 3 + 7 + 8 + 7 * groups - 5 * (not groups) + flag_extras
        assert any(path.startswith("/api/admin/groups") for _, path in served) is groups
    ui_config = document["paths"]["/api/admin/ui-config"]["get"]["responses"]
    assert ui_config["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/UiConfig"
    }
    assert ui_config["401"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }
    assert "UiConfig" in document["components"]["schemas"]
    conn.close()


def test_serving_imports_no_fastapi(tmp_path):
    """The sandbox is served by Starlette alone: FastAPI's import and its reading of every
    route were about 40% of the boot the GUI waits for. Built as `flagdesk serve` builds it
    and a request served (with a body validated, the OpenAPI document made), in a process of
    its own."""
    code = f"""
import asyncio, sys
import httpx
from sandbox import db
from sandbox.app import create_app, wrap
from sandbox.store import Store

store = Store(db.connect({str(tmp_path / "s.sqlite3")!r}))
store.initialise()
token, _ = store.ensure_token("admin", "secret")

async def main():
    transport = httpx.ASGITransport(app=wrap(create_app(store)))
    async with httpx.AsyncClient(transport=transport, base_url="http://sb") as http:
        headers = {{"authorization": token}}
        made = await http.post("/api/admin/context", json={{"name": "region"}}, headers=headers)
        refused = await http.post("/api/admin/context", json={{"name": 5}}, headers=headers)
        document = await http.get("/docs/openapi.json")
    print(made.status_code, refused.status_code, document.status_code)

asyncio.run(main())
print(sorted(m for m in sys.modules if m.split(".")[0] == "fastapi"))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["201 400 200", "[]"]
