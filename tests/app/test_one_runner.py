"""Every change to a server goes through the one runner (`app.actions.runner.carry_out`): no
view-model, window, command or action module calls a method of the client that writes. The
writing methods are found in the client's source (those that send a POST, PUT, PATCH or DELETE,
or call one that does), so a new one is covered the day it is added. The metrics upload
(`app.metrics`) keeps its own ledger of every body and is not a runner's action."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "app" / "api" / "client.py"
SENDER = ROOT / "app" / "api" / "sending.py"
#: where a writing call must not be: the windows, the view-models, the commands, the actions
SCANNED = ("ui", "app/viewmodels", "app/commands", "app/actions", "app/snapshot", "app/cli.py")
#: reads a server takes as a POST (a query body), which change nothing of its configuration:
#: the batch export (Unleash records that it happened, as it does of a login), and the
#: import's validation (it checks and changes nothing: a promote asks it before its plan is shown),
#: and 5.x's and 6.x's event search (issue 38: a page of the event log, its filters in the body)
READS_SENT_AS_POST = {"export_features", "exported", "validate_import", "search_events_by_body"}
#: the one place that sends a write
RUNNER = ROOT / "app" / "actions" / "runner.py"
WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def _methods(path: Path) -> dict[str, ast.AST]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name: node
        for cls in tree.body
        if isinstance(cls, ast.ClassDef) and cls.name in ("AdminClient", "Sender")
        for node in cls.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _self_calls(function: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    ]


def writing_methods() -> set[str]:
    """The client's methods that send a write, directly or through another of its methods."""
    methods = {**_methods(SENDER), **_methods(CLIENT)}
    writing: set[str] = set()
    for name, function in methods.items():
        for call in _self_calls(function):
            first = call.args[0] if call.args else None
            if (
                isinstance(call.func, ast.Attribute)
                and call.func.attr in ("_send", "_write", "_stream")
                and isinstance(first, ast.Constant)
                and first.value in WRITES
            ):
                writing.add(name)
    writing.add("_send_write")  # sends whatever method its request names
    while True:
        more = {
            name
            for name, function in methods.items()
            if name not in writing
            and any(
                isinstance(call.func, ast.Attribute) and call.func.attr in writing
                for call in _self_calls(function)
            )
        }
        if not more:
            return {name for name in writing if not name.startswith("_")} | {"_send_write"}
        writing |= more


def _on_the_sandbox_store(call: ast.Call) -> bool:
    """`Store(conn).create_personal_token(...)`: the sandbox's own store, written directly where
    a program seeds a sandbox it started (`ui/screenshots.py`), not a client sending a write."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    return (
        isinstance(receiver, ast.Call)
        and isinstance(receiver.func, ast.Name)
        and receiver.func.id == "Store"
    )


def writing_calls(path: Path, writing: set[str], base: Path = ROOT) -> list[str]:
    """Each call of a writing method in `path` (on any object but a `Store(...)` made there),
    as "file:line name"."""
    return [
        f"{path.relative_to(base)}:{node.lineno} {node.func.attr}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in writing
        and not _on_the_sandbox_store(node)
    ]


def test_the_client_writes_are_found() -> None:
    writing = writing_methods()
    assert {"send_write", "create_group", "update_user", "delete_inactive_users",
            "revive_features", "create_context_field", "reset_password_link",
            "send_bulk_metrics"} <= writing  # fmt: skip
    assert not {"list_users", "get_group", "capabilities", "read_answer"} & writing
    assert writing >= READS_SENT_AS_POST  # found, and let through on purpose


def test_only_the_runner_sends_writes() -> None:
    writing = writing_methods() - {"send_bulk_metrics"} - READS_SENT_AS_POST
    files = [
        path
        for part in SCANNED
        for path in ((ROOT / part).rglob("*.py") if (ROOT / part).is_dir() else [ROOT / part])
        if path != RUNNER
    ]
    assert len(files) > 40
    assert [hit for path in files for hit in writing_calls(path, writing)] == []
    assert writing_calls(RUNNER, writing) == ["app/actions/runner.py:" + line
                                              for line in _runner_lines()]  # fmt: skip


def _runner_lines() -> list[str]:
    """Where the runner sends: its one `send_write`."""
    text = RUNNER.read_text(encoding="utf-8").splitlines()
    return [f"{number} send_write" for number, line in enumerate(text, 1)
            if "self.client.send_write(" in line]  # fmt: skip


def test_the_check_sees_a_direct_write(tmp_path: Path) -> None:
    """The scan finds a view-model that would create a group itself, however it is called."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "async def save(self):\n"
        "    client = await self.session.client()\n"
        "    await client.create_group(body)\n"
        "    await (await self.session.client()).send_write(request)\n"
        "    await client.list_users()\n"
    )
    found = writing_calls(probe, writing_methods(), tmp_path)
    assert found == ["probe.py:3 create_group", "probe.py:4 send_write"]
