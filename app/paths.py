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
