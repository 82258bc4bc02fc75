"""Connection profiles: saved in the platformdirs config folder, their tokens in the OS keyring.

A profile is a name, a base URL, TLS settings and where its tokens are kept. `profiles.json`
holds no token. Tokens go to the OS keyring (service `flagdesk`, user `<profile>/admin` and
`<profile>/client`). Where there is no usable keyring, `NoKeyring` is raised and the caller asks
the person to choose: `memory` (kept until the program exits) or `file` (a plain-text file,
readable only by the user, named in every message about it). Nothing is written in clear text
without that choice. No Qt here: the GUI and the command line share this store.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, ValidationError

from app.paths import PROFILES_FILE, config_dir

KEYRING_SERVICE = "flagdesk"
TokenStore = Literal["keyring", "file", "memory"]
#: where a token that is not stored anywhere is
NOT_SET = "not set"
TokenRole = Literal["admin", "client"]


def _check_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValueError("a profile needs a name")
    if "/" in name or "\n" in name:
        raise ValueError("a profile name cannot contain '/' or a line break")
    return name


def _check_url(url: str) -> str:
    from app.api.client import normalise_base_url

    return normalise_base_url(url)


class Profile(BaseModel):
    name: Annotated[str, AfterValidator(_check_name), Field(max_length=100)]
    url: Annotated[str, AfterValidator(_check_url)]
    verify_tls: bool = True
    ca_bundle: str | None = None
    token_store: TokenStore = "keyring"
    #: whether a client token was saved (for metrics uploads)
    has_client_token: bool = False


class _ProfilesFile(BaseModel):
    version: int = 1
    last: str | None = None
    profiles: list[Profile] = []


class ProfileError(Exception):
    """A profile cannot be read, found or saved; `str()` says which and why."""


class NoKeyring(ProfileError):
    """No usable OS keyring. The caller offers `memory` or `file` (naming `file_path`)."""

    def __init__(self, reason: str, file_path: Path) -> None:
        self.reason = reason
        self.file_path = file_path
        super().__init__(
            f"No OS keyring is available to keep the token ({reason}). Choose where to keep it: "
            f"in memory until flagdesk exits, or in the plain-text file {file_path} (readable "
            "only by you, not encrypted)."
        )


class ProfileStore:
    """Profiles in `<config>/profiles.json`, tokens in the keyring (or the chosen fallback)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or config_dir()
        self.path = self.directory / PROFILES_FILE
        self.tokens_file = self.directory / "tokens.json"
        self._memory: dict[str, str] = {}

    # ------------------------------------------------------------------ profiles

    def _load(self) -> _ProfilesFile:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _ProfilesFile()
        except OSError as exc:
            raise ProfileError(f"Cannot read {self.path}: {exc.strerror}") from None
        try:
            return _ProfilesFile.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ProfileError(f"{self.path} is damaged: {where}: {first['msg']}") from None

    def _save(self, data: _ProfilesFile) -> None:
        _write_private(self.path, data.model_dump_json(indent=2) + "\n")

    def profiles(self) -> list[Profile]:
        return list(self._load().profiles)

    def get(self, name: str) -> Profile:
        for profile in self._load().profiles:
            if profile.name == name:
                return profile
        known = ", ".join(p.name for p in self._load().profiles) or "none saved yet"
        raise ProfileError(f"No profile named {name!r} (profiles: {known}).")

    @property
    def last(self) -> str | None:
        """The profile used last (the GUI reopens it)."""
        return self._load().last

    def set_last(self, name: str | None) -> None:
        data = self._load()
        data.last = name
        self._save(data)

    def save(
        self,
        profile: Profile,
        *,
        token: str | None = None,
        client_token: str | None = None,
        replace: str | None = None,
    ) -> Profile:
        """Add `profile`, or replace the one named `replace` (renaming moves its tokens).
        Tokens given are stored where `profile.token_store` says; `None` keeps what is stored.

        Raises `NoKeyring` (nothing saved) when the keyring is wanted and there is none."""
        data = self._load()
        old = next((p for p in data.profiles if p.name == replace), None) if replace else None
        if replace and old is None:
            raise ProfileError(f"No profile named {replace!r}.")
        if profile.name != replace and any(p.name == profile.name for p in data.profiles):
            raise ProfileError(f"A profile named {profile.name!r} exists already.")
        # carry tokens over from the old name or store when not given anew
        if old is not None:
            token = token if token is not None else self._read(old, "admin")
            if client_token is None and old.has_client_token:
                client_token = self._read(old, "client")
        if client_token is not None:
            profile = profile.model_copy(update={"has_client_token": bool(client_token)})
        elif old is not None:
            profile = profile.model_copy(update={"has_client_token": old.has_client_token})
        if token:
            self._write(profile, "admin", token)
        if client_token:
            self._write(profile, "client", client_token)
        if old is not None and (old.name != profile.name or old.token_store != profile.token_store):
            self._forget(old)
        data.profiles = [p for p in data.profiles if p.name != replace] + [profile]
        data.profiles.sort(key=lambda p: p.name.casefold())
        if replace is not None and data.last == replace:
            data.last = profile.name
        self._save(data)
        return profile

    def remove(self, name: str) -> None:
        data = self._load()
        profile = self.get(name)
        self._forget(profile)
        data.profiles = [p for p in data.profiles if p.name != name]
        if data.last == name:
            data.last = None
        self._save(data)

    # ------------------------------------------------------------------ tokens

    def tokens(self, profile: Profile) -> tuple[str | None, str | None]:
        """(admin-side token, client token) of a profile; None where none is stored."""
        client = self._read(profile, "client") if profile.has_client_token else None
        return self._read(profile, "admin"), client

    def token_place(self, profile: Profile, role: TokenRole) -> str:
        """Where the profile's `role` token is, in words: "in the OS keyring", "in memory until
        flagdesk exits (not saved)", "in the plain-text file <path>", or "not set"."""
        if role == "client" and not profile.has_client_token:
            return NOT_SET
        try:
            token = self._read(profile, role)
        except NoKeyring as exc:
            return f"in the OS keyring, which cannot be read now ({exc.reason})"
        if token is None:
            if profile.token_store == "memory":
                return f"{NOT_SET} (it was kept in memory only, until flagdesk last exited)"
            return NOT_SET
        if profile.token_store == "memory":
            return "in memory until flagdesk exits (not saved)"
        if profile.token_store == "file":
            return f"in the plain-text file {self.tokens_file}"
        return "in the OS keyring"

    def _key(self, profile: Profile, role: TokenRole) -> str:
        return f"{profile.name}/{role}"

    def _read(self, profile: Profile, role: TokenRole) -> str | None:
        key = self._key(profile, role)
        if profile.token_store == "memory":
            return self._memory.get(key)
        if profile.token_store == "file":
            return self._file_tokens().get(key)
        try:
            token: str | None = _keyring().get_password(KEYRING_SERVICE, key)
        except _keyring().errors.KeyringError as exc:
            raise NoKeyring(_keyring_reason(exc), self.tokens_file) from None
        return token

    def _write(self, profile: Profile, role: TokenRole, token: str) -> None:
        key = self._key(profile, role)
        if profile.token_store == "memory":
            self._memory[key] = token
        elif profile.token_store == "file":
            tokens = self._file_tokens()
            tokens[key] = token
            _write_private(self.tokens_file, json.dumps(tokens, indent=2) + "\n")
        else:
            try:
                _keyring().set_password(KEYRING_SERVICE, key, token)
            except _keyring().errors.KeyringError as exc:
                raise NoKeyring(_keyring_reason(exc), self.tokens_file) from None

    def _forget(self, profile: Profile) -> None:
        roles: tuple[TokenRole, ...] = ("admin", "client")
        for role in roles:
            key = self._key(profile, role)
            self._memory.pop(key, None)
            if profile.token_store == "file":
                tokens = self._file_tokens()
                if tokens.pop(key, None) is not None:
                    _write_private(self.tokens_file, json.dumps(tokens, indent=2) + "\n")
            elif profile.token_store == "keyring":
                try:
                    _keyring().delete_password(KEYRING_SERVICE, key)
                except _keyring().errors.PasswordDeleteError:
                    pass
                except _keyring().errors.KeyringError:
                    pass  # nothing could have been stored there either

    def _file_tokens(self) -> dict[str, str]:
        try:
            data = json.loads(self.tokens_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ProfileError(f"Cannot read the token file {self.tokens_file}: {exc}") from None
        if not isinstance(data, dict):
            raise ProfileError(f"The token file {self.tokens_file} is damaged.")
        return {str(k): str(v) for k, v in data.items()}


def _keyring() -> ModuleType:
    """The keyring package, imported on first use (it takes 40 ms to import: not on the way to
    the window, nor for `flagdesk serve`)."""
    import keyring
    import keyring.errors

    return keyring


def keyring_status() -> tuple[bool, str]:
    """(usable, description) of the OS keyring backend."""
    try:
        backend = _keyring().get_keyring()
    except _keyring().errors.KeyringError as exc:  # pragma: no cover (get_keyring does not raise)
        return False, _keyring_reason(exc)
    name = type(backend).__module__.split(".")[-1] + "." + type(backend).__name__
    if name.startswith("fail.") or getattr(backend, "priority", 1) <= 0:
        return False, f"no usable backend ({name})"
    return True, name


#: a keyring's reason longer than this is cut at the end of a sentence (or a word) before it
REASON_LIMIT = 300


def _keyring_reason(exc: Exception) -> str:
    """The keyring's own words, whole: a reason is never cut in the middle of a word. A very
    long one ends at a sentence (or, failing that, a word) before `REASON_LIMIT`, with "…"."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = text.rstrip(".")
    if len(text) <= REASON_LIMIT:
        return text
    head = text[:REASON_LIMIT]
    end = head.rfind(". ")
    if end < REASON_LIMIT // 2:
        end = head.rfind(" ")
    return head[:end].rstrip(" .,;:") + "…"


def _write_private(path: Path, text: str) -> None:
    """Write atomically, readable only by the user (0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
