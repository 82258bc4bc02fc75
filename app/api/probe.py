"""The capability probe's requests (listed in `app.api.capabilities`), sent concurrently through
the client's public reads; `capabilities_of` then decides from the answers.

Typed against `ProbeClient`, the few public members of `AdminClient` it uses, so this module does
not import the client (which imports it)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Mapping
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

from app.api import errors as e
from app.api.capabilities import Capabilities, ProbeOutcomes, capabilities_of
from app.api.models import (
    ArchivedFeatures,
    CurrentUser,
    GroupList,
    PersonalDashboardProjectDetails,
    ProjectAccess,
    UiConfig,
)

#: a project id no one has, so the archive probe reads nothing
PROBE_PROJECT = "flagdesk-capability-probe"
EMPTY_BULK = b'{"applications":[],"metrics":[]}'

#: the answers the probe reads (`app.api.client.warm_up_steps` builds their validators early)
PROBE_ANSWERS: tuple[type[BaseModel], ...] = (
    UiConfig,
    CurrentUser,
    GroupList,
    ArchivedFeatures,
    PersonalDashboardProjectDetails,
    ProjectAccess,
)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class ProbeClient(Protocol):
    @property
    def base_url(self) -> str: ...

    @property
    def has_client_token(self) -> bool: ...

    @property
    def token_prefix(self) -> str: ...

    async def get(
        self, path: str, model: type[M], *, params: Mapping[str, str] | None = None
    ) -> M: ...

    async def current_user(self) -> CurrentUser: ...

    async def send_bulk_metrics(
        self, batch: bytes, *, retry: bool = True, token: Literal["client", "main"] = "client"
    ) -> None: ...


async def _outcome(awaitable: Awaitable[T]) -> T | e.ClientError:
    try:
        return await awaitable
    except e.ClientError as error:
        return error


async def _none() -> None:
    return None


async def _dropped(rest: asyncio.Future[Any]) -> None:
    """Stop the probe's other reads, and wait until they have stopped: none is left running
    (nor an answer of theirs unread) once the probe has ended."""
    rest.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await rest


async def probe_outcomes(client: ProbeClient) -> ProbeOutcomes:
    """Send the probe's requests. Raises `ServerUnreachable` when there is no server (any request
    found none), and what the first request raised when it is not merely the wrong token type."""
    # the other reads go out with the first rather than after it: one round trip instead of
    # two on the way to the window's first data. They read nothing and store nothing (an empty
    # metrics batch), so when the first answer ends the probe, what they found is dropped.
    rest = asyncio.gather(
        _outcome(client.current_user()),
        _outcome(client.get("/api/admin/groups", GroupList)),
        _outcome(client.get(f"/api/admin/archive/features/{PROBE_PROJECT}", ArchivedFeatures)),
        _outcome(
            client.get("/api/admin/personal-dashboard/default", PersonalDashboardProjectDetails)
        ),
        _outcome(client.send_bulk_metrics(EMPTY_BULK)) if client.has_client_token else _none(),
        # project access (Pro and Enterprise): the route is there, whatever it says of the
        # project nobody uses
        _outcome(client.get(f"/api/admin/projects/{PROBE_PROJECT}/access", ProjectAccess)),
    )
    try:
        ui = await client.get("/api/admin/ui-config", UiConfig)
    except e.WrongTokenType:
        await _dropped(rest)
        # a client token? The metrics endpoint must take it (an empty batch stores nothing)
        await client.send_bulk_metrics(EMPTY_BULK, token="main")
        return ProbeOutcomes(client.base_url, client.has_client_token, client.token_prefix, None)
    except BaseException:
        await _dropped(rest)
        raise
    user, groups, archive, dashboard, metrics, project_access = await rest
    for outcome in (user, groups, archive, dashboard, metrics, project_access):
        if isinstance(outcome, e.ServerUnreachable):
            raise outcome
    return ProbeOutcomes(
        base_url=client.base_url,
        has_client_token=client.has_client_token,
        token_prefix=client.token_prefix,
        ui=ui,
        user=user,
        groups=groups,
        archive=archive,
        dashboard=dashboard,
        metrics=metrics,
        project_access=project_access,
    )


async def probe(client: ProbeClient) -> Capabilities:
    """Find out what `client`'s server and token can do.

    Raises `ServerUnreachable` when there is no server, `Unauthorized` when the token is not
    accepted anywhere, and `BadResponse` when what answers is not an Unleash-compatible server."""
    return capabilities_of(await probe_outcomes(client))
