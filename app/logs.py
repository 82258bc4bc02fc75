"""The log file, and keeping tokens out of it.

`setup_logging()` sends the root logger to a rotating `flagdesk.log` in the platformdirs log folder
(or `FLAGDESK_LOG_DIR`), created readable by the user alone. Every line goes through `redact()`:
it replaces each secret given to `register_secret()` and, as a safety net, whatever looks like an
`Authorization` header value or an Unleash token, with `***`. The redaction sits on the handler,
not on a logger: a record logged on a child logger (`httpcore.http11`, `flagdesk.api`) never passes
through the root logger's filters, but always through the handler's.

No Qt here: the headless commands may log too.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import re
import threading
from pathlib import Path
from typing import cast

import platformdirs

LOG_FILE_NAME = "flagdesk.log"
MAX_BYTES = 1024 * 1024
BACKUP_COUNT = 5
MASK = "***"
FORMAT = "%(asctime)s %(levelname)-8s %(name)s: %(message)s"

#: secrets shorter than this are not redacted: replacing "ab" everywhere would ruin every line
MIN_SECRET_LENGTH = 4
#: for a token shaped `prefix.secret`, the part after the last dot is redacted on its own too
#: (Unleash echoes it alone in places) when at least this long
MIN_SUFFIX_LENGTH = 8

# Unleash tokens and Authorization headers, found even when nobody registered them.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # `Authorization: Bearer x`, `authorization=x`, `"authorization": "x"`, httpcore's
    # `(b'authorization', b'x')`; a scheme word (Bearer, Basic, ...) is kept
    (
        re.compile(
            r"""(?ix)
            (\bauthorization\b
              (?: \s*[:=]\s*['"]?                  # Authorization: x, authorization="x"
                | ['"]\s*[:,]\s*b?['"]             # 'authorization': 'x', (b'authorization', b'x')
              ))
            ((?:bearer|basic|token|digest)\s+)?    # optional scheme
            [^\s'"]+                               # the value
            """
        ),
        rf"\1\2{MASK}",
    ),
    # admin tokens `*:*.<secret>` and multi-project tokens `[]:<env>.<secret>`
    (re.compile(r"((?:\*|\[\]):[\w\-*]+\.)[\w\-]{8,}"), rf"\1{MASK}"),
    # project tokens `<project>:<env>.<hex, 20 or more>`
    (re.compile(r"(\b[\w\-]+:[\w\-*]+\.)[0-9a-fA-F]{20,}\b"), rf"\1{MASK}"),
    # a bearer credential on its own
    (re.compile(r"\b(Bearer\s+)[\w\-.~+/*:\[\]]{8,}=*"), rf"\1{MASK}"),
    # personal access tokens `user:<hex, 20 or more>`
    (re.compile(r"(\buser:)[0-9a-fA-F]{20,}\b"), rf"\1{MASK}"),
)

_secrets_lock = threading.Lock()
#: registered secret -> how many registrations hold it (a token may be in use twice)
_secrets: dict[str, int] = {}
#: the secrets longest first, so that a secret containing another is replaced whole
_ordered: tuple[str, ...] = ()


def _forms(secret: str) -> list[str]:
    forms = [secret] if len(secret) >= MIN_SECRET_LENGTH else []
    head, dot, tail = secret.rpartition(".")
    if dot and head and len(tail) >= MIN_SUFFIX_LENGTH:
        forms.append(tail)
    return forms


def register_secret(secret: str) -> None:
    """Redact `secret` (and, for `prefix.secret`, the part after the last dot) from now on."""
    global _ordered
    with _secrets_lock:
        for form in _forms(secret):
            _secrets[form] = _secrets.get(form, 0) + 1
        _ordered = tuple(sorted(_secrets, key=len, reverse=True))


def forget_secret(secret: str) -> None:
    """Undo one `register_secret(secret)`; unknown secrets are ignored."""
    global _ordered
    with _secrets_lock:
        for form in _forms(secret):
            count = _secrets.get(form, 0)
            if count > 1:
                _secrets[form] = count - 1
            else:
                _secrets.pop(form, None)
        _ordered = tuple(sorted(_secrets, key=len, reverse=True))


def redact(text: str) -> str:
    """`text` with every registered secret and every token-looking string replaced by `***`."""
    for secret in _ordered:  # a tuple swapped whole under the lock: safe to read without it
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactingFilter(logging.Filter):
    """On a handler: turns the record's message, traceback and stack into redacted text before
    any formatter sees them. Other handlers see the redacted record too, which is only safer."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception as error:  # bad %-args: keep what there is instead of a logging error
            message = f"{record.msg!r} % {record.args!r} (formatting failed: {error})"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class RedactingFormatter(logging.Formatter):
    """Redacts the finished line as well: whatever the filter could not reach (a logger name, a
    field added by someone else) is caught here."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating file handler whose files are created with mode 0600 (on POSIX), including the
    fresh file after each rollover."""

    def _open(self) -> io.TextIOWrapper:
        def opener(path: str, flags: int) -> int:
            return os.open(path, flags, 0o600)

        stream = open(  # noqa: SIM115 - the handler keeps it open and closes it
            self.baseFilename, self.mode, encoding=self.encoding, errors=self.errors, opener=opener
        )
        return cast(io.TextIOWrapper, stream)


def log_dir() -> Path:
    """Where the log goes: `FLAGDESK_LOG_DIR` if set, else the platformdirs user log folder."""
    override = os.environ.get("FLAGDESK_LOG_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_log_dir("flagdesk", appauthor=False))


_handler: PrivateRotatingFileHandler | None = None
#: logger name -> level before setup_logging() first changed it, for reset_logging()
_saved_levels: dict[str, int] = {}


def _set_level(name: str, level: int) -> None:
    logger = logging.getLogger(name or None)
    _saved_levels.setdefault(name, logger.level)
    logger.setLevel(level)


def setup_logging(
    verbose: bool = False,
    *,
    directory: Path | None = None,
    max_bytes: int = MAX_BYTES,
    backup_count: int = BACKUP_COUNT,
) -> Path:
    """Log to `<directory>/flagdesk.log` (default `log_dir()`), rotating at `max_bytes` with
    `backup_count` old files; INFO and up, DEBUG with `verbose`. Calling again replaces the
    handler (never adds a second one). Returns the log file's path."""
    global _handler
    folder = directory if directory is not None else log_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / LOG_FILE_NAME
    if path.exists():
        path.chmod(0o600)  # an older file, or one made by hand, becomes private too

    handler = PrivateRotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=backup_count, encoding="utf-8", delay=False
    )
    handler.setFormatter(RedactingFormatter(FORMAT))
    handler.addFilter(RedactingFilter())
    handler.setLevel(logging.DEBUG)

    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
        _handler.close()
    root.addHandler(handler)
    _handler = handler

    _set_level("", logging.DEBUG if verbose else logging.INFO)
    # httpx logs each request line at INFO; httpcore logs headers at DEBUG (never wanted)
    _set_level("httpx", logging.INFO if verbose else logging.WARNING)
    _set_level("httpcore", logging.INFO if verbose else logging.WARNING)
    # qasync logs every callback at DEBUG: it would drown everything else
    _set_level("qasync", logging.INFO)
    return path


def current_log_file() -> Path | None:
    """The file `setup_logging()` writes to, or None before it is called."""
    return Path(_handler.baseFilename) if _handler is not None else None


def reset_logging() -> None:
    """Undo `setup_logging()`: remove and close the handler and restore the levels it changed."""
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler = None
    for name, level in _saved_levels.items():
        logging.getLogger(name or None).setLevel(level)
    _saved_levels.clear()
