"""The error bodies' shapes by release (`tests.compat.error_bodies`: who refuses decides
whether the body has an `id`, and 5.12 repeats each detail as its `description`), asked of the
real release and of the sandbox playing it (`target`), the same requests, the same
expectations."""

from __future__ import annotations

from tests.compat.conftest import Peer
from tests.compat.error_bodies import differences


def test_error_bodies_have_the_release_s_shape(target: Peer) -> None:
    assert differences(target) == {}
