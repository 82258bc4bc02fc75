"""`app.metrics.batch_upload`'s search for earlier uploads of a batch: the same server (its URL
as the ledger keeps it) and the same body bytes, accepted; nothing else counts."""

from __future__ import annotations

import json
from pathlib import Path

from app.metrics.batch_upload import already_sent_text, earlier_uploads
from app.metrics.ledger import Ledger
from app.metrics.split import Body

SERVER = "http://127.0.0.1:4242"


def body(index: int, feature: str) -> Body:
    item = {"featureName": feature, "appName": "a", "environment": "development", "yes": 1}
    data = json.dumps({"applications": [], "metrics": [item]}, separators=(",", ":")).encode()
    return Body(index, data, 1, 0)


def upload(parent: Path, name: str, server: str, features: list[str], accepted: int) -> Path:
    folder = parent / name
    ledger = Ledger.create([body(i, f) for i, f in enumerate(features)], folder=folder,
                           server=server)  # fmt: skip
    for i in range(accepted):
        ledger.mark_sent(i).wait()
        ledger.mark_accepted(i)
    ledger.close()
    return folder


def test_only_accepted_bodies_of_the_same_bytes_on_the_same_server_count(tmp_path: Path) -> None:
    uploads = tmp_path / "uploads"
    accepted = upload(uploads, "1-accepted", SERVER + "/", ["x", "y"], accepted=1)
    upload(uploads, "2-pending", SERVER, ["x", "y"], accepted=0)
    upload(uploads, "3-elsewhere", "http://other:4242", ["x", "y"], accepted=2)
    upload(uploads, "4-other-bytes", SERVER, ["z"], accepted=1)
    (uploads / "5-no-ledger").mkdir()
    new = Ledger.create([body(0, "x"), body(1, "y")], folder=uploads / "6-new", server=SERVER)
    try:
        found = earlier_uploads(new, [uploads, uploads])
    finally:
        new.close()
    assert [(e.folder, e.bodies, e.metrics) for e in found] == [(accepted, 1, 1)]
    text = already_sent_text(SERVER, found, 2)
    assert text.startswith(f"1 of this batch's 2 bodies were uploaded to {SERVER}")
    assert str(accepted) in text and found[0].when in text
