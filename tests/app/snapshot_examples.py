"""Small snapshots for the snapshot and comparison tests, as plain dicts (the JSON a file
holds): `shop()` is a server with a little of everything; its production and staging differ in
ways an administrator meets (a flag on in one and off in the other, a rollout, a constraint, a
segment only one has)."""

from __future__ import annotations

import copy
from typing import Any

from app.snapshot.model import Snapshot


def strategy(name: str, sort: int, *, id: str, **fields: Any) -> dict[str, Any]:
    return {"id": id, "name": name, "sortOrder": sort, **fields}


def rollout(percent: str, sort: int, *, id: str, **fields: Any) -> dict[str, Any]:
    parameters = {"rollout": percent, "stickiness": "default", "groupId": "checkout-v2"}
    return strategy("flexibleRollout", sort, id=id, parameters=parameters, **fields)


BETA_CONSTRAINT = {"contextName": "region", "operator": "IN", "values": ["eu", "us"]}


def shop() -> dict[str, Any]:
    """The example server's snapshot."""
    return {
        "schemaVersion": 1,
        "server": {"kind": "sandbox", "version": "8.2.0", "url": "http://127.0.0.1:4242",
                   "edition": "Enterprise"},
        "takenAt": "2026-12-07T06:00:00Z",
        "projects": [
            {"id": "default", "name": "Default", "environments": ["development", "production"]},
            {"id": "web-shop", "name": "Web shop", "description": "The shop front",
             "environments": ["development", "staging", "production"]},
        ],
        "environments": [
            {"name": "development", "type": "development", "enabled": True, "sortOrder": 1},
            {"name": "staging", "type": "test", "enabled": True, "sortOrder": 2},
            {"name": "production", "type": "production", "enabled": True, "sortOrder": 3},
        ],
        "flags": [
            {
                "name": "checkout-v2",
                "project": "web-shop",
                "type": "release",
                "description": "The new checkout",
                "tags": [{"type": "simple", "value": "beta"}],
                "environments": [
                    {"name": "staging", "enabled": True, "strategies": [
                        rollout("100", 0, id="s-1", constraints=[BETA_CONSTRAINT],
                                segments=["beta-users"]),
                        strategy("default", 1, id="s-2", title="staff"),
                    ]},
                    {"name": "production", "enabled": False, "strategies": [
                        rollout("25", 0, id="p-1"),
                        strategy("default", 1, id="p-2", title="staff"),
                    ]},
                ],
            },
            {
                "name": "dark-mode",
                "project": "default",
                "type": "experiment",
                "dependencies": [{"feature": "checkout-v2", "enabled": True}],
                "environments": [
                    {"name": "production", "enabled": True,
                     "strategies": [strategy("default", 0, id="d-1")],
                     "variants": [{"name": "dark", "weight": 1000, "stickiness": "default",
                                   "payload": {"type": "string", "value": "night"}}]},
                ],
            },
        ],
        "segments": [
            {"name": "beta-users", "project": "web-shop", "constraints": [BETA_CONSTRAINT]},
        ],
        "contextFields": [
            {"name": "region", "description": "Where", "stickiness": False,
             "legalValues": [{"value": "eu"}, {"value": "us", "description": "America"}]},
        ],
        "tagTypes": [{"name": "simple", "description": "Used to simplify filtering"}],
        "strategies": [
            {"name": "by-team", "description": "Teams",
             "parameters": [{"name": "teams", "type": "list", "required": True}]},
        ],
        "users": [
            {"email": "ada@example.com", "name": "Ada", "rootRole": "Admin"},
            {"email": "bob@example.com", "name": "Bob", "rootRole": "Editor"},
        ],
        "groups": [
            {"name": "shop-team", "rootRole": None,
             "users": ["ada@example.com", "bob@example.com"]},
        ],
        "roles": [
            {"name": "Admin", "type": "root", "permissions": [{"name": "ADMIN"}]},
            {"name": "Deployer", "type": "custom", "description": "Ships",
             "permissions": [{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "production"}]},
        ],
        "projectAccess": [
            {"project": "web-shop", "role": "Owner", "users": ["ada@example.com"],
             "groups": ["shop-team"]},
        ],
        "apiTokens": [
            {"tokenName": "shop-backend", "type": "backend", "projects": ["web-shop"],
             "environment": "production", "expiresAt": None},
        ],
    }  # fmt: skip


def copy_of(document: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(document)


def snapshot(document: dict[str, Any] | None = None) -> Snapshot:
    return Snapshot.model_validate(shop() if document is None else document)


def flag(document: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(f for f in document["flags"] if f["name"] == name)
    return found


def environment(flag_document: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in flag_document["environments"] if e["name"] == name)
    return found
