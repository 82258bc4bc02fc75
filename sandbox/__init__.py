"""The embedded sandbox server: the spec's admin and client-metrics API on SQLite.

Its layer rule: of flagdesk it imports the wire contract only (`app.api.models`, `app.api.wire`,
and the version in `app`), never Qt, `app.viewmodels` or `ui`, so `flagdesk serve` runs on a
machine without display libraries (tests/sandbox/test_server.py checks it).
"""
