"""`flagdesk metrics validate|upload`: check metrics batches, and send them to a server through a
ledger that a later `--resume` continues. No Qt, and light to import: the parser is built for
every `flagdesk` command, so the metrics core, httpx and pydantic are imported by `run()`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import shlex
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.api.wire import BULK_METRICS_BODY_LIMIT
from app.commands.connection import (
    EXIT_OK,
    EXIT_UNAUTHORISED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    UsageError,
    add_connection_arguments,
)
from app.commands.output import Output, add_action, echo, visible, whole_number
from app.text import noun_for, plural

if TYPE_CHECKING:
    from app.actions.journal import Journal
    from app.connection import ConnectionSpec
    from app.metrics import Batch
    from app.metrics.batch_upload import BatchUpload, Checks, Outcome
    from app.metrics.ledger import Counts
    from app.metrics.upload import Progress, Report, Upload

#: some items were rejected by the server, or left out as invalid
EXIT_INCOMPLETE = 1
#: the batch was uploaded to this server and accepted already: nothing sent (see --again)
EXIT_ALREADY_SENT = 5
#: an upload of this batch to this server stopped unfinished: nothing sent; `--resume` it
#: (or --again)
EXIT_UNFINISHED = 6
#: bodies in doubt that no check could decide are left pending (the report says why)
EXIT_IN_DOUBT = 7
#: Ctrl+C: the ledger is consistent; `--resume` continues
EXIT_CANCELLED = 130
#: the smallest body limit accepted: a body must hold at least one application and one metric
MIN_MAX_BODY = 1_024
#: problems printed before "... and N more"
SHOWN_PROBLEMS = 50
SHOWN_REJECTIONS = 20
#: problems kept in the JSON summary
SAVED_PROBLEMS = 1000

UPLOAD_DESCRIPTION = """\
Read, validate and split the FILEs (bulk payloads {applications, metrics}, JSON arrays or NDJSON
of metric items, SDK client-metrics payloads) into bodies of at most --max-body bytes, and send
them to POST /api/client/metrics/bulk with a client token, --concurrency at a time. Admin API
tokens and personal access tokens are refused on that endpoint by real servers: the client token
comes from the variable named by --client-token-env (default FLAGDESK_CLIENT_TOKEN), or from the
profile; when that is unset and the token of --token-env has the shape of a client token
(project:environment.secret), that one is used. Tokens are never read from the command line.

