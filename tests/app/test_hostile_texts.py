"""A server of someone else's may hold texts the requests refuse (control characters, issue 35):
the bodies made from what a server holds (`request_of`, `body_of`) keep them as they are, so
reading, comparing and snapshotting never fail on them; an undo that would put one back says
why it cannot (`CannotUndo`) instead of failing with a validation error."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.actions.context_fields import body_of
from app.actions.groups import request_of
from app.actions.journal import Entry, State
from app.actions.undo import CannotUndo, _put_back
from app.api.models import ContextField, CreateGroup, Group, UpdateUser

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J"


def test_bodies_made_from_a_server_keep_what_it_holds() -> None:
    group = Group.model_validate({"id": 3, "name": HOSTILE, "description": "\x00",
                                  "mappingsSSO": [HOSTILE],
                                  "users": [{"user": {"id": 7}}]})  # fmt: skip
    body = request_of(group)
    assert (body.name, body.description, body.mappingsSSO) == (HOSTILE, "\x00", [HOSTILE])
    assert body.model_dump(mode="json")["users"] == [{"user": {"id": 7}}]
    assert body == request_of(group)
    field = ContextField.model_validate({"name": "tier", "description": HOSTILE,
                                         "legalValues": [{"value": HOSTILE}]})  # fmt: skip
    held = body_of(field).model_dump(mode="json", exclude_none=True)
    assert held["description"] == HOSTILE and held["legalValues"] == [{"value": HOSTILE}]


def _entry(before: object) -> Entry:
    return Entry(id="e1", time=datetime.now(UTC), action="groups.edit", connection="c",
                 server="http://x", token=None, user=None, ids=[3], before=before,
                 request=None, state=State.DONE)  # fmt: skip


def test_an_undo_that_would_put_back_a_refused_text_says_why() -> None:
    with pytest.raises(CannotUndo, match=r"cannot be undone: .*name: Value error, control"):
        _put_back(CreateGroup, {"name": HOSTILE}, _entry({}))
    with pytest.raises(CannotUndo, match="email"):
        _put_back(UpdateUser, {"email": "a\x00@example.com"}, _entry({}))
    assert _put_back(CreateGroup, {"name": "Fine"}, _entry({})).name == "Fine"
