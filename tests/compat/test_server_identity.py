"""What the guard against uploading a batch twice knows a server by (`app/metrics/identity.py`),
on the real Unleash and on the sandbox playing its version (`target`): the instance id its UI
config names (`versionInfo.instanceId`: a UUID Unleash makes with its database), read with the
admin token, the same through another spelling of its address; with a client token alone, the
admin API is not asked and the address is what is known."""

from __future__ import annotations

import asyncio
import re

from app.api.client import AdminClient
from app.metrics.identity import ServerIdentity, read_server_identity
from tests.compat.conftest import Peer

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def identity(url: str, token: str) -> ServerIdentity:
    async def read() -> ServerIdentity:
        async with AdminClient(url, token) as client:
            return await read_server_identity(client, token)

    return asyncio.run(read())


def test_a_server_is_known_by_its_instance_id_however_its_address_is_spelt(target: Peer) -> None:
    by_ip = identity(target.url, target.admin_token)
    assert by_ip.instance_id is not None and UUID.match(by_ip.instance_id), by_ip
    by_name = identity(target.url.replace("127.0.0.1", "localhost"), target.admin_token)
    assert by_name.instance_id == by_ip.instance_id
    assert by_name.same(by_ip)


def test_with_a_client_token_alone_the_address_is_what_is_known(target: Peer) -> None:
    target.require_client_token()
    known = identity(target.url, target.client_token)
    assert known.instance_id is None
    assert known.same(identity(target.url.replace("127.0.0.1", "localhost"), target.admin_token))
