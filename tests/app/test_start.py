"""What a flagdesk process does to start sooner (`app.startup`): only settings the libraries
offer, nothing put in their place, and all of it off with `FLAGDESK_STARTUP_MEASURES=off`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _last_line(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("PYDANTIC_DISABLE_PLUGINS", "FLAGDESK_STARTUP_MEASURES")}  # fmt: skip
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, env={**environ, **env}, timeout=60)  # fmt: skip
    assert found.returncode == 0, found.stderr
    return found.stdout.strip().splitlines()[-1]


COMMAND = (
    "import sys\n"
    "from app import cli\n"
    "from app.resources import samples\n"
    "code = cli.main(['metrics', 'validate', str(samples() / 'bulk.json')])\n"
    "import httpx, app.api.client\n"
    "from pydantic.plugin import _loader\n"
    # every module a library imported is the library's own: none marked absent, none a stand-in
    # of flagdesk's
    "stand_ins = [m for m, v in sys.modules.items() if v is None"
    " or type(v).__module__.split('.')[0] in ('app', 'ui', 'sandbox')]\n"
    "import os\n"
    "print(code, os.environ.get('PYDANTIC_DISABLE_PLUGINS'), _loader._plugins, stand_ins,"
    " callable(httpx.main))"
)


def test_a_command_looks_for_no_pydantic_plugin_and_replaces_no_module() -> None:
    """pydantic reads every distribution's entry points for plugins as its first model is
    built (60-85 ms of the window's first data): flagdesk sets pydantic's own setting that
    turns them off, and puts nothing of its own in any library's place."""
    assert _last_line(COMMAND) == "0 __all__ None [] True"


def test_with_the_measures_off_pydantic_looks_for_its_plugins() -> None:
    """`FLAGDESK_STARTUP_MEASURES=off`: pydantic's defaults, plugins looked for (none found)."""
    assert _last_line(COMMAND, FLAGDESK_STARTUP_MEASURES="off") == "0 None {} [] True"
