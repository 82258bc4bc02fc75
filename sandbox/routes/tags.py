"""Tag types, tags and a flag's tags, as Unleash 8.2 answers (Admin or Editor root role for
changes)."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import CHANGERS, require_root
from sandbox.routes.endpoint import Area, Call, Endpoint


async def list_tag_types(call: Call[None]) -> Response:
    return json_response(call.store.list_tag_types())


async def create_tag_type(call: Call[m.TagTypeBody]) -> Response:
    require_root(call.store, call.who, CHANGERS, "create tag types")
    tag_type = call.store.create_tag_type(call.body, call.who)
    response = json_response(tag_type, 201)
    response.headers["location"] = f"tag-types/{tag_type.name}"
    return response


async def validate_tag_type(call: Call[m.TagTypeBody]) -> Response:
    call.store.validate_tag_type(call.body)
    sent = m.TagType(**call.body.model_dump(exclude_unset=True))
    return json_response(m.ValidateTagType(valid=True, tagType=sent))


async def get_tag_type(call: Call[None]) -> Response:
    return json_response(call.store.get_tag_type(call.path("name")))


async def update_tag_type(call: Call[m.UpdateTagType]) -> Response:
    require_root(call.store, call.who, CHANGERS, "update tag types")
    call.store.update_tag_type(call.path("name"), call.body, call.who)
    return Response(status_code=200)


async def delete_tag_type(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "delete tag types")
    call.store.delete_tag_type(call.path("name"), call.who)
    return Response(status_code=200)


async def list_tags(call: Call[None]) -> Response:
    return json_response(call.store.list_tags())


async def tags_of_type(call: Call[None]) -> Response:
    return json_response(call.store.list_tags(call.path("type")))


async def get_tag(call: Call[None]) -> Response:
    return json_response(call.store.get_tag(call.path("type"), call.path("value")))


async def create_tag(call: Call[m.CreateTag]) -> Response:
    require_root(call.store, call.who, CHANGERS, "create tags")
    answer = call.store.create_tag(call.body, call.who)
    response = json_response(answer, 201)
    response.headers["location"] = f"tags/{answer.tag.type}/{answer.tag.value}"
    return response


async def delete_tag(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "delete tags")
    call.store.delete_tag(call.path("type"), call.path("value"), call.who)
    return Response(status_code=200)


async def feature_tags(call: Call[None]) -> Response:
    return json_response(call.store.feature_tags(call.path("featureName")))


async def tag_feature(call: Call[m.TagBody]) -> Response:
    require_root(call.store, call.who, CHANGERS, "tag flags")
    name = call.path("featureName")
    response = json_response(call.store.tag_feature(name, call.body, call.who), 201)
    response.headers["location"] = f"{name}/tags"
    return response


async def update_feature_tags(call: Call[m.UpdateTags]) -> Response:
    require_root(call.store, call.who, CHANGERS, "tag flags")
    return json_response(
        call.store.update_feature_tags(
            call.path("featureName"), call.body.addedTags, call.body.removedTags, call.who
        )
    )


async def untag_feature(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "tag flags")
    call.store.untag_feature(
        call.path("featureName"), call.path("type"), call.path("value"), call.who
    )
    return Response(status_code=200)


TAG_TYPES, TAG_TYPE = "/api/admin/tag-types", "/api/admin/tag-types/{name}"
TAGS, FEATURE_TAGS = "/api/admin/tags", "/api/admin/features/{featureName}/tags"

AREA = Area(
    "tags",
    (
        Endpoint("GET", TAG_TYPES, list_tag_types, ok(m.TagTypes)),
        Endpoint(
            "POST",
            TAG_TYPES,
            create_tag_type,
            ok(m.TagType, 400, 409, 415, status=201),
            body=m.TagTypeBody,
        ),
        Endpoint(
            "POST",
            TAG_TYPES + "/validate",
            validate_tag_type,
            ok(m.ValidateTagType, 400, 409, 415),
            body=m.TagTypeBody,
        ),
        Endpoint("GET", TAG_TYPE, get_tag_type, ok(m.TagTypeWithVersion, 404)),
        Endpoint(
            "PUT",
            TAG_TYPE,
            update_tag_type,
            no_body(200, "Updated", 400, 415),
            body=m.UpdateTagType,
        ),
        Endpoint("DELETE", TAG_TYPE, delete_tag_type, no_body(200, "Deleted", 404)),
        Endpoint("GET", TAGS, list_tags, ok(m.Tags)),
        Endpoint(
            "POST",
            TAGS,
            create_tag,
            ok(m.TagWithVersion, 400, 409, 415, status=201),
            body=m.CreateTag,
        ),
        Endpoint("GET", TAGS + "/{type}", tags_of_type, ok(m.Tags)),
        Endpoint("GET", TAGS + "/{type}/{value}", get_tag, ok(m.TagWithVersion, 404)),
        Endpoint("DELETE", TAGS + "/{type}/{value}", delete_tag, no_body(200, "Deleted")),
        Endpoint("GET", FEATURE_TAGS, feature_tags, ok(m.Tags, 404)),
        Endpoint(
            "POST",
            FEATURE_TAGS,
            tag_feature,
            ok(m.TagItem, 400, 404, 415, status=201),
            body=m.TagBody,
        ),
        Endpoint(
            "PUT", FEATURE_TAGS, update_feature_tags, ok(m.Tags, 400, 404, 415), body=m.UpdateTags
        ),
        Endpoint(
            "DELETE", FEATURE_TAGS + "/{type}/{value}", untag_feature, no_body(200, "Removed", 404)
        ),
    ),
)
