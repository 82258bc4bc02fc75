"""Reading metrics from files and the clipboard into a batch: `load` and `load_text`, and telling
NDJSON from a JSON document by its first bytes. The parts, each saying why it reads the way it
does, and each importing only those below it:

- `ndjson`: one metric item a line.
- `documents`: JSON documents (bulk payloads, arrays of metric items, SDK payloads).
- `sourcefile`: what one source adds to the batch (the valid items' bytes by application, the
  preview's sums, warnings, invalid items), merged in once it is read; progress and cancel.
- `items`: validating items (pydantic; msgspec for plain metric items), pydantic's errors as
  sentences, lone surrogates.
- `jsontext`: JSON syntax errors as sentences, and how deeply an item may nest (`MAX_DEPTH`).

Throughout: the GUI runs `load()` on a worker thread, and its event loop must never wait long
for the GIL, so no single C call may take long: files are read 1 MiB at a time
(`sourcefile.CHUNK`), and items are validated 500 at a time (`items.SLICE`: under a millisecond
a call). A document is never parsed whole.
"""

from __future__ import annotations

import codecs
import errno
import io
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from app.metrics.batch import Batch, InputProblem
from app.metrics.documents import Restart, read_document
from app.metrics.ndjson import read_ndjson
from app.metrics.sourcefile import Broken, File, Progress

#: bytes looked at to tell NDJSON from a JSON document
HEAD = 64 << 10
#: a broken document's text is copied into the invalid-items file up to this size
RAW_DOCUMENT = 1 << 20


# --------------------------------------------------------------------------- detection


def _json_object(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _is_ndjson(head: bytes, complete: bool) -> bool:
    """Whether a file starting with `head` holds one metric item a line rather than one JSON
    document. `complete`: `head` is the whole file."""
    head = head.removeprefix(codecs.BOM_UTF8)
    start = head.lstrip()[:1]
    if start in (b"[", b""):
        return False
    lines = head.split(b"\n")
    if not complete:
        lines.pop()  # may be cut
    filled = [line.strip() for line in lines if line.strip()][:6]
    if not filled:
        return False
    first = _json_object(filled[0])
    if first is not None:
        if {"applications", "metrics", "bucket"} & first.keys():
            return False
        # one object on one line: an SDK payload without its bucket, or one metric item
        alone = complete and len(filled) == 1
        return not (alone and "appName" in first and "featureName" not in first)
    if filled[0] == b"{":
        return False  # a pretty-printed document
    # a broken first line: NDJSON when the next lines are metric items on their own
    others = [_json_object(line) for line in filled[1:]]
    return sum(o is not None for o in others) * 2 > len(others) > 0


# --------------------------------------------------------------------------- entry points


def kind_of(mode: int) -> str | None:
    """What a file of `st_mode` `mode` is when it is not a regular file ("a named pipe", "a
    device", "a socket", "a folder"); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def not_a_file(path: Path | str) -> str | None:
    """`kind_of` the file at `path` (following links); None for a regular file, or one that
    cannot be looked at (opening it says why)."""
    try:
        return kind_of(os.stat(path).st_mode)
    except OSError:
        return None


def open_regular(path: Path | str) -> BinaryIO:
    """`path` opened for reading, when it is a regular file: a named pipe would wait for a
    writer and a device such as /dev/zero never end, so either is an `OSError` saying what it
    is. Opened without waiting (O_NONBLOCK, which a pipe with no writer would otherwise do)
    and checked on the open file, so that nothing put in its place meanwhile is read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):  # as open() says it
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        kind = kind_of(mode)
        if kind is not None:
            raise OSError(errno.EINVAL, f"not a regular file ({kind})", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_source(
    batch: Batch, stream: BinaryIO, name: str, progress: Progress, now_ms: int
) -> None:
    head = stream.read(HEAD)
    white = 0  # bytes of white space before `head`
    while len(head) == HEAD and not head.strip():  # white space so far, and more to come
        white += len(head)
        head = stream.read(HEAD)
    complete = len(head) < HEAD
    stream.seek(0)
    if not head.strip():
        empty = not head and not white
        batch.add_problem(
            InputProblem(
                "error",
                name,
                None,
                None,
                None,
                "the file is empty" if empty else "the file holds only white space",
            )
        )
        progress.done += white + len(head)
        return
    start = progress.done
    file = File(batch, name, now_ms)
    if not _is_ndjson(head, complete):
        try:
            read_document(stream, file, progress)
        except Broken as exc:
            raw = None
            stream.seek(0, io.SEEK_END)
            if stream.tell() <= RAW_DOCUMENT or name == "<clipboard>":
                stream.seek(0)
                raw = stream.read()
            file.broken(exc, raw.decode("utf-8", "replace") if raw is not None else None)
            file.finish()
            return
        except Restart:
            stream.seek(0)
            progress.done = start
            file = File(batch, name, now_ms)
        else:
            file.finish()
            return
    read_ndjson(stream, file, progress)
    file.finish()


def load(
    paths: Sequence[Path | str],
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    environment: str = "default",
) -> Batch:
    """Read, detect, validate and sum the metrics of `paths` into one batch.

    `progress(bytes_done, bytes_total)` is called after each chunk read (about every MiB);
    `cancel` is checked as often, and when set `Cancelled` is raised. A file that cannot be
    read is an error problem, not an exception. Blocking: run it off the GUI thread.

    `environment`: the one SDK payloads that name none are sent for; give the client token's
    (`app.api.wire.accepted_environment`), where Unleash counts the SDK's own posts."""
    batch = Batch()
    batch.sdk_environment = environment
    sizes = []
    for path in paths:
        try:
            sizes.append(Path(path).stat().st_size)
        except OSError:
            sizes.append(0)
    counter = Progress(sum(sizes), progress, cancel)
    now = int(time.time() * 1000)
    for path in paths:
        name = str(path)
        counter.check()
        try:
            stream = open_regular(path)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            batch.add_problem(
                InputProblem("error", name, None, None, None, f"the file cannot be read: {reason}")
            )
            continue
        with stream:
            try:
                _read_source(batch, stream, name, counter, now)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                batch.add_problem(
                    InputProblem(
                        "error", name, None, None, None, f"the file cannot be read: {reason}"
                    )
                )
    counter.finish()
    return batch


def load_text(text: str, name: str = "<clipboard>", environment: str = "default") -> Batch:
    """`load()` for text pasted from the clipboard."""
    data = text.encode("utf-8")
    batch = Batch()
    batch.sdk_environment = environment
    counter = Progress(len(data), None, None)
    _read_source(batch, io.BytesIO(data), name, counter, int(time.time() * 1000))
    return batch


def read_body(batch: Batch, body: bytes, name: str, now_ms: int) -> None:
    """Add the items of one bulk body (as a ledger copies it) to `batch`, read as a file is."""
    _read_source(batch, io.BytesIO(body), name, Progress(len(body), None, None), now_ms)
