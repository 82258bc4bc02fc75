"""`AdminClient`: the admin API of one server over one `httpx.AsyncClient`.

One instance per connection, shared by every view-model and command; close it with
`await client.aclose()` (or use it as an async context manager). Every method returns a wire
model from `app.api.models` or raises a `ClientError` (see `app.api.errors`). No Qt here.

This module holds the operations and reads answers into models (large lists streamed, see
`app.api.streaming`). The other jobs live beside it, one module each: sending with retries
(`app.api.sending`, the `Sender` base class), turning answers and transport failures into errors
(`app.api.failures`), reading HTML error pages (`app.api.html_pages`), archived features through
the search API (`app.api.search`), the event log's paging and filters (`app.api.events`), and
the capability probe (`app.api.probe`).

- What the server and the token can do is probed once (`capabilities()`); operations the probe
  found impossible raise `Unsupported` without sending anything, so a window that retries does not
  hammer a server that has no such endpoint.
- The token travels only in the `Authorization` header. It is kept out of `repr()`, logs and
  every error text, even when a server echoes it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import typing
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from app import logs
from app.api import errors as e
from app.api import models  # promote (issue 37, slice 6): its request bodies
from app.api.capabilities import Capabilities
from app.api.events import (
    SEARCH_BY_BODY_PATH,
    SEARCH_EVENTS_PATH,
    EventFilter,
    PageReader,
    decode_page,
    way_of,
)
from app.api.events import pages as event_pages
from app.api.failures import bad_response, not_json
from app.api.models import (
    AccessOverview,
    AddProjectAccess,
    AdminCount,
    AdminPermissions,
    ApiToken,
    ApiTokenList,
    ArchivedFeature,
    ArchivedFeatures,
    BatchFeatures,
    BulkMetrics,
    ContextField,
    ContextFieldStrategies,
    CreateApiToken,
    CreateContextField,
    CreatedPersonalAccessToken,
    CreateFeature,
    CreateFeatureStrategy,
    CreateGroup,
    CreatePersonalAccessToken,
    CreateRole,
    CreateServiceAccount,
    CreateUser,
    CurrentUser,
    DependenciesExist,
    Environments,
    EnvironmentsProject,
    ExportQuery,
    ExportResult,
    Feature,
    FeatureList,
    FeatureMetricsRaw,
    FeatureStrategies,
    FeatureStrategy,
    FeatureUsage,
    FeatureVariants,
    Group,
    GroupList,
    Health,
    Ids,
    ImportQuery,
    ImportValidation,
    InactiveUser,
    InactiveUsers,
    ParentFeatureOptions,
    PersonalAccessTokens,
    PersonalDashboardProjectDetails,
    ProjectAccess,
    ProjectList,
    ProjectRoles,
    ProjectRoleUsages,
    ResetPasswordLink,
    ResetPasswordRequest,
    Role,
    RoleAnswer,
    RoleList,
    RoleWithPermissions,
    SearchFeatures,
    Segments,
    SegmentStrategies,
    ServiceAccount,
    ServiceAccounts,
    StrategyDefinitions,
    Tags,
    TagTypes,
    UiConfig,
    UpdateApiToken,
    UpdateContextField,
    UpdateServiceAccount,
    UpdateUser,
    User,
    UserList,
    Variant,
)
from app.api.probe import PROBE_ANSWERS, probe
from app.api.search import SEARCH_PATH, archived_by_search
from app.api.sending import RetryPolicy, Sender, normalise_base_url
from app.api.wire import BATCH_BODY_LIMIT
from app.registry import (
    ARCHIVE_FEATURES,
    CREATE_API_TOKEN,
    CREATE_BANNER,
    CREATE_CONTEXT_FIELD,
    CREATE_PAT,
    CREATE_ROLE,
    CREATE_SERVICE_ACCOUNT,
    CREATE_SERVICE_ACCOUNT_TOKEN,
    DELETE_API_TOKEN,
    DELETE_BANNER,
    DELETE_CONTEXT_FIELD,
    DELETE_FEATURE,
    DELETE_FEATURES,
    DELETE_GROUP,
    DELETE_INACTIVE_USERS,
    DELETE_PAT,
    DELETE_ROLE,
    DELETE_SERVICE_ACCOUNT,
    DELETE_SERVICE_ACCOUNT_TOKEN,
    DELETE_USER,
    EDIT_BANNER,
    EDIT_CONTEXT_FIELD,
    EDIT_GROUP,
    EDIT_ROLE,
    EDIT_SERVICE_ACCOUNT,
    EXPIRE_API_TOKEN,
    IMPORT,
    LOGINS,
    PERSONAL_TOKENS,
    RESET_PASSWORD,
    REVIVE_FEATURE,
    REVIVE_FEATURES,
    SERVICE_ACCOUNTS,
    SET_CORS,
    SWITCH_MAINTENANCE,
    Action,
    version_tuple,
)

if TYPE_CHECKING:
    from app.api.exported import Exported
from app.startup import paused_gc

#: how much longer than usual the answer to deleting inactive users may take, a user: Unleash
#: deletes them one by one before it answers (8.2 on the peer: 40 s for 1,000)
DELETE_S_PER_USER = 0.1

#: what other modules import from here: the client, and the two things its constructor and its
#: callers' URLs need (they live in `app.api.sending`)
__all__ = [
    "AdminClient",
    "RetryPolicy",
    "WriteRequest",
    "archive_features_request",
    "bulk_metrics_bytes",
    "create_api_token_request",
    "create_context_field_request",
    "create_pat_request",
    "create_role_request",
    "create_service_account_request",
    "create_service_account_token_request",
    "delete_api_token_request",
    "delete_context_field_request",
    "delete_feature_request",
    "delete_features_request",
    "delete_inactive_users_request",
    "delete_pat_request",
    "delete_role_request",
    "delete_service_account_request",
    "delete_service_account_token_request",
    "expire_api_token_request",
    "normalise_base_url",
    "revive_feature_request",
    "revive_features_request",
    "secret_tail",
    "update_context_field_request",
    "update_role_request",
    "update_service_account_request",
]

#: bodies larger than this are decoded on a worker thread and validated a slice at a time
THREAD_PARSE_BYTES = 128 * 1024
#: a slice of a large body's list holds about this much of its JSON (a few ms of validation:
#: 1,000 small items, or 25 groups with their members; 501 projects held the window 40 ms
#: when validated in one call), and at most PARSE_SLICE items
SLICE_BYTES = 64 * 1024
PARSE_SLICE = 1000

log = logging.getLogger("flagdesk.api")

_user_id = attrgetter("id")

M = TypeVar("M", bound=BaseModel)


class AdminClient(Sender):
    """The admin API (and the bulk-metrics endpoint) of one server.

    `token` is the admin-side token: an admin API token or a personal access token.
    `client_token`, when given, is used for `/api/client/*` (bulk metrics), which real servers
    refuse to admin and personal tokens.
    """

    _capabilities: Capabilities | None = None
    _probe_lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        return f"AdminClient(base_url={self.base_url!r})"

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ capabilities

    async def capabilities(self, *, refresh: bool = False) -> Capabilities:
        """What this server and token can do; probed on first use (a handful of small requests,
        sent concurrently) and remembered for the life of the client."""
        if self._probe_lock is None:
            self._probe_lock = asyncio.Lock()
        async with self._probe_lock:
            if self._capabilities is None or refresh:
                self._capabilities = await probe(self)
            return self._capabilities

    @property
    def known_capabilities(self) -> Capabilities | None:
        """The capabilities if they were probed already, without probing."""
        return self._capabilities

    async def _require(self, operation: str | Action) -> Capabilities:
        """The capabilities, once they say this tool (by key) or action can be used here;
        `Unsupported`, saying why, when they do not (nothing is sent)."""
        caps = await self.capabilities()
        if isinstance(operation, Action):
            availability = caps.action(operation)
        else:
            availability = caps.operation(operation)
        if not availability.available:
            raise e.Unsupported(availability.title, availability.reason)
        return caps

    # ------------------------------------------------------------------ server

    async def health(self) -> Health:
        """`GET /health` (no token needed, but sending it does no harm)."""
        return await self.get("/health", Health)

    async def ui_config(self) -> UiConfig:
        """`GET /api/admin/ui-config`: server name and version."""
        return await self.get("/api/admin/ui-config", UiConfig)

    async def current_user(self) -> CurrentUser:
        """`GET /api/admin/user`: who the token acts as, and its permissions."""
        return await self.get("/api/admin/user", CurrentUser)

    # ------------------------------------------------------------------ users

    async def list_users(self) -> UserList:
        """`GET /api/admin/user-admin`: users and root roles (needs the Admin root role)."""
        return await self.get("/api/admin/user-admin", UserList)

    async def get_user(self, user_id: int) -> User:
        return await self.get(f"/api/admin/user-admin/{int(user_id)}", User)

    async def create_user(self, user: CreateUser, *, wait_out_limit: bool = True) -> User:
        """`POST /api/admin/user-admin` (the action `users.create`): 201 with the user. Servers
        limit creation (Unleash: 20 a minute): a 429 is waited out here as `Retry-After` says,
        unless `wait_out_limit` is False, which raises `RateLimited` at once (for a caller that
        waits itself, showing how long)."""
        request = create_user_request(user)
        response = await self._send_write(request, attempts=None if wait_out_limit else 1)
        return await self._parse(response, User, f"{request.method} {request.public_path}")

    async def delete_user(self, user_id: int) -> int:
        """`DELETE /api/admin/user-admin/:id` (the action `users.delete`): the answer's status
        (200, no body); `NotFound` for an unknown id. Unleash deletes any user it is asked to,
        the last admin included: callers check `admin_count()` first."""
        await self._require(DELETE_USER)
        return (await self._send_write(delete_user_request(user_id))).status_code

    async def admin_count(self) -> AdminCount:
        """`GET /api/admin/user-admin/admin-count`: how many admins there are, by kind."""
        return await self.get("/api/admin/user-admin/admin-count", AdminCount)

    async def reset_password_link(self, email: str) -> ResetPasswordLink:
        """`POST /api/admin/user-admin/reset-password` `{id: email}` (the action
        `users.reset_password`): a link for the user to choose a new password. Unleash 8.2
        looks the user up by email (`NotFound` for none) and makes one link a minute for each
        user (`RateLimited` for a second)."""
        await self._require(RESET_PASSWORD)
        request = reset_password_request(email)
        response = await self._send_write(request, attempts=1)
        return await self._parse(response, ResetPasswordLink, f"POST {request.path}")

    async def update_user(self, user_id: int, changes: UpdateUser) -> User:
        """Operation 2, `PUT /api/admin/user-admin/:id`: sends only the fields set on `changes`."""
        return await self._write(
            "PUT", f"/api/admin/user-admin/{int(user_id)}", changes, User, only_set=True
        )

    async def inactive_users(
        self, *, on_items: Callable[[list[InactiveUser]], None] | None = None
    ) -> InactiveUsers:
        """Operation 6, `GET /api/admin/user-admin/inactive`: users with no login in 180 days,
        one entry per user (Unleash 8.2 can list a user once per old personal access token).

        With `on_items`, the users are handed to it a piece at a time as they arrive (a window
        builds its rows meanwhile) and the result's list stays empty."""
        seen: set[int] = set()
        dropped = 0

        def unique(users: list[InactiveUser]) -> list[InactiveUser]:
            nonlocal dropped
            ids = list(map(_user_id, users))
            if seen.isdisjoint(ids) and len(set(ids)) == len(ids):  # the usual case: in C
                seen.update(ids)
                return users
            kept = []
            for user in users:
                if user.id not in seen:
                    seen.add(user.id)
                    kept.append(user)
            dropped += len(users) - len(kept)
            return kept

        def take(users: list[InactiveUser]) -> None:
            if on_items is not None:
                on_items(unique(users))

        result = await self._get_streamed(
            "/api/admin/user-admin/inactive",
            InactiveUsers,
            "inactiveUsers",
            on_items=take if on_items is not None else None,
        )
        if on_items is None:
            result.inactiveUsers = unique(result.inactiveUsers)
        if dropped:
            log.debug("inactive users: dropped %d duplicates", dropped)
        return result

    async def delete_inactive_users(self, ids: Iterable[int]) -> int:
        """`POST /api/admin/user-admin/inactive/delete` `{ids}` (the action
        `inactive_users.delete`); returns the answer's status (200, no body).

        What the server does with the ids is the server's: Unleash 8.2 deletes every user it is
        given but the caller, inactive or not, and stops at the first id that names no user with
        a 404 (`NotFound`), the users before it deleted. So callers send ids they have just read
        from `inactive_users()`. Sent once (a write is retried only when the server certainly
        did not get it). Unleash deletes the users one by one before it answers (8.2 on the
        peer: 1.2 s for 100, 40 s for 1,000), so the answer may take `DELETE_S_PER_USER` a user
        beyond the client's usual time (the request says so: `server_seconds`)."""
        await self._require(DELETE_INACTIVE_USERS)
        return (await self._send_write(delete_inactive_users_request(ids))).status_code

    async def send_write(self, request: WriteRequest, *, attempts: int | None = None) -> Answer:
        """Send the write `request` (the runner's one way to change a server:
        `app.actions.runner.carry_out`, which has checked that its action can be used here) and
        return the server's answer, its body unread into a model (`read_answer` does that once
        the journal has the status). A failure status raises its `ApiError`."""
        return Answer(request, await self._send_write(request, attempts=attempts))

    async def read_answer(self, answer: Answer, model: type[M]) -> M:
        """The body of `answer` as `model` (`BadResponse` when it is not one)."""
        request = answer.request
        return await self._parse(answer.response, model, f"{request.method} {request.public_path}")

    async def _send_write(
        self, request: WriteRequest, *, attempts: int | None = None
    ) -> httpx.Response:
        """Send a write exactly as `request` says (what --dry-run printed and the journal
        recorded; built by one of this module's `*_request` functions), JSON when it has a
        body; retried only when the server certainly did not get it (`attempts` as `_send`
        takes it); given `request.server_seconds` more than the usual time to answer."""
        headers = {"Content-Type": "application/json"} if request.body else None
        read_timeout = (
            self.read_timeout + request.server_seconds if request.server_seconds else None
        )
        if request.secret:  # httpx logs the URL it sends (--verbose)
            logs.register_secret(request.secret)
        return await self._send(request.method, request.path, content=request.body or None,
                                headers=headers, idempotent=False, attempts=attempts,
                                read_timeout=read_timeout, shown_path=request.shown_path,
                                path_secret=request.secret)  # fmt: skip

    # ------------------------------------------------------------------ groups

    async def list_groups(self) -> GroupList:
        """`GET /api/admin/groups` (Unleash Enterprise and the sandbox)."""
        await self._require("groups")
        return await self.get("/api/admin/groups", GroupList)

    async def create_group(self, group: CreateGroup) -> Group:
        """Operation 1, `POST /api/admin/groups`."""
        await self._require("groups")
        return await self.read_answer(await self.send_write(create_group_request(group)), Group)

    async def get_group(self, group_id: int) -> Group:
        """`GET /api/admin/groups/:id`: the group with its members (404 `NotFound` for an id
        the server does not know)."""
        await self._require("groups")
        return await self.get(f"/api/admin/groups/{int(group_id)}", Group)

    async def update_group(self, group_id: int, group: CreateGroup) -> Group:
        """`PUT /api/admin/groups/:id` (the action `groups.edit`): every field replaced, the
        nulls sent as nulls (no root role, no description). Unleash 8.2 answers the group
        without its members (groupWriteResponseSchema): `get_group` reads them. 409 `Conflict`
        for a name another group has, 400 `BadRequest`, 404 `NotFound`."""
        await self._require(EDIT_GROUP)
        request = update_group_request(group_id, group)
        return await self.read_answer(await self.send_write(request), Group)

    async def delete_group(self, group_id: int) -> int:
        """`DELETE /api/admin/groups/:id` (the action `groups.delete`); the answer's status
        (200, no body: Unleash answers the same for an id it does not know)."""
        await self._require(DELETE_GROUP)
        return (await self._send_write(delete_group_request(group_id))).status_code

    # ------------------------------------------------------------------ personal access tokens

    async def personal_tokens(self) -> PersonalAccessTokens:
        """`GET /api/admin/user/tokens`: the personal access tokens of the user behind this
        connection's token, never their secrets. Only a personal access token has a user:
        with an admin API token this is `Unsupported` and nothing is sent (Unleash answers 403
        "PATs require an authenticated user.")."""
        await self._require(PERSONAL_TOKENS.key)
        return await self.get(PATS_PATH, PersonalAccessTokens)

    async def create_personal_token(
        self, body: CreatePersonalAccessToken
    ) -> CreatedPersonalAccessToken:
        """`POST /api/admin/user/tokens` (the action `personal_tokens.create`): 201 with the
        token and its secret, the only time the server shows it; 409 `Conflict` for a
        description the user's tokens have, 400 `BadRequest` for an expiry not in the future."""
        await self._require(CREATE_PAT)
        answer = await self.send_write(create_pat_request(body))
        return await self.read_answer(answer, CreatedPersonalAccessToken)

    async def delete_personal_token(self, pat_id: int) -> int:
        """`DELETE /api/admin/user/tokens/:id` (`personal_tokens.delete`): 200 with no body; the
        token is refused from its next request. An id that is not one of the user's: 200 on
        Unleash 8, 404 `NotFound` on 5 to 7."""
        await self._require(DELETE_PAT)
        return (await self._send_write(delete_pat_request(pat_id))).status_code

    # ------------------------------------------------------------------ projects and features

    async def list_projects(self) -> ProjectList:
        """`GET /api/admin/projects`."""
        return await self.get("/api/admin/projects", ProjectList)

    async def project_features(self, project: str) -> FeatureList:
        """`GET /api/admin/projects/:projectId/features`: the project's flags, not archived."""
        return await self.get(f"/api/admin/projects/{_segment(project)}/features", FeatureList)

    async def feature_names(self) -> set[str]:
        """The name of every flag on the server that is not archived, project by project (four
        projects at a time): what the metrics tool checks a batch's feature names against, as
        Unleash stores no metrics for a name it does not know."""
        projects = (await self.list_projects()).projects
        gate = asyncio.Semaphore(4)

        async def names(project: str) -> list[str]:
            async with gate:
                return [f.name for f in (await self.project_features(project)).features]

        found = await asyncio.gather(*(names(p.id) for p in projects))
        return {name for group in found for name in group}

    async def personal_dashboard(self, project: str) -> PersonalDashboardProjectDetails:
        """Operation 4, `GET /api/admin/personal-dashboard/:projectId`. Unleash answers an admin
        API token with a 500 (no user behind it): that is `Unsupported` here, with the remedy."""
        await self._require("project_dashboard")
        return await self.get(
            f"/api/admin/personal-dashboard/{_segment(project)}", PersonalDashboardProjectDetails
        )

    async def archived_features(
        self, project: str, *, on_items: Callable[[list[ArchivedFeature]], None] | None = None
    ) -> ArchivedFeatures:
        """Operation 3: a project's archived features in the spec's shape, from every server.

        Where `GET /api/admin/archive/features/:projectId` exists it is used; where it does not
        (removed in Unleash 7.0) the search API is read page by page until `total`, and the
        items are mapped onto the spec's fields. With `on_items`, the flags are handed to it a
        piece at a time as they arrive and the result's list stays empty."""
        caps = await self.capabilities()
        if caps.archive_endpoint:
            return await self._get_streamed(
                f"/api/admin/archive/features/{_segment(project)}",
                ArchivedFeatures,
                "features",
                on_items=on_items,
            )
        await self._require("archived_features")
        result = await archived_by_search(
            lambda params: self.get(SEARCH_PATH, SearchFeatures, params=params),
            project,
            caps.server_version if caps.server_kind == "unleash" else "",
        )
        if on_items is not None:
            on_items(result.features)  # sorted only once all pages are in: one piece
            result.features = []
        return result

    async def revive_feature(self, name: str) -> int:
        """`POST /api/admin/archive/revive/:name` (the action `archived_features.revive`): 200.
        Unleash turns every environment of the revived flag off; it answers an unknown name
        with 404 and "revives" a flag that is not archived all the same (its environments
        turned off too), so callers send names they have just listed as archived."""
        await self._require(REVIVE_FEATURE)
        return (await self._send_write(revive_feature_request(name))).status_code

    async def delete_feature(self, name: str) -> int:
        """`DELETE /api/admin/archive/:name` (`archived_features.delete`): 200, the flag gone for
        good if it was archived. Unleash answers 200 as well for an unknown name or a flag that
        is not archived, and changes nothing then."""
        await self._require(DELETE_FEATURE)
        return (await self._send_write(delete_feature_request(name))).status_code

    async def revive_features(self, project: str, names: Iterable[str]) -> int:
        """`POST /api/admin/projects/:p/revive` `{features}` (`archived_features.revive_bulk`):
        one request for them all, 200. Unknown names and flags that are not archived are
        skipped; a flag of another project is a 400 and nothing is revived."""
        await self._require(REVIVE_FEATURES)
        return (await self._send_write(revive_features_request(project, names))).status_code

    async def delete_features(self, project: str, names: Iterable[str]) -> int:
        """`POST /api/admin/projects/:p/delete` `{features}` (`archived_features.delete_bulk`):
        one request, 200; only archived flags of the project are deleted."""
        await self._require(DELETE_FEATURES)
        return (await self._send_write(delete_features_request(project, names))).status_code

    async def archive_features(self, project: str, names: Iterable[str]) -> int:
        """`POST /api/admin/projects/:p/archive` `{features}` (`archived_features.archive`, the
        undo of a revive): one request, 202."""
        await self._require(ARCHIVE_FEATURES)
        return (await self._send_write(archive_features_request(project, names))).status_code

    async def create_feature(self, project: str, feature: CreateFeature) -> Feature:
        """`POST /api/admin/projects/:p/features` (a supporting route)."""
        return await self._write(
            "POST", f"/api/admin/projects/{_segment(project)}/features", feature, Feature
        )

    async def archive_feature(self, project: str, name: str) -> None:
        """`DELETE /api/admin/projects/:p/features/:name`: archives the feature."""
        await self._send(
            "DELETE",
            f"/api/admin/projects/{_segment(project)}/features/{_segment(name)}",
            idempotent=True,
        )

    async def add_strategy(
        self, project: str, feature: str, environment: str, strategy: CreateFeatureStrategy
    ) -> FeatureStrategy:
        """`POST .../features/:f/environments/:env/strategies` (a supporting route)."""
        path = (
            f"/api/admin/projects/{_segment(project)}/features/{_segment(feature)}"
            f"/environments/{_segment(environment)}/strategies"
        )
        return await self._write("POST", path, strategy, FeatureStrategy)

    # ------------------------------------------------------------------ context

    async def list_context_fields(self) -> list[ContextField]:
        """`GET /api/admin/context`."""
        response = await self._send("GET", "/api/admin/context", idempotent=True)
        return await self._parse_list(response, ContextField, "GET /api/admin/context")

    async def get_context_field(self, name: str) -> ContextField:
        """`GET /api/admin/context/:name` (404 `NotFound` for an unknown field)."""
        return await self.get(f"/api/admin/context/{_segment(name)}", ContextField)

    async def create_context_field(self, field: CreateContextField) -> int:
        """`POST /api/admin/context` (the action `context_fields.create`): 201, or 409
        `Conflict` for a name taken, 400 `BadRequest` for a body the server refuses. Returns
        the status; the field is read back with `get_context_field`."""
        await self._require(CREATE_CONTEXT_FIELD)
        return (await self._send_write(create_context_field_request(field))).status_code

    async def update_context_field(self, name: str, field: UpdateContextField) -> int:
        """`PUT /api/admin/context/:name` (`context_fields.edit`): 200 with no body. Unleash
        8.2 replaces the field with the body (stickiness, sort order and legal values left out
        are emptied; a description left out is kept), so `field` holds every part:
        description, stickiness, sort order and legal values."""
        await self._require(EDIT_CONTEXT_FIELD)
        return (await self._send_write(update_context_field_request(name, field))).status_code

    async def delete_context_field(self, name: str) -> int:
        """`DELETE /api/admin/context/:name` (`context_fields.delete`): 200; 409 `Conflict`
        while a strategy uses the field (Unleash 7+), 404 `NotFound` for an unknown one."""
        await self._require(DELETE_CONTEXT_FIELD)
        return (await self._send_write(delete_context_field_request(name))).status_code

    async def context_strategies(self, field: str) -> ContextFieldStrategies:
        """Operation 5, `GET /api/admin/context/:contextField/strategies` (an unknown field gives
        an empty list)."""
        return await self.get(
            f"/api/admin/context/{_segment(field)}/strategies", ContextFieldStrategies
        )

    # ------------------------------------------------------------------ API tokens

    async def api_tokens(self, project: str | None = None) -> ApiTokenList:
        """`GET /api/admin/api-tokens`: every API token, or with `project` the project's
        (`…/projects/:p/api-tokens`: from Unleash 7.0 with the tokens for every project too;
        `NotFound` for no such project). Real Unleash lists each `secret` in clear, the sandbox
        a masked handle (`app.api.models.ApiToken`): either names the token to delete."""
        if project is None:  # 10,000 tokens are 3 MB: validated piece by piece as they come
            return await self._get_streamed("/api/admin/api-tokens", ApiTokenList, "tokens")
        return await self.get(f"/api/admin/projects/{_segment(project)}/api-tokens", ApiTokenList)

    async def api_tokens_named(self, name: str) -> ApiTokenList:
        """`GET /api/admin/api-tokens/:name`: the tokens of that name (names are not unique;
        none is an empty list)."""
        return await self.get(f"/api/admin/api-tokens/{_segment(name)}", ApiTokenList)

    async def create_api_token(self, body: CreateApiToken, project: str | None = None) -> ApiToken:
        """`POST /api/admin/api-tokens` (the action `api_tokens.create`): 201 with the token,
        its whole secret held this once."""
        await self._require(CREATE_API_TOKEN)
        answer = await self.send_write(create_api_token_request(body, project))
        return await self.read_answer(answer, ApiToken)

    async def delete_api_token(self, secret: str) -> int:
        """`DELETE /api/admin/api-tokens/:secret` (the action `api_tokens.delete`): 200, no
        body, also for a token the server does not know (Unleash does nothing then)."""
        await self._require(DELETE_API_TOKEN)
        return (await self._send_write(delete_api_token_request(secret))).status_code

    async def expire_api_token(self, secret: str, expires: datetime) -> int:
        """`PUT /api/admin/api-tokens/:secret {expiresAt}` (the action `api_tokens.expire`):
        200, no body, also for a token the server does not know."""
        await self._require(EXPIRE_API_TOKEN)
        return (await self._send_write(expire_api_token_request(secret, expires))).status_code

    # ------------------------------------------------------------------ metrics

    async def send_bulk_metrics(
        self,
        batch: BulkMetrics | bytes,
        *,
        retry: bool = True,
        token: Literal["client", "main"] = "client",
    ) -> None:
        """Operation 7, `POST /api/client/metrics/bulk` with the client token (or, without one,
        the admin-side token, which real servers refuse: `WrongTokenType` says so). `bytes` are
        sent as they are, so a caller can measure exactly what goes on the wire.

        `retry=False` makes exactly one attempt and raises whatever happened: the metrics
        uploader (`app.metrics.upload`) retries on its own, because it records each attempt in
        its ledger before it tries again. `token="main"` sends the connection's main token
        instead of its client token (the probe asks whether the main token is a client one)."""
        body = batch if isinstance(batch, bytes) else bulk_metrics_bytes(batch)
        await self._send(
            "POST",
            "/api/client/metrics/bulk",
            content=body,
            headers={"Content-Type": "application/json"},
            token=self._client_token if token == "client" else self._token,
            idempotent=False,
            attempts=None if retry else 1,
        )

    async def feature_usage(self, feature: str) -> FeatureUsage:
        """`GET /api/admin/client-metrics/features/:name`: the last hour's stored counts."""
        return await self.get(
            f"/api/admin/client-metrics/features/{_segment(feature)}", FeatureUsage
        )

    async def feature_metrics_raw(self, feature: str, hours_back: int = 1) -> FeatureMetricsRaw:
        """`GET /api/admin/client-metrics/features/:name/raw?hoursBack=N`."""
        return await self.get(
            f"/api/admin/client-metrics/features/{_segment(feature)}/raw",
            FeatureMetricsRaw,
            params={"hoursBack": str(int(hours_back))},
        )

    # ------------------------------------------------------------------ roles (issue 36)

    async def roles(self) -> RoleList:
        """`GET /api/admin/roles`: every role, built-in and custom, root and project (Unleash
        Enterprise and the sandbox; open-source Unleash answers 404 `NotFound`, and lists its
        built-in root roles with its users: `list_users().rootRoles`)."""
        return await self.get(ROLES_PATH, RoleList)

    async def get_role(self, role_id: int) -> RoleWithPermissions:
        """`GET /api/admin/roles/:id`: the role with its permissions (`NotFound` for an id the
        server does not know)."""
        return await self.get(f"{ROLES_PATH}/{int(role_id)}", RoleWithPermissions)

    async def permissions(self) -> AdminPermissions:
        """`GET /api/admin/permissions`: the catalogue of permissions a role can hold (root,
        project, and each environment's)."""
        return await self.get("/api/admin/permissions", AdminPermissions)

    async def role_access(self, role_id: int) -> ProjectRoleUsages:
        """`GET /api/admin/projects/roles/:roleId/access`: the projects where the role is held,
        with how many users, service accounts and groups hold it there."""
        return await self.get(f"/api/admin/projects/roles/{int(role_id)}/access",
                              ProjectRoleUsages)  # fmt: skip

    async def create_role(self, body: CreateRole) -> Role:
        """`POST /api/admin/roles` (the action `roles.create`): 200 with `{version, roles}`, the
        one role made; 409 `Conflict` for a name any role has, 400 `BadRequest` for unknown
        permissions."""
        await self._require(CREATE_ROLE)
        answer = await self.send_write(create_role_request(body))
        return (await self.read_answer(answer, RoleAnswer)).roles

    async def update_role(self, role_id: int, body: CreateRole) -> Role:
        """`PUT /api/admin/roles/:id` (the action `roles.edit`): name, description, type and
        (when given) permissions replaced; 403 `Forbidden` for a built-in role."""
        await self._require(EDIT_ROLE)
        answer = await self.send_write(update_role_request(role_id, body))
        return (await self.read_answer(answer, RoleAnswer)).roles

    async def delete_role(self, role_id: int) -> int:
        """`DELETE /api/admin/roles/:id` (the action `roles.delete`): 200, no body; 400
        `BadRequest` (RoleInUseError) for a role in use, 403 for a built-in one."""
        await self._require(DELETE_ROLE)
        return (await self._send_write(delete_role_request(role_id))).status_code

    # ------------------------------------------------------------------ instance (issue 38)

    async def statistics(self) -> models.InstanceStatistics:
        """`GET /api/admin/instance-admin/statistics`: counts computed by the server now (each
        release sends its own fields: every field of the model is optional)."""
        return await self.get(STATISTICS_PATH, models.InstanceStatistics)

    async def statistics_csv(self) -> bytes:
        """`GET …/statistics/csv`: the server's own CSV of them (a header row of the quoted
        field names and one row of values), as it sent it."""
        response = await self._send("GET", STATISTICS_PATH + "/csv", idempotent=True)
        return response.content

    async def maintenance(self) -> models.Maintenance:
        """`GET /api/admin/maintenance`: whether the server is in maintenance mode."""
        return await self.get(MAINTENANCE_PATH, models.Maintenance)

    async def set_maintenance(self, enabled: bool) -> int:
        """`POST /api/admin/maintenance` (the action `instance.maintenance`): 204. While it is
        on, the server refuses every other admin write with 503 (`Unavailable`)."""
        await self._require(SWITCH_MAINTENANCE)
        return (await self._send_write(maintenance_request(enabled))).status_code

    async def set_cors_origins(self, origins: Sequence[str]) -> int:
        """The frontend API's CORS origins (the action `instance.cors`): 204; 400 `BadRequest`
        "Invalid origin: <it>" for one that is not "*" or an origin. Read them back with
        `ui_config().frontendApiOrigins`."""
        caps = await self._require(SET_CORS)
        request = cors_request(origins, unleash_release(caps))
        return (await self._send_write(request)).status_code

    async def banners(self) -> models.Banners:
        """`GET /api/admin/banners` (Unleash Enterprise 5.7+ and the sandbox; open source
        answers 404 `NotFound`)."""
        return await self.get(BANNERS_PATH, models.Banners)

    async def create_banner(self, body: models.CreateBanner) -> models.Banner:
        """`POST /api/admin/banners` (the action `banners.create`): 201 with the banner."""
        await self._require(CREATE_BANNER)
        answer = await self.send_write(create_banner_request(body))
        return await self.read_answer(answer, models.Banner)

    async def update_banner(self, banner_id: int, body: models.CreateBanner) -> models.Banner:
        """`PUT /api/admin/banners/:id` (the action `banners.edit`): the banner replaced whole
        by `body`; 404 `NotFound` for an id the server does not know."""
        await self._require(EDIT_BANNER)
        answer = await self.send_write(update_banner_request(banner_id, body))
        return await self.read_answer(answer, models.Banner)

    async def delete_banner(self, banner_id: int) -> int:
        """`DELETE /api/admin/banners/:id` (the action `banners.delete`): 200, no body."""
        await self._require(DELETE_BANNER)
        return (await self._send_write(delete_banner_request(banner_id))).status_code

    # ------------------------------------------------------------------ the event log (issue 38)

    async def search_events(self, params: Mapping[str, str]) -> models.EventPage:
        """`GET /api/admin/search/events` (Unleash 6.0 on, the sandbox): one page of the
        filtered events, `{events, total}`; 404 `NotFound` on 5.x."""
        response = await self._send("GET", SEARCH_EVENTS_PATH, params=params, idempotent=True)
        page = decode_page(response.content)
        if page is None:
            return await self._parse(response, models.EventPage, f"GET {SEARCH_EVENTS_PATH}")
        return page

    async def search_events_by_body(self, body: Mapping[str, Any]) -> models.EventPage:
        """`POST /api/admin/events/search` (Unleash 5.x and 6.x; 404 from 7.0): one page, at
        most 100, of the events of a type, project and flag. A read sent as a POST: it
        changes nothing (`tests/app/test_one_runner.py`, `READS_SENT_AS_POST`)."""
        request = f"POST {SEARCH_BY_BODY_PATH}"
        response = await self._send(
            "POST",
            SEARCH_BY_BODY_PATH,
            content=json.dumps(dict(body)).encode(),
            headers={"Content-Type": "application/json"},
            idempotent=True,
        )
        page = decode_page(response.content)
        return page if page is not None else await self._parse(response, models.EventPage, request)

    async def events(
        self,
        filters: EventFilter | None = None,
        *,
        own: bool = False,
        size: int | None = None,
        on_total: Callable[[int | None], object] | None = None,
    ) -> AsyncIterator[list[models.Event]]:
        """The events `filters` takes, newest first, a page at a time as they arrive: through
        the server's search where it has one, else 5.x's search by body, each event held to
        the whole filter here; `own`: every event read, the filter flagdesk's alone (the same
        events: `app.api.events`). `size`: the page asked for; `on_total`: the server's count
        with the first page (`app.api.events.pages`)."""
        caps = await self._require("events")
        filters = filters or EventFilter()
        server = caps.server_version if caps.server_kind == "unleash" else ""
        way = way_of(caps.server_kind, version_tuple(server) if server else None)
        search: PageReader = self.search_events
        by_body: PageReader = self.search_events_by_body
        if way is None:  # not known: the search, and 5.x's read where there is none
            try:
                await self.search_events({"limit": "1"})
                way = "search"
            except e.NotFound:
                way = "body"
        reader = search if way == "search" else by_body
        # closed with this one (a window leaves a read half done): its request under way
        # cancelled on the event loop, not left to the garbage collector without one
        read = event_pages(reader, way, filters, own=own, size=size, on_total=on_total)
        async with contextlib.aclosing(read):
            async for page in read:
                yield page

    # ------------------------------------------------------------------ login history

    async def login_history(self) -> models.LoginEvents:
        """`GET /api/admin/logins` (Unleash Enterprise 4.22+ and the sandbox; open source: 404,
        which the capabilities say first as `Unsupported`): every login event kept, the last
        14 days, newest first; no filter and no paging on the server."""
        await self._require(LOGINS.key)
        return await self.get(LOGINS_PATH, models.LoginEvents)

    async def login_history_csv(self) -> bytes:
        """The same as the server's own CSV (`Accept: text/csv`), as it sent it."""
        await self._require(LOGINS.key)
        response = await self._send(
            "GET", LOGINS_PATH, headers={"Accept": "text/csv"}, idempotent=True
        )
        return response.content

    # ------------------------------------------------------------------ plumbing

    async def get(self, path: str, model: type[M], *, params: Mapping[str, str] | None = None) -> M:
        """The low-level read every operation above uses: `GET path` (retried as reads are),
        the answer validated as `model`. For a read this client has no operation for yet (the
        capability probe uses it)."""
        response = await self._send("GET", path, params=params, idempotent=True)
        return await self._parse(response, model, f"GET {path}")

    async def _get_streamed(
        self,
        path: str,
        model: type[M],
        field: str,
        *,
        on_items: Callable[[list[Any]], None] | None = None,
    ) -> M:
        """`_get` for an answer whose list `field` can hold 100,000 items: the items are
        validated piece by piece as the bytes arrive (see `app.api.streaming`), so the work
        overlaps the download, the event loop keeps turning, and the body is never held whole.
        An answer of another shape is read whole and parsed as `_get` would. With `on_items`
        each piece goes to it as soon as it is validated, and the result's list stays empty.

        A connection lost in the middle of the answer is retried like any failed read, as long
        as no item has gone to `on_items` yet (they cannot be taken back); after that it is
        raised, and the caller starts over."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._stream_once(path, model, field, on_items)
            except _LostMidAnswer as lost:
                if lost.handed or attempt >= self.retry.attempts:
                    raise lost.error from None
                delay = self.retry.backoff(attempt, self._rng)
                log.info("GET %s: %s while reading the answer; retry %d in %.2f s",
                         path, lost.error.reason, attempt, delay)  # fmt: skip
                await self._sleep(delay)

    async def _stream_once(
        self,
        path: str,
        model: type[M],
        field: str,
        on_items: Callable[[list[Any]], None] | None,
    ) -> M:
        # here: only the two lists that run to 100,000 items stream, never a window's first
        # data, and the streaming reader brings msgspec (4 ms of the client's import)
        from app.api.streaming import PIECE_BYTES, BadJson, ItemsInvalid, ListStream, NotStreamable

        request = f"GET {path}"
        (item_type,) = typing.get_args(model.model_fields[field].annotation)
        stream: ListStream[Any] = ListStream(field, item_type)
        items: list[Any] = []
        handed = False

        def take(piece: list[Any]) -> None:
            nonlocal handed
            if on_items is None:
                items.extend(piece)
            elif piece:
                handed = True
                on_items(piece)

        head: list[bytes] = []  # the bytes before the first item, in case it is read whole
        first = b""  # the answer's first bytes, to say what it is when it is not JSON
        whole = False
        response = await self._send("GET", path, idempotent=True, stream=True)
        self._count(+1)  # a request in flight until its answer is read, as for the others
        try:
            with paused_gc():
                async for chunk in response.aiter_bytes():
                    if len(first) < 1024:
                        first += chunk[: 1024 - len(first)]
                    if whole or not stream.started:
                        head.append(chunk)
                    if whole:
                        continue
                    try:
                        for start in range(0, len(chunk), PIECE_BYTES):
                            if start:  # a large chunk: let the loop turn between pieces
                                await asyncio.sleep(0)
                            take(stream.feed(chunk[start : start + PIECE_BYTES]))
                    except NotStreamable:
                        whole = True
                    if stream.started:
                        head.clear()
                if whole or not stream.started:
                    return self._hand_over(
                        await self._parse(response, model, request, b"".join(head)),
                        field,
                        on_items,
                    )
                take(stream.finish())
        except httpx.TransportError as exc:
            raise _LostMidAnswer(self._unreachable(exc), handed) from None
        except ItemsInvalid as exc:
            raise bad_response(
                exc.error,
                response,
                model.__name__,
                request,
                self._scrub,
                prefix=(exc.field, exc.first),
            ) from None
        except BadJson:
            raise not_json(response, request, self._scrub, first) from None
        except NotStreamable:
            return self._hand_over(
                await self._parse(response, model, request, b"".join(head)), field, on_items
            )
        finally:
            self._count(-1)
            await response.aclose()
        try:
            envelope = model.model_validate({**stream.envelope, field: []})
        except ValidationError as exc:
            raise bad_response(exc, response, model.__name__, request, self._scrub) from None
        setattr(envelope, field, items)
        return envelope

    @staticmethod
    def _hand_over(result: M, field: str, on_items: Callable[[list[Any]], None] | None) -> M:
        """An answer read whole: its list goes to `on_items` as one piece, if there is one."""
        if on_items is not None:
            on_items(getattr(result, field))
            setattr(result, field, [])
        return result

    async def _write(
        self, method: str, path: str, body: BaseModel, model: type[M], *, only_set: bool = False
    ) -> M:
        """Send `body` as JSON: every field but the `None`s, or with `only_set` just the fields
        the caller set (a partial update)."""
        dump = (
            body.model_dump_json(exclude_unset=True)
            if only_set
            else body.model_dump_json(exclude_none=True)
        )
        content = dump.encode()
        response = await self._send(
            method,
            path,
            content=content,
            headers={"Content-Type": "application/json"},
            idempotent=False,
        )
        return await self._parse(response, model, f"{method} {path}")

    async def _parse(
        self, response: httpx.Response, model: type[M], request: str, content: bytes | None = None
    ) -> M:
        """The answer as `model`; `content` when the body was read apart from `response`."""
        if content is None:
            content = response.content
        try:
            if len(content) > THREAD_PARSE_BYTES:
                return await self._parse_large(content, model)
            return model.model_validate_json(content)
        except ValidationError as exc:
            raise bad_response(
                exc, response, model.__name__, request, self._scrub, content=content
            ) from None
        except _SliceInvalid as exc:
            raise bad_response(
                exc.error, response, model.__name__, request, self._scrub, prefix=exc.prefix
            ) from None

    async def _parse_large(self, content: bytes, model: type[M]) -> M:
        """A large body (100,000 inactive users are 20 MB) without freezing the window: pydantic
        holds the GIL for a whole `model_validate_json`, which stalled the GUI thread for half a
        second. So the JSON is decoded on a worker thread (one short hold), and each of the
        body's long lists is validated PARSE_SLICE items at a time, letting the event loop turn
        in between. Errors keep their full JSON path."""
        try:
            data = await asyncio.to_thread(json.loads, content)
        except ValueError:
            return model.model_validate_json(content)  # raises the usual "invalid JSON" error
        # each list a slice of about SLICE_BYTES at a time, as its share of the body says
        lists = _long_lists(model, data, len(content))
        if not lists:
            return model.model_validate(data)
        pulled: dict[str, list[Any]] = {}
        for name, _, _ in lists:
            pulled[name], data[name] = data[name], []
        envelope = model.model_validate(data)
        for name, item_type, step in lists:
            items = pulled.pop(name)
            adapter: TypeAdapter[list[Any]] = TypeAdapter(list[item_type])  # type: ignore[valid-type]
            setattr(envelope, name, await _validated_in_slices(adapter, items, name, step))
        return envelope

    async def _parse_list(self, response: httpx.Response, model: type[M], request: str) -> list[M]:
        adapter: TypeAdapter[list[M]] = TypeAdapter(list[model])  # type: ignore[valid-type]
        try:
            result = adapter.validate_json(response.content)
        except ValidationError as exc:
            raise bad_response(
                exc, response, f"list of {model.__name__}", request, self._scrub
            ) from None
        return result

    # ------------------------------------------------------------------ service accounts

    async def service_accounts(self) -> ServiceAccounts:
        """`GET /api/admin/service-account` (Unleash Enterprise and the sandbox): every service
        account with its tokens (never their secrets) and the root roles they hold. On open
        source (404) `Unsupported` "needs Unleash Enterprise", nothing sent."""
        await self._require(SERVICE_ACCOUNTS.key)
        return await self.get(SERVICE_ACCOUNTS_PATH, ServiceAccounts)

    async def service_account_tokens(self, account_id: int) -> PersonalAccessTokens:
        """`GET /api/admin/service-account/:id/token`: the account's tokens, no secrets; 404
        `NotFound` for an id that is no service account's."""
        await self._require(SERVICE_ACCOUNTS.key)
        return await self.get(f"{SERVICE_ACCOUNTS_PATH}/{int(account_id)}/token",
                              PersonalAccessTokens)  # fmt: skip

    async def create_service_account(self, body: CreateServiceAccount) -> ServiceAccount:
        """`POST /api/admin/service-account` (`service_accounts.create`): 201 with the account;
        409 `Conflict` for a username taken, 400 `BadRequest` for a role that is no root role."""
        await self._require(CREATE_SERVICE_ACCOUNT)
        answer = await self.send_write(create_service_account_request(body))
        return await self.read_answer(answer, ServiceAccount)

    async def update_service_account(
        self, account_id: int, body: UpdateServiceAccount
    ) -> ServiceAccount:
        """`PUT /api/admin/service-account/:id` (`service_accounts.edit`): the fields given."""
        await self._require(EDIT_SERVICE_ACCOUNT)
        answer = await self.send_write(update_service_account_request(account_id, body))
        return await self.read_answer(answer, ServiceAccount)

    async def delete_service_account(self, account_id: int) -> int:
        """`DELETE /api/admin/service-account/:id` (`service_accounts.delete`): 200, no body;
        its tokens go with it."""
        await self._require(DELETE_SERVICE_ACCOUNT)
        return (await self._send_write(delete_service_account_request(account_id))).status_code

    async def create_service_account_token(
        self, account_id: int, body: CreatePersonalAccessToken
    ) -> CreatedPersonalAccessToken:
        """`POST /api/admin/service-account/:id/token` (`service_accounts.create_token`): 201
        with the token and its secret, the only time the server shows it."""
        await self._require(CREATE_SERVICE_ACCOUNT_TOKEN)
        answer = await self.send_write(create_service_account_token_request(account_id, body))
        return await self.read_answer(answer, CreatedPersonalAccessToken)

    async def delete_service_account_token(self, account_id: int, token_id: int) -> int:
        """`DELETE /api/admin/service-account/:id/token/:tokenId`
        (`service_accounts.delete_token`): 200, no body; the token is refused from then on."""
        await self._require(DELETE_SERVICE_ACCOUNT_TOKEN)
        request = delete_service_account_token_request(account_id, token_id)
        return (await self._send_write(request)).status_code

    # ------------------------------------------------------------------ project access

    async def project_access(self, project: str) -> ProjectAccess:
        """`GET /api/admin/projects/:p/access` (Unleash Pro and Enterprise, the sandbox): who
        holds which role in `project` (users and service accounts, groups with their members)
        and every project role. `Unsupported` on open source, where the route is not there."""
        from app.registry import PROJECT_ACCESS

        await self._require(PROJECT_ACCESS.key)
        return await self.get(f"/api/admin/projects/{_segment(project)}/access", ProjectAccess)

    async def access_overview(self) -> AccessOverview:
        """`GET /api/admin/access/overview` (Unleash Enterprise, the sandbox): every user's
        root role, groups and projects at once. `NotFound` on open source and Pro, where the
        route is not there; `Forbidden` for a token without the Admin root role."""
        return await self.get("/api/admin/access/overview", AccessOverview)

    async def add_project_access(self, project: str, body: AddProjectAccess) -> int:
        """`POST /api/admin/projects/:p/access` (`project_access.grant`): every role to every
        user and group (kept where held already); 200 with no body. 400 `BadRequest` saying
        which roles, users or groups are not valid; 403 for a caller who is neither an Admin
        nor the project's Owner."""
        from app.registry import GRANT_PROJECT_ACCESS

        await self._require(GRANT_PROJECT_ACCESS)
        return (await self._send_write(add_project_access_request(project, body))).status_code

    async def set_project_roles(
        self, project: str, kind: Literal["user", "group"], subject: int, roles: Sequence[int]
    ) -> int:
        """`PUT /api/admin/projects/:p/{users,groups}/:id/roles` (`project_access.set_roles`):
        the roles the user or group holds in `project` from now on."""
        from app.registry import SET_PROJECT_ROLES

        await self._require(SET_PROJECT_ROLES)
        request = set_project_roles_request(project, kind, subject, roles)
        return (await self._send_write(request)).status_code

    async def remove_project_access(
        self, project: str, kind: Literal["user", "group"], subject: int
    ) -> int:
        """`DELETE /api/admin/projects/:p/{users,groups}/:id/roles` (`project_access.revoke`):
        every role the user or group holds in `project`."""
        from app.registry import REVOKE_PROJECT_ACCESS

        await self._require(REVOKE_PROJECT_ACCESS)
        request = remove_project_access_request(project, kind, subject)
        return (await self._send_write(request)).status_code

    # ---------------------------------------------- flag extras (issue 37, slice 2): the reads

    async def segments(self) -> Segments:
        """`GET /api/admin/segments`: every segment with its constraints (and how many flags and
        projects use it). Matched by name between servers, never by id."""
        return await self.get("/api/admin/segments", Segments)

    async def segment_strategies(self, segment_id: int) -> SegmentStrategies:
        """`GET /api/admin/segments/:id/strategies`: the strategies that use a segment."""
        return await self.get(f"/api/admin/segments/{int(segment_id)}/strategies",
                              SegmentStrategies)  # fmt: skip

    async def strategy_segments(self, strategy_id: str) -> Segments:
        """`GET /api/admin/segments/strategies/:strategyId`: the segments a strategy uses."""
        return await self.get(f"/api/admin/segments/strategies/{_segment(strategy_id)}", Segments)

    async def tag_types(self) -> TagTypes:
        """`GET /api/admin/tag-types` (Unleash ships `simple`)."""
        return await self.get("/api/admin/tag-types", TagTypes)

    async def tags(self) -> Tags:
        """`GET /api/admin/tags`: every tag."""
        return await self.get("/api/admin/tags", Tags)

    async def feature_tags(self, name: str) -> Tags:
        """`GET /api/admin/features/:name/tags`: a flag's tags; `NotFound` for an unknown flag."""
        return await self.get(f"/api/admin/features/{_segment(name)}/tags", Tags)

    async def project_dependencies(self, project: str) -> bool:
        """`GET /api/admin/projects/:p/dependencies`: whether any flag depends on another
        (Unleash 8.2 answers for the whole server, whatever the project). A flag's own
        parents are its `dependencies` in `GET /api/admin/projects/:p/features/:name`."""
        path = f"/api/admin/projects/{_segment(project)}/dependencies"
        return (await self.get(path, DependenciesExist)).root

    async def parent_options(self, project: str, child: str) -> list[str]:
        """`GET /api/admin/projects/:p/features/:child/parents`: the flags `child` could depend
        on (its project's live flags that are no children themselves)."""
        path = f"/api/admin/projects/{_segment(project)}/features/{_segment(child)}/parents"
        return (await self.get(path, ParentFeatureOptions)).root

    async def strategy_definitions(self) -> StrategyDefinitions:
        """`GET /api/admin/strategies`: the built-in strategy definitions (not `editable`) and
        the custom ones."""
        return await self.get("/api/admin/strategies", StrategyDefinitions)

    # ------------------------------------------------------------------ flag configuration
    # (issue 37, slice 1: reads of environments and of a flag's configuration, Unleash 8.2's
    # paths; every release flagdesk knows has them)

    async def environments(self) -> Environments:
        """`GET /api/admin/environments`: every environment (type, sort order, counts)."""
        return await self.get("/api/admin/environments", Environments)

    async def project_environments(self, project: str) -> EnvironmentsProject:
        """`GET /api/admin/environments/project/:p`: every environment, `visible` where
        `project` has it."""
        return await self.get(
            f"/api/admin/environments/project/{_segment(project)}", EnvironmentsProject
        )

    async def feature(self, project: str, name: str) -> Feature:
        """`GET /api/admin/projects/:p/features/:name` (featureSchema): the flag with its
        environments, each with its enabled state, strategies (in their order) and variants.
        `NotFound` for a flag not in `project`."""
        path = f"/api/admin/projects/{_segment(project)}/features/{_segment(name)}"
        return await self.get(path, Feature, params={"variantEnvironments": "true"})

    async def feature_strategies(
        self, project: str, name: str, environment: str
    ) -> list[FeatureStrategy]:
        """`GET .../features/:name/environments/:env/strategies`: in their order."""
        path = (f"/api/admin/projects/{_segment(project)}/features/{_segment(name)}"
                f"/environments/{_segment(environment)}/strategies")  # fmt: skip
        return (await self.get(path, FeatureStrategies)).root

    async def feature_variants(self, project: str, name: str, environment: str) -> list[Variant]:
        """`GET .../features/:name/environments/:env/variants`: the flag's own variants there."""
        path = (f"/api/admin/projects/{_segment(project)}/features/{_segment(name)}"
                f"/environments/{_segment(environment)}/variants")  # fmt: skip
        return (await self.get(path, FeatureVariants)).variants

    # ------------------------------------------------------------------ batch export (issue 37)

    async def export_features(self, environment: str) -> ExportResult:
        """`POST /api/admin/features-batch/export` (open source since Unleash 4.22): every live
        flag in `environment` with its strategies, enabled state, variants, tags and parents,
        and what they use, in one request. A read sent as a POST (a query body; retried as a
        read): it changes nothing, though Unleash records that it happened."""
        body = ExportQuery(environment=environment, features=[]).model_dump(exclude_none=True)
        path = "/api/admin/features-batch/export"
        response = await self._send("POST", path, content=json.dumps(body).encode(),
                                    headers={"Content-Type": "application/json"},
                                    idempotent=True)  # fmt: skip
        return await self._parse(response, ExportResult, f"POST {path}")

    async def exported(self, environment: str, project: str) -> Exported:
        """The batch export of `project`'s flags in `environment` (every release since 4.22
        takes `{environment, project}`), as the plain data a snapshot reads
        (`app.api.exported`). Sent as `export_features` is. msgspec decodes it first, whole
        (`strictly`: a project of 500 flags, 0.45 MB, in 1.8 ms; 10,000 flags in about 40).
        What it refuses goes to pydantic: a small body validated from its bytes in one call; a
        large one decoded here (a few ms: on a worker thread it cost `flagdesk diff` 2.3 s of
        passing the GIL), then each list validated a slice of about SLICE_BYTES at a time with
        a turn of the event loop between: validated whole, each took 3-15 ms, and the answers
        of the four exports in flight ran one after another in one pass of the GUI's loop (62
        ms, sampled by py-spy in the Compare window's read). (The validators are built on
        first use: 12 ms.)"""
        from app.api.exported import EXPORTED, ITEMS, strictly

        body = ExportQuery(environment=environment, project=project).model_dump(exclude_none=True)
        path = "/api/admin/features-batch/export"
        response = await self._send("POST", path, content=json.dumps(body).encode(),
                                    headers={"Content-Type": "application/json"},
                                    idempotent=True)  # fmt: skip
        content = response.content
        found_strictly = strictly(content)
        if found_strictly is not None:
            return found_strictly
        try:
            data = json.loads(content) if len(content) > THREAD_PARSE_BYTES else None
        except ValueError:
            data = None  # not JSON: said as pydantic says it
        try:
            if not isinstance(data, dict) or any(
                not isinstance(data.get(name, []), list) for name in ITEMS
            ):
                return EXPORTED.validate_json(content)  # small, or not the shape: said whole
            found: dict[str, Any] = {}
            for name, adapter in ITEMS.items():
                items = data.get(name)
                if items is None:
                    continue
                step = _slice_length(len(items), len(content))
                found[name] = await _validated_in_slices(adapter, items, name, step)
            return found  # type: ignore[return-value]
        except ValidationError as exc:
            raise bad_response(exc, response, "ExportResult", f"POST {path}",
                               self._scrub) from None  # fmt: skip
        except _SliceInvalid as exc:
            raise bad_response(exc.error, response, "ExportResult", f"POST {path}", self._scrub,
                               prefix=exc.prefix) from None  # fmt: skip

    # ------------------------------------------------------------------ batch import (issue 37)

    async def validate_import(self, query: ImportQuery) -> ImportValidation:
        """`POST /api/admin/features-batch/validate` (open source since Unleash 4.22): what an
        import of `query` would do here: `errors` (it would be refused), `warnings`, and the
        `permissions` the caller lacks. A read sent as a POST (retried as a read): Unleash
        checks and changes nothing; any admin-side token may ask."""
        path = "/api/admin/features-batch/validate"
        response = await self._send("POST", path, content=_body(query),
                                    headers={"Content-Type": "application/json"},
                                    idempotent=True)  # fmt: skip
        return await self._parse(response, ImportValidation, f"POST {path}")

    async def import_features(self, query: ImportQuery) -> None:
        """`POST /api/admin/features-batch/import` (the action `compare.import`): 200 with no
        body; `BadRequest` with the server's words for what it refuses (an admin API token,
        what validate calls errors), nothing imported then."""
        await self._require(IMPORT)
        await self._send_write(import_request(query))


