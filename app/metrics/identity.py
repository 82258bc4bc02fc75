"""What makes two uploads the same: the batch (`BatchKey`) and the server (`ServerIdentity`).
No Qt here.

**A batch is the metric items it holds**, whatever bodies they were packed in, in whatever
order, from whatever files: uploading it again makes the server count every item twice. Its
key is the SHA-256 of

- the number of valid metric items;
- the sums, over the items, of the CRC-32 of each item's bytes as it is sent and of its square
  (each item is serialised once, canonically, when it is read: `items.fast_metrics` and pydantic
  give the same bytes; a sum is the same in any order and counts an item repeated as often as it
  is there: the batch is a multiset);
- the preview's totals (`Batch.totals()`): per feature, application, environment and hour, the
  metrics, yes, no and variant counts, and the counts per variant name: exactly what the server
  adds up.

Why not a cryptographic digest per item: SHA-1 or BLAKE2 of a million items cost 0.6 to 0.8 s
of CPU on top of the 2.4 s of reading them (a third more); CRC-32 costs 0.2 s. The totals make the
key exact for every change the server would count differently (one count more, another hour,
another flag); a change it would not (a timestamp within the same hour, counts moved between two
items of one hour) changes the CRC sums unless CRC-32 collides: a change within four bytes in
a row of one item never does (CRC-32 finds every burst of up to 32 bits), another about one time
in 2^32; the sum of squares catches two items swapping a difference. Items too large for any
body are part of the batch too: the key does not depend on `--max-body`. What is not the same
batch: the same time spelt otherwise (an integer or a string, another offset), variants listed
in another order: the bytes sent differ.

**A server is what it says it is**: its instance id, where it answers one (`GET
/api/admin/ui-config`, `versionInfo.instanceId`: Unleash generates it when its database is made,
and the sandbox alike; read with the connection's admin token), else its normalised address
(`normalise_address`: the scheme and host lowercased, `localhost`, `127.0.0.1` and `::1` one
loopback, the default port written out, no trailing slash). Two servers are the same when both
ids are known and equal, or when either id is unknown and the addresses are equal.

Ledgers written before the key was kept have neither in their header: their server is the
address of their URL, and their batch key is computed once from their copy of the bodies (read
with the same reader as any file) and kept beside them in `KEY_FILE` (`ledger_key`).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from app.metrics.batch import Batch, merge_totals

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.metrics.ledger import Ledger

#: the batch key of a ledger made before the header kept one, computed from its bodies
KEY_FILE = "batch-key.json"
KEY_FORMAT = "flagdesk-batch-key"
#: the version of the key's recipe: keys of two versions never match
KEY_VERSION = 1
#: what `normalise_address` writes for localhost, 127.0.0.1 and ::1
LOOPBACK = "loopback"
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class BatchKey:
    """A batch as its metric items (see the module): equal keys, the same items."""

    #: the valid metric items
    metrics: int
    #: hex SHA-256 of the recipe above
    digest: str
    version: int = KEY_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "metrics": self.metrics, "digest": self.digest}

    @classmethod
    def from_json(cls, value: object) -> BatchKey | None:
        """The key a header or `KEY_FILE` holds; None when it holds none this flagdesk reads."""
        if not isinstance(value, Mapping):
            return None
        metrics, digest, version = value.get("metrics"), value.get("digest"), value.get("version")
        if not isinstance(metrics, int) or not isinstance(digest, str) or version != KEY_VERSION:
            return None
        return cls(metrics, digest, version)


def batch_key(batches: Sequence[Batch]) -> BatchKey:
    """The key of `batches` taken together (one upload sends them all). Made from what reading
    gathered: the totals (cached by the batch) and the CRC sums; no item is read again.
    Blocking for a batch of many rows: run it on a worker thread from a loop."""
    metrics = sum(batch.metric_count for batch in batches)
    crc = sum(batch.crc_sum for batch in batches)
    squares = sum(batch.crc_squares for batch in batches)
    totals = merge_totals([batch.totals() for batch in batches]) if batches else None
    digest = hashlib.sha256(f"{KEY_FORMAT} {KEY_VERSION}\n{metrics} {crc} {squares}\n".encode())
    if totals is not None:
        encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
        lines = [
            encode([r.feature, r.app, r.environment, r.window, r.metrics, r.yes, r.no, r.variants])
            for r in totals.rows
        ]
        lines.append(encode(sorted(totals.variants.items())))
        digest.update("\n".join(lines).encode("utf-8", "surrogatepass"))
    return BatchKey(metrics, digest.hexdigest())


def bodies_key(bodies: Iterable[bytes]) -> BatchKey:
    """The key of the metric items of `bodies` (bulk bodies, as a ledger copies them), read
    with the reader `load` uses, so that they give the bytes, and the key, of the batch they
    were split from. Blocking."""
    from app.metrics.read import read_body

    batch = Batch()
    now = int(time.time() * 1000)
    for index, body in enumerate(bodies):
        read_body(batch, body, f"body {index}", now)
    return batch_key([batch])


def ledger_key(ledger: Ledger) -> BatchKey | None:
    """The batch key of `ledger`: its header's, else the one computed earlier from its bodies
    (`KEY_FILE` in its folder), else computed now from its copy of the bodies and kept in
    `KEY_FILE` (when the folder can be written). None when the bodies cannot be read (a
    damaged copy). Blocking: reads the bodies of an old ledger once."""
    key = BatchKey.from_json(ledger.header.get("batch"))
    if key is not None:
        return key
    path = ledger.folder / KEY_FILE
    with contextlib.suppress(OSError, ValueError):
        key = BatchKey.from_json(json.loads(path.read_bytes()).get("batch"))
        if key is not None:
            return key
    from app.metrics.ledger import LedgerError

    try:
        key = bodies_key(ledger.body(entry.index) for entry in ledger.entries)
    except LedgerError:
        return None
    finally:
        ledger.release_bodies()  # `ledgers_in` opens ledgers that nobody closes
    with contextlib.suppress(OSError):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"format": KEY_FORMAT, "batch": key.to_json()}) + "\n", "utf-8")
        os.replace(tmp, path)
    return key


# ---------------------------------------------------------------------------- the server


def normalise_address(url: str) -> str:
    """`url` as one spelling of its server: `http://loopback:4242` for `HTTP://LocalHost:4242/`,
    `http://127.0.0.1:4242` and `http://[::1]:4242`; `https://unleash.example.com:443/base` for
    `https://Unleash.Example.com/base/`. The text itself (stripped) when it is not a URL."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if not scheme or not host:
        return text
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        host = LOOPBACK if host == "localhost" else host
    else:
        mapped = getattr(ip, "ipv4_mapped", None)
        ip = mapped or ip
        if ip in (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")):
            host = LOOPBACK
        else:
            host = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    port = port or DEFAULT_PORTS.get(scheme)
    path = re.sub("/{2,}", "/", parts.path).rstrip("/")
    return f"{scheme}://{host}{f':{port}' if port else ''}{path}"


def same_address(a: str, b: str) -> bool:
    """Whether two URLs are two spellings of one address (`normalise_address`)."""
    return normalise_address(a) == normalise_address(b)


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """A server as an upload knows it: its instance id when it said one, and its address."""

    #: the URL as given (what a person reads in the reports)
    url: str
    #: `versionInfo.instanceId` of its UI config (None: not known)
    instance_id: str | None = None

    @property
    def address(self) -> str:
        return normalise_address(self.url)

    def same(self, other: ServerIdentity) -> bool:
        """Both ids known: they decide; else the addresses do."""
        if self.instance_id and other.instance_id:
            return self.instance_id == other.instance_id
        return self.address == other.address

    def why_same(self, other: ServerIdentity) -> str:
        """How `other` was found to be this server, for a person: "" when spelt alike."""
        if self.url.rstrip("/") == other.url.rstrip("/"):
            return ""
        if self.instance_id and other.instance_id:
            return f"the same server as {self.url}, by its instance id {self.instance_id}"
        return f"the same server as {self.url}, by its address {self.address}"

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "address": self.address, "instance_id": self.instance_id}

    @classmethod
    def of_header(cls, header: Mapping[str, Any]) -> ServerIdentity:
        """The server of a ledger's header: its `server_id` where it has one, else its URL."""
        url = str(header.get("server") or "")
        saved = header.get("server_id")
        if isinstance(saved, Mapping):
            instance = saved.get("instance_id")
            return cls(url, instance if isinstance(instance, str) and instance else None)
        return cls(url)


async def read_server_identity(client: AdminClient, admin_token: str | None) -> ServerIdentity:
    """The identity of `client`'s server: its instance id read with the admin token (`GET
    /api/admin/ui-config`), or only its address when there is no admin token, the read fails,
    or the server names no instance id."""
    from app.api.errors import ClientError
    from app.metrics.batch import token_environment

    url = client.base_url
    if not admin_token or token_environment(admin_token) not in (None, "*"):
        return ServerIdentity(url)  # none, or a client token: the admin API refuses it
    try:
        ui = await client.ui_config()
    except ClientError:
        return ServerIdentity(url)
    instance = ui.versionInfo.instanceId if ui.versionInfo is not None else None
    return ServerIdentity(url, instance or None)
