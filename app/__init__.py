"""flagdesk: desktop administration for Unleash-compatible feature-flag servers."""

import sys

__version__ = "0.1.0"

# httpx imports its own command-line client as it is imported (`httpx._main`, which imports
# click, rich and pygments whenever they are installed; uvicorn always brings click), for an
# `httpx` command flagdesk never runs: 0.08 s of the window's way to its first data in the
# development environment, where all three are, and click's import in the bundle's. Marked
# absent here, before any module of flagdesk imports httpx: httpx then puts a stub in its place.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
