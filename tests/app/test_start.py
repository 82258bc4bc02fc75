"""What a flagdesk process keeps out of its start (`app.cli.skip_unused_imports`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_flagdesk_process_loads_neither_httpx_cli_nor_pydantic_plugins() -> None:
    """httpx imports its command-line tool (click, pygments, rich) when they are installed, as
    they are here, and pydantic reads every distribution's entry points for plugins: about
    0.15 s of the window's wait for its first data. A command run through `app.cli.main` does
    neither, and the client it uses still works."""
    code = (
        "import sys\n"
        "from app import cli\n"
        "from app.resources import samples\n"
        "code = cli.main(['metrics', 'validate', str(samples() / 'bulk.json')])\n"
        "import httpx, app.api.client\n"
        "from pydantic.plugin import _loader\n"
        "print(code, 'rich' in sys.modules, _loader._plugins, callable(httpx.main))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, env=env, timeout=60)  # fmt: skip
    assert found.stdout.strip().splitlines()[-1] == "0 False None True", found.stderr
