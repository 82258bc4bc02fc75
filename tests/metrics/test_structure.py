"""The import structure of the command line and the metrics core: no cycle between `app.cli` and
the command modules (each registers through `add_arguments`/`run`), none between the batch and
its split, and the GUI imported by the command in one place only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from app import cli

ROOT = Path(__file__).resolve().parents[2]


def imported(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_command_module_imports_the_cli() -> None:
    modules = sorted((ROOT / "app" / "commands").glob("*.py"))
    assert modules
    for path in modules:
        assert not {n for n in imported(path) if n == "app.cli" or n.startswith("app.cli.")}, path


def test_every_subcommand_registers_through_the_same_pair() -> None:
    parser = cli.build_parser()
    names = [c.name for c in cli.commands()]
    assert names == ["serve", "check", "metrics", "users", "archive", "context", "groups",
                     "tokens", "pats", "roles", "service-accounts", "access", "journal", "profiles",
                     "cleanup", "diff", "snapshot",
                     "promote",
                     # issue 38: the instance's settings
                     "stats", "maintenance", "cors", "banners",
                     # issue 38: the event log, login history
                     "events", "logins"]  # fmt: skip
    for command in cli.commands():
        assert callable(command.module.add_arguments) and callable(command.module.run)
    help_text = parser.format_help()
    assert all(name in help_text for name in names)


def test_the_split_does_not_import_the_batch() -> None:
    assert not {n for n in imported(ROOT / "app" / "metrics" / "split.py")
                if n.startswith("app.metrics")}  # fmt: skip


def test_the_cli_imports_ui_in_one_function_only() -> None:
    tree = ast.parse((ROOT / "app" / "cli.py").read_text(encoding="utf-8"))
    where = []
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ui":
                where.append(function.name)
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert not [n for n in top if isinstance(n, ast.ImportFrom) and n.module == "ui"]
    assert where == ["run_gui"]


def test_serve_help_through_its_command_module() -> None:
    result = subprocess.run([sys.executable, "-m", "app", "serve", "--help"],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "--exit-with-parent" in result.stdout and "--without-groups" in result.stdout


def test_the_metrics_facts_are_defined_once() -> None:
    """The body limit is `app.api.wire.BULK_METRICS_BODY_LIMIT` and the invalid items' file name
    `app.metrics.ledger.INVALID_NAME`: no copy in the metrics tool's layers or the benches."""
    from app.api.wire import BULK_METRICS_BODY_LIMIT
    from app.metrics.ledger import INVALID_NAME

    places = [ROOT / "app" / "metrics", ROOT / "app" / "commands", ROOT / "bench"]
    files = [p for place in places for p in place.glob("*.py")]
    files += sorted((ROOT / "app" / "viewmodels").glob("metrics*.py"))
    files += [ROOT / "ui" / "metrics_tool.py",
              ROOT / "ui" / "screenshots.py", ROOT / "app" / "cli.py"]  # fmt: skip
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "102_400" not in text and "102400" not in text, path
        assert f'= "{INVALID_NAME}"' not in text or path.name == "ledger.py", path
    assert BULK_METRICS_BODY_LIMIT == 102_400


def test_one_class_per_name_for_problems() -> None:
    """The API's error detail is `app.api.errors.Problem`; a metrics input's is `InputProblem`."""
    import app.metrics
    from app.metrics.batch import InputProblem

    assert not hasattr(app.metrics, "Problem")
    assert app.metrics.InputProblem is InputProblem


def test_the_window_starts_without_importing_a_command() -> None:
    """`flagdesk` (the launcher's command) opens the window: importing the program and choosing
    the window loads no command module, nor what they run with (the profile store, pydantic,
    httpx, asyncio), which delayed the window by 0.2 to 0.5 s."""
    heavy = ("app.commands", "app.profiles", "pydantic", "httpx", "asyncio", "keyring")
    code = (
        "import sys\n"
        "from app import cli\n"
        "cli.run_gui = lambda verbose: print('window', verbose)\n"
        "cli.main([])\n"
        "cli.main(['-v'])\n"
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["window False", "window True", "[]"]


def test_a_command_line_still_parses_every_command() -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert cli.main(["metrics", "validate", str(ROOT / "app/resources/samples/bulk.json")]) == 0


@pytest.mark.parametrize(
    ("argv", "loaded"),
    [
        (["--version"], []),
        (["--help"], []),
        (["-v", "metrics", "validate", "--help"], ["app.commands.metrics"]),
        (["profiles", "list", "--help"], ["app.commands.profiles"]),
        (["service-accounts", "tokens", "create", "--help"], ["app.commands.service_accounts"]),
    ],
)
def test_a_command_line_imports_the_command_it_names_only(
    argv: list[str], loaded: list[str]
) -> None:
    """`flagdesk --version` and `flagdesk --help` import no command module, and a command line
    only the one it names: all eight (the profile store, pydantic, asyncio, httpx) made
    `flagdesk --version` take 0.30 s where it now takes 0.10 s."""
    code = (
        "import sys\n"
        "from app import cli\n"
        f"try:\n    cli.main({argv!r})\nexcept SystemExit:\n    pass\n"
        "names = {'app.commands.' + c.name.replace('-', '_') for c in cli.commands()}\n"
        "print(sorted(m for m, v in sys.modules.items() if v and m in names))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == repr(loaded)
    if argv[-1] == "--help" and len(argv) > 1:  # the command's own options are there
        assert "usage: flagdesk" in out.stdout and "-h, --help" in out.stdout