# ---------------------------------------------------------------------------- helpers


#: what a window reads first on a new connection: its overview's answers (the window's first
#: data), which it asks for as the connection opens
OVERVIEW_ANSWERS: tuple[type[BaseModel], ...] = (UiConfig, ProjectList, UserList)
#: what a new connection reads first: the overview's answers, then the capability probe's
FIRST_ANSWERS: tuple[type[BaseModel], ...] = (
    *OVERVIEW_ANSWERS,
    *(answer for answer in PROBE_ANSWERS if answer not in OVERVIEW_ANSWERS),
)


def validators_to_build(answers: Sequence[type[BaseModel]]) -> tuple[Callable[[], object], ...]:
    """A step for each of `answers` whose validator is not built yet (`defer_build`: each is
    built when first used, 1-6 ms in the bundle), in their order; none for one already built."""
    return tuple(answer.model_rebuild for answer in answers if not answer.__pydantic_complete__)


def warm_up_steps() -> tuple[Callable[[], object], ...]:
    """What a new connection's first requests would otherwise do on their way, as steps to run
    while there is nothing else to do (the session runs them while the embedded sandbox boots,
    a turn of the event loop each): import the asyncio side of the HTTP stack (httpcore's locks
    and sockets are anyio's, whose asyncio backend is imported on first use: 30-50 ms), and
    build the validators of `FIRST_ANSWERS`, the overview's first. Each step is cheap to run
    twice; none sends anything."""

    def http_stack() -> object:
        import anyio._backends._asyncio
        import anyio._core._sockets
        import httpcore

        return httpcore, anyio._backends._asyncio, anyio._core._sockets

    return (http_stack, *validators_to_build(FIRST_ANSWERS))


