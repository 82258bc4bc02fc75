"""The Overview's instance panel (issue 38) against a real sandbox over HTTP: the statistics as the
server counts them, their CSV export (the server's own, 0600), and maintenance mode switched on
through a confirmation that says what it stops: the session then knows it, the status bar says
so, and every other window's actions are refused with that reason (the switch itself is not);
switched off again, all is as before; a switch made elsewhere (its undo from the History) is
read again by the session; the CORS origins edited (a list the server would refuse, or one
that changes nothing, said and nothing sent), confirmed and set, and not while in
maintenance."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QLabel

from app.changes import Changes, Resource
from app.registry import CREATE_CONTEXT_FIELD, SWITCH_MAINTENANCE
from app.viewmodels.instance import InstanceModel
from app.viewmodels.session import Session
from app.viewmodels.tools import IN_MAINTENANCE, SessionViewModel
from sandbox.process import SandboxProcess
from ui.instance_panel import CorsConfirmation, InstancePanel, MaintenanceConfirmation
from ui.main_window import MainWindow


def server_maintenance(sb: SandboxProcess) -> bool:
    with sb.admin() as http:
        return bool(http.get("/api/admin/maintenance").json()["enabled"])


def flags_counted(sb: SandboxProcess) -> int:
    with sb.admin() as http:
        return int(http.get("/api/admin/instance-admin/statistics").json()["featureToggles"])


def test_statistics_shown_and_exported(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, tmp_path: Path
) -> None:
    session = connect(sandbox)
    model = InstanceModel(session)
    panel = InstancePanel(model)
    qtbot.addWidget(panel)
    model.load()
    qtbot.waitUntil(lambda: model.statistics is not None, timeout=10_000)
    values = {w.accessibleName(): w.text() for w in panel.findChildren(QLabel)
              if w.objectName() == "instanceStatistic"}  # fmt: skip
    assert values["Flags"] == f"{flags_counted(sandbox):,}"
    assert "Projects" in values and "in 7 days" in values["Active users"]
    assert panel.export_button.isEnabled()
    assert panel.maintenance_label.text() == "Maintenance mode is off."

    target = tmp_path / "stats.csv"
    with qtbot.waitSignal(model.finished, timeout=10_000):
        panel.export_to(target)
    assert panel.outcome_label.text() == f"Wrote the statistics to {target}."
    header, row = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert header[1] == "instanceId" and row[1] == model.statistics.instanceId  # type: ignore[union-attr]
    assert target.stat().st_mode & 0o777 == 0o600
    with qtbot.waitSignal(model.finished, timeout=10_000):
        panel.export_to(tmp_path / "missing" / "stats.csv")
    assert "does not exist" in panel.outcome_label.text()
    assert panel.outcome_label.property("error") is True
    model.close()


def test_maintenance_switched_through_the_confirmation(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    session = connect(sandbox)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.resize(1100, 700)
    window.show()
    model, panel = window.instance_model, window.instance_panel
    qtbot.waitUntil(lambda: model.statistics is not None and model.maintenance is False,
                    timeout=15_000)  # fmt: skip
    other = SessionViewModel(session)
    try:
        assert other.action_reason(CREATE_CONTEXT_FIELD) == ""
        assert panel.switch_button.text() == "Switch on…" and panel.switch_button.isEnabled()
        assert not window.maintenance_label.isVisible()

        panel.switch_button.click()
        box = panel.confirmations.box
        assert isinstance(box, MaintenanceConfirmation)
        said = box.informativeText()
        assert "refuses every change" in said and "Reads" in said
        assert box.text() == "Switch maintenance mode on?"
        box.confirm_button.click()
        qtbot.waitUntil(lambda: session.maintenance is True and not model.acting, timeout=10_000)
        assert server_maintenance(sandbox)
        assert "Maintenance mode is on" in panel.maintenance_label.text()
        assert panel.switch_button.text() == "Switch off…"
        assert window.maintenance_label.isVisible()
        assert "refuses every change" in window.maintenance_label.text()
        assert other.action_reason(CREATE_CONTEXT_FIELD) == IN_MAINTENANCE
        assert other.action_reason(SWITCH_MAINTENANCE) == ""

        panel.switch_button.click()
        box = panel.confirmations.box
        assert isinstance(box, MaintenanceConfirmation)
        assert box.text() == "Switch maintenance mode off?"
        box.confirm_button.click()
        qtbot.waitUntil(lambda: session.maintenance is False and not model.acting, timeout=10_000)
        assert not server_maintenance(sandbox)
        assert not window.maintenance_label.isVisible()
        assert other.action_reason(CREATE_CONTEXT_FIELD) == ""

        # switched behind the window's back, then announced (the History's undo does that)
        with sandbox.admin() as http:
            assert http.post("/api/admin/maintenance", json={"enabled": True}).status_code == 204
        session.notify(Changes.of(Resource.SETTINGS, "maintenance"))
        qtbot.waitUntil(lambda: session.maintenance is True, timeout=10_000)
        assert other.action_reason(CREATE_CONTEXT_FIELD) == IN_MAINTENANCE
    finally:
        with sandbox.admin() as http:
            http.post("/api/admin/maintenance", json={"enabled": False})
        other.close()
        QApplication.processEvents()


def test_cors_origins_edited_confirmed_and_refused(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    session = connect(sandbox)
    model = InstanceModel(session)
    panel = InstancePanel(model)
    qtbot.addWidget(panel)
    model.load()
    qtbot.waitUntil(lambda: model.origins is not None, timeout=10_000)
    assert panel.cors_label.text() == "CORS origins: *" and panel.cors_button.isEnabled()

    panel.set_origins("https://a.example\nhttps://b.example/")  # a trailing slash: refused
    assert "Invalid origin: https://b.example/" in panel.outcome_label.text()
    assert panel.outcome_label.property("error") is True and panel.confirmations.box is None
    panel.set_origins("*")
    assert "those already" in panel.outcome_label.text()

    panel.set_origins("https://a.example, http://localhost:3000")
    box = panel.confirmations.box
    assert isinstance(box, CorsConfirmation)
    assert "https://a.example, http://localhost:3000" in box.informativeText()
    assert "Now: *." in box.informativeText()
    box.confirm_button.click()
    qtbot.waitUntil(lambda: not model.acting and bool(model.outcome), timeout=10_000)
    with sandbox.admin() as http:
        held = http.get("/api/admin/ui-config").json()["frontendApiOrigins"]
    assert held == ["https://a.example", "http://localhost:3000"]
    assert panel.cors_label.text() == "CORS origins: https://a.example, http://localhost:3000"

    session.record_maintenance(True)  # while in maintenance, the origins wait too
    assert not panel.cors_button.isEnabled()
    assert panel.cors_button.toolTip() == IN_MAINTENANCE
    session.record_maintenance(False)
    model.close()
