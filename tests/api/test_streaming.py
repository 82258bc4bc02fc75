"""Large lists read as a stream (`app.api.streaming.ListStream` under `AdminClient`): the same
items as one parse, cut anywhere, errors named by their index, lost connections retried only
while nothing was handed out, and the request counted in flight until its body is read."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
import pytest
from pydantic import Field, TypeAdapter, ValidationError

from app.api import errors as e
from app.api.client import AdminClient, RetryPolicy
from app.api.models import ArchivedFeature, ArchivedFeatures, InactiveUser, InactiveUsers, row
from app.api.streaming import PIECE_BYTES, ItemsInvalid, ListStream, ValueSharer, fast_decoder
from tests.api.helpers import BASE, ONCE, TOKEN, canned, failure, jsonb, run
from tests.faults import Cut, FaultServer, Reply


def test_a_large_body_is_validated_in_slices_letting_the_event_loop_turn() -> None:
    """100,000 inactive users (20 MB): the same result as one `model_validate_json`, but the
    event loop runs between slices, so a window stays responsive meanwhile."""
    users = [
        {"id": i, "name": f"User {i}", "email": f"u{i}@example.com", "username": f"u{i}",
         "seenAt": "2025-01-02T03:04:05.000Z", "createdAt": 1704164645000, "extra": i}
        for i in range(100_000)
    ]  # fmt: skip
    body = jsonb({"version": 1, "inactiveUsers": users, "total": 100_000})
    transport, _ = canned(200, body)
    turns = 0

    async def ticker() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    async def go() -> InactiveUsers:
        async with AdminClient(BASE, TOKEN, transport=transport, retry=ONCE) as client:
            tick = asyncio.create_task(ticker())
            try:
                return await client.inactive_users()
            finally:
                tick.cancel()

    result = run(go())
    assert result == InactiveUsers.model_validate_json(body)
    assert result.model_extra == {"total": 100_000}  # a member after the list is kept
    assert len(result.inactiveUsers) == 100_000
    assert turns >= len(body) // PIECE_BYTES  # at least one turn per piece


def test_a_large_list_streamed_with_cuts_in_awkward_places() -> None:
    """Items whose strings hold `},{` and braces, nested objects, pretty-printed JSON, and
    chunks of every size: the streamed parse gives what one `model_validate_json` gives."""
    features = [
        {"name": f"f{i}", "project": "p", "description": "odd },{ \"x\" } {" * (i % 3),
         "environments": [{"name": "dev", "enabled": True}, {"name": "prod", "enabled": False}]}
        for i in range(3000)
    ]  # fmt: skip
    whole = {"version": 1, "features": features}
    for body, chunk in ((jsonb(whole), 1000), (json.dumps(whole, indent=2).encode(), 7777)):
        stream: ListStream[ArchivedFeature] = ListStream("features", ArchivedFeature, 4096)
        items = []
        for start in range(0, len(body), chunk):
            items.extend(stream.feed(body[start : start + chunk]))
        items.extend(stream.finish())
        assert items == ArchivedFeatures.model_validate_json(body).features
        assert stream.envelope == {"version": 1}


def test_a_bad_item_in_a_streamed_list_is_named_by_its_index() -> None:
    users = [{"id": i, "name": f"User {i}"} for i in range(20_000)]
    users[15_000]["id"] = "fifteen thousand"
    error = failure(canned(200, jsonb({"version": 1, "inactiveUsers": users}))[0],
                    lambda c: c.inactive_users())  # fmt: skip
    assert isinstance(error, e.BadResponse)
    assert error.field == "inactiveUsers[15000].id"


def test_a_streamed_list_cut_short_is_a_bad_response() -> None:
    body = jsonb({"version": 1, "inactiveUsers": [{"id": i} for i in range(20_000)]})
    error = failure(canned(200, body[:-5000])[0], lambda c: c.inactive_users())
    assert isinstance(error, e.BadResponse)
    assert "not JSON" in str(error)


def test_streamed_answers_that_are_not_json_over_a_real_socket() -> None:
    """A streamed read consumes the body as it comes: what is wrong with it is still said from
    the bytes seen (the response itself holds none)."""
    users = jsonb({"version": 1, "inactiveUsers": [{"id": i} for i in range(20_000)]})

    async def go() -> list[BaseException]:
        async with FaultServer(
            Reply(200, b"OK", {"Content-Type": "text/plain"}),
            Reply(200, b"<!doctype html><p>app</p>", {"Content-Type": "application/octet-stream"}),
            Reply(200, users[:-5000]),  # whole as sent, but not the whole JSON
        ) as server:
            errors: list[BaseException] = []
            async with AdminClient(server.url, TOKEN, retry=ONCE) as client:
                for _ in range(3):
                    try:
                        await client.inactive_users()
                    except e.ClientError as exc:
                        errors.append(exc)
            return errors

    plain, page, cut = run(go())
    assert type(plain) is e.BadResponse and "not JSON (text/plain)" in str(plain)
    assert type(page) is e.BadResponse and "an HTML page" in str(page)
    assert type(cut) is e.BadResponse and "not JSON (application/json)" in str(cut)


def test_a_streamed_read_lost_midway_is_retried_until_items_were_handed_out() -> None:
    users = [{"id": i, "name": f"User {i}"} for i in range(20_000)]
    body = jsonb({"version": 1, "inactiveUsers": users})
    retry = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.001)

    async def go() -> tuple[int, int, BaseException | None, int]:
        async with FaultServer(Cut(body, len(body) // 2), Reply(200, body)) as server:
            async with AdminClient(server.url, TOKEN, retry=retry) as client:
                result = await client.inactive_users()  # lost, then read again whole
                first_requests = len(server.requests)
            server.script[:] = [Cut(body, len(body) // 2), Reply(200, body)]
            server.requests.clear()
            handed: list[Any] = []
            failure: BaseException | None = None
            async with AdminClient(server.url, TOKEN, retry=retry) as client:
                try:
                    await client.inactive_users(on_items=handed.extend)
                except e.ClientError as exc:
                    failure = exc
            return len(result.inactiveUsers), first_requests, failure, len(server.requests)

    count, requests, failure, requests_with_items = run(go())
    assert (count, requests) == (20_000, 2)
    # items had gone to the caller: not read again (they would come twice), the loss is raised
    assert isinstance(failure, e.ConnectionLost), failure
    assert requests_with_items == 1


def test_an_answer_of_another_shape_is_parsed_whole() -> None:
    """Members before the list that are not plain values: not streamed, same result."""
    users = [{"id": i} for i in range(20_000)]
    body = jsonb({"meta": {"a": [1, 2]}, "version": 1, "inactiveUsers": users})

    async def go() -> InactiveUsers:
        async with AdminClient(BASE, TOKEN, transport=canned(200, body)[0], retry=ONCE) as c:
            return await c.inactive_users()

    result = run(go())
    assert result == InactiveUsers.model_validate_json(body)
    assert result.model_extra == {"meta": {"a": [1, 2]}}


def test_a_streamed_read_counts_as_in_flight_until_its_answer_is_read() -> None:
    """The status bar's request count: a 38 MB answer is still a request in flight while its
    body arrives, not only until its headers do."""
    body = jsonb({"version": 1, "inactiveUsers": [{"id": i} for i in range(20_000)]})
    seen: list[int] = []

    async def go() -> int:
        async with AdminClient(BASE, TOKEN, transport=canned(200, body)[0], retry=ONCE) as c:
            await c.inactive_users(on_items=lambda users: seen.append(c.in_flight))
            return c.in_flight

    after = run(go())
    assert seen and set(seen) == {1}
    assert after == 0


#: values for each kind of field: what servers send, what lenient ones send, and what is wrong
TIMES = ["2025-01-02T03:04:05.006Z", "2025-01-02T03:04:05Z", "2025-01-02T05:04:05.123456+02:00",
         "2025-01-02T03:04:05", "2025-01-02 03:04:05Z", "2025-01-02", 1735787045, 1735787045006,
         "1735787045", "", "yesterday", True, None, 1.5]  # fmt: skip
BOOLS = [True, False, None, 0, 1, 2, "true", "yes", "0", "", 1.0]
IDS = [7, 0, -3, 2**40, 7.0, 7.5, "7", True, None]
TEXTS = ["Ada", "", "é \u00e9 \ud83d\ude00", None, 7, True, ["x"]]


def _items(kind: str) -> list[dict[str, Any]]:
    if kind == "users":
        return (
            [{"id": 1, "seenAt": t, "createdAt": t} for t in TIMES]
            + [{"id": i} for i in IDS]
            + [{"id": 1, "name": t, "email": t, "extra": {"a": [1]}} for t in TEXTS]
            + [{"name": "no id"}]
        )
    return (
        [{"name": "f", "project": "p", "archivedAt": t} for t in TIMES]
        + [
            {"name": "f", "project": "p", "stale": b, "environments": [{"name": "d", "enabled": b}]}
            for b in BOOLS
        ]
        + [{"name": t, "project": "p"} for t in TEXTS]
        + [{"name": "f", "project": "p", "environments": v} for v in (None, [], {}, ["dev"])]
        + [{"name": "f"}]
    )


@pytest.mark.parametrize(("kind", "item_type"),
                         [("users", InactiveUser), ("flags", ArchivedFeature)])  # fmt: skip
def test_the_fast_decoder_and_pydantic_agree_on_every_item(kind: str, item_type: type) -> None:
    """msgspec decodes the items first (five times faster), pydantic whatever it refuses: for
    each item, alone in its stream, the result is pydantic's (the same values, times at the
    same instant and offset) or pydantic's error, whoever decoded it."""
    pydantic_list = TypeAdapter(list[item_type])  # type: ignore[valid-type]
    fast = fast_decoder(item_type)
    assert fast is not None
    decoded_fast = 0
    for item in _items(kind):
        body = json.dumps({"version": 1, "items": [item, item]}).encode()
        stream: ListStream[Any] = ListStream("items", item_type)
        try:
            expected = pydantic_list.validate_json(json.dumps([item, item]))
        except ValidationError as exc:
            with pytest.raises(ItemsInvalid) as raised:
                stream.feed(body)
                stream.finish()
            assert raised.value.error.errors() == exc.errors(), item
            continue
        got = stream.feed(body) + stream.finish()
        assert got == expected, item
        for ours, theirs in zip(got, expected, strict=True):
            for name, value in vars_of(ours).items():
                if hasattr(value, "utcoffset"):
                    assert value.utcoffset() == getattr(theirs, name).utcoffset(), item
        try:
            fast.decode(json.dumps([item]).encode())
            decoded_fast += 1
        except msgspec.DecodeError:  # any refusal sends the piece to pydantic
            pass
    assert decoded_fast >= 5  # the fast path was taken, not only pydantic's


