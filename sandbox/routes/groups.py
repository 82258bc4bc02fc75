"""Groups (left out of the app when it serves none, as open-source Unleash: 404). Reading one,
updating and deleting answer as Unleash Enterprise does: see `sandbox.store.groups`."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE


async def list_groups(call: Call[None]) -> Response:
    return json_response(call.store.list_groups())


async def create_group(call: Call[m.CreateGroup]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "create groups")
    return json_response(call.store.create_group(call.body, call.who), 201)


async def get_group(call: Call[None]) -> Response:
    """Read as the list is: by any admin-API token (the Admin root role is for changes)."""
    return json_response(call.store.get_group(call.value("id", int)))


async def update_group(call: Call[m.CreateGroup]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "update groups")
    return json_response(call.store.update_group(call.value("id", int), call.body, call.who))


async def delete_group(call: Call[None]) -> Response:
    """200 with no body, as Unleash Enterprise answers (also for an id it does not know)."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "delete groups")
    call.store.delete_group(call.value("id", int), call.who)
    return Response(status_code=200)


GROUPS, GROUP = "/api/admin/groups", "/api/admin/groups/{id}"

AREA = Area(
    "groups",
    (
        Endpoint("GET", GROUPS, list_groups, ok(m.GroupList)),
        Endpoint("POST", GROUPS, create_group, ok(m.Group, 400, 409, 415, status=201),
                 body=m.CreateGroup),
        Endpoint("GET", GROUP, get_group, ok(m.Group, 400, 404), params=(PATH_ID,)),
        Endpoint("PUT", GROUP, update_group, ok(m.Group, 400, 404, 409, 415),
                 body=m.CreateGroup, params=(PATH_ID,)),
        Endpoint("DELETE", GROUP, delete_group, no_body(200, "Deleted", 400), params=(PATH_ID,)),
    ),
)  # fmt: skip
