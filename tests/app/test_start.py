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


def _fresh(code: str, plugins_off: bool) -> str:
    """The last line `code` prints in a fresh process, with pydantic's plugins turned off or
    left on (PYDANTIC_DISABLE_PLUGINS absent)."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if plugins_off:
        env["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, env=env, timeout=60)  # fmt: skip
    assert found.returncode == 0, found.stderr
    return found.stdout.strip().splitlines()[-1]


def test_with_plugins_off_pydantic_s_plugin_loader_is_never_imported() -> None:
    """pydantic's plugin loader imports `importlib.metadata` (and `zipfile`, `csv`)
    as the first validator is built, even with every plugin off: `app.PluginLoader` answers
    "no plugins" in its place. The client's models and a profile validate as before."""
    code = (
        "import sys\n"
        "import app.api.client, app.profiles\n"
        "from app.api.models import ProjectList\n"
        "ProjectList.model_validate({'projects': [{'id': 'default', 'name': 'Default'}]})\n"
        "app.profiles.Profile(name='a', url='http://localhost:4242')\n"
        "print(sorted({'importlib.metadata', 'csv'} & set(sys.modules)))"
    )
    assert _fresh(code, plugins_off=True) == "[]"


def test_with_plugins_on_the_stand_in_defers_to_pydantic_s_loader() -> None:
    """Left on, the plugins are pydantic's own loader's, looked for as pydantic would, and any
    other name of the loader is its own."""
    code = (
        "import sys, app\n"
        "from pydantic import TypeAdapter\n"
        "TypeAdapter(int).validate_python(1)\n"
        "stand_in = sys.modules['pydantic.plugin._loader']\n"
        "print(type(stand_in).__name__, stand_in._plugins == {}, list(stand_in.get_plugins()),"
        " stand_in.PYDANTIC_ENTRY_POINT_GROUP, 'importlib.metadata' in sys.modules)"
    )
    assert _fresh(code, plugins_off=False) == "PluginLoader True [] pydantic True"