An SDK payload without an environment is sent for the client token's environment, where
Unleash counts the SDK's own posts (or for --environment NAME). A batch with metrics the server
would answer 202 to and drop (another environment than the token's, yes and no both 0) is not
sent without --send-dropped.

Invalid items are left out: the valid ones are uploaded, and the invalid ones are saved to
invalid.ndjson in the upload's folder and counted in the report. Each upload keeps a ledger and
a copy of its bodies in a folder of its own (default: under the user data folder; --folder
chooses). 429, 502/503/504 and connection failures are retried with backoff; 400, 413 and 415
are not, and the metric items of the rejected bodies are saved to rejected.json with the
server's messages. A body that got no answer to a request (a lost connection, no answer in
time, a gateway's 502 or 504, a crash) may have been counted: it is in doubt, and not sent again
blindly. Before the first request the server's totals for the batch's flags, applications,
environments and hours are recorded (with the admin token of --token-env or the profile; the
raw metrics read); once the rest is sent, and on --resume, they are read again (after the
server has stored what it received: about 10 s on Unleash) and each body in doubt is decided:
counted (not sent again) or missing (sent again). A body that cannot be decided (no admin
token, the totals moved for another reason) stays in doubt and the report says why;
--resend-in-doubt sends it anyway, at the risk of counting it twice. A redirect (3xx) stops the
upload: use the URL the server points to. After Ctrl+C, a crash or a network loss, --resume
LEDGER sends exactly the bodies pending. Uploading the same files to the same server again
while an earlier upload of them is unfinished says its --resume command and sends nothing
(exit 6). A batch this server accepted before (found in the earlier uploads' ledgers) is not
sent again without --again: a batch is its metric items, however they are split (--max-body),
ordered or spread over files, and a server is its instance id (read with the admin token of
--token-env or the profile), else its address (localhost, 127.0.0.1 and ::1 are one; the
default port and trailing slashes do not count).
--dry-run prints the same problems and warnings as an upload: with --url or --profile, also the
ones about the client token's environment and the server's flag names, and, like the upload,
that the batch was accepted before (exit 5) or is unfinished (exit 6).

exit status:
  0  every body accepted (with --dry-run: every item valid)
  1  done, but some bodies were rejected or some items were left out (invalid, or too large
     for any body)
  2  bad usage, or bad input: a FILE cannot be read, or holds no valid metric; the --ca-bundle
     cannot be read; the items left out cannot be saved; metrics the server would drop
     without --send-dropped (nothing is sent then)
  3  the server was unreachable (or kept failing) after retries, or cannot take metrics at this
     URL (a redirect, no such endpoint): bodies left pending, resume later
  4  the token was refused (401/403): wrong token, or not a client token
  5  this server accepted the batch (the same metric items, however split or spelt) in an
     earlier upload: nothing was sent, and when, to which server and the earlier upload's
     folder are named; --again sends it anyway (the server then counts it twice)
  6  an upload of these files to this server stopped unfinished: nothing was sent; its
     --resume command is printed (--again starts a new upload anyway)
  7  bodies in doubt that the server's totals could not decide are left pending (the report
     says why): --resume checks again; --resend-in-doubt sends them anyway
  130  cancelled with Ctrl+C: resume later
"""

VALIDATE_DESCRIPTION = """\
Read and validate the FILEs without sending anything. Prints each problem as
file:line:col: path: message (errors, then warnings about what a real Unleash accepts and then
drops), and a summary.

exit status:
  0  every item is valid (warnings do not count)
  2  some item is invalid, a FILE cannot be read, or bad usage
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    validate = add_action(
        sub, "validate", "check metrics files and print every problem", VALIDATE_DESCRIPTION
    )
    validate.add_argument("files", nargs="+", metavar="FILE", type=Path, help="metrics files")
    validate.add_argument("--json", action="store_true", help="print one JSON object")

    upload = add_action(
        sub, "upload", "send metrics files to a server (or --resume an upload)", UPLOAD_DESCRIPTION
    )
    upload.add_argument("files", nargs="*", metavar="FILE", type=Path,
                        help="metrics files (none with --resume)")  # fmt: skip
    add_connection_arguments(upload)
    how = upload.add_argument_group("upload")
    how.add_argument("--concurrency", type=_concurrency, default=4, metavar="N",
                     help="requests at a time (default 4)")  # fmt: skip
    how.add_argument("--attempts", type=_attempts, default=None, metavar="N",
                     help="tries per body before the server counts as unreachable "
                     "(default 6; backoff 0.5 s doubling to 8 s, with jitter)")  # fmt: skip
    how.add_argument("--max-body", type=_max_body, default=None, metavar="BYTES",
                     help=f"largest request body in bytes (default {BULK_METRICS_BODY_LIMIT:,}, "
                     "the limit of Unleash)")  # fmt: skip
    how.add_argument("--dry-run", action="store_true",
                     help="read, validate, split and report; send nothing")  # fmt: skip
    how.add_argument("--resume", metavar="LEDGER", type=Path,
                     help="continue the upload of this ledger (its folder or ledger.jsonl); "
                     "no FILE then. It goes to the ledger's server; --url or --profile, if "
                     "given, must name that one")  # fmt: skip
    how.add_argument("--again", action="store_true",
                     help="send the batch even if this server accepted it in an earlier upload "
                     "(it then counts it twice)")  # fmt: skip
    how.add_argument("--resend-in-doubt", action="store_true",
                     help="send the bodies in doubt that the server's totals cannot decide "
                     "anyway (the server may then count them twice)")  # fmt: skip
    how.add_argument("--environment", metavar="NAME",
                     help="the environment of SDK payloads that name none (default: the client "
                     "token's, where Unleash counts the SDK's own posts; 'default' for a token "
                     "of every environment)")  # fmt: skip
    how.add_argument("--send-dropped", action="store_true",
                     help="send metrics the server will answer 202 to and drop (another "
                     "environment than the client token's, yes and no both 0); refused "
                     "without it")  # fmt: skip
    how.add_argument("--folder", metavar="DIR", type=Path,
                     help="keep the ledger and the bodies' copy here (a new folder)")  # fmt: skip
    how.add_argument("--json", action="store_true", help="print one JSON object (the summary)")


_concurrency = whole_number(1, 64)
_attempts = whole_number(1, 100)


def _max_body(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of bytes") from None
    if value < MIN_MAX_BODY:
        raise argparse.ArgumentTypeError(f"{value}: a body needs at least {MIN_MAX_BODY} bytes")
    return value


def run(args: argparse.Namespace) -> int:
    if args.action == "validate":
        return validate(args)
    return upload(args)


# ---------------------------------------------------------------------------- validate


def validate(args: argparse.Namespace) -> int:
    out = Output("flagdesk metrics", "validate", args.json)
    try:
        _check_files(args.files)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    try:
        batch = _load(args.files)
    except KeyboardInterrupt:
        return out.fail(EXIT_CANCELLED, "cancelled")
    problems = [*batch.problems, *batch.check(token_environment=None, known_features=None)]
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    status = EXIT_USAGE if errors else EXIT_OK
    summary: dict[str, Any] = {
        "files": _sources(batch),
        "metrics": batch.metric_count,
        "invalid": batch.invalid_count,
        "errors": len(errors),
        "warnings": len(warnings),
        "problems": [_problem_json(p) for p in problems],
    }
    if args.json:
        out.json({**summary, "exit_status": status})
        return status
    for problem in [*errors, *warnings]:
        echo(_problem_line(problem))
    echo(
        f"{plural(len(args.files), 'file')}: {plural(batch.metric_count, 'valid metric')}, "
        f"{batch.invalid_count:,} invalid; "
        f"{plural(len(errors), 'error')}, {plural(len(warnings), 'warning')}"
    )
    return status


# ---------------------------------------------------------------------------- upload


def upload(args: argparse.Namespace) -> int:
    out = Output("flagdesk metrics", "upload", args.json)
    try:
        if args.resume is not None:
            return _resume(args, out)
        if not args.files:
            raise UsageError("give the FILEs to upload, or --resume LEDGER")
        _check_files(args.files)
        spec = _connection(args, ledger_server=None, dry_run=args.dry_run)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    from app.metrics.batch_upload import dropped_text, payload_environment

    client_token = spec.client_token if spec else None
    try:
        batch = _load(args.files, payload_environment(args.environment, client_token))
    except KeyboardInterrupt:
        return out.fail(EXIT_CANCELLED, "cancelled while reading; nothing was sent")
    out.update(files=_sources(batch), metrics=batch.metric_count)
    max_body = args.max_body or BULK_METRICS_BODY_LIMIT
    if batch.metric_count == 0:
        from app.metrics.batch_upload import make_checks

        _report_problems(out, make_checks([batch], spec.client_token if spec else None, None))
        return out.fail(EXIT_USAGE, "no valid metric to upload in " + _names(args.files))
    if args.dry_run:
        return _dry_run(args, out, batch, spec, max_body)
    assert spec is not None
    dropped = dropped_text([batch], client_token)
    if dropped and not args.send_dropped:
        out.update(dropped=dropped)
        return out.fail(
            EXIT_USAGE,
            f"{dropped} Nothing was sent. Set the environment of SDK payloads that name none "
            "with --environment NAME, fix the files, or send them anyway with --send-dropped.",
        )
    return _send(args, out, spec, batch=batch, max_body=max_body)


def _dry_run(
    args: argparse.Namespace,
    out: Output,
    batch: Batch,
    spec: ConnectionSpec | None,
    max_body: int,
) -> int:
    """Split and check as a real upload would (the same warnings: the client token's
    environment and the server's flag names when a connection is given); send nothing."""
    from app.metrics.batch_upload import dry_run_checks, dry_split, look_for_earlier

    split = dry_split([batch], max_body)
    try:
        checks = asyncio.run(dry_run_checks([batch], spec))
    except KeyboardInterrupt:
        return out.fail(EXIT_CANCELLED, "cancelled; nothing was sent")
    invalid = _report_problems(out, checks)
    if spec is None and not args.json:
        echo(
            "Not checked against a server (give --url or --profile to check the client "
            "token's environment and the feature names).",
            file=sys.stderr,
        )
        _accepted_anywhere(batch, args.folder)
    out.update(dry_run=True, bodies=split.bodies, bytes=split.bytes, largest_body=split.largest)
    if not args.json:
        sendable = batch.metric_count - batch.unsendable
        echo(
            f"Would send {plural(sendable, 'metric')} in "
            f"{plural(split.bodies, 'body', 'bodies')} ({split.bytes:,} bytes, "
            f"the largest {split.largest:,} of at most {max_body:,})"
            + (f"; {plural(invalid, 'invalid item')} left out" if invalid else "")
        )
    if spec is not None and not args.again:  # what the upload would find first: said alike
        try:
            found = asyncio.run(look_for_earlier([batch], spec, folder=args.folder))
        except KeyboardInterrupt:
            return out.fail(EXIT_CANCELLED, "cancelled; nothing was sent")
        if found is not None:
            return _sent_before(out, found, dry_run=True)
    return out.done(EXIT_INCOMPLETE if invalid else EXIT_OK)


def _accepted_anywhere(batch: Batch, folder: Path | None) -> None:
    """A dry run without a server: the earlier uploads of this batch to any server that had it
    accepted, said (the exit status is not changed: which server is meant is not known)."""
    from app.metrics.batch_upload import earlier_uploads, upload_parents
    from app.metrics.identity import batch_key

    for earlier in earlier_uploads(batch_key([batch]), None, upload_parents(folder))[:3]:
        print(
            f"This batch was uploaded to {earlier.server} and accepted already "
            f"({earlier.metrics:,} of its {plural(batch.metric_count, 'metric')}), "
            f"{earlier.text}: give --url or --profile to check the server you mean.",
            file=sys.stderr,
        )


def _sent_before(out: Output, outcome: Outcome, *, dry_run: bool) -> int:
    """This batch went to this server before (`ALREADY_SENT`, `UNFINISHED`): say when, where
    and what to do, the same for an upload and its --dry-run; exit 5 or 6."""
    from app.metrics.batch_upload import ALREADY_SENT

    nothing = "An upload would send nothing." if dry_run else "Nothing was sent."
    if outcome.failure == ALREADY_SENT:
        out.update(
            already_sent=[
                {"folder": str(e.folder), "created": e.created.isoformat() if e.created else None,
                 "server": e.server, "bodies": e.bodies, "metrics": e.metrics}
                for e in outcome.earlier
            ]
        )  # fmt: skip
        return out.fail(
            EXIT_ALREADY_SENT,
            f"{outcome.message} {nothing} To send it again anyway, add --again.",
        )
    out.update(
        unfinished=[
            {"folder": str(e.folder), "created": e.created.isoformat() if e.created else None,
             "server": e.server, "bodies": e.total, "unfinished": e.unfinished,
             "resume": resume_command(e.folder)}
            for e in outcome.earlier
        ]
    )  # fmt: skip
    return out.fail(
        EXIT_UNFINISHED,
        f"{outcome.message} {nothing} Resume with: "
        f"{resume_command(outcome.earlier[0].folder)} (or add --again to start a new "
        "upload anyway)",
    )


def _report_problems(out: Output, checks: Checks) -> int:
    """Print the problems (after the split, which adds items too large for any body) and the
    server checks, and put them in the summary; returns the number of items left out."""
    if not out.as_json:
        _print_problems(checks.problems, sys.stderr)
        if checks.features_error:
            echo(
                f"Feature names not checked against the server: {checks.features_error}",
                file=sys.stderr,
            )
    out.update(
        invalid=checks.invalid,
        errors=checks.errors,
        warnings=checks.warnings,
        problems=[_problem_json(p) for p in checks.problems[:SAVED_PROBLEMS]],
    )
    if checks.features_error:
        out.update(features_checked=False)
    return checks.invalid


def _resume(args: argparse.Namespace, out: Output) -> int:
    from app.metrics.ledger import Ledger, LedgerError

    if args.files:
        raise UsageError("--resume continues an upload: give no FILE with it")
    if args.max_body is not None:
        raise UsageError("--resume sends the bodies as they were split: no --max-body with it")
    if args.dry_run:
        raise UsageError("--resume and --dry-run do not go together")
    try:
        ledger = Ledger.open(args.resume, write=False)
    except LedgerError as exc:
        raise UsageError(str(exc)) from None
    spec = _connection(args, ledger_server=ledger.server)
    assert spec is not None
    note = ledger.note
    invalid_name = note.get("invalid_file")
    out.update(
        files=ledger.sources,
        invalid=int(note.get("invalid", 0)),
        invalid_file=str(ledger.folder / invalid_name) if invalid_name else None,
        bodies=len(ledger.entries),
        bytes=sum(e.size for e in ledger.entries),
        resumed=True,
    )
    return _send(args, out, spec, resume=ledger.path)


def _send(
    args: argparse.Namespace,
    out: Output,
    spec: ConnectionSpec,
    *,
    batch: Batch | None = None,
    max_body: int | None = None,
    resume: Path | None = None,
) -> int:
    from app.metrics.batch_upload import (
        ALREADY_SENT,
        CANCELLED_EARLY,
        INVALID_NOT_SAVED,
        UNFINISHED,
        BatchUpload,
    )
    from app.metrics.upload import UPLOAD_RETRY

    retry = UPLOAD_RETRY
    if args.attempts is not None:
        retry = dataclasses.replace(retry, attempts=args.attempts)
    bar = _Bar(sys.stderr) if sys.stderr.isatty() else None
    job = BatchUpload(
        spec,
        hooks=_Terminal(out, bar),
        concurrency=args.concurrency,
        retry=retry,
        resend_in_doubt=args.resend_in_doubt,
        journal=upload_journal(args.profile or spec.url, spec),
    )
    try:
        outcome = asyncio.run(_drive(job, args, batch, max_body, resume))
    except KeyboardInterrupt:  # before the handler was in place: nothing was sent
        return out.fail(EXIT_CANCELLED, "cancelled before anything was sent")
    finally:
        if bar is not None:
            bar.finish()
    if outcome.failure in (ALREADY_SENT, UNFINISHED):
        return _sent_before(out, outcome, dry_run=False)
    if outcome.failure == INVALID_NOT_SAVED:
        assert outcome.folder is not None
        return out.fail(
            EXIT_USAGE,
            f"{outcome.detail}. Nothing was sent; the ledger is kept: "
            f"`{resume_command(outcome.folder)}` sends the valid items anyway",
        )
    if outcome.failure == CANCELLED_EARLY:
        return out.fail(EXIT_CANCELLED, "cancelled before anything was sent")
    if outcome.failure:  # NOT_STARTED: the CA bundle, or the ledger
        return out.fail(EXIT_USAGE, outcome.message)
    report = outcome.report
    assert report is not None
    invalid = outcome.invalid
    out.update(invalid=invalid)
    if outcome.invalid_file is not None:
        out.update(invalid_file=str(outcome.invalid_file))
    out.update(**report.to_json())
    status = _status(report, invalid)
    if args.json:
        return out.done(status)
    _print_report(report, invalid, out.data.get("invalid_file"))
    if report.stopped:
        echo(f"flagdesk metrics upload: {report.error}", file=sys.stderr)
    if not report.complete:
        echo(f"Resume with: {resume_command(report.ledger.parent)}", file=sys.stderr)
    return status


async def _drive(
    job: BatchUpload,
    args: argparse.Namespace,
    batch: Batch | None,
    max_body: int | None,
    resume: Path | None,
) -> Outcome:
    """`job.send()` or `job.resume()` with Ctrl+C: the first cancels (before the first request
    nothing is sent; after it, the requests in flight get their answers), the second stops at
    once (they are counted in doubt)."""
    from app.metrics.batch_upload import CANCELLED_EARLY, Outcome

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    interrupts = 0

    def interrupted() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            job.cancel()
            if job.job is not None:
                print("\nCancelling: waiting for the requests in flight (Ctrl+C again to stop "
                      "at once).", file=sys.stderr)  # fmt: skip
        elif main is not None:
            main.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, interrupted)
    try:
        if resume is not None:
            return await job.resume(resume)
        assert batch is not None and max_body is not None
        return await job.send([batch], max_body=max_body, folder=args.folder, again=args.again)
    except asyncio.CancelledError:
        if main is not None:
            main.uncancel()  # the second Ctrl+C, handled: finish the report
        if job.report is None:  # stopped before the first request
            return Outcome(CANCELLED_EARLY, "cancelled before anything was sent")
        return Outcome(report=job.report, folder=job.report.ledger.parent)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)


