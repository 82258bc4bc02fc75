"""The capability probe's requests (listed in `app.api.capabilities`), sent concurrently through
the client's public reads; `capabilities_of` then decides from the answers.

Typed against `ProbeClient`, the few public members of `AdminClient` it uses, so this module does
not import the client (which imports it)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Mapping
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel

from app.api import errors as e
from app.api.capabilities import Capabilities, ProbeOutcomes, capabilities_of
from app.api.models import (
    ArchivedFeatures,
    Banners,
    CurrentUser,
    GroupList,
    PersonalDashboardProjectDetails,
    ProjectAccess,
    RoleList,
    ServiceAccounts,
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
    RoleList,
    ServiceAccounts,
    Banners,
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


def _started(awaitable: Awaitable[T]) -> asyncio.Future[T | e.ClientError]:
    """One of the probe's reads, sent now; its outcome (an answer or a `ClientError`) is kept."""
    return asyncio.ensure_future(_outcome(awaitable))


class _Reads(NamedTuple):
    """The probe's reads besides the first, each keeping its own answer's type (more than six
    awaitables given to `asyncio.gather` at once lose theirs)."""

    user: asyncio.Future[CurrentUser | e.ClientError]
    groups: asyncio.Future[GroupList | e.ClientError]
    archive: asyncio.Future[ArchivedFeatures | e.ClientError]
    dashboard: asyncio.Future[PersonalDashboardProjectDetails | e.ClientError]
    metrics: asyncio.Future[None | e.ClientError]
    roles: asyncio.Future[RoleList | e.ClientError]
    service_accounts: asyncio.Future[ServiceAccounts | e.ClientError]
    project_access: asyncio.Future[ProjectAccess | e.ClientError]
    banners: asyncio.Future[Banners | e.ClientError]


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
    reads = _Reads(
        user=_started(client.current_user()),
        groups=_started(client.get("/api/admin/groups", GroupList)),
        archive=_started(
            client.get(f"/api/admin/archive/features/{PROBE_PROJECT}", ArchivedFeatures)
        ),
        dashboard=_started(
            client.get("/api/admin/personal-dashboard/default", PersonalDashboardProjectDetails)
        ),
        metrics=_started(client.send_bulk_metrics(EMPTY_BULK))
        if client.has_client_token
        else _started(_none()),
        # issue 36: the roles, the service accounts (Unleash Enterprise; 404 on open source)
        # and project access (Pro and Enterprise), the route there whatever it says of the
        # project nobody uses
        roles=_started(client.get("/api/admin/roles", RoleList)),
        service_accounts=_started(client.get("/api/admin/service-account", ServiceAccounts)),
        project_access=_started(
            client.get(f"/api/admin/projects/{PROBE_PROJECT}/access", ProjectAccess)
        ),
        # issue 38: banners (Unleash Enterprise 5.7+; 404 on open source)
        banners=_started(client.get("/api/admin/banners", Banners)),
    )
    rest = asyncio.gather(*reads)
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
    for outcome in await rest:
        if isinstance(outcome, e.ServerUnreachable):
            raise outcome
    return ProbeOutcomes(
        base_url=client.base_url,
        has_client_token=client.has_client_token,
        token_prefix=client.token_prefix,
        ui=ui,
        user=reads.user.result(),
        groups=reads.groups.result(),
        archive=reads.archive.result(),
        dashboard=reads.dashboard.result(),
        metrics=reads.metrics.result(),
        roles=reads.roles.result(),
        service_accounts=reads.service_accounts.result(),
        project_access=reads.project_access.result(),
        banners=reads.banners.result(),
    )


async def probe(client: ProbeClient) -> Capabilities:
    """Find out what `client`'s server and token can do.

    Raises `ServerUnreachable` when there is no server, `Unauthorized` when the token is not
    accepted anywhere, and `BadResponse` when what answers is not an Unleash-compatible server."""
    return capabilities_of(await probe_outcomes(client))
