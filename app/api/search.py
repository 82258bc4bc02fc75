"""Archived features through the feature search API, for servers without the spec's
`GET /api/admin/archive/features/:projectId` (removed in Unleash 7.0): the pages read until
`total`, and each search item mapped onto the spec's archived-feature shape."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from app.api.models import (
    ArchivedFeature,
    ArchivedFeatureEnvironment,
    ArchivedFeatures,
    SearchFeature,
    SearchFeatures,
)
from app.registry import version_tuple

SEARCH_PATH = "/api/admin/search/features"
#: page size (the search API is limited to about 15 requests a minute)
SEARCH_PAGE = 500

#: reads one page: `GET SEARCH_PATH` with these query parameters
PageReader = Callable[[Mapping[str, str]], Awaitable[SearchFeatures]]


#: from this Unleash release on the search API filters by `lifecycle=IS:archived`, and
#: `archived=IS:true` (there since 6.4; 5.12 ignores it and lists live flags) is deprecated
LIFECYCLE_SINCE = (8, 0, 1)


def archived_filter(server_version: str) -> dict[str, str]:
    """The search API's filter for archived flags that a server of this version has."""
    found = version_tuple(server_version)
    if found is not None and found >= LIFECYCLE_SINCE:
        return {"lifecycle": "IS:archived"}
    return {"archived": "IS:true"}


async def archived_by_search(
    read_page: PageReader, project: str, server_version: str = ""
) -> ArchivedFeatures:
    """Every archived feature of `project`, page by page, newest archived first (as the spec's
    endpoint lists them), filtered as a server of `server_version` has it (`archived_filter`)."""
    features: list[ArchivedFeature] = []
    offset = 0
    while True:
        page = await read_page(
            {
                "project": f"IS:{project}",
                **archived_filter(server_version),
                "offset": str(offset),
                "limit": str(SEARCH_PAGE),
                "sortBy": "createdAt",
                "sortOrder": "asc",
            }
        )
        features.extend(archived_from_search(item) for item in page.features)
        offset += len(page.features)
        if not page.features:
            break
        if page.total is not None and offset >= page.total:
            break
        if page.total is None and len(page.features) < SEARCH_PAGE:
            break  # no total given: a short page is the last one
    features.sort(key=lambda f: f.archivedAt.timestamp() if f.archivedAt else 0, reverse=True)
    return ArchivedFeatures(version=1, features=features)


def archived_from_search(item: SearchFeature) -> ArchivedFeature:
    """A search-API item in the spec's archived-feature shape."""
    environments = [
        ArchivedFeatureEnvironment(name=env.name, lastSeenAt=env.lastSeenAt, enabled=env.enabled)
        for env in item.environments
    ]
    seen = [env.lastSeenAt for env in item.environments if env.lastSeenAt is not None]
    fields: dict[str, Any] = {
        "name": item.name,
        "type": item.type,
        "description": item.description,
        "project": item.project,
        "stale": item.stale,
        "impressionData": item.impressionData,
        "createdAt": item.createdAt,
        "archivedAt": item.archivedAt,
        "lastSeenAt": max(seen) if seen else None,
        "environments": environments,
    }
    return ArchivedFeature(**fields)