class _Terminal:
    """What the terminal shows of an upload (`UploadHooks`): the problems, where the ledger
    is, the progress bar."""

    def __init__(self, out: Output, bar: _Bar | None) -> None:
        self.out = out
        self.bar = bar
        self._waiting = False

    def status(self, text: str) -> None:
        """The check of bodies in doubt is shown (it waits for the server, 10 s on Unleash):
        its countdown on one line on a terminal, its first line elsewhere."""
        if self.out.as_json or "bodies in doubt" not in text:
            return
        if text.startswith("Waiting"):
            if self.bar is not None:
                self.bar.finish()
                sys.stderr.write("\r" + visible(text))
                sys.stderr.flush()
            elif not self._waiting:
                echo(text, file=sys.stderr)
            self._waiting = True
            return
        if self._waiting and self.bar is not None:
            sys.stderr.write("\n")
        self._waiting = False
        echo(text, file=sys.stderr)

    def checked(self, checks: Checks) -> None:
        _report_problems(self.out, checks)

    def started(self, upload: Upload) -> None:
        entries = upload.ledger.entries
        self.out.update(
            folder=str(upload.ledger.folder),
            bodies=len(entries),
            bytes=sum(e.size for e in entries),
            largest_body=max((e.size for e in entries), default=0),
        )
        if not self.out.as_json:
            echo(f"Uploading to {upload.client.base_url}; ledger {upload.ledger.path}",
                  file=sys.stderr)  # fmt: skip

    def progress(self, progress: Progress) -> None:
        if self.bar is not None:
            self.bar.update(progress)


