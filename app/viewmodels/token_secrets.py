"""What the two token windows (`ApiTokensModel`, `PersonalTokensModel`) share about a secret
just created: `NewSecret`, the one object that holds it while its dialog is open, and putting it
into the connection's profile (`ProfileSecrets`: the keyring, or wherever the profile keeps its
tokens, through `Session.store`, the store the connections dialog and the metrics tool use).

A secret is shown once: the view-model that created it hands a `NewSecret` to the window with
its `secret_created` signal and keeps no reference of its own; the window's dialog drops it when
it closes (`NewSecret.forget`), so after that only the server (as a hash, or in Unleash's own
list) and, where the person chose so, the profile's token store hold it. It is registered with
the log's redaction (`app.logs.register_secret`) as soon as it is read, so no log line holds it.

QtCore only."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from PySide6.QtCore import SignalInstance

from app.profiles import ProfileError, TokenRole
from app.viewmodels.base import ViewModel
from app.viewmodels.session import Session

__all__ = ["NewSecret", "ProfileSecrets", "masked"]

#: how many of a secret's last characters a masked secret shows
SHOWN_END = 4


def masked(secret: str) -> str:
    """`••••••••3f9a`: a secret as the windows show it until "Show" is pressed."""
    return "•" * 8 + secret[-SHOWN_END:]


@dataclass(eq=False)
class NewSecret:
    """A token's secret just created, with what names the token (never a secret) and what it
    may be used for in the connection's profile (`role`: "client" for an API token, the
    metrics uploads' token; "admin" for a personal access token, the connection's own)."""

    #: the secret itself, "" once forgotten
    secret: str = field(repr=False)
    #: "client token “ci” for all projects / development"
    label: str
    role: TokenRole
    #: what "Use for …" is called: "Use for this connection's metrics uploads"
    use_title: str
    #: why "Use for …" cannot be done ("" when it can)
    use_reason: str = ""
    #: the connection it was created on (its name and URL): it is put into that one's profile
    #: only, never into another's the window has since moved to
    connection: tuple[str, str] = ("", "")

    @property
    def tail(self) -> str:
        return self.secret[-SHOWN_END:]

    def forget(self) -> None:
        """Drop the secret (as far as Python lets: the string object goes once nothing holds
        it), and the log's redaction of it that its creation registered."""
        from app import logs

        if self.secret:
            logs.forget_secret(self.secret)
        self.secret = ""


class ProfileSecrets:
    """The saved profile behind the session's connection, and writing a token into it."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def profile_name(self) -> str | None:
        """The profile of the current connection (same name, same server); None for the
        embedded sandbox or a connection that is no saved profile."""
        from app.api.client import normalise_base_url

        s = self.session
        connection = s.connection
        if connection is None or s.is_sandbox or not s.ready:
            return None
        try:
            profile = s.store.get(connection.name)
        except ProfileError:
            return None
        try:
            same = normalise_base_url(profile.url) == normalise_base_url(connection.spec.url)
        except ValueError:
            same = False
        return profile.name if same else None

    def reason(self, new: NewSecret | None = None) -> str:
        """Why a token (`new`, where given) cannot be put into the connection's profile ("" when
        it can): not connected, no profile, or (`new`) a connection other than its own."""
        if not self.session.ready:
            return "Not connected."
        if new is not None and new.connection != (self.session.name, self.session.url):
            return (
                f"The token was made on {new.connection[1]} (connection “{new.connection[0]}”), "
                "and the window is connected elsewhere now: nothing was saved."
            )
        if self.profile_name is None:
            return (
                "This connection is no saved profile (the embedded sandbox, or a connection "
                "made from a URL), so there is no profile to keep the token in: save the "
                "connection in File > Connections first, or copy the secret."
            )
        return ""

    async def store(self, role: TokenRole, secret: str) -> str:
        """Put `secret` into the profile as its `role` token (`admin`: the connection's token;
        `client`: the metrics uploads'), then connect again so the connection uses it. Returns
        what was done, in words; raises `ProfileError` (its message says why) when the store
        refused it, and `ValueError` when there is no profile."""
        name = self.profile_name
        if name is None:
            raise ValueError(self.reason())
        store = self.session.store

        def save() -> None:
            profile = store.get(name)
            if role == "admin":
                store.save(profile, token=secret, replace=name)
            else:
                store.save(profile, client_token=secret, replace=name)

        await asyncio.to_thread(save)
        place = store.token_place(store.get(name), role)
        # connect again, from the profile: its tokens as just stored are the connection's now
        self.session.open_profile(name)
        what = "client token (metrics uploads)" if role == "client" else "token"
        return f"Saved as the {what} of the profile “{name}”, {place}; reconnecting."

    def use(
        self, model: ViewModel, new: NewSecret, done: SignalInstance
    ) -> asyncio.Task[None] | None:
        """Put `new`'s secret into the profile as its role's token (`store`), as `model`'s task,
        and say in words how it went through `done`: at once (and no task) when it cannot."""
        reason = new.use_reason or self.reason(new)
        if reason or not new.secret:
            done.emit(reason or "The secret is gone: nothing was saved.")
            return None
        secret, role = new.secret, new.role

        async def store() -> None:
            try:
                said = await self.store(role, secret)
            except (ProfileError, ValueError) as exc:
                said = f"The token was not saved: {exc}"
            done.emit(said)

        return model.run(store(), busy=False)
