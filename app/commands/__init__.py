"""Headless subcommands of `flagdesk` (no Qt imported): one module per command."""
