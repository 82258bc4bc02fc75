"""`InstanceModel`: the Overview's part on the instance (issue 38): its statistics (read with the
connection, again on F5 and after a change), their CSV export (the server's own),
maintenance mode with its switch and the frontend API's CORS origins, planned by
`app.actions.instance` and carried out by the one runner. The statistics are read again
whenever the Overview is (F5, a new connection), not on every change elsewhere (a promote's
hundreds of requests would each read them). What the session knows of
maintenance (`Session.maintenance`, which every window's `action_reason` reads, and the status
bar shows) is set here after each read and switch."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.actions.instance import CorsPlan, MaintenancePlan, plan_cors, plan_maintenance
from app.actions.runner import journal_of
from app.api.errors import ClientError
from app.api.models import InstanceStatistics
from app.changes import Changes, Resource
from app.registry import SET_CORS, SWITCH_MAINTENANCE
from app.viewmodels.session import Session
from app.viewmodels.tools import SessionViewModel

#: the statistics the Overview shows, in its order, with their captions (the rest are in the CSV)
SHOWN = (
    ("featureToggles", "Flags"),
    ("archivedFeatureToggles", "Archived flags"),
    ("projects", "Projects"),
    ("environments", "Environments"),
    ("segments", "Segments"),
    ("contextFields", "Context fields"),
    ("strategies", "Strategies"),
    ("serviceAccounts", "Service accounts"),
    ("groups", "Groups"),
    ("apiTokens", "API tokens"),
    ("activeUsers", "Active users"),
    ("clientApps", "Applications"),
)


def statistic_text(name: str, value: Any) -> str:
    """A statistic as the Overview shows it: a count, or a nested one's parts ("admin 1,
    backend 3"; active users by days; applications by range)."""
    if value is None:
        return "—"
    if isinstance(value, dict):
        if name == "activeUsers":
            return ", ".join(f"{v:,} in {k.removeprefix('last')} days" for k, v in value.items())
        total = sum(v for v in value.values() if isinstance(v, int))
        parts = ", ".join(f"{k} {v:,}" for k, v in value.items())
        return f"{total:,} ({parts})" if parts else "0"
    if isinstance(value, list):
        return ", ".join(f"{getattr(v, 'count', 0):,} ({getattr(v, 'range', '')})" for v in value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


class InstanceModel(SessionViewModel):
    """The statistics, the CSV export and the maintenance switch of the connected server."""

    #: the statistics or the switch's state changed
    changed = Signal()
    #: an export or a switch ended (its outcome in `outcome`/`outcome_error`)
    finished = Signal()

    #: the settings it changes; the statistics are read again with the Overview (F5)
    shows = frozenset({Resource.SETTINGS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(session, parent)
        self.statistics: InstanceStatistics | None = None
        #: the frontend API's CORS origins (`ui-config`; None: not read, or not said)
        self.origins: list[str] | None = None
        #: why the statistics could not be read ("" when they were, or not yet)
        self.statistics_note = ""
        self.outcome = ""
        self.outcome_error = ""
        self._acting: asyncio.Task[None] | None = None
        self._loading: asyncio.Task[None] | None = None
        session.state_changed.connect(self._on_state)

    # ------------------------------------------------------------------ reading

    @property
    def maintenance(self) -> bool | None:
        return self.session.maintenance

    @property
    def rows(self) -> list[tuple[str, str]]:
        """(caption, text) of each statistic shown, as the server sent it."""
        if self.statistics is None:
            return []
        fields = self.statistics.model_dump(exclude_unset=True)
        return [(caption, statistic_text(name, getattr(self.statistics, name)))
                for name, caption in SHOWN if name in fields]  # fmt: skip

    def load(self) -> asyncio.Task[None] | None:
        """Read the statistics and the maintenance switch (once the connection is ready)."""
        if not self.session.ready or self.closed:
            return None
        if self._loading is not None and not self._loading.done():
            return self._loading
        self._loading = self.run(self._load(), busy=False)
        return self._loading

    async def _load(self) -> None:
        client = await self.session.client()
        statistics, maintenance, ui = await asyncio.gather(
            client.statistics(), client.maintenance(), client.ui_config(), return_exceptions=True
        )
        if not isinstance(ui, BaseException):
            self.origins = ui.frontendApiOrigins
        if isinstance(statistics, ClientError):
            self.statistics, self.statistics_note = None, f"not available ({statistics})"
        elif isinstance(statistics, BaseException):
            raise statistics
        else:
            self.statistics, self.statistics_note = statistics, ""
        if not isinstance(maintenance, BaseException):
            self.session.record_maintenance(maintenance.enabled)
        if not self.closed:
            self.changed.emit()

    def on_connection_changed(self) -> None:
        self._loading = None  # cancelled with the other tasks
        self.statistics, self.statistics_note, self.origins = None, "", None
        self.outcome = self.outcome_error = ""
        if not self.closed:
            self.changed.emit()
        self.load()

    def on_changes(self, changes: Changes) -> None:
        self.load()

    def _on_state(self) -> None:
        if not self.closed:
            if self.statistics is None and not self.statistics_note and self.session.ready:
                self.load()
            self.changed.emit()

    # ------------------------------------------------------------------ acting

    @property
    def acting(self) -> bool:
        return self._acting is not None and not self._acting.done()

    @property
    def switch_reason(self) -> str:
        """Why the switch cannot be used now ("" when it can)."""
        if self.acting:
            return "A change is under way."
        reason = self.action_reason(SWITCH_MAINTENANCE)
        if reason:
            return reason
        return "" if self.maintenance is not None else "Not read yet."

    def plan_switch(self) -> MaintenancePlan | None:
        """The plan that switches maintenance mode to the other state (None while it cannot)."""
        caps = self.session.capabilities
        if self.switch_reason or caps is None or self.maintenance is None:
            return None
        return plan_maintenance(not self.maintenance, self.maintenance,
                                journal_of(self.session.name, caps))  # fmt: skip

    @property
    def cors_reason(self) -> str:
        """Why the CORS origins cannot be set now ("" when they can)."""
        if self.acting:
            return "A change is under way."
        unknown = "The server does not say its CORS origins." if self.origins is None else ""
        return self.action_reason(SET_CORS) or unknown

    def plan_cors(self, text: str) -> CorsPlan:
        """The plan that sets the origins `text` lists (one a line, or separated by commas or
        spaces; none: an empty list). `ValueError` naming an origin the server would refuse,
        or saying why the origins cannot be set now, or that they are those already."""
        from app.api.client import unleash_release

        caps = self.session.capabilities
        reason = self.cors_reason
        if reason or caps is None:
            raise ValueError(reason or "Not connected.")
        origins = [o for o in text.replace(",", " ").split() if o]
        plan = plan_cors(origins, self.origins, journal_of(self.session.name, caps),
                         release=unleash_release(caps))  # fmt: skip
        if self.origins is not None and list(plan.origins) == self.origins:
            raise ValueError("The CORS origins are those already: nothing to change.")
        return plan

    def switch(self, plan: MaintenancePlan | CorsPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed switch of maintenance mode, or setting of the CORS origins."""
        caps = self.session.capabilities
        if self.acting or self.closed or caps is None or caps.base_url != plan.server:
            return None
        self.outcome = self.outcome_error = ""
        self._acting = self.run(self._switch(plan), busy=False)
        self.changed.emit()
        return self._acting

    async def _switch(self, plan: MaintenancePlan | CorsPlan) -> None:
        try:
            await self.run_plan(plan)
        except ClientError as exc:
            self.outcome_error = str(exc)
        else:
            if isinstance(plan, CorsPlan):
                self.origins = list(plan.origins)
                self.outcome = f"Set the CORS origins: {', '.join(plan.origins) or 'none'}."
                return
            self.session.record_maintenance(plan.enabled)
            on = "Switched maintenance mode on."
            off = "Switched maintenance mode off (Unleash may refuse changes for a minute more)."
            self.outcome = on if plan.enabled else off
        finally:
            self._acting = None
            if not self.closed:
                self.changed.emit()
                self.finished.emit()

    def export_csv(self, path: Path) -> asyncio.Task[None] | None:
        """Write the server's CSV of the statistics to `path` (0600, whole or not at all)."""
        if self.acting or self.closed or not self.session.ready:
            return None
        self.outcome = self.outcome_error = ""
        self._acting = self.run(self._export(path), busy=False)
        return self._acting

    async def _export(self, path: Path) -> None:
        from app.actions.snapshots import write_whole

        try:
            client = await self.session.client()
            text = (await client.statistics_csv()).decode("utf-8", errors="replace")

            def fill(f: Any) -> int:
                f.write(text)
                return 1

            await asyncio.to_thread(write_whole, path, fill, private=False)
        except ClientError as exc:
            self.outcome_error = f"Could not read the statistics: {exc}"
        except OSError as exc:
            self.outcome_error = f"Could not write {path}: {exc.strerror or exc}"
        else:
            self.outcome = f"Wrote the statistics to {path}."
        finally:
            self._acting = None
            if not self.closed:
                self.changed.emit()
                self.finished.emit()

    def statistics_json(self) -> str:
        """The statistics as the server sent them (for a tooltip or a copy)."""
        if self.statistics is None:
            return ""
        return json.dumps(json.loads(self.statistics.model_dump_json(exclude_unset=True)),
                          indent=2)  # fmt: skip

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self._on_state)
        super().close()
