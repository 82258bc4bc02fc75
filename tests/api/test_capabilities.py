"""`capabilities_of`: what a server and token can do, decided from the probe's answers alone (no
server, no I/O). The probe's requests themselves are tested against the sandbox and fake servers
in test_operations.py and test_fallbacks.py."""

from __future__ import annotations

from typing import Any

from app.api import errors as e
from app.api.capabilities import (
    NEEDS_ADMIN_ROLE,
    NEEDS_ADMIN_SIDE,
    NEEDS_CLIENT_TOKEN,
    NEEDS_ENTERPRISE,
    NEEDS_PAT,
    ProbeOutcomes,
    capabilities_of,
)
from app.api.models import ArchivedFeatures, CurrentUser, GroupList, UiConfig
from app.commands.check import report
from app.registry import ACTIONS, DELETE_INACTIVE_USERS, TOOL, UPLOAD_METRICS

URL = "http://unleash.test"
ADMIN = CurrentUser.model_validate(
    {"user": {"id": "token", "type": "admin"}, "permissions": [{"permission": "ADMIN"}]}
)
PERSONAL_EDITOR = CurrentUser.model_validate(
    {"user": {"id": 7, "name": "Jonas Müller"}, "permissions": [{"permission": "CREATE_FEATURE"}]}
)
NO_ENDPOINT = "The path you were looking for (/x) is not available."


def unleash(version: str = "8.2.0", **current: str) -> UiConfig:
    return UiConfig.model_validate(
        {"version": version, "versionInfo": {"current": {"oss": version, **current}}}
    )


def not_found(message: str = NO_ENDPOINT) -> e.NotFound:
    return e.NotFound(404, "NotFoundError", message)


def outcomes(**changes: Any) -> ProbeOutcomes:
    """An Unleash 8.2 open-source server, as an admin API token sees it, with `changes`."""
    values: dict[str, Any] = {
        "base_url": URL,
        "has_client_token": False,
        "token_prefix": "*",
        "ui": unleash(),
        "user": ADMIN,
        "groups": not_found(),
        "archive": not_found(),
        "dashboard": e.ServerError(500, "InternalError", "no user"),
        "metrics": None,
    }
    values.update(changes)
    return ProbeOutcomes(**values)


def test_unleash_oss_with_an_admin_token() -> None:
    caps = capabilities_of(outcomes())
    assert (caps.server_kind, caps.server_version, caps.token_kind) == ("unleash", "8.2.0", "admin")
    assert caps.is_admin
    assert caps.operation("groups").reason == NEEDS_ENTERPRISE
    assert caps.operation("users").available and caps.operation("inactive_users").available
    archive = caps.operation("archived_features")
    assert archive.available and "search API" in archive.note
    assert not caps.archive_endpoint
    assert caps.operation("project_dashboard").reason == NEEDS_PAT
    assert caps.operation("context_usage").available
    assert caps.operation("metrics_upload").reason == NEEDS_CLIENT_TOKEN


def test_a_personal_token_without_the_admin_role() -> None:
    caps = capabilities_of(
        outcomes(
            user=PERSONAL_EDITOR,
            token_prefix="user",
            groups=GroupList(groups=[]),
            archive=ArchivedFeatures(version=1, features=[]),
            dashboard=not_found("No project nope"),  # an answer of the endpoint: it exists
        )
    )
    assert caps.token_kind == "personal" and caps.user_name == "Jonas Müller"
    assert not caps.is_admin
    assert caps.operation("users").reason == NEEDS_ADMIN_ROLE
    assert caps.operation("groups").available
    assert caps.archive_endpoint and caps.operation("archived_features").available
    assert caps.operation("project_dashboard").available


def test_the_token_shape_decides_when_the_server_has_no_user_endpoint() -> None:
    caps = capabilities_of(outcomes(user=not_found(), token_prefix="user"))
    assert caps.token_kind == "personal"
    assert not caps.is_admin


def test_a_client_token() -> None:
    caps = capabilities_of(ProbeOutcomes(URL, False, "default", None))
    assert caps.token_kind == "client"
    assert caps.operation("metrics_upload").available
    for key in ("groups", "users", "inactive_users", "project_dashboard", "context_usage"):
        assert caps.operation(key).reason == NEEDS_ADMIN_SIDE


