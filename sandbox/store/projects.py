"""Projects: the list with each one's onboarding status, and a project's personal dashboard."""

from __future__ import annotations

import sqlite3

from app.api import models as m
from sandbox.store.core import ADMIN_ROLE, OWNER_ROLE, Core, Principal, avatar_url, not_found, to_dt


class Projects(Core):
    def _project_row(self, project: str) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM projects WHERE id = ?", (project,)).fetchone()
        if row is None:
            raise not_found(f"Could not find project with id {project}")
        return row  # type: ignore[no-any-return]

    def onboarding_status(
        self, project: str
    ) -> m.OnboardingStatusPlain | m.OnboardingStatusFirstFlag:
        first = self.conn.execute(
            "SELECT name FROM features WHERE project = ? ORDER BY created_at, name LIMIT 1",
            (project,),
        ).fetchone()
        if first is None:
            return m.OnboardingStatusPlain(status="onboarding-started")
        # the flags with metrics first, not the project's flags (it can have 100,000s), each
        # once: the demo's 7,000 metrics rows are for 42 flags, and looking each row's flag up
        # took 5 ms of the projects list (the window's first data) for a project without metrics
        seen = self.conn.execute(
            "SELECT 1 FROM (SELECT DISTINCT feature FROM client_metrics) cm WHERE EXISTS"
            " (SELECT 1 FROM features f WHERE f.name = cm.feature AND f.project = ?) LIMIT 1",
            (project,),
        ).fetchone()
        if seen is not None:
            return m.OnboardingStatusPlain(status="onboarded")
        return m.OnboardingStatusFirstFlag(status="first-flag-created", feature=first[0])

    def list_projects(self) -> m.ProjectList:
        rows = self.conn.execute(
            "SELECT p.*,"
            " (SELECT count(*) FROM features f WHERE f.project = p.id AND f.archived_at IS NULL)"
            "   AS feature_count,"
            " (SELECT count(DISTINCT user_id) FROM ("
            "    SELECT pr.user_id FROM project_roles pr WHERE pr.project = p.id"
            "      AND pr.user_id IS NOT NULL"
            "    UNION SELECT gu.user_id FROM project_roles pr"
            "      JOIN group_users gu ON gu.group_id = pr.group_id WHERE pr.project = p.id"
            " )) AS member_count"
            " FROM projects p ORDER BY p.name"
        ).fetchall()
        return m.ProjectList(
            version=1,
            projects=[
                m.Project(
                    id=r["id"],
                    name=r["name"],
                    description=r["description"],
                    featureCount=r["feature_count"],
                    memberCount=r["member_count"],
                    createdAt=to_dt(r["created_at"]),
                    onboardingStatus=self.onboarding_status(r["id"]),
                )
                for r in rows
            ],
        )

    def dashboard(self, project: str, by: Principal) -> m.PersonalDashboardProjectDetails:
        self._project_row(project)
        events = self.conn.execute(
            "SELECT e.*, u.image_url, u.email FROM events e"
            " LEFT JOIN users u ON u.id = e.created_by_user_id"
            " WHERE e.project = ? ORDER BY e.id DESC LIMIT 10",
            (project,),
        ).fetchall()
        owners: list[m.UserOwner | m.GroupOwner | m.SystemOwner] = []
        for r in self.conn.execute(
            "SELECT DISTINCT u.name, u.username, u.email, u.image_url FROM project_roles pr"
            " JOIN users u ON u.id = pr.user_id WHERE pr.project = ? AND pr.role_id = ?"
            " ORDER BY u.name",
            (project, OWNER_ROLE),
        ):
            owners.append(
                m.UserOwner(
                    ownerType="user",
                    name=r["name"] or r["username"] or r["email"] or "",
                    imageUrl=r["image_url"] or avatar_url(r["email"], r["username"]),
                    email=r["email"],
                )
            )
        for r in self.conn.execute(
            "SELECT DISTINCT g.name FROM project_roles pr JOIN groups_ g ON g.id = pr.group_id"
            " WHERE pr.project = ? AND pr.role_id = ? ORDER BY g.name",
            (project, OWNER_ROLE),
        ):
            owners.append(m.GroupOwner(ownerType="group", name=r["name"]))
        if not owners:
            owners.append(m.SystemOwner(ownerType="system"))
        roles: list[m.DashboardRole] = []
        if by.kind == "admin":  # no user: the Admin root role alone (Unleash 8.2 answers 500)
            admin = self.conn.execute(
                "SELECT id, name, type FROM roles WHERE id = ?", (ADMIN_ROLE,)
            ).fetchone()
            roles.append(m.DashboardRole(id=admin["id"], name=admin["name"], type=admin["type"]))
        elif by.user_id is not None:
            for r in self.conn.execute(
                "SELECT DISTINCT ro.id, ro.name, ro.type FROM project_roles pr"
                " JOIN roles ro ON ro.id = pr.role_id"
                " LEFT JOIN group_users gu ON gu.group_id = pr.group_id"
                " WHERE pr.project = ? AND (pr.user_id = ? OR gu.user_id = ?) ORDER BY ro.id",
                (project, by.user_id, by.user_id),
            ):
                roles.append(m.DashboardRole(id=r["id"], name=r["name"], type=r["type"]))
            root = self.conn.execute(
                "SELECT ro.id, ro.name, ro.type FROM users u JOIN roles ro ON ro.id = u.root_role"
                " WHERE u.id = ?",
                (by.user_id,),
            ).fetchone()
            if root is not None:
                roles.append(m.DashboardRole(id=root["id"], name=root["name"], type=root["type"]))
        return m.PersonalDashboardProjectDetails(
            onboardingStatus=self.onboarding_status(project),
            latestEvents=[
                m.LatestEvent(
                    id=e["id"],
                    summary=e["summary"],
                    createdBy=e["created_by"],
                    createdByImageUrl=e["image_url"] or avatar_url(e["email"], e["created_by"]),
                    createdAt=to_dt(e["created_at"]),
                )
                for e in events
            ],
            owners=owners,
            roles=roles,
        )