class _LostMidAnswer(Exception):
    """The connection failed while a streamed answer was read; `handed`: items had already
    gone to the caller's `on_items`."""

    def __init__(self, error: e.ServerUnreachable, handed: bool) -> None:
        super().__init__(error.reason)
        self.error = error
        self.handed = handed


class _SliceInvalid(Exception):
    """A slice of a large list failed validation; `prefix` is (list field, first index)."""

    def __init__(self, error: ValidationError, prefix: tuple[str, int]) -> None:
        super().__init__(str(error))
        self.error = error
        self.prefix = prefix


async def _validated_in_slices(
    adapter: TypeAdapter[list[Any]], items: list[Any], name: str, step: int
) -> list[Any]:
    """A decoded list validated `step` items at a time, the event loop turning between; the
    decoded items dropped as they are validated. A bad item raises `_SliceInvalid` with its
    path (`name`, the slice's start)."""
    validated: list[Any] = []
    for start in range(0, len(items), step):
        end = start + step
        try:
            validated.extend(adapter.validate_python(items[start:end]))
        except ValidationError as exc:
            raise _SliceInvalid(exc, (name, start)) from None
        items[start:end] = [None] * len(items[start:end])  # the decoded dicts go as we go
        await asyncio.sleep(0)
    return validated


def _slice_length(count: int, size: int) -> int:
    """How many of a list's `count` items are validated at once, in a body of `size` bytes: the
    items in about SLICE_BYTES of it, if the body were all this list, and at most PARSE_SLICE."""
    return min(PARSE_SLICE, max(1, count * SLICE_BYTES // max(size, 1)))


def _long_lists(model: type[BaseModel], data: object, size: int) -> list[tuple[str, Any, int]]:
    """The fields of `model` holding a list in `data` (a body of `size` bytes) longer than one
    slice, with their item types and their slices' length: the items in about SLICE_BYTES of
    the body, if the body were all this list, and at most PARSE_SLICE (a batch export has three
    such lists: its flags, their strategies and their places)."""
    if not isinstance(data, dict):
        return []
    found: list[tuple[str, Any, int]] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        value = data.get(key)
        origin = typing.get_origin(info.annotation)
        if isinstance(value, list) and origin is list:
            step = _slice_length(len(value), size)
            if len(value) > step:
                (item_type,) = typing.get_args(info.annotation)
                found.append((key, item_type, step))
    return found


@dataclass(frozen=True)
class WriteRequest:
    """A write as it goes on the wire: what `--dry-run` prints and the journal records is what
    the client sends, byte for byte."""

    method: str
    path: str = field(repr=False)
    #: the JSON body (b"": none, as a revive or a delete by name sends none)
    body: bytes
    #: how much longer than usual the server may take to answer it (deleting many users)
    server_seconds: float = 0.0
    #: what the journal, `--dry-run`, the log and error texts show in place of a `path` that
    #: holds a secret (an API token's: `api_token_path`); "": `path` itself
    shown_path: str = ""
    #: the secret `path` holds, kept out of the log (`app.logs.register_secret`) as it is sent
    secret: str = field(default="", repr=False)

    @property
    def public_path(self) -> str:
        """The path as it may be shown and recorded (never a secret)."""
        return self.shown_path or self.path

    def __repr__(self) -> str:
        return f"WriteRequest({self.method} {self.public_path})"

    def describe(self) -> dict[str, str]:
        """Method and path, for the journal (the body's ids are in the entry already)."""
        return {"method": self.method, "path": self.public_path}

    def describe_with_body(self) -> dict[str, Any]:
        """Method, path and the body sent (parsed JSON), for the journal of an edit: what the
        thing edited becomes, which is how an edit left in doubt is checked."""
        described: dict[str, Any] = dict(self.describe())
        if self.body:
            described["body"] = json.loads(self.body)
        return described


def delete_inactive_users_request(ids: Iterable[int]) -> WriteRequest:
    """The request `AdminClient.delete_inactive_users(ids)` sends. `ValueError` for an id that
    is not a whole number from 0."""
    try:
        body = Ids(ids=list(ids))
    except ValidationError as exc:
        raise ValueError(
            "user ids are whole numbers from 0: "
            + "; ".join(f"{err['input']!r}" for err in exc.errors())
        ) from None
    return WriteRequest(
        "POST",
        "/api/admin/user-admin/inactive/delete",
        body.model_dump_json().encode(),
        server_seconds=DELETE_S_PER_USER * len(body.ids),
    )


@dataclass(frozen=True)
class Answer:
    """The server's answer to a `WriteRequest` (a success: an error answer is raised)."""

    request: WriteRequest
    response: httpx.Response

    @property
    def status(self) -> int:
        return self.response.status_code


def revive_feature_request(name: str) -> WriteRequest:
    """The request `AdminClient.revive_feature(name)` sends (no body)."""
    return WriteRequest("POST", f"/api/admin/archive/revive/{_segment(name)}", b"")


def delete_feature_request(name: str) -> WriteRequest:
    """The request `AdminClient.delete_feature(name)` sends (no body)."""
    return WriteRequest("DELETE", f"/api/admin/archive/{_segment(name)}", b"")


def _batch_request(verb: str, project: str, names: Iterable[str]) -> WriteRequest:
    body = BatchFeatures(features=list(names)).model_dump_json().encode()
    return WriteRequest("POST", f"/api/admin/projects/{_segment(project)}/{verb}", body)


def revive_features_request(project: str, names: Iterable[str]) -> WriteRequest:
    """The request `AdminClient.revive_features(project, names)` sends."""
    return _batch_request("revive", project, names)


def delete_features_request(project: str, names: Iterable[str]) -> WriteRequest:
    """The request `AdminClient.delete_features(project, names)` sends."""
    return _batch_request("delete", project, names)


def archive_features_request(project: str, names: Iterable[str]) -> WriteRequest:
    """The request `AdminClient.archive_features(project, names)` sends."""
    return _batch_request("archive", project, names)


def create_context_field_request(field: CreateContextField) -> WriteRequest:
    """The request `AdminClient.create_context_field(field)` sends (the name first)."""
    body = field.model_dump(mode="json", exclude_none=True)
    ordered = {"name": body.pop("name"), **body}
    return WriteRequest("POST", "/api/admin/context", _json_bytes(ordered))


def update_context_field_request(name: str, field: UpdateContextField) -> WriteRequest:
    """The request `AdminClient.update_context_field(name, field)` sends."""
    return WriteRequest(
        "PUT",
        f"/api/admin/context/{_segment(name)}",
        field.model_dump_json(exclude_none=True).encode(),
    )


def delete_context_field_request(name: str) -> WriteRequest:
    """The request `AdminClient.delete_context_field(name)` sends (no body)."""
    return WriteRequest("DELETE", f"/api/admin/context/{_segment(name)}", b"")


def _json_bytes(value: Any) -> bytes:
    """Compact JSON as pydantic writes it (no spaces, UTF-8 as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def create_user_request(user: CreateUser) -> WriteRequest:
    """The request `AdminClient.create_user(user)` sends: every field given, `sendEmail`
    always (false unless asked: Unleash's default is true)."""
    return WriteRequest(
        "POST", "/api/admin/user-admin", user.model_dump_json(exclude_none=True).encode()
    )


def update_user_request(user_id: int, changes: UpdateUser) -> WriteRequest:
    """The request `AdminClient.update_user(user_id, changes)` sends: only the fields set."""
    return WriteRequest(
        "PUT",
        f"/api/admin/user-admin/{int(user_id)}",
        changes.model_dump_json(exclude_unset=True).encode(),
    )


def delete_user_request(user_id: int) -> WriteRequest:
    """The request `AdminClient.delete_user(user_id)` sends (no body)."""
    return WriteRequest("DELETE", f"/api/admin/user-admin/{int(user_id)}", b"")


def reset_password_request(email: str) -> WriteRequest:
    """The request `AdminClient.reset_password_link(email)` sends."""
    return WriteRequest(
        "POST",
        "/api/admin/user-admin/reset-password",
        ResetPasswordRequest(id=email).model_dump_json().encode(),
    )


def secret_tail(secret: str) -> str:
    """What flagdesk shows and records of an API token's secret: its last four characters,
    `…3f9a` (the whole secret never reaches the journal, the log or a table)."""
    return "…" + secret[-4:]


def create_api_token_request(body: CreateApiToken, project: str | None = None) -> WriteRequest:
    """The request `AdminClient.create_api_token` sends: the fields that are set; with
    `project`, to the project's path, its `projects` naming it (5.x and 6.x need them there,
    7.0 and later take the project from the path)."""
    if project is None:
        return WriteRequest(
            "POST", "/api/admin/api-tokens", body.model_dump_json(exclude_none=True).encode()
        )
    body = body.model_copy(update={"projects": [project]})
    return WriteRequest(
        "POST",
        f"/api/admin/projects/{_segment(project)}/api-tokens",
        body.model_dump_json(exclude_none=True).encode(),
    )


def delete_api_token_request(secret: str) -> WriteRequest:
    """The request `AdminClient.delete_api_token(secret)` sends (no body): the token named by
    the `secret` its list item holds (the sandbox's masked handle, or Unleash's secret). It is
    shown and journaled as `…<last 4>`."""
    return WriteRequest(
        "DELETE",
        f"/api/admin/api-tokens/{_segment(secret)}",
        b"",
        shown_path=f"/api/admin/api-tokens/{secret_tail(secret)}",
        secret=secret,
    )


def expire_api_token_request(secret: str, expires: datetime) -> WriteRequest:
    """The request `AdminClient.expire_api_token(secret, expires)` sends: `{expiresAt}`, the
    only field (every release), shown and journaled with `…<last 4>` as a deletion is."""
    body = UpdateApiToken(expiresAt=expires).model_dump_json().encode()
    return WriteRequest(
        "PUT",
        f"/api/admin/api-tokens/{_segment(secret)}",
        body,
        shown_path=f"/api/admin/api-tokens/{secret_tail(secret)}",
        secret=secret,
    )


def create_group_request(group: CreateGroup) -> WriteRequest:
    """The request `AdminClient.create_group` sends (the fields that are not null)."""
    return WriteRequest(
        "POST", "/api/admin/groups", group.model_dump_json(exclude_none=True).encode()
    )


def update_group_request(group_id: int, group: CreateGroup) -> WriteRequest:
    """The request `AdminClient.update_group` sends: the whole group, nulls included."""
    return WriteRequest(
        "PUT", f"/api/admin/groups/{int(group_id)}", group.model_dump_json().encode()
    )


def delete_group_request(group_id: int) -> WriteRequest:
    """The request `AdminClient.delete_group` sends (no body)."""
    return WriteRequest("DELETE", f"/api/admin/groups/{int(group_id)}", b"")


#: the connected user's personal access tokens
PATS_PATH = "/api/admin/user/tokens"


def create_pat_request(body: CreatePersonalAccessToken) -> WriteRequest:
    """The request `AdminClient.create_personal_token` sends: the description and the expiry
    (RFC 3339, in UTC to the millisecond)."""
    return WriteRequest("POST", PATS_PATH, body.model_dump_json().encode())


def delete_pat_request(pat_id: int) -> WriteRequest:
    """The request `AdminClient.delete_personal_token` sends (no body)."""
    return WriteRequest("DELETE", f"{PATS_PATH}/{int(pat_id)}", b"")


def bulk_metrics_bytes(batch: BulkMetrics) -> bytes:
    """The exact bytes `send_bulk_metrics` sends for a batch."""
    return batch.model_dump_json(exclude_none=True).encode()


def _segment(value: str) -> str:
    """One path segment, percent-encoded (a project id or name may hold `/` or `?`)."""
    return quote(str(value), safe="")


# ---------------------------------------------------------------------------- roles (issue 36)

ROLES_PATH = "/api/admin/roles"


def create_role_request(body: CreateRole) -> WriteRequest:
    """The request `AdminClient.create_role` sends: the fields that are set (no `permissions`:
    none)."""
    return WriteRequest("POST", ROLES_PATH, body.model_dump_json(exclude_none=True).encode())


def update_role_request(role_id: int, body: CreateRole) -> WriteRequest:
    """The request `AdminClient.update_role` sends: name, description and type, and the whole
    list of permissions, which replaces the role's (left out: kept)."""
    return WriteRequest(
        "PUT", f"{ROLES_PATH}/{int(role_id)}", body.model_dump_json(exclude_none=True).encode()
    )


def delete_role_request(role_id: int) -> WriteRequest:
    """The request `AdminClient.delete_role` sends (no body)."""
    return WriteRequest("DELETE", f"{ROLES_PATH}/{int(role_id)}", b"")


# ---------------------------------------------------------------------------- service accounts

#: Unleash Enterprise's service accounts
SERVICE_ACCOUNTS_PATH = "/api/admin/service-account"


def create_service_account_request(body: CreateServiceAccount) -> WriteRequest:
    """The request `AdminClient.create_service_account` sends: name, username, root role id."""
    return WriteRequest("POST", SERVICE_ACCOUNTS_PATH, body.model_dump_json().encode())


def update_service_account_request(account_id: int, body: UpdateServiceAccount) -> WriteRequest:
    """The request `AdminClient.update_service_account` sends: only the fields set."""
    return WriteRequest(
        "PUT",
        f"{SERVICE_ACCOUNTS_PATH}/{int(account_id)}",
        body.model_dump_json(exclude_unset=True).encode(),
    )


def delete_service_account_request(account_id: int) -> WriteRequest:
    """The request `AdminClient.delete_service_account` sends (no body)."""
    return WriteRequest("DELETE", f"{SERVICE_ACCOUNTS_PATH}/{int(account_id)}", b"")


def create_service_account_token_request(
    account_id: int, body: CreatePersonalAccessToken
) -> WriteRequest:
    """The request `AdminClient.create_service_account_token` sends: the description and the
    expiry (RFC 3339, in UTC to the millisecond)."""
    return WriteRequest("POST", f"{SERVICE_ACCOUNTS_PATH}/{int(account_id)}/token",
                        body.model_dump_json().encode())  # fmt: skip


def delete_service_account_token_request(account_id: int, token_id: int) -> WriteRequest:
    """The request `AdminClient.delete_service_account_token` sends (no body)."""
    return WriteRequest(
        "DELETE", f"{SERVICE_ACCOUNTS_PATH}/{int(account_id)}/token/{int(token_id)}", b""
    )


# ---------------------------------------------------------------------------- project access


def _access_path(project: str, kind: str, subject: int) -> str:
    if kind not in ("user", "group"):
        raise ValueError(f"project access is held by a user or a group, not {kind!r}")
    return f"/api/admin/projects/{_segment(project)}/{kind}s/{int(subject)}/roles"


def add_project_access_request(project: str, body: AddProjectAccess) -> WriteRequest:
    """The request `AdminClient.add_project_access` sends: `{roles, groups, users}`, the three
    lists always (Unleash requires them)."""
    return WriteRequest(
        "POST", f"/api/admin/projects/{_segment(project)}/access", body.model_dump_json().encode()
    )


def set_project_roles_request(
    project: str, kind: str, subject: int, roles: Sequence[int]
) -> WriteRequest:
    """The request `AdminClient.set_project_roles` sends: `{roles}` (`[]`: none)."""
    body = ProjectRoles(roles=list(roles)).model_dump_json().encode()
    return WriteRequest("PUT", _access_path(project, kind, subject), body)


def remove_project_access_request(project: str, kind: str, subject: int) -> WriteRequest:
    """The request `AdminClient.remove_project_access` sends (no body)."""
    return WriteRequest("DELETE", _access_path(project, kind, subject), b"")


# ------------------------------------------------- promote (issue 37, slice 6): flag configuration


def _flag_path(project: str, name: str) -> str:
    return f"/api/admin/projects/{_segment(project)}/features/{_segment(name)}"


def _flag_env_path(project: str, name: str, environment: str) -> str:
    return f"{_flag_path(project, name)}/environments/{_segment(environment)}"


def _body(model: BaseModel) -> bytes:
    return model.model_dump_json(exclude_none=True).encode()


#: how much longer than usual an import may take, per flag and strategy it holds: Unleash
#: writes each with its own queries and events (an allowance: 1,000 items, 20 s more)
IMPORT_S_PER_ITEM = 0.02


def import_request(query: ImportQuery) -> WriteRequest:
    """`POST /api/admin/features-batch/import` (importTogglesSchema): `query.data`'s flags into
    its project and environment, in one transaction. `ValueError` past `BATCH_BODY_LIMIT`,
    which Unleash refuses (413): a caller packs its batches within it."""
    body = _body(query)
    if len(body) > BATCH_BODY_LIMIT:
        raise ValueError(
            f"an import of {len(query.data.features):,} flags is {len(body):,} bytes: more than "
            f"the {BATCH_BODY_LIMIT:,} Unleash takes"
        )
    items = len(query.data.features) + len(query.data.featureStrategies)
    return WriteRequest("POST", "/api/admin/features-batch/import", body,
                        server_seconds=IMPORT_S_PER_ITEM * items)  # fmt: skip


def create_flag_request(project: str, body: models.CreateFeature) -> WriteRequest:
    """`POST /api/admin/projects/:p/features`: a flag made with its type, description and
    impression data."""
    return WriteRequest("POST", f"/api/admin/projects/{_segment(project)}/features", _body(body))


def update_flag_request(project: str, name: str, body: models.UpdateFeature) -> WriteRequest:
    """`PUT /api/admin/projects/:p/features/:name` (updateFeatureSchema): Unleash 8.2 sets
    every field from it (what is left out becomes its default), so every field is sent."""
    return WriteRequest("PUT", _flag_path(project, name), _body(body))


def archive_flag_request(project: str, name: str) -> WriteRequest:
    """`DELETE /api/admin/projects/:p/features/:name`: the flag archived (no body)."""
    return WriteRequest("DELETE", _flag_path(project, name), b"")


def flag_tags_request(name: str, body: models.UpdateTags) -> WriteRequest:
    """`PUT /api/admin/features/:name/tags` (updateTagsSchema): tags added and removed."""
    return WriteRequest("PUT", f"/api/admin/features/{_segment(name)}/tags", _body(body))


def add_dependency_request(
    project: str, child: str, body: models.CreateDependentFeature
) -> WriteRequest:
    """`POST .../features/:child/dependencies`: the parent added (or replaced)."""
    return WriteRequest("POST", f"{_flag_path(project, child)}/dependencies", _body(body))


def delete_dependency_request(project: str, child: str, parent: str) -> WriteRequest:
    """`DELETE .../features/:child/dependencies/:parent` (no body)."""
    return WriteRequest(
        "DELETE", f"{_flag_path(project, child)}/dependencies/{_segment(parent)}", b""
    )


def add_flag_strategy_request(
    project: str, name: str, environment: str, body: models.CreateFeatureStrategy
) -> WriteRequest:
    """`POST .../features/:f/environments/:env/strategies` (createFeatureStrategySchema)."""
    return WriteRequest("POST", f"{_flag_env_path(project, name, environment)}/strategies",
                        _body(body))  # fmt: skip


def update_flag_strategy_request(
    project: str, name: str, environment: str, strategy_id: str,
    body: models.UpdateFeatureStrategy,
) -> WriteRequest:  # fmt: skip
    """`PUT .../strategies/:id` (updateFeatureStrategySchema), by the TARGET's strategy id."""
    path = f"{_flag_env_path(project, name, environment)}/strategies/{_segment(strategy_id)}"
    return WriteRequest("PUT", path, _body(body))


def delete_flag_strategy_request(
    project: str, name: str, environment: str, strategy_id: str
) -> WriteRequest:
    """`DELETE .../strategies/:id` (no body)."""
    path = f"{_flag_env_path(project, name, environment)}/strategies/{_segment(strategy_id)}"
    return WriteRequest("DELETE", path, b"")


def strategy_order_request(
    project: str, name: str, environment: str, orders: Sequence[models.StrategySortOrder]
) -> WriteRequest:
    """`POST .../strategies/set-sort-order` (setStrategySortOrderSchema)."""
    body = models.StrategySortOrders(list(orders)).model_dump_json(exclude_none=True).encode()
    path = f"{_flag_env_path(project, name, environment)}/strategies/set-sort-order"
    return WriteRequest("POST", path, body)


def flag_variants_request(
    project: str, name: str, environment: str, variants: Sequence[models.VariantBody]
) -> WriteRequest:
    """`PUT .../environments/:env/variants` (variantsSchema): the environment's variants."""
    body = models.VariantsBody(list(variants)).model_dump_json(exclude_none=True).encode()
    return WriteRequest("PUT", f"{_flag_env_path(project, name, environment)}/variants", body)


def flag_switch_request(project: str, name: str, environment: str, on: bool) -> WriteRequest:
    """`POST .../environments/:env/on` or `/off` (no body)."""
    verb = "on" if on else "off"
    return WriteRequest("POST", f"{_flag_env_path(project, name, environment)}/{verb}", b"")


def add_project_environment_request(project: str, environment: str) -> WriteRequest:
    """`POST /api/admin/projects/:p/environments` (projectEnvironmentSchema)."""
    body = models.ProjectEnvironment(environment=environment)
    return WriteRequest("POST", f"/api/admin/projects/{_segment(project)}/environments",
                        _body(body))  # fmt: skip


def create_segment_request(body: models.UpsertSegment) -> WriteRequest:
    """`POST /api/admin/segments` (upsertSegmentSchema)."""
    return WriteRequest("POST", "/api/admin/segments", _body(body))


def update_segment_request(segment_id: int, body: models.UpsertSegment) -> WriteRequest:
    """`PUT /api/admin/segments/:id`: the segment replaced by the body."""
    return WriteRequest("PUT", f"/api/admin/segments/{int(segment_id)}", _body(body))


def delete_segment_request(segment_id: int) -> WriteRequest:
    """`DELETE /api/admin/segments/:id` (no body)."""
    return WriteRequest("DELETE", f"/api/admin/segments/{int(segment_id)}", b"")


def create_tag_type_request(body: models.TagTypeBody) -> WriteRequest:
    """`POST /api/admin/tag-types` (tagTypeSchema)."""
    return WriteRequest("POST", "/api/admin/tag-types", _body(body))


def update_tag_type_request(name: str, body: models.UpdateTagType) -> WriteRequest:
    """`PUT /api/admin/tag-types/:name` (updateTagTypeSchema)."""
    return WriteRequest("PUT", f"/api/admin/tag-types/{_segment(name)}", _body(body))


def delete_tag_type_request(name: str) -> WriteRequest:
    """`DELETE /api/admin/tag-types/:name` (no body)."""
    return WriteRequest("DELETE", f"/api/admin/tag-types/{_segment(name)}", b"")


def create_strategy_definition_request(body: models.CreateStrategy) -> WriteRequest:
    """`POST /api/admin/strategies` (createStrategySchema)."""
    return WriteRequest("POST", "/api/admin/strategies", _body(body))


def update_strategy_definition_request(name: str, body: models.UpdateStrategy) -> WriteRequest:
    """`PUT /api/admin/strategies/:name` (updateStrategySchema)."""
    return WriteRequest("PUT", f"/api/admin/strategies/{_segment(name)}", _body(body))


def delete_strategy_definition_request(name: str) -> WriteRequest:
    """`DELETE /api/admin/strategies/:name` (no body)."""
    return WriteRequest("DELETE", f"/api/admin/strategies/{_segment(name)}", b"")


def strategy_deprecation_request(name: str, deprecated: bool) -> WriteRequest:
    """`POST /api/admin/strategies/:name/deprecate` or `/reactivate` (no body)."""
    verb = "deprecate" if deprecated else "reactivate"
    return WriteRequest("POST", f"/api/admin/strategies/{_segment(name)}/{verb}", b"")


def remove_project_environment_request(project: str, environment: str) -> WriteRequest:
    """`DELETE /api/admin/projects/:p/environments/:env` (no body): the undo of an addition."""
    path = f"/api/admin/projects/{_segment(project)}/environments/{_segment(environment)}"
    return WriteRequest("DELETE", path, b"")


# ---------------------------------------------------------------------------- instance (issue 38)

STATISTICS_PATH = "/api/admin/instance-admin/statistics"
MAINTENANCE_PATH = "/api/admin/maintenance"
BANNERS_PATH = "/api/admin/banners"
LOGINS_PATH = "/api/admin/logins"
#: the release whose route for the CORS origins is `…/ui-config/cors` (5.x: `ui-config`)
CORS_ROUTE_SINCE = (6, 0)


def maintenance_request(enabled: bool) -> WriteRequest:
    """`POST /api/admin/maintenance {enabled}`."""
    return WriteRequest("POST", MAINTENANCE_PATH, _body(models.ToggleMaintenance(enabled=enabled)))


def unleash_release(caps: Capabilities) -> str:
    """The Unleash release the capabilities name ("" for the sandbox or a server unknown)."""
    return caps.server_version if caps.server_kind == "unleash" else ""


def cors_request(origins: Sequence[str], unleash_version: str = "") -> WriteRequest:
    """The CORS origins as the server's release takes them (`unleash_release`): `POST
    /api/admin/ui-config/cors {frontendApiOrigins}` (6.0 on, the sandbox, a version unknown), on
    Unleash 5.x
    `POST /api/admin/ui-config {frontendSettings: {frontendApiOrigins}}` (measured: each release
    answers 404 to the other's). `ValueError` for an origin that is not one line."""
    try:
        listed = [str(o) for o in origins]
        body = models.SetCors(frontendApiOrigins=listed)
    except ValidationError as exc:
        problems = "; ".join(f"{err['input']!r}: {err['msg']}" for err in exc.errors())
        raise ValueError(f"CORS origins: {problems}") from None
    found = version_tuple(unleash_version)
    if found is not None and found < CORS_ROUTE_SINCE:
        old = models.SetUiConfig(
            frontendSettings=models.FrontendSettings(frontendApiOrigins=listed)
        )
        return WriteRequest("POST", "/api/admin/ui-config", _body(old))
    return WriteRequest("POST", "/api/admin/ui-config/cors", _body(body))


def create_banner_request(body: models.CreateBanner) -> WriteRequest:
    """`POST /api/admin/banners` (createBannerSchema): every field, as Unleash's UI sends them."""
    return WriteRequest("POST", BANNERS_PATH, body.model_dump_json().encode())


def update_banner_request(banner_id: int, body: models.CreateBanner) -> WriteRequest:
    """`PUT /api/admin/banners/:id`: the whole banner (a replacement: every field sent)."""
    return WriteRequest("PUT", f"{BANNERS_PATH}/{int(banner_id)}", body.model_dump_json().encode())


def delete_banner_request(banner_id: int) -> WriteRequest:
    """`DELETE /api/admin/banners/:id` (no body)."""
    return WriteRequest("DELETE", f"{BANNERS_PATH}/{int(banner_id)}", b"")
