"""The snapshot file (`app.snapshot.files`, `app.snapshot.model`): saved and loaded back equal,
written 0600 whole or not at all, every load error naming the file, the JSON path and what is
wrong (an unknown schema version saying which this flagdesk reads), and never a secret: a
token-looking text refused on save and on load, an address with a password refused, an API
token's `secret` field refused. `tests/data/snapshot-example.json` is the example a person
reads: it loads, and is what `snapshot_examples.shop()` saves."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from app.snapshot.files import SnapshotFileError, dump, load, save
from app.snapshot.model import SCHEMA_VERSIONS, Snapshot
from tests.app.snapshot_examples import copy_of, flag, shop, snapshot

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "snapshot-example.json"
ADMIN_SECRET = "*:*.4f2a9c1be07d43a58e6f1d2c3b4a5968"


def write(tmp_path: Path, document: Any, name: str = "s.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def error_of(path: Path) -> SnapshotFileError:
    with pytest.raises(SnapshotFileError) as caught:
        load(path)
    assert str(path) in str(caught.value)
    return caught.value


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    original = snapshot()
    path = tmp_path / "shop.json"
    save(original, path)
    again = load(path)
    assert again == original
    assert dump(again) == dump(original)
    strategy = again.flags[0].environments[0].strategies[0]
    assert (strategy.name, strategy.parameters["rollout"], strategy.segments) == (
        "flexibleRollout", "100", ["beta-users"]
    )  # fmt: skip
    assert json.loads(path.read_text())["schemaVersion"] == 1
    assert not list(tmp_path.glob("*.part"))


def test_the_example_file_is_the_example_snapshot() -> None:
    assert load(EXAMPLE) == snapshot()
    assert json.loads(EXAMPLE.read_text()) == dump(snapshot())


def test_saved_private_whatever_the_umask_and_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "shop.json"
    old = os.umask(0o022)
    try:
        save(snapshot(), path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        path.chmod(0o644)  # a file already there, readable by others: replaced, private again
        save(snapshot(), path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["shop.json"]


def test_a_folder_that_does_not_exist_is_said(tmp_path: Path) -> None:
    with pytest.raises(SnapshotFileError, match="No such file or directory"):
        save(snapshot(), tmp_path / "none" / "shop.json")


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        (
            lambda d: d.update(schemaVersion=2),
            "$.schemaVersion",
            "schema version 2 is not one this flagdesk reads (it reads 1)",
        ),
        (lambda d: d.pop("schemaVersion"), "$.schemaVersion", "missing"),
        (
            lambda d: d["flags"][0]["environments"][1]["strategies"][0].pop("name"),
            "$.flags[0].environments[1].strategies[0].name",
            "missing field",
        ),
        (
            lambda d: d["flags"][1].update(impressionData="maybe"),
            "$.flags[1].impressionData",
            "Input should be a valid boolean",
        ),
        (
            lambda d: d["segments"][0].update(constrains=[]),
            "$.segments[0].constrains",
            "unknown field",
        ),
        (
            lambda d: d["server"].update(kind="gitlab"),
            "$.server.kind",
            "Input should be 'unleash' or 'sandbox'",
        ),
        (lambda d: d["apiTokens"][0].update(secret="x"), "$.apiTokens[0].secret", "unknown field"),
        (
            lambda d: d.update(takenAt="2026-12-07T06:00:00"),
            "$.takenAt",
            "Input should have timezone info",
        ),
        (
            lambda d: d["flags"].append({"name": "dark-mode", "project": "web-shop"}),
            "$.flags[2]",
            "name 'dark-mode' again (the first: $.flags[1]): each is named once",
        ),
        (
            lambda d: d["projectAccess"].append({"project": "web-shop", "role": "Owner"}),
            "$.projectAccess[1]",
            "project role 'web-shop Owner' again",
        ),
        (
            lambda d: d["flags"][0]["environments"].append({"name": "staging"}),
            "$.flags[0].environments[2]",
            "environment 'staging' again (the first: $.flags[0].environments[0])",
        ),
    ],
    ids=[
        "version",
        "no-version",
        "missing",
        "wrong-type",
        "misspelt",
        "kind",
        "token-secret",
        "naive-time",
        "flag-twice",
        "access-twice",
        "environment-twice",
    ],
)
def test_load_errors_name_the_file_the_path_and_the_problem(
    tmp_path: Path, change: Any, where: str, problem: str
) -> None:
    document = shop()
    change(document)
    error = error_of(write(tmp_path, document))
    assert error.where == where
    assert problem in error.problem
    assert str(error).startswith(f"{tmp_path / 's.json'} at {where}: ")


def test_the_schema_versions_read_are_named() -> None:
    assert SCHEMA_VERSIONS == (1,)


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{", "not JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
     ("[1]", "a snapshot is a JSON object, not list"),
     (b"\xff\xfe", "not UTF-8 text (byte 0)")],
    ids=["not-json", "not-object", "not-utf8"],
)  # fmt: skip
def test_a_file_that_is_no_snapshot(tmp_path: Path, text: str | bytes, problem: str) -> None:
    path = tmp_path / "s.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    assert error_of(path).problem == problem


def test_a_missing_file(tmp_path: Path) -> None:
    assert error_of(tmp_path / "nothing.json").problem == "no such file"


def test_a_token_looking_text_is_refused_on_save_and_on_load(tmp_path: Path) -> None:
    document = copy_of(shop())
    flag(document, "checkout-v2")["description"] = f"use {ADMIN_SECRET}"
    path = tmp_path / "leaky.json"
    with pytest.raises(SnapshotFileError, match="looks like a token's secret") as caught:
        save(Snapshot.model_validate(document), path)
    assert caught.value.where == "$.flags[0].description"
    assert not path.exists() and not list(tmp_path.iterdir())  # nothing written
    error = error_of(write(tmp_path, document))
    assert (error.where, error.problem) == (
        "$.flags[0].description", "looks like a token's secret: a snapshot never holds one"
    )  # fmt: skip


@pytest.mark.parametrize(
    "secret",
    ["default:production.0123456789abcdef0123456789abcdef", "user:0123456789abcdef0123456789",
     "[]:development.abcdefgh12345678", "Bearer abcdefgh12345678"],
)  # fmt: skip
def test_every_shape_of_token_is_seen(tmp_path: Path, secret: str) -> None:
    document = shop()
    document["apiTokens"][0]["tokenName"] = secret
    assert error_of(write(tmp_path, document)).where == "$.apiTokens[0].tokenName"


def test_a_saved_snapshot_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "shop.json"
    save(snapshot(), path)
    text = path.read_text()
    assert "secret" not in text and ADMIN_SECRET not in text
    assert set(json.loads(text)["apiTokens"][0]) == {
        "tokenName", "type", "projects", "environment", "expiresAt"
    }  # fmt: skip


@pytest.mark.parametrize(
    "url", ["https://admin:hunter2@unleash.example.com", "https://u.example.com/?token=abc"]
)
def test_an_address_holding_a_secret_is_refused(tmp_path: Path, url: str) -> None:
    document = shop()
    document["server"]["url"] = url
    error = error_of(write(tmp_path, document))
    assert error.where == "$.server.url"
    assert "keep only scheme, host and path" in error.problem