def upload_journal(connection: str, spec: ConnectionSpec) -> Journal:
    """The journal of the connection named `connection` (the profile's name, or the URL, as
    every command names it), where the upload is one entry, made with the client token."""
    from app.actions.journal import Actor, Journal

    return Journal(Actor(connection, spec.url, "client"))


def resume_command(folder: Path) -> str:
    """The command that resumes the upload in `folder`, quoted for a shell."""
    return f"flagdesk metrics upload --resume {shlex.quote(str(folder))}"


def _status(report: Report, invalid: int) -> int:
    from app.metrics.upload import CANCELLED, LEDGER, UNAUTHORISED

    if report.stopped == UNAUTHORISED:
        return EXIT_UNAUTHORISED
    if report.stopped == CANCELLED:
        return EXIT_CANCELLED
    if report.stopped == LEDGER:
        return EXIT_USAGE
    if report.stopped:  # unreachable, or the server refuses this endpoint
        return EXIT_UNREACHABLE
    if report.in_doubt:
        return EXIT_IN_DOUBT
    if report.rejected.bodies or invalid:
        return EXIT_INCOMPLETE
    return EXIT_OK


# ---------------------------------------------------------------------------- connection


def _connection(
    args: argparse.Namespace, *, ledger_server: str | None, dry_run: bool = False
) -> ConnectionSpec | None:
    """Where to send, with a client token. With `ledger_server` (a resume), --url/--profile
    may be left out, and must name that server if given. With `dry_run` nothing is sent: the
    connection is optional (None without --url and --profile), and so is the client token (the
    checks then leave the environment out)."""
    if dry_run and not args.profile and not args.url:
        return None
    from app.commands.connection import connection_from_args, url_connection
    from app.metrics import token_environment
    from app.metrics.identity import same_address

    if args.profile:
        spec = connection_from_args(args)
    else:
        url = args.url or ledger_server
        if not url:
            raise UsageError(
                "say where to upload: --profile NAME, or --url URL with the client token in "
                f"the environment variable named by --client-token-env "
                f"(default {args.client_token_env})"
            )
        spec = url_connection(args, url)
    if ledger_server and not same_address(ledger_server, spec.url):  # localhost = 127.0.0.1
        raise UsageError(
            f"the ledger is an upload to {ledger_server}, not {spec.url}: resume it there "
            "(leave out --url and --profile to use the ledger's server)"
        )
    if not spec.client_token:
        if token_environment(spec.token) not in (None, "*"):  # --token-env has a client token
            return dataclasses.replace(spec, client_token=spec.token)
        if dry_run:
            return spec
        where = (
            f"the profile {args.profile!r} has none stored, and {args.client_token_env} is unset"
            if args.profile
            else f"the environment variable {args.client_token_env} holds none"
        )
        raise UsageError(
            f"metrics need a client token, and {where}. Admin API tokens and personal access "
            "tokens are refused on this endpoint by real servers: create a client (backend) "
            f"token and put it in {args.client_token_env} (or name another variable with "
            "--client-token-env)"
        )
    return spec


