"""The error bodies of the Unleash releases, by who refuses (`sandbox.store.core.RefusedBy`):
the same requests, and what each release answers, for tests/compat/test_error_bodies.py (the
real release and the sandbox playing it) and tests/sandbox/test_versions.py (the sandbox playing
each release, no peer needed).

Measured on 5.12.8, 6.10.1, 7.6.5 and 8.2.0 (2026-11-26), first by hand, then by these:

- the checks before a route answer `{id, name, message, details}` on every release: an
  unknown token (401 `UnauthorizedError`), no token (401 `AuthenticationRequired`, with the
  login's `path`, `type`, `defaultHidden` too), an unknown path (404), the request's schema (400
  `BadDataError`, each detail with its `path`), the content type (415 `ContentTypeError`), and a
  root role without the permission (403 `PermissionError` with `permissions`; measured by hand
  with a Viewer's personal access token on 5.12.8 and 8.2.0: a PAT cannot be made on a real
  peer without logging in, so it is checked on the sandbox alone);
- what a route's handler raises has the `id` on 5.12 and 6.10 and not from 7.6: not found (404
  `NotFoundError`), a name taken (409 `NameExistsError`), bad data its joi schema finds (400
  `BadDataError`: a malformed email, a context field's name that is not URL friendly);
- `{message}` alone: a token of the wrong kind (403) and a body that is not JSON (400);
- 5.12 repeats every detail's message as its `description`; later releases do not.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from sandbox.store.core import RefusedBy
from tests.compat.conftest import Peer, per_version


@dataclass(frozen=True)
class Case:
    """One request that is refused, and who refuses it."""

    what: str
    status: int
    name: str
    by: RefusedBy
    method: str
    path: str
    json: Any = None
    content: bytes | None = None
    content_type: str = "application/json"
    token: Literal["admin", "client", "bogus", "none"] = "admin"
    paths: bool = False  # whether each detail names its path
    extra: tuple[str, ...] = ()  # the body's fields beyond id, name, message, details


TAKEN = "flagdeskcompaterrorbodies"  # a context field made first, so its name is taken

CASES = [
    Case("a malformed email", 400, "BadDataError", "handler", "POST", "/api/admin/user-admin",
         {"email": "not-an-email", "rootRole": "Viewer"}),
    Case("a field name with a space", 400, "BadDataError", "handler", "POST",
         "/api/admin/context", {"name": "has space"}),
    Case("a bulk body without its lists", 400, "BadDataError", "checks", "POST",
         "/api/client/metrics/bulk", {}, token="client", paths=True),
    Case("a body that is not JSON", 400, "", "bare", "POST", "/api/admin/context",
         content=b'{"name":'),
    Case("a bulk revive without features", 400, "BadDataError", "checks", "POST",
         "/api/admin/projects/default/revive", {}, paths=True),
    Case("an unknown token", 401, "UnauthorizedError", "checks", "GET", "/api/admin/user",
         token="bogus"),
    Case("no token", 401, "AuthenticationRequired", "checks", "GET", "/api/admin/user",
         token="none", extra=("defaultHidden", "path", "type")),
    Case("a client token on the admin API", 403, "", "bare", "GET", "/api/admin/user",
         token="client"),
    Case("an unknown user", 404, "NotFoundError", "handler", "GET",
         "/api/admin/user-admin/2000000000"),
    Case("an unknown context field", 404, "NotFoundError", "handler", "GET",
         "/api/admin/context/flagdesk-compat-no-such-field"),
    Case("an unknown path", 404, "NotFoundError", "checks", "GET", "/api/admin/no-such-path"),
    Case("reviving an unknown flag", 404, "NotFoundError", "handler", "POST",
         "/api/admin/archive/revive/flagdesk-compat-no-such-flag"),
    Case("a context field name taken", 409, "NameExistsError", "handler", "POST",
         "/api/admin/context", {"name": TAKEN}),
    Case("a text body", 415, "ContentTypeError", "checks", "POST", "/api/admin/context",
         content=b"x", content_type="text/plain"),
]  # fmt: skip


Shape = tuple[int, tuple[str, ...], str, tuple[tuple[str, ...], ...]]


def shape_of(answer: httpx.Response) -> Shape:
    """status, the body's fields, its `name`, and the fields of its details (each set once)."""
    body = answer.json()
    assert isinstance(body, dict), answer.text
    details = {tuple(sorted(d)) for d in body.get("details") or []}
    return answer.status_code, tuple(sorted(body)), body.get("name", ""), tuple(sorted(details))


def expected(target: Peer, case: Case) -> Shape:
    """What the target's release answers `case` with."""
    handler_ids = per_version(target, {"5.12 6.10": True, "7.6 8.2": False})
    descriptions = per_version(target, {"5.12": True, "6.10 7.6 8.2": False})
    if case.by == "bare":
        return case.status, ("message",), "", ()
    fields = {"name", "message", "details", *case.extra}
    if case.by == "checks" or handler_ids:
        fields.add("id")
    detail = {"message"} | ({"path"} if case.paths else set()) | (
        {"description"} if descriptions else set())  # fmt: skip
    return case.status, tuple(sorted(fields)), case.name, (tuple(sorted(detail)),)


def answers(target: Peer) -> dict[str, tuple[Shape, Shape]]:
    """Each case's (answered, expected) shape on `target`."""
    tokens = {"admin": target.admin_token, "client": target.require_client_token(),
              "bogus": "*:*.flagdesk-compat-bogus-token", "none": ""}  # fmt: skip
    out: dict[str, tuple[Shape, Shape]] = {}
    with httpx.Client(base_url=target.url, timeout=30) as http:
        admin = {"Authorization": target.admin_token}
        made = http.post("/api/admin/context", json={"name": TAKEN}, headers=admin)
        assert made.status_code in (201, 409), made.text
        try:
            for case in CASES:
                headers = {"Authorization": tokens[case.token]} if tokens[case.token] else {}
                if case.json is not None or case.content is not None:
                    headers["Content-Type"] = case.content_type
                content = case.content
                if content is None and case.json is not None:
                    content = httpx.Request("POST", "/", json=case.json).content
                for _ in range(3):  # Unleash's limit on creating users (20 a minute) covers
                    answer = http.request(case.method, case.path, content=content,  # refusals
                                          headers=headers)  # fmt: skip
                    if answer.status_code != 429:
                        break
                    time.sleep(min(61.0, float(answer.headers.get("retry-after") or 61)))
                out[case.what] = shape_of(answer), expected(target, case)
        finally:
            http.delete(f"/api/admin/context/{TAKEN}", headers=admin)
    return out


def differences(target: Peer) -> dict[str, tuple[Shape, Shape]]:
    """The cases `target` answers otherwise than its release does (answered, expected)."""
    return {what: pair for what, pair in answers(target).items() if pair[0] != pair[1]}