def test_the_connections_client_token_refused_on_the_metrics_endpoint() -> None:
    wrong = e.WrongTokenType(403, "InvalidTokenType", "wrong token type")
    caps = capabilities_of(outcomes(has_client_token=True, metrics=wrong))
    assert "not a client (backend) token" in caps.operation("metrics_upload").reason
    caps = capabilities_of(outcomes(has_client_token=True, metrics=None))
    assert caps.operation("metrics_upload").available


def test_the_sandbox_and_enterprise_are_told_apart() -> None:
    sandbox = UiConfig.model_validate(
        {"name": "flagdesk sandbox", "version": "0.9.0", "versionInfo": {"current": {}}}
    )
    assert capabilities_of(outcomes(ui=sandbox)).server_label == "flagdesk sandbox 0.9.0"
    enterprise = capabilities_of(outcomes(ui=unleash("8.2.0", enterprise="8.2.0")))
    assert enterprise.server_label == "Unleash 8.2.0 (Enterprise)"


# ---------------------------------------------------------------------------- per action, versions


def test_actions_follow_their_tool_and_their_own_needs() -> None:
    # Unleash OSS, admin API token: no groups, so no group action, with the tool's reason
    caps = capabilities_of(outcomes())
    for key in ("groups.create", "groups.edit", "groups.delete"):
        assert caps.action(key).reason == NEEDS_ENTERPRISE
    assert caps.action(DELETE_INACTIVE_USERS).available
    assert caps.action("archived_features.revive_bulk").available  # through search, too
    assert caps.action("context_fields.delete").available
    # groups exist, but the personal token's user is no Admin: groups are read, not changed
    caps = capabilities_of(outcomes(user=PERSONAL_EDITOR, groups=GroupList(groups=[])))
    assert caps.operation(TOOL.groups).available
    assert caps.action("groups.edit").reason == NEEDS_ADMIN_ROLE
    assert caps.action("users.create").reason == NEEDS_ADMIN_ROLE
    # a client token does none of them but the metrics upload, its tool's one action
    caps = capabilities_of(ProbeOutcomes(URL, False, "default", None))
    assert {caps.action(a).reason for a in ACTIONS if a is not UPLOAD_METRICS} == {NEEDS_ADMIN_SIDE}
    assert caps.action(UPLOAD_METRICS).available
    # an admin token without a client token cannot upload: its tool's reason
    caps = capabilities_of(outcomes())
    assert caps.action(UPLOAD_METRICS).reason == NEEDS_CLIENT_TOKEN
    assert set(caps.to_json()["actions"]) == {a.key for a in ACTIONS}


def test_the_personal_dashboard_needs_unleash_6_3() -> None:
    """A declared version range: Unleash before 6.3 has no personal dashboard API, said from the
    version, whatever the probe's request answered."""
    old = capabilities_of(outcomes(ui=unleash("6.2.4"), user=PERSONAL_EDITOR, dashboard=None))
    assert old.operation("project_dashboard").reason == (
        "The personal dashboard needs Unleash 6.3 or later; this server is 6.2.4"
    )
    dashboard = not_found("No project default")  # the endpoint exists
    new = capabilities_of(outcomes(ui=unleash("6.3.0"), user=PERSONAL_EDITOR, dashboard=dashboard))
    assert new.operation("project_dashboard").available


def test_flagdesk_check_reports_the_actions_a_usable_tool_cannot_do() -> None:
    caps = capabilities_of(outcomes(user=PERSONAL_EDITOR, groups=GroupList(groups=[])))
    lines = report(caps).splitlines()
    groups = next(i for i, line in enumerate(lines) if line.strip().startswith("Groups"))
    assert lines[groups].split()[1] == "yes"
    assert lines[groups + 1].split()[:3] == ["Create", "group", "no"]
    assert NEEDS_ADMIN_ROLE.split()[0] in lines[groups + 1]
    # a tool that cannot be used lists no actions: its own reason says it
    users = next(line for line in lines if line.strip().startswith("Users"))
    assert users.split()[1] == "no"
    assert not any(line.strip().startswith("Create user") for line in lines)