# ---------------------------------------------------------------------------- input


def _check_files(files: Sequence[Path]) -> None:
    from app.metrics.read import not_a_file

    for path in files:
        if not path.exists():
            raise UsageError(f"{path}: no such file")
        if path.is_dir():
            raise UsageError(f"{path}: is a folder, not a file")
        kind = not_a_file(path)
        if kind:  # a FIFO would wait for a writer, /dev/zero never end
            raise UsageError(f"{path}: not a regular file ({kind}): metrics are read from files")
        if not os.access(path, os.R_OK):
            raise UsageError(f"{path}: cannot be read (permission denied)")


def _load(files: Sequence[Path], environment: str = "default") -> Batch:
    """`environment`: that of SDK payloads that name none."""
    from app.metrics import load

    bar = _Bar(sys.stderr, label="reading") if sys.stderr.isatty() else None
    try:
        return load(
            [str(p) for p in files], progress=bar.reading if bar else None, environment=environment
        )
    finally:
        if bar is not None:
            bar.finish()


def _sources(batch: Batch) -> list[dict[str, Any]]:
    return [
        {
            "file": str(s.file),
            "format": s.format,
            "metrics": s.metrics,
            "applications": s.applications,
        }
        for s in batch.sources
    ]


def _problem_json(problem: Any) -> dict[str, Any]:
    return {
        "severity": problem.severity,
        "file": str(problem.file),
        "line": problem.line,
        "column": problem.column,
        "path": problem.path,
        "message": problem.message,
    }


