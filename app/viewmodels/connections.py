"""`ConnectionsModel`: the connection dialog's view-model: profiles to add, edit, duplicate and
remove, "Test connection" with the capability report, and switching. QtCore only."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from app.api.capabilities import Capabilities
from app.api.client import normalise_base_url
from app.api.errors import ClientError
from app.api.sending import UnusableToken, check_token
from app.connection import ConnectionSpec, MissingToken, spec_of
from app.profiles import NOT_SET, NoKeyring, Profile, ProfileError, TokenStore
from app.registry import OPERATIONS
from app.viewmodels.base import ViewModel
from app.viewmodels.session import Session

#: the profile store's words the dialog needs (the errors this model passes on, the kinds of
#: token storage): the dialog imports them from here, not from `app.profiles`
__all__ = [
    "NOT_SET",
    "ConnectionsModel",
    "NoKeyring",
    "ProfileError",
    "ProfileForm",
    "TokenStore",
    "report_text",
]


@dataclass
class ProfileForm:
    """What the person typed. Empty tokens on an existing profile keep the stored ones."""

    name: str = ""
    url: str = ""
    token: str = ""
    client_token: str = ""
    verify_tls: bool = True
    ca_bundle: str = ""
    token_store: TokenStore = "keyring"

    def __repr__(self) -> str:
        return f"ProfileForm(name={self.name!r}, url={self.url!r})"


def report_text(caps: Capabilities) -> str:
    """The capability report as the dialog shows it."""
    lines = [caps.server_label, caps.token_label + (" (Admin root role)" if caps.is_admin else "")]
    lines.append("")
    for key, title in OPERATIONS.items():
        availability = caps.operation(key)
        if availability.available:
            note = f" ({availability.note})" if availability.note else ""
            lines.append(f"✓ {title}{note}")
        else:
            lines.append(f"✗ {title}: {availability.reason}")
    return "\n".join(lines)


class ConnectionsModel(ViewModel):
    #: the list of profiles changed
    profiles_changed = Signal()
    #: a test ended: (report or error text, succeeded)
    tested = Signal(str, bool)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.last_report = ""

    def profiles(self) -> list[Profile]:
        try:
            return self.session.store.profiles()
        except ProfileError as exc:
            self.set_error(str(exc))
            return []

    def form_of(self, name: str) -> ProfileForm:
        p = self.session.store.get(name)
        return ProfileForm(
            name=p.name,
            url=p.url,
            verify_tls=p.verify_tls,
            ca_bundle=p.ca_bundle or "",
            token_store=p.token_store,
        )

    def token_places(self, name: str) -> tuple[str, str]:
        """Where the profile's admin-side token and client token are, in words."""
        store = self.session.store
        profile = store.get(name)
        return store.token_place(profile, "admin"), store.token_place(profile, "client")

    def has_token(self, name: str) -> bool:
        try:
            profile = self.session.store.get(name)
            return self.session.store.tokens(profile)[0] is not None
        except ProfileError:
            return False

    def validate(self, form: ProfileForm, *, editing: str | None = None) -> dict[str, str]:
        """Problems by field name ("" key for the form as a whole); empty when it can be saved."""
        problems: dict[str, str] = {}
        name = form.name.strip()
        if not name:
            problems["name"] = "A profile needs a name."
        elif "/" in name:
            problems["name"] = "A name cannot contain '/'."
        elif name != editing and any(p.name == name for p in self.profiles()):
            problems["name"] = f"A profile named {name!r} exists already."
        try:
            normalise_base_url(form.url)
        except ValueError as exc:
            problems["url"] = str(exc)
        if not form.token.strip() and not (editing and self.has_token(editing)):
            problems["token"] = "Give an admin API token or a personal access token."
        for field, where in (("token", "The token"), ("client_token", "The client token")):
            try:  # the command line's check and words (a wrapped paste, a character not ASCII)
                check_token(getattr(form, field).strip(), where)
            except UnusableToken as exc:
                problems[field] = str(exc)
        return problems

    def save(self, form: ProfileForm, *, editing: str | None = None) -> Profile:
        """Save the form. Raises `ValueError` (field problems), `NoKeyring` (ask the person where
        to keep the token, then save again with `form.token_store` set) or `ProfileError`."""
        problems = self.validate(form, editing=editing)
        if problems:
            raise ValueError("; ".join(problems.values()))
        profile = Profile(
            name=form.name.strip(),
            url=form.url,
            verify_tls=form.verify_tls,
            ca_bundle=form.ca_bundle.strip() or None,
            token_store=form.token_store,
        )
        saved = self.session.store.save(
            profile,
            token=form.token.strip() or None,
            client_token=form.client_token.strip() or None,
            replace=editing,
        )
        self.profiles_changed.emit()
        return saved

    def remove(self, name: str) -> None:
        self.session.store.remove(name)
        self.profiles_changed.emit()

    def duplicate_name(self, name: str) -> str:
        taken = {p.name for p in self.profiles()}
        candidate, n = f"{name} copy", 2
        while candidate in taken:
            candidate, n = f"{name} copy {n}", n + 1
        return candidate

    def spec_of_form(self, form: ProfileForm, *, editing: str | None = None) -> ConnectionSpec:
        url = normalise_base_url(form.url)
        token, client_token = form.token.strip(), form.client_token.strip() or None
        if editing and not token:
            stored = spec_of(self.session.store.get(editing), self.session.store)
            token, client_token = stored.token, client_token or stored.client_token
        if not token:
            raise ValueError("Give an admin API token or a personal access token.")
        check_token(token, "The token")  # UnusableToken is a ValueError
        check_token(client_token, "The client token")
        return ConnectionSpec(
            url=url,
            token=token,
            client_token=client_token,
            verify_tls=form.verify_tls,
            ca_bundle=form.ca_bundle.strip() or None,
            label=form.name.strip() or url,
        )

    def test(self, form: ProfileForm, *, editing: str | None = None) -> asyncio.Task[None]:
        """Connect with what the form says (nothing is saved) and report what works."""
        return self.run(self._test(form, editing))

    async def _test(self, form: ProfileForm, editing: str | None) -> None:
        self.set_status("Testing the connection…")
        try:
            spec = await asyncio.to_thread(self.spec_of_form, form, editing=editing)
        except (ValueError, MissingToken, NoKeyring, ProfileError) as exc:
            self.last_report = str(exc)
            self.tested.emit(self.last_report, False)
            return
        try:
            async with spec.client() as client:
                caps = await client.capabilities()
        except ClientError as exc:
            self.last_report = str(exc)
            self.tested.emit(self.last_report, False)
            return
        self.last_report = report_text(caps)
        self.tested.emit(self.last_report, True)
