"""The embedded sandbox server: the spec's admin and client-metrics API on SQLite.

Imports `app.api.models` for the wire contract and nothing of Qt, so `flagdesk serve` runs on a
machine without display libraries.
"""
