"""`python -m sandbox`, how `SandboxProcess` starts the child, takes `flagdesk serve`'s arguments
(one definition: `sandbox.options`) without importing the rest of the `flagdesk` program."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _help(*module: str) -> str:
    result = subprocess.run([sys.executable, "-m", *module, "--help"], capture_output=True,
                            text=True, cwd=ROOT, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_child_s_entry_takes_the_serve_command_s_arguments() -> None:
    options = _help("sandbox").split("options:", 1)[1]
    assert options == _help("app", "serve").split("options:", 1)[1]
    assert "--exit-with-parent" in options and "--scale" in options


def test_the_child_s_entry_imports_no_other_command() -> None:
    code = (
        "import sys, runpy; sys.argv = ['sandbox', '--help']\n"
        "try:\n    runpy.run_module('sandbox', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('app.cli', 'app.commands', "
        "'app.profiles', 'ui'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_the_sandbox_starts_without_pydantic_v1() -> None:
    """Nothing the child imports brings `pydantic.v1` in (60-80 ms of its start: FastAPI,
    which served the sandbox before Starlette alone, imported it to check every route)."""
    code = "import sys, sandbox.server; print('pydantic.v1' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False"


def _child_up_to_its_port(tmp_path: Path, printed: str) -> str:
    """Run the child's entry (`sandbox.__main__.main`) up to its port, a busy one (it then
    exits, with 2), past its imports and the database; then print `printed` (an expression)
    in the same process. Its last line of output."""
    import os
    import socket

    code = (
        "import sys, sandbox.__main__ as entry\n"
        "code = entry.main(sys.argv[1:])\n"
        f"print(code, {printed})"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        result = subprocess.run(
            [sys.executable, "-c", code, "--port", port, "--db", str(tmp_path / "s.sqlite3")],
            capture_output=True, text=True, cwd=ROOT, timeout=60, env=env,
        )  # fmt: skip
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr


def test_the_child_looks_for_no_pydantic_plugin(tmp_path: Path) -> None:
    """Looking for pydantic plugins reads the entry points of every installed distribution as
    the first model is made (10-15 ms of the child's start); the child loads none
    (`app.startup.quiet_libraries`)."""
    printed = "__import__('pydantic.plugin._loader', fromlist=['_plugins'])._plugins"
    assert _child_up_to_its_port(tmp_path, printed) == "2 None"
