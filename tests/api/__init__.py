"""The client (`app.api`): every operation against a sandbox over HTTP, `flagdesk check` as a
subprocess, and every error kind by fault injection: small local servers on real sockets
(`tests/faults.py`, shared with `tests/metrics/`: stalls, drops, TLS with the test CA in
`tests/api/certs/`) or an `httpx.MockTransport` where a real server cannot be made to misbehave
on demand (rate limits, an Unleash 8.2 without groups).

One file per job of the client: `test_errors.py` (failures through the client) and
`test_failures.py` (`failures.py` and `html_pages.py` alone), `test_retries.py` (sending),
`test_streaming.py` (large lists), `test_fallbacks.py` (search fallback, servers without
groups), `test_capabilities.py` (`capabilities_of` with no server), `test_operations.py`,
`test_personal_tokens.py` (the connected user's tokens), `test_cleanup.py` (the clean-up
report, `app/api/cleanup.py`), `test_instance.py` (statistics, maintenance, CORS origins,
banners: issue 38), `test_events.py` (the event log's reads and filters, `app/api/events.py`:
issue 38);
`helpers.py` holds their canned answers.
"""
