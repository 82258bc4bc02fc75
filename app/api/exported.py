"""The batch export as plain data (`AdminClient.exported`): what a snapshot reads of
`POST /api/admin/features-batch/export`, validated from the body's bytes into dicts and lists
with the same field types as the wire models (`app.api.models.ExportResult` and its items), so
what one accepts, and how it converts it, the other does too; a key `ExportResult` defaults
is absent here (read it with `.get`), and what the snapshot does not read is left out.

Why not the models: a snapshot makes its own models of the flags (`app.snapshot.read`), so the
wire models were made only to be read once and dropped. Validated into models, one
environment's export of 10,000 flags took 0.13 s and the assembly from them 0.55 s a side;
into plain data from the bytes, pydantic does it in one call, and the assembly reads dicts.

Who decodes: pydantic is the authority (`EXPORTED`, `ITEMS`), as in `app.api.streaming`. msgspec
decodes the same TypedDicts (`strictly`) about three times faster than the standard library's
decoder and pydantic after it (a project's export of 500 flags: 1.8 against 5.0 ms, and a
diff reads 60 a side), and it is strict (no number for a string, no 0/1 for a bool), so what
it accepts pydantic accepts with the same values; whatever it refuses goes to pydantic, which
takes lenient input or names what is wrong."""

from __future__ import annotations

from typing import Any, NotRequired

import msgspec
from pydantic import TypeAdapter
from typing_extensions import TypedDict

__all__ = ["EXPORTED", "Exported", "strictly"]


class Payload(TypedDict):
    """`VariantPayload`"""

    type: str
    value: str


class StrategyVariant(TypedDict):
    """`StrategyVariant`"""

    name: str
    weight: int
    weightType: str
    stickiness: str
    payload: NotRequired[Payload | None]


class Override(TypedDict):
    """`Override`"""

    contextName: str
    values: NotRequired[list[str]]


class Variant(TypedDict):
    """`Variant`: a flag's variant in the export's environment."""

    name: str
    weight: float
    weightType: NotRequired[str | None]
    stickiness: NotRequired[str | None]
    payload: NotRequired[Payload | None]
    overrides: NotRequired[list[Override]]


class Flag(TypedDict):
    """`Feature`: what the export says of a flag itself."""

    name: str
    type: NotRequired[str | None]
    description: NotRequired[str | None]
    project: NotRequired[str | None]
    impressionData: NotRequired[bool | None]
    stale: NotRequired[bool | None]
    archived: NotRequired[bool | None]


class Strategy(TypedDict):
    """`ExportStrategy`: a strategy in the export's environment and the flag it is of."""

    id: str
    name: str
    featureName: NotRequired[str | None]
    title: NotRequired[str | None]
    constraints: NotRequired[list[dict[str, Any]]]
    parameters: NotRequired[dict[str, Any]]
    disabled: NotRequired[bool | None]
    sortOrder: NotRequired[int | None]
    segments: NotRequired[list[int]]
    variants: NotRequired[list[StrategyVariant]]


class Place(TypedDict):
    """`ExportEnvironment`: a flag in the export's environment, on or off, its variants."""

    featureName: str
    enabled: bool
    variants: NotRequired[list[Variant]]


class Tag(TypedDict):
    """`ExportTag`"""

    featureName: str
    tagType: str
    tagValue: str


class Dependencies(TypedDict):
    """`ExportDependencies`: a flag and its parents."""

    feature: str
    dependencies: NotRequired[list[dict[str, Any]]]


class Exported(TypedDict):
    """`ExportResult`: the lists a snapshot reads."""

    features: NotRequired[list[Flag]]
    featureStrategies: NotRequired[list[Strategy]]
    featureEnvironments: NotRequired[list[Place]]
    featureTags: NotRequired[list[Tag]]
    dependencies: NotRequired[list[Dependencies]]


#: validates an export's body (bytes) into `Exported`
EXPORTED: TypeAdapter[Exported] = TypeAdapter(Exported)
#: each of its lists' items, validated a slice at a time from a large body's decoded JSON
ITEMS: dict[str, TypeAdapter[list[Any]]] = {
    "features": TypeAdapter(list[Flag]),
    "featureStrategies": TypeAdapter(list[Strategy]),
    "featureEnvironments": TypeAdapter(list[Place]),
    "featureTags": TypeAdapter(list[Tag]),
    "dependencies": TypeAdapter(list[Dependencies]),
}

_STRICT: msgspec.json.Decoder[Exported] = msgspec.json.Decoder(Exported)


def strictly(content: bytes) -> Exported | None:
    """The export's body as `EXPORTED` validates it, decoded by msgspec; None when msgspec
    refuses it (not JSON, another shape, a value only pydantic's leniency takes): pydantic then
    says what it is."""
    try:
        return _STRICT.decode(content)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