def vars_of(row: Any) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__dataclass_fields__}


@dataclass
class Counted:
    count: Annotated[int, Field(ge=1)]


@dataclass
class Nested:
    inner: list[Counted] | None = None


def test_only_plain_dataclasses_are_decoded_fast() -> None:
    """A constraint msgspec does not read (`Field(ge=1)`) or a pydantic model: pydantic alone."""
    assert fast_decoder(InactiveUser) is not None and fast_decoder(ArchivedFeature) is not None
    assert fast_decoder(Counted) is None and fast_decoder(Nested) is None
    assert fast_decoder(InactiveUsers) is None
    stream: ListStream[Any] = ListStream("items", Counted)
    with pytest.raises(ItemsInvalid):
        stream.feed(b'{"items":[{"count":0}]}')
        stream.finish()


def test_equal_values_of_the_shared_fields_are_one_object_across_pieces() -> None:
    """msgspec gives each item its own copy of every string; the fields a `@row` class names
    `shared` (a flag's type and project, its environments' names) come out as one object per
    value across the whole list, whichever validator took each piece (the item with a time
    as a number goes to pydantic), and the items are still exactly pydantic's."""
    features = [
        {"name": f"f{i}", "type": ("release", "experiment")[i % 2], "project": "default",
         "description": f"flag {i}", "createdAt": 1704164645000 if i == 7 else None,
         "environments": [{"name": "development", "enabled": True},
                          {"name": "production", "enabled": False}]}
        for i in range(600)
    ]  # fmt: skip
    body = jsonb({"version": 1, "features": features})
    stream: ListStream[ArchivedFeature] = ListStream("features", ArchivedFeature, 4096)
    items: list[ArchivedFeature] = []
    for start in range(0, len(body), 1000):
        items.extend(stream.feed(body[start : start + 1000]))
    items.extend(stream.finish())
    assert items == ArchivedFeatures.model_validate_json(body).features
    assert len({id(f.type) for f in items}) == 2
    assert len({id(f.project) for f in items}) == 1
    assert len({id(e.name) for f in items for e in f.environments or []}) == 2
    assert len({id(f.description) for f in items}) == 600  # not shared: every one differs


def test_only_the_fields_a_row_names_are_shared() -> None:
    """Nothing to share in an inactive user (names, emails: each its own); a flag shares its
    own fields and its environments'; a field a row names must be one of its fields."""
    assert ValueSharer.of(InactiveUser) is None
    assert ValueSharer.of(Counted) is None and ValueSharer.of(InactiveUsers) is None
    sharer = ValueSharer.of(ArchivedFeature)
    assert sharer is not None and list(sharer._tables) == ["type", "project"]
    assert list(sharer._nested) == ["environments"]
    assert list(sharer._nested["environments"]._tables) == ["name"]
    with pytest.raises(TypeError, match="no field kind"):

        @row(shared=("kind",))
        class Typo:
            name: str
