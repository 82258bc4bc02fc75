"""`app.metrics.batch_upload`'s search for earlier uploads of a batch: the same server (its
instance id, else its normalised address) and the same batch key, something of it accepted;
nothing else counts. (`test_duplicates.py` runs the guard against a real sandbox.)"""

from __future__ import annotations

import json
from pathlib import Path

from app.metrics.batch import Batch
from app.metrics.batch_upload import already_sent_text, earlier_uploads
from app.metrics.identity import ServerIdentity, batch_key
from app.metrics.ledger import Ledger
from app.metrics.read import read_body
from app.metrics.split import Body

SERVER = "http://127.0.0.1:4242"


def body(index: int, feature: str) -> Body:
    item = {"featureName": feature, "appName": "a", "environment": "development", "yes": 1}
    data = json.dumps({"applications": [], "metrics": [item]}, separators=(",", ":")).encode()
    return Body(index, data, 1, 0)


def batch_of(features: list[str]) -> Batch:
    """The batch of one metric of each feature, read as a ledger's bodies are."""
    batch = Batch()
    for i, f in enumerate(features):
        read_body(batch, body(i, f).data, f"body {i}", 0)
    return batch


def upload(
    parent: Path,
    name: str,
    server: str,
    features: list[str],
    accepted: int,
    instance: str | None = None,
) -> Path:
    folder = parent / name
    ledger = Ledger.create([body(i, f) for i, f in enumerate(features)], folder=folder,
                           server=server, batch=batch_key([batch_of(features)]).to_json(),
                           server_id=ServerIdentity(server, instance).to_json())  # fmt: skip
    for i in range(accepted):
        ledger.mark_sent(i).wait()
        ledger.mark_accepted(i)
    ledger.close()
    return folder


def test_only_uploads_of_the_same_batch_accepted_on_the_same_server_count(tmp_path: Path) -> None:
    uploads = tmp_path / "uploads"
    accepted = upload(uploads, "1-accepted", SERVER + "/", ["x", "y"], accepted=1)
    upload(uploads, "2-pending", SERVER, ["x", "y"], accepted=0)
    upload(uploads, "3-elsewhere", "http://other:4242", ["x", "y"], accepted=2)
    upload(uploads, "4-other-batch", SERVER, ["x"], accepted=1)
    upload(uploads, "5-other-instance", SERVER, ["y", "x"], accepted=2, instance="other")
    (uploads / "6-no-ledger").mkdir()
    key = batch_key([batch_of(["y", "x"])])
    found = earlier_uploads(key, ServerIdentity("http://localhost:4242", "this"),
                            [uploads, uploads])  # fmt: skip
    # the one without an instance id is this server by its address; the other instance is not
    assert [(e.folder, e.bodies, e.metrics) for e in found] == [(accepted, 1, 1)]
    assert found[0].matched_by == (
        "the same server as http://localhost:4242, by its address http://loopback:4242"
    )
    text = already_sent_text(found, 2)
    assert text.startswith(f"1 of this batch's 2 metrics were uploaded to {SERVER}/ (the same")
    assert str(accepted) in text and found[0].when in text
