"""Connection profiles: the store (tokens in the keyring or the chosen fallback) and
`flagdesk profiles`."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.errors
import pytest
from keyring.backends import fail

from app import cli
from app.profiles import (
    KEYRING_SERVICE,
    NOT_SET,
    NoKeyring,
    Profile,
    ProfileError,
    ProfileStore,
    _keyring_reason,
)
from tests.conftest import MemoryKeyring

TOKEN = "*:*.profile-test-admin-token-0123456789"
CLIENT = "default:development.profile-test-client-token"


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


def files_of(directory: Path) -> str:
    return "".join(p.read_text() for p in directory.iterdir() if p.is_file())


def test_tokens_go_to_the_keyring_not_the_profiles_file(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    store = ProfileStore(tmp_path)
    store.save(Profile(name="prod", url="https://flags.example.com/"), token=TOKEN,
               client_token=CLIENT)  # fmt: skip
    assert memory_keyring.passwords == {
        (KEYRING_SERVICE, "prod/admin"): TOKEN,
        (KEYRING_SERVICE, "prod/client"): CLIENT,
    }
    assert TOKEN not in files_of(tmp_path) and CLIENT not in files_of(tmp_path)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    again = ProfileStore(tmp_path)
    profile = again.get("prod")
    assert profile.url == "https://flags.example.com" and profile.has_client_token
    assert again.tokens(profile) == (TOKEN, CLIENT)


def test_rename_moves_tokens_and_remove_deletes_them(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    store = ProfileStore(tmp_path)
    store.save(Profile(name="stage", url="http://stage:4242"), token=TOKEN)
    store.set_last("stage")
    renamed = store.save(Profile(name="staging", url="http://stage:4242"), replace="stage")
    assert [p.name for p in store.profiles()] == ["staging"]
    assert store.tokens(renamed) == (TOKEN, None)
    assert (KEYRING_SERVICE, "stage/admin") not in memory_keyring.passwords
    assert store.last == "staging"
    store.remove("staging")
    assert memory_keyring.passwords == {} and store.profiles() == [] and store.last is None


def test_without_a_keyring_nothing_is_written_until_the_user_chooses(
    tmp_path: Path, no_keyring: None
) -> None:
    store = ProfileStore(tmp_path)
    with pytest.raises(NoKeyring) as info:
        store.save(Profile(name="prod", url="http://prod:4242"), token=TOKEN)
    assert str(store.tokens_file) in str(info.value) and "memory" in str(info.value)
    assert not store.tokens_file.exists() and store.profiles() == []

    in_memory = store.save(
        Profile(name="prod", url="http://prod:4242", token_store="memory"), token=TOKEN
    )
    assert store.tokens(in_memory) == (TOKEN, None)
    assert TOKEN not in files_of(tmp_path)
    assert ProfileStore(tmp_path).tokens(in_memory) == (None, None)  # gone with the process

    in_file = store.save(
        Profile(name="prod", url="http://prod:4242", token_store="file"),
        token=TOKEN,
        replace="prod",
    )
    assert json.loads(store.tokens_file.read_text()) == {"prod/admin": TOKEN}
    assert stat.S_IMODE(store.tokens_file.stat().st_mode) == 0o600
    assert ProfileStore(tmp_path).tokens(in_file) == (TOKEN, None)


def test_bad_profiles_are_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no scheme"):
        Profile(name="x", url="flags.example.com")
    with pytest.raises(ValueError, match="cannot contain"):
        Profile(name="a/b", url="http://x")
    store = ProfileStore(tmp_path)
    store.save(Profile(name="one", url="http://x", token_store="file"), token=TOKEN)
    with pytest.raises(ProfileError, match="exists already"):
        store.save(Profile(name="one", url="http://y", token_store="file"), token=TOKEN)
    store.path.write_text('{"profiles": [{"name": "broken"}]}')
    with pytest.raises(ProfileError, match=r"damaged: profiles\.0\.url"):
        store.profiles()


def test_the_profiles_command(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("FLAGDESK_TOKEN", TOKEN)
    monkeypatch.delenv("FLAGDESK_CLIENT_TOKEN", raising=False)
    assert cli.main(["profiles", "add", "prod", "--url", "https://flags.example.com"]) == 0
    assert "OS keyring" in capsys.readouterr().out
    assert cli.main(["profiles", "add", "lab", "--url", "http://lab:4242", "--insecure"]) == 0
    assert "NOT be verified" in capsys.readouterr().err
    assert cli.main(["profiles", "list"]) == 0
    listing = capsys.readouterr().out
    assert "prod" in listing and "lab" in listing and "TLS NOT VERIFIED" in listing
    assert cli.main(["profiles", "show", "prod", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["url"] == "https://flags.example.com" and shown["token_store"] == "keyring"
    assert cli.main(["profiles", "remove", "lab"]) == 0
    assert cli.main(["profiles", "show", "lab"]) == 2
    assert "No profile named 'lab'" in capsys.readouterr().err
    everything = files_of(tmp_path)
    assert TOKEN not in everything


def test_the_profiles_command_without_a_keyring(
    tmp_path: Path,
    no_keyring: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("FLAGDESK_TOKEN", TOKEN)
    assert cli.main(["profiles", "add", "prod", "--url", "http://prod:4242"]) == 2
    err = capsys.readouterr().err
    assert "nothing was saved" in err and "--token-store file" in err
    assert not list(tmp_path.iterdir())
    assert cli.main(["profiles", "add", "prod", "--url", "http://prod:4242",
                     "--token-store", "file"]) == 0  # fmt: skip
    assert "plain-text file" in capsys.readouterr().out


def test_the_keyrings_reason_is_whole_never_cut_in_a_word(tmp_path: Path, no_keyring: None) -> None:
    """keyring's own message (222 characters) used to be cut at 160, mid-word."""
    store = ProfileStore(tmp_path)
    with pytest.raises(NoKeyring) as info:
        store.save(Profile(name="prod", url="http://prod:4242"), token=TOKEN)
    reason = info.value.reason
    assert reason.startswith("No recommended backend was available")
    assert reason.endswith("See https://pypi.org/project/keyring for details"), reason

    long = " ".join(["A keyring said something rather long."] * 20)
    cut = _keyring_reason(keyring.errors.KeyringError(long))
    assert cut.endswith("something rather long…") and len(cut) <= 301
    words = " ".join(["unbroken"] * 80)
    cut = _keyring_reason(keyring.errors.KeyringError(words))
    assert cut.endswith(" unbroken…")


def test_where_each_token_is_kept_is_said_exactly(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    store = ProfileStore(tmp_path)
    kept = store.save(Profile(name="kr", url="http://kr:4242"), token=TOKEN, client_token=CLIENT)
    assert store.token_place(kept, "admin") == "in the OS keyring"
    assert store.token_place(kept, "client") == "in the OS keyring"
    memory = store.save(Profile(name="mem", url="http://m:4242", token_store="memory"), token=TOKEN)
    assert store.token_place(memory, "admin") == "in memory until flagdesk exits (not saved)"
    assert store.token_place(memory, "client") == NOT_SET
    assert ProfileStore(tmp_path).token_place(memory, "admin").startswith("not set (it was kept")
    in_file = store.save(
        Profile(name="file", url="http://f:4242", token_store="file"), client_token=CLIENT
    )
    assert store.token_place(in_file, "admin") == NOT_SET
    assert store.token_place(in_file, "client") == f"in the plain-text file {store.tokens_file}"
