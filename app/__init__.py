"""flagdesk: desktop administration for Unleash-compatible feature-flag servers."""

__version__ = "0.1.0"
