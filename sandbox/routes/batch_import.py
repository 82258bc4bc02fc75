"""The batch import, `POST /api/admin/features-batch/validate` and `/import` (open source
since Unleash 4.22): what `sandbox.store.batch_import` says. Validate takes any admin-side
token; import refuses the admin API token (400 BadDataError, Unleash's words and link, on
every release) and wants a user who may change flags (Admin or Editor: a personal access
token or a service account's). The releases' schemas differ (`sandbox.versions`): before 7.0
`data.links` is an additional property, on 5.x a tag type's `color` too."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import Area, Call, Endpoint, RequestInvalid
from sandbox.store import ADMIN_ROLE, EDITOR_ROLE, Refusal
from sandbox.store.users import bad_data
from sandbox.versions import Played

WRITERS = (ADMIN_ROLE, EDITOR_ROLE)


def _extra(loc: tuple[str | int, ...]) -> dict[str, Any]:
    return {"type": "extra_forbidden", "loc": ("body", *loc),
            "msg": "Extra inputs are not permitted", "input": None}  # fmt: skip


def _schema_of_release(query: m.ImportQuery, played: Played | None) -> None:
    """The played release's schema: 400 for what it does not take."""
    if played is None:
        return
    errors = []
    if not played.import_takes_links and "links" in query.data.model_fields_set:
        errors.append(_extra(("data", "links")))
    if not played.import_takes_tag_type_colour:
        tag_types = query.data.tagTypes
        errors += [_extra(("data", "tagTypes", i, "color"))
                   for i, t in enumerate(tag_types) if "color" in t.model_fields_set]  # fmt: skip
    if errors:
        raise RequestInvalid(errors)


def admin_token_refused(played: Played | None) -> Refusal:
    """Unleash's refusal of an import sent with an admin API token."""
    docs = "concepts" if played is None else played.import_docs
    message = (
        "You can't use an admin token to import features. Please use either a personal "
        f"access token (https://docs.getunleash.io/{docs}/api-tokens-and-client-keys"
        f"#personal-access-tokens) or a service account (https://docs.getunleash.io/{docs}"
        "/service-accounts)."
    )
    return bad_data(message)


async def validate(call: Call[m.ImportQuery]) -> Response:
    _schema_of_release(call.body, call.played)
    return json_response(call.store.validate_import(call.body))


async def import_features(call: Call[m.ImportQuery]) -> Response:
    _schema_of_release(call.body, call.played)
    if call.who.kind == "admin":
        raise admin_token_refused(call.played)
    require_root(call.store, call.who, WRITERS, "import flags")
    played = call.played
    word = "Active project" if played is None else played.import_project_word
    keeps = played is not None and played.import_keeps_description
    call.store.import_features(call.body, call.who, project_word=word, keeps_description=keeps)
    return Response(status_code=200)


AREA = Area(
    "Import",
    (
        Endpoint("POST", "/api/admin/features-batch/validate", validate,
                 ok(m.ImportValidation, 400, 415), body=m.ImportQuery),
        Endpoint("POST", "/api/admin/features-batch/import", import_features,
                 no_body(200, "Imported: no body", 400, 404, 415), body=m.ImportQuery),
    ),
)  # fmt: skip
