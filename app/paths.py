"""Where flagdesk keeps its files. Light on purpose (platformdirs only): the window's saved
layout is read before anything heavy is imported."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "flagdesk"


def config_dir() -> Path:
    """Profiles and window layout: `FLAGDESK_CONFIG_DIR` when set, else the platformdirs config
    folder."""
    override = os.environ.get("FLAGDESK_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """The sandbox's database and the metrics uploads' ledgers: `FLAGDESK_DATA_DIR` when set,
    else the platformdirs data folder."""
    override = os.environ.get("FLAGDESK_DATA_DIR")
    return (
        Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    )


#: the profile store's file in the config folder (`app.profiles.ProfileStore`)
PROFILES_FILE = "profiles.json"


def sandbox_was_last(config: Path | None = None) -> bool:
    """Whether the last run used the embedded sandbox (or there was no last run), read from the
    profile store's file (its `last`) with nothing but `json`, before the store (which imports
    pydantic) is loaded: the main window's guess for launching the sandbox early; the session
    decides from the profile store itself."""
    import json

    try:
        data = json.loads(((config or config_dir()) / PROFILES_FILE).read_text("utf-8"))
    except (OSError, ValueError):  # none yet; or unreadable, and the session opens the sandbox
        return True
    return not isinstance(data, dict) or data.get("last") is None
