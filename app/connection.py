"""A connection: one server and one token, the `AdminClient` every view-model and command shares,
and what that server and token can do. No Qt here.

Light to import (the GUI imports it before its window is shown): the client, its models and the
profile store are imported when a connection is made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.api.capabilities import Capabilities
    from app.api.client import AdminClient
    from app.profiles import Profile, ProfileStore


@dataclass(frozen=True)
class ConnectionSpec:
    """Where to connect and with what; `repr` leaves the tokens out."""

    url: str
    token: str
    client_token: str | None = None
    verify_tls: bool = True
    ca_bundle: str | None = None
    label: str = ""

    def __repr__(self) -> str:
        return f"ConnectionSpec(url={self.url!r}, label={self.label!r})"

    def client(self) -> AdminClient:
        from app.api.client import AdminClient

        return AdminClient(
            self.url,
            self.token,
            client_token=self.client_token,
            verify_tls=self.verify_tls,
            ca_bundle=self.ca_bundle,
        )


class MissingToken(Exception):
    """A profile whose token is not stored (kept in memory by a program that has exited)."""


def spec_of(profile: Profile, store: ProfileStore) -> ConnectionSpec:
    """The spec of a saved profile, its tokens read from where they are kept.

    Raises `NoKeyring` or `ProfileError` (from the store) and `MissingToken`."""
    token, client_token = store.tokens(profile)
    if not token:
        where = {
            "keyring": "the OS keyring has none for it",
            "file": f"{store.tokens_file} has none for it",
            "memory": "it was kept in memory only, by a flagdesk that has exited",
        }[profile.token_store]
        raise MissingToken(f"Profile {profile.name!r} has no token: {where}.")
    return ConnectionSpec(
        url=profile.url,
        token=token,
        client_token=client_token,
        verify_tls=profile.verify_tls,
        ca_bundle=profile.ca_bundle,
        label=profile.name,
    )


class Connection:
    """An open connection: `client` plus `capabilities` once probed."""

    def __init__(self, name: str, spec: ConnectionSpec, *, is_sandbox: bool = False) -> None:
        self.name = name
        self.spec = spec
        self.is_sandbox = is_sandbox
        self.client = spec.client()
        self.capabilities: Capabilities | None = None

    def __repr__(self) -> str:
        return f"Connection(name={self.name!r}, url={self.spec.url!r})"

    async def probe(self) -> Capabilities:
        """Probe (again) what the server and token can do."""
        self.capabilities = await self.client.capabilities(refresh=True)
        return self.capabilities

    async def aclose(self) -> None:
        await self.client.aclose()
