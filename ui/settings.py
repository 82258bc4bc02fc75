"""Where windows remember their layout: `<config>/window.ini`, beside the profiles (never the
registry or ~/.config/<org>), so FLAGDESK_CONFIG_DIR moves it with everything else."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from app.paths import config_dir


def window_settings() -> QSettings:
    """Window geometry, splitter states, table columns and sort orders."""
    return QSettings(str(config_dir() / "window.ini"), QSettings.Format.IniFormat)