def _problem_line(problem: Any) -> str:
    text = str(problem)
    return text if problem.severity == "error" else f"{text} (warning)"


def _print_problems(problems: Sequence[Any], stream: TextIO) -> None:
    ordered = sorted(problems, key=lambda p: p.severity != "error")
    for problem in ordered[:SHOWN_PROBLEMS]:
        echo(_problem_line(problem), file=stream)
    if len(ordered) > SHOWN_PROBLEMS:
        echo(f"... and {len(ordered) - SHOWN_PROBLEMS:,} more problems", file=stream)


def _names(files: Sequence[Path]) -> str:
    return ", ".join(str(f) for f in files)


# ---------------------------------------------------------------------------- output


def _print_report(report: Report, invalid: int, invalid_file: object) -> None:
    from app.metrics.upload import doubt_sentences

    def row(label: str, bodies: str, metrics: str, extra: str = "") -> str:
        return f"  {label:<9} {bodies:<16} {metrics}{extra}"

    def counts(label: str, c: Counts, extra: str = "") -> str:
        body = noun_for(c.bodies, "body", "bodies")
        metrics = noun_for(c.metrics, "metric")
        return row(label, f"{c.bodies:>8,} {body}", f"{c.metrics:>12,} {metrics}", extra)

    echo(f"Server  {report.server}")
    echo(f"Ledger  {report.ledger}")
    echo(counts("accepted", report.accepted))
    saved = f" (saved to {report.rejected_file})" if report.rejected_file else ""
    echo(counts("rejected", report.rejected, saved))
    echo(counts("pending", report.pending))
    if invalid:
        where = f" (saved to {invalid_file})" if invalid_file else ""
        echo(row("invalid", "", f"{invalid:>12,} {noun_for(invalid, 'item')} left out{where}"))
    for rejection in report.rejections[:SHOWN_REJECTIONS]:
        echo(f"  body {rejection.body}: {rejection.status}: {rejection.message}")
    if len(report.rejections) > SHOWN_REJECTIONS:
        echo(f"  ... and {len(report.rejections) - SHOWN_REJECTIONS} more rejected bodies")
    for sentence in doubt_sentences(report):
        echo(f"  {sentence}")


