"""Banners (Unleash Enterprise 5.7+; left out of the app when it plays an open-source release,
which answers 404), as `sandbox.store.instance` keeps them: the list is any admin-API caller's
(banners show to everyone); creating, changing, switching and deleting one need the Admin root
role (Unleash: `ADMIN` or `UPDATE_INSTANCE_BANNERS`)."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE


async def list_banners(call: Call[None]) -> Response:
    return json_response(call.store.list_banners())


async def create_banner(call: Call[m.CreateBanner]) -> Response:
    """201 with the banner and its `location`."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "change banners")
    made = call.store.create_banner(call.body, call.who)
    answer = json_response(made, 201)
    answer.headers["location"] = f"banners/{made.id}"
    return answer


async def update_banner(call: Call[m.CreateBanner]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "change banners")
    return json_response(call.store.update_banner(call.value("id", int), call.body, call.who))


async def enable_banner(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "change banners")
    return json_response(call.store.switch_banner(call.value("id", int), True, call.who))


async def disable_banner(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "change banners")
    return json_response(call.store.switch_banner(call.value("id", int), False, call.who))


async def delete_banner(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "change banners")
    call.store.delete_banner(call.value("id", int), call.who)
    return Response(status_code=200)


BANNERS_PATH, BANNER = "/api/admin/banners", "/api/admin/banners/{id}"

AREA = Area(
    "Banners",
    (
        Endpoint("GET", BANNERS_PATH, list_banners, ok(m.Banners)),
        Endpoint("POST", BANNERS_PATH, create_banner, ok(m.Banner, 400, 415, status=201),
                 body=m.CreateBanner),
        Endpoint("PUT", BANNER, update_banner, ok(m.Banner, 400, 404, 415),
                 body=m.CreateBanner, params=(PATH_ID,)),
        Endpoint("POST", BANNER + "/on", enable_banner, ok(m.Banner, 400, 404),
                 params=(PATH_ID,)),
        Endpoint("POST", BANNER + "/off", disable_banner, ok(m.Banner, 400, 404),
                 params=(PATH_ID,)),
        Endpoint("DELETE", BANNER, delete_banner, no_body(200, "Deleted", 400, 404),
                 params=(PATH_ID,)),
    ),
)  # fmt: skip
