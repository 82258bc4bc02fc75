"""The log file: where it goes, its permissions, rotation, levels, and no token in it."""

from __future__ import annotations

import logging
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import logs

TOKEN = "*:*.logs-test-admin-token-0123456789"
SECRET_PART = "logs-test-admin-token-0123456789"
UNREGISTERED_HEX = "0123456789abcdef0123456789abcdef"


@pytest.fixture(autouse=True)
def _clean_logging() -> Iterator[None]:
    """Every test starts and ends without our handler, with the levels as they were, and with no
    registered secret of its own left behind."""
    logs.reset_logging()
    root = logging.getLogger()
    handlers = list(root.handlers)
    yield
    logs.reset_logging()
    logs.forget_secret(TOKEN)
    assert root.handlers == handlers


def read(path: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")


def test_the_file_is_created_in_the_directory_readable_by_the_user_alone(tmp_path: Path) -> None:
    path = logs.setup_logging(directory=tmp_path / "log")
    assert path == tmp_path / "log" / "flagdesk.log"
    assert path.exists()
    assert logs.current_log_file() == path
    logging.getLogger("flagdesk").info("hello %s", "there")
    line = read(path).splitlines()[-1]
    assert " INFO " in line and "flagdesk: hello there" in line
    assert line[:4].isdigit()  # starts with the time
    if sys.platform != "win32":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_file_becomes_private(tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("POSIX permissions")
    old = tmp_path / "flagdesk.log"
    old.write_text("older\n", encoding="utf-8")
    old.chmod(0o644)
    logs.setup_logging(directory=tmp_path)
    assert stat.S_IMODE(old.stat().st_mode) == 0o600
    assert read(old).startswith("older\n")  # appended to, not replaced


def test_log_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLAGDESK_LOG_DIR", str(tmp_path / "elsewhere"))
    assert logs.log_dir() == tmp_path / "elsewhere"
    assert logs.setup_logging() == tmp_path / "elsewhere" / "flagdesk.log"
    monkeypatch.delenv("FLAGDESK_LOG_DIR")
    assert "flagdesk" in logs.log_dir().parts or "flagdesk" in str(logs.log_dir())


def test_a_registered_token_never_reaches_the_file(tmp_path: Path) -> None:
    path = logs.setup_logging(verbose=True, directory=tmp_path)
    logs.register_secret(TOKEN)
    # a child logger: its records never pass the root logger's filters
    logging.getLogger("httpcore.http11").warning("header %s", f"authorization={TOKEN}")
    logging.getLogger("flagdesk.api").info("sent %s to %s", TOKEN, "server")
    logging.getLogger("flagdesk.api").info(f"inline {TOKEN}")
    # the secret alone, as Unleash's /api/admin/user echoes it
    logging.getLogger("flagdesk.api").debug("body: %r", {"secret": SECRET_PART})
    try:
        raise RuntimeError(f"the server rejected {TOKEN}")
    except RuntimeError:
        logging.getLogger("flagdesk.ui").exception("failed with %s", TOKEN)
    text = read(path)
    assert TOKEN not in text
    assert SECRET_PART not in text
    assert "Traceback" in text and "RuntimeError: the server rejected ***" in text
    assert "sent *** to server" in text


def test_a_record_with_bad_args_is_kept_and_redacted() -> None:
    """(pytest's own log capture raises on bad %-args, so this one goes to the filter directly.)"""
    logs.register_secret(TOKEN)
    record = logging.LogRecord(
        "flagdesk", logging.WARNING, __file__, 1, "bad %s %s", (TOKEN,), exc_info=None
    )
    assert logs.RedactingFilter().filter(record)
    assert "bad %s %s" in record.getMessage() and "formatting failed" in record.getMessage()
    assert TOKEN not in record.getMessage()


def test_a_forgotten_secret_is_logged_again(tmp_path: Path) -> None:
    path = logs.setup_logging(directory=tmp_path)
    logs.register_secret("plain-secret-value")
    logs.register_secret("plain-secret-value")  # two users of the same secret
    logs.forget_secret("plain-secret-value")
    logging.getLogger("flagdesk").info("a plain-secret-value")
    logs.forget_secret("plain-secret-value")
    logging.getLogger("flagdesk").info("b plain-secret-value")
    lines = read(path).splitlines()
    assert lines[-2].endswith("a ***")
    assert lines[-1].endswith("b plain-secret-value")


def test_unregistered_tokens_and_headers_are_redacted(tmp_path: Path) -> None:
    path = logs.setup_logging(verbose=True, directory=tmp_path)
    admin = "*:*." + UNREGISTERED_HEX
    project = "default:development." + UNREGISTERED_HEX
    personal = "user:" + UNREGISTERED_HEX
    log = logging.getLogger("httpcore.http11")
    log.warning("token %s", admin)
    log.warning("token %s", project)
    log.warning("token %s", personal)
    log.warning("headers=[(b'authorization', b'opaque-value-1')]")
    log.warning("Authorization: Bearer opaque-value-2")
    text = read(path)
    assert UNREGISTERED_HEX not in text
    assert "token *:*.***" in text and "token default:development.***" in text
    assert "opaque-value" not in text
    assert "Authorization: Bearer ***" in text


def test_redact_leaves_ordinary_text_alone() -> None:
    text = "GET http://127.0.0.1:4242/api/admin/projects -> 200 at 12:30.5 (module:func.name)"
    assert logs.redact(text) == text


def test_the_file_rotates(tmp_path: Path) -> None:
    path = logs.setup_logging(directory=tmp_path, max_bytes=2000, backup_count=2)
    for i in range(200):
        logging.getLogger("flagdesk").info("line %d %s", i, "x" * 50)
    read(path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["flagdesk.log", "flagdesk.log.1", "flagdesk.log.2"]
    assert all(p.stat().st_size <= 2000 for p in tmp_path.iterdir())
    if sys.platform != "win32":
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in tmp_path.iterdir())


def test_the_default_rotation_is_one_mib_times_five(tmp_path: Path) -> None:
    logs.setup_logging(directory=tmp_path)
    handler = logs._handler
    assert handler is not None
    assert (handler.maxBytes, handler.backupCount) == (1024 * 1024, 5)
    assert handler.encoding == "utf-8"


def test_verbose_changes_the_levels(tmp_path: Path) -> None:
    path = logs.setup_logging(directory=tmp_path)
    assert logging.getLogger().level == logging.INFO
    assert logging.getLogger("httpx").level == logging.WARNING
    assert logging.getLogger("httpcore").level == logging.WARNING
    logging.getLogger("flagdesk.api").debug("quiet")
    logging.getLogger("httpx").info("HTTP Request: GET quiet")

    logs.setup_logging(verbose=True, directory=tmp_path)
    assert logging.getLogger().level == logging.DEBUG
    assert logging.getLogger("httpx").level == logging.INFO
    assert logging.getLogger("httpcore").level >= logging.INFO  # headers at DEBUG: never
    logging.getLogger("flagdesk.api").debug("loud")
    logging.getLogger("httpx").info("HTTP Request: GET loud")
    logging.getLogger("httpcore.http11").debug("receive_response_headers never")
    text = read(path)
    assert "quiet" not in text
    assert "flagdesk.api: loud" in text and "GET loud" in text
    assert "never" not in text


def test_levels_are_restored_by_reset(tmp_path: Path) -> None:
    before = logging.getLogger().level, logging.getLogger("httpx").level
    logs.setup_logging(verbose=True, directory=tmp_path)
    logs.setup_logging(directory=tmp_path)
    logs.reset_logging()
    assert (logging.getLogger().level, logging.getLogger("httpx").level) == before
    assert logs.current_log_file() is None


def test_setting_up_twice_adds_one_handler(tmp_path: Path) -> None:
    root = logging.getLogger()
    count = len(root.handlers)
    path = logs.setup_logging(directory=tmp_path)
    assert logs.setup_logging(directory=tmp_path) == path
    assert len(root.handlers) == count + 1
    logging.getLogger("flagdesk").warning("once")
    assert read(path).count("once") == 1
    # a new folder moves the one handler there
    other = logs.setup_logging(directory=tmp_path / "other")
    assert len(root.handlers) == count + 1
    logging.getLogger("flagdesk").warning("moved")
    assert "moved" in read(other) and "moved" not in read(path)


def test_no_umask_widens_the_file(tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("POSIX permissions")
    old = os.umask(0)
    try:
        path = logs.setup_logging(directory=tmp_path / "fresh")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0
