"""The registry (`app.registry`): every tool and action declared once, cheap to import, and
read by the capability report and `flagdesk check`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.registry import (
    ACTIONS,
    ACTIONS_BY_KEY,
    EVERY_TOOL,
    GROUPS,
    HEADLESS_TOOLS,
    OPERATIONS,
    TOOL,
    TOOL_OF,
    TOOLS,
    TOOLS_BY_KEY,
    Needs,
    Versions,
    version_cell,
    version_rows,
    version_table,
    version_tuple,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_tools_in_sidebar_order_with_unique_keys() -> None:
    assert [t.key for t in TOOLS] == [
        "groups", "users", "inactive_users", "project_dashboard", "archived_features",
        "context_usage", "metrics_upload", "api_tokens", "personal_tokens",
        # issue 36: the service accounts' window
        "service_accounts",
        # issue 36: the roles' window
        "roles",
        # issue 36: project access and who can do what where have their windows
        "project_access", "access_overview",
        # issue 36: the clean-up report's window
        "cleanup",
        # issue 37, slice 5: the Compare window
        "compare",
        # issue 38: the login history's window (People, Enterprise's)
        "logins",
        # issue 38: the event log's window
        "events",
        # issue 38: the banners' window
        "banners",
    ]  # fmt: skip
    assert tuple(TOOL) == TOOLS
    assert len(TOOLS_BY_KEY) == len(TOOLS)
    # the tools without a window yet are reported, never in the sidebar: none since the
    # Compare window (issue 37) came, until issue 38's instance settings (the event log and
    # the banners have their windows)
    assert [t.key for t in HEADLESS_TOOLS] == ["instance"]
    assert [t.key for t in TOOLS if t.group == "Access"] == [
        "api_tokens", "personal_tokens",
        "service_accounts",  # issue 36: the service accounts' window
        "roles",  # issue 36: the roles' window
        "project_access", "access_overview",  # issue 36: project access, who can do what where
        "cleanup",  # issue 36: the clean-up report's window
    ]  # fmt: skip
    assert set(OPERATIONS) == set(TOOLS_BY_KEY) | {t.key for t in HEADLESS_TOOLS}
    assert not set(TOOLS_BY_KEY) & {t.key for t in HEADLESS_TOOLS}
    assert EVERY_TOOL == TOOLS + HEADLESS_TOOLS
    assert all(tool.group in GROUPS for tool in TOOLS)
    # issue 37, slice 5: Compare is listed under Configuration
    assert TOOLS_BY_KEY["compare"].group == "Configuration"
    assert TOOLS_BY_KEY["events"].group == "Configuration"
    assert TOOLS_BY_KEY["banners"].group == "Configuration"


def test_every_action_issue_15_needs_is_declared_once_under_its_tool() -> None:
    assert len(ACTIONS_BY_KEY) == len(ACTIONS)
    expected = {
        "inactive_users": {"inactive_users.delete"},
        "users": {"users.create", "users.delete", "users.edit", "users.reset_password"},
        "archived_features": {
            "archived_features.revive", "archived_features.delete",
            "archived_features.revive_bulk", "archived_features.delete_bulk",
            "archived_features.archive",  # the undo of a revive
        },
        "groups": {"groups.create", "groups.edit", "groups.delete"},
        "context_usage": {"context_fields.create", "context_fields.edit", "context_fields.delete"},
        # journaled so the History lists uploads (issue 34 section 2)
        "metrics_upload": {"metrics.upload"},
        # issue 36: the server's API tokens (an Admin's), and the connected user's own tokens
        # (with a personal access token only)
        "api_tokens": {"api_tokens.create", "api_tokens.delete", "api_tokens.expire"},
        "personal_tokens": {"personal_tokens.create", "personal_tokens.delete"},
        # issue 36: custom roles (Enterprise; the list works everywhere)
        "roles": {"roles.create", "roles.edit", "roles.delete"},
        # issue 36: service accounts and their tokens (Enterprise; an Admin's)
        "service_accounts": {"service_accounts.create", "service_accounts.edit",
                             "service_accounts.delete", "service_accounts.create_token",
                             "service_accounts.delete_token"},
        # issue 36: project access (Pro and Enterprise)
        "project_access": {"project_access.grant", "project_access.set_roles",
                           "project_access.revoke"},
        # issue 37: promote (an Admin's; the Compare tool's)
        "compare": {"compare.promote", "compare.import"},
        # issue 38: maintenance mode and the CORS origins (an Admin's), banners (Enterprise)
        "instance": {"instance.maintenance", "instance.cors"},
        "banners": {"banners.create", "banners.edit", "banners.delete"},
    }  # fmt: skip
    every = {tool.key: tool for tool in EVERY_TOOL}
    for key, actions in expected.items():
        assert {a.key for a in every[key].actions} == actions
        assert all(TOOL_OF[a] is every[key] for a in actions)
    assert {a.key for a in ACTIONS} == set().union(*expected.values())
    assert all(ACTIONS_BY_KEY[a].needs.tokens == {"personal"}
               for a in expected["personal_tokens"])  # fmt: skip
    # the user actions need the Admin root role, like the tools that list users
    assert all(ACTIONS_BY_KEY[a].needs.admin_role for a in expected["users"])
    assert ACTIONS_BY_KEY["inactive_users.delete"].needs.admin_role
    # an upload goes with a client token, whatever the main token is
    assert ACTIONS_BY_KEY["metrics.upload"].needs.tokens == TOOL.metrics_upload.needs.tokens
    # issue 38: an instance's settings change only with an Admin's token
    assert all(ACTIONS_BY_KEY[a].needs.admin_role
               for a in expected["instance"] | expected["banners"])  # fmt: skip


def test_the_token_tools_have_their_commands_actions_and_a_sidebar_entry() -> None:
    """`flagdesk tokens` and `flagdesk pats` and their windows share the registry's tools: the
    actions are checked, journaled and reported like any other, the tools in the sidebar's
    `TOOLS` (group "Access", issue 36)."""
    from app.registry import API_TOKENS, PERSONAL_TOKENS

    keys = {a.key for a in API_TOKENS.actions}
    assert keys == {"api_tokens.create", "api_tokens.delete", "api_tokens.expire"}
    assert all(ACTIONS_BY_KEY[k].needs.admin_role and TOOL_OF[k] is API_TOKENS for k in keys)
    assert TOOL.api_tokens is API_TOKENS and TOOL.personal_tokens is PERSONAL_TOKENS
    assert TOOLS_BY_KEY["api_tokens"] is API_TOKENS
    assert GROUPS[-1] == "Access"


def test_versions() -> None:
    assert version_tuple("8.2.0") == (8, 2, 0)
    assert version_tuple("6.3.0-beta.1") == (6, 3, 0)
    assert version_tuple("unknown") is None
    dashboard = Versions("unleash", minimum=(6, 3))
    assert not dashboard.admits("unleash", "6.2.9")
    assert dashboard.admits("unleash", "6.3.0") and dashboard.admits("unleash", "8.2.0")
    assert dashboard.admits("sandbox", "0.1.0")  # a range is about one kind of server
    assert dashboard.admits("unleash", "")  # an unknown version does not rule it out
    assert not Versions("unleash", below=(7, 0)).admits("unleash", "7.0.0")
    assert dashboard.describe() == "Unleash 6.3 or later"


def test_the_registry_is_cheap_to_import() -> None:
    """The main window's frame reads it before the client is loaded: it must not bring pydantic,
    httpx, keyring or Qt with it."""
    code = (
        "import sys, app.registry\n"
        "heavy = [m for m in ('pydantic', 'httpx', 'keyring', 'PySide6', 'app.api.models')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_the_readme_version_table_is_the_generated_one() -> None:
    """The README's table of tools and actions by Unleash version is `version_table()`'s output
    (regenerate it with `python -m app.registry --markdown`)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- version-table: python -m app.registry --markdown -->\n")
    table = readme[readme.index("\n", start) + 1 : readme.index("<!-- /version-table -->")]
    assert table == version_table()
    out = subprocess.run([sys.executable, "-m", "app.registry", "--markdown"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert out == table


def test_version_cells() -> None:
    rows = dict(version_rows())
    assert rows["project_dashboard"]["5.12.8"] == "no: needs Unleash 6.3 or later"
    assert rows["project_dashboard"]["6.10.1"] == "yes"
    assert rows["archived_features"]["6.10.1"] == "yes"
    assert rows["archived_features"]["7.6.5"] == "yes; through the search API"
    assert rows["archived_features.revive"]["7.6.5"] == "yes"  # the tool's way of listing
    assert rows["groups.delete"]["8.2.0"] == "Enterprise"
    # an action is out wherever its tool is
    old = version_cell((TOOL.project_dashboard.needs, Needs()), "6.2.0")
    assert old == "no: needs Unleash 6.3 or later"
    assert version_cell((TOOL.inactive_users.needs,), "5.9.0") == "no: needs Unleash 5.10 or later"
    reason = TOOL.project_dashboard.needs.versions[0].reason("Project dashboard", "5.12.8")
    assert reason == "The personal dashboard needs Unleash 6.3 or later; this server is 5.12.8"
    assert Versions("unleash", (9, 0)).reason("Project dashboard", "8.2.0") == (
        "Project dashboard needs Unleash 9.0 or later; this server is 8.2.0"
    )
