"""`Changes` and how the session routes them; `revalidated`, what a project id typed on the
previous connection becomes on a new one. Without a window."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.changes import Changes, Resource
from app.profiles import ProfileStore
from app.viewmodels.choices import Choice, revalidated
from app.viewmodels.inactive_users import InactiveUsersModel
from app.viewmodels.session import Session
from app.viewmodels.tools import SessionViewModel
from sandbox.process import SandboxProcess


class Shows(SessionViewModel):
    def __init__(self, session: Session, *shows: Resource) -> None:
        super().__init__(session)
        self.shows = frozenset(shows)
        self.seen: list[Changes] = []

    def on_changes(self, changes: Changes) -> None:
        self.seen.append(changes)


def test_changes_reach_the_view_models_that_show_them_but_not_their_maker(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    session = Session(ProfileStore(tmp_path), health_interval=0)
    groups = Shows(session, Resource.GROUPS, Resource.USERS)
    users = Shows(session, Resource.USERS)
    archive = Shows(session, Resource.ARCHIVED_FEATURES)
    made = Changes.of(Resource.USERS, 7)
    users.notify(made)
    assert groups.seen == [made] and users.seen == [] and archive.seen == []
    groups.close()
    session.notify(Changes.of(Resource.USERS))
    assert len(groups.seen) == 1 and len(users.seen) == 1  # closed: no more
    assert made.touches(Resource.USERS, 7) and not made.touches(Resource.USERS, 8)
    assert Changes(Resource.USERS).touches(Resource.USERS, 8)  # which ones: not known
    assert not made.touches(Resource.GROUPS)


def test_a_project_typed_on_another_server_is_checked_against_this_ones() -> None:
    listed = [Choice("default", "Default (default)"), Choice("web", "Web (web)")]
    assert revalidated("web", listed, "prod") == ("web", "")
    project, note = revalidated("solo", listed, "prod")
    assert project == "default"
    assert note.startswith("prod has no project “solo”")
    assert note.endswith("showing Default (default) instead.")
    assert revalidated("solo", [Choice("a", "A (a)")], "prod")[0] == "a"  # no default: first
    # nothing better to offer: as asked, and the server's answer will say
    assert revalidated("solo", [], "prod") == ("solo", "")
    assert revalidated("solo", None, "prod") == ("solo", "")


def test_the_inactive_users_reload_only_for_a_user_they_list(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    session = connect(demo_sandbox)
    model = InactiveUsersModel(session)
    model.start()
    qtbot.waitUntil(lambda: model.loaded and not model.busy, timeout=20_000)
    listed = {row.id for row in model.table.all_rows}
    other = next(n for n in range(1, 10_000) if n not in listed)
    session.notify(Changes.of(Resource.USERS, other))
    assert not model.busy  # 100,000 rows are not read again for a user not among them
    session.notify(Changes.of(Resource.USERS, next(iter(listed))))
    assert model.busy
    qtbot.waitUntil(lambda: not model.busy, timeout=20_000)
    model.close()