class _Bar:
    """A one-line progress bar on a terminal (stderr): plain text, redrawn at most 10 times a
    second."""

    def __init__(self, stream: TextIO, label: str = "") -> None:
        self.stream = stream
        self.label = label
        self._last = 0.0
        self._drawn = False

    def _draw(self, fraction: float, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        columns = _columns()
        width = max(10, min(30, columns - len(text) - 10))
        filled = int(width * min(1.0, max(0.0, fraction)))
        line = f"[{'#' * filled}{'.' * (width - filled)}] {fraction * 100:3.0f}% {text}"
        self.stream.write("\r" + line[: columns - 1].ljust(columns - 1))
        self.stream.flush()
        self._drawn = True

    def update(self, p: Progress) -> None:
        done = p.requests_done == p.requests_total
        retries = f"  {plural(p.retries, 'retry', 'retries')}" if p.retries else ""
        self._draw(
            p.fraction,
            f"{p.requests_done:,}/{p.requests_total:,} requests  "
            f"{p.metrics_done:,}/{p.metrics_total:,} metrics  "
            f"{p.bytes_done / 1e6:.1f}/{p.bytes_total / 1e6:.1f} MB{retries}",
            force=done,
        )

    def reading(self, done: int, total: int) -> None:
        fraction = done / total if total else 1.0
        self._draw(fraction, f"{self.label} {done / 1e6:.1f}/{total / 1e6:.1f} MB")

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def _columns() -> int:
    import shutil

    return shutil.get_terminal_size((100, 24)).columns
