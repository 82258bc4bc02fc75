"""The instance's settings (issue 38): maintenance mode (`instance.maintenance`), the frontend
API's CORS origins (`instance.cors`) and banners (`banners.create`, `banners.edit`,
`banners.delete`), and undoing each: the one path `flagdesk maintenance`, `flagdesk cors` and
`flagdesk banners` take (and a window, later).

What this relies on of Unleash (../shared/reference/unleash-admin-console-behaviour.md §6,
unleash-enterprise-admin-api.md §5; tests/compat/test_instance.py):

- maintenance: `GET`/`POST /api/admin/maintenance {enabled}` (204) on 5.12 to 8.2 alike; while
  it is on, every other admin write (POST, PUT, DELETE under `/api/admin`) is refused with 503
  "Unleash is currently in maintenance mode." and nothing is changed; reads, the client API,
  metrics and logins go on; `ui-config` says `maintenanceMode`;
- CORS origins: read from `ui-config`'s `frontendApiOrigins` (there is no GET of their own),
  set whole through `POST /api/admin/ui-config/cors` (6.0 on) or 5.x's `POST
  /api/admin/ui-config {frontendSettings}` (`app.api.client.cors_request` picks it); each is "*"
  or an origin (`app.api.wire.valid_origin`: checked here before anything is sent, as the
  server would refuse it); `[]` is taken and shuts every other origin out. The frontend API
  follows within seconds;
- banners (Enterprise 5.7+): created (201, the banner), replaced whole (`PUT`, 200), deleted
  (200); the server never gives a deleted banner's id again.

Each change logs Unleash's own event (`setting-updated` with `preData`, `banner-*`), which is
how the server's record shows it. The journal keeps a switch's or list's state before
(`before.enabled`, `before.origins`) and the body sent; a banner's edit and deletion write the
banner as the server gave it to a snapshot first, a creation's `after` keeps the new id.

Undo: maintenance by the other switch; the CORS origins by setting the list before again; a
banner's creation by deleting it, its edit by putting the snapshot's fields back, its deletion
by creating it again from the snapshot (a new id: the confirmation says so).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from app.actions.journal import Journal
from app.actions.runner import PlanBase, Step
from app.actions.snapshots import write_whole
from app.api.client import (
    Answer,
    WriteRequest,
    cors_request,
    create_banner_request,
    delete_banner_request,
    maintenance_request,
    update_banner_request,
)
from app.api.models import Banner, CreateBanner
from app.api.wire import invalid_origins
from app.changes import Changes, Resource
from app.registry import (
    CREATE_BANNER,
    DELETE_BANNER,
    EDIT_BANNER,
    SET_CORS,
    SWITCH_MAINTENANCE,
    Action,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "BannerPlan",
    "CorsPlan",
    "MaintenancePlan",
    "banner_body",
    "banner_json",
    "check_origins",
    "find_banner",
    "plan_banner_create",
    "plan_banner_delete",
    "plan_banner_edit",
    "plan_cors",
    "plan_maintenance",
    "read_banner_snapshot",
]

#: what maintenance mode stops, in the confirmation and the window's words
STOPS = (
    "The server refuses every change (admin API writes) with 503 until it is switched off: "
    "flags, strategies, tokens, users, projects, context fields, imports and exports. Reads, "
    "SDKs' flag fetches and metrics, and logins go on."
)

#: the origins a text lists before "and N more"
NAMED = 5


def _origins_text(origins: Sequence[str]) -> str:
    if not origins:
        return "none (the frontend API answers no other origin)"
    shown = ", ".join(origins[:NAMED])
    more = f" and {len(origins) - NAMED:,} more" if len(origins) > NAMED else ""
    return shown + more


def check_origins(origins: Sequence[str]) -> list[str]:
    """The origins as given, once each, in order; `ValueError` naming the first that the server
    would refuse ("*" or an origin such as https://app.example.com: no path, no trailing
    slash) or a repeat."""
    problem = invalid_origins(list(origins))
    if problem is not None:
        raise ValueError(
            f"{problem} (an origin is “*” or scheme://host[:port], such as "
            "https://app.example.com: no path, no trailing slash, lower case)"
        )
    seen: list[str] = []
    for origin in origins:
        if origin in seen:
            raise ValueError(f"the origin {origin} is given twice")
        seen.append(origin)
    return seen


# ---------------------------------------------------------------------------- maintenance


@dataclass(frozen=True)
class MaintenancePlan(PlanBase):
    """Switching maintenance mode on or off (a `runner.Plan`)."""

    enabled: bool
    #: what the server said before (None: not known)
    was: bool | None
    journal: Journal
    undoes: str = ""

    action: Action = SWITCH_MAINTENANCE
    snapshot: Path | None = None
    nothing = "Nothing was changed."

    @property
    def request(self) -> WriteRequest:
        return maintenance_request(self.enabled)

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.SETTINGS, "maintenance"),)

    def steps(self) -> tuple[Step, ...]:
        record: dict[str, Any] = {"enabled": self.was}
        if self.undoes:
            record["undoes"] = self.undoes
        return (Step(self.request, ["maintenance"], record, with_body=True),)

    @property
    def question(self) -> str:
        if self.undoes:
            return f"Undo: switch maintenance mode {'on' if self.enabled else 'off'} again?"
        return f"Switch maintenance mode {'on' if self.enabled else 'off'}?"

    def lines(self) -> list[str]:
        where = f"{self.server} (connection “{self.journal.actor.connection}”)"
        if self.enabled:
            out = [f"Maintenance mode will be switched on on {where}.", STOPS]
        else:
            out = [f"Maintenance mode will be switched off on {where}: the server takes "
                   "changes again."]  # fmt: skip
        if self.undoes:
            out.append("The undo is journaled like any change.")
        else:
            out.append(f"Undo switches it {'off' if self.enabled else 'on'} again.")
        return out


def plan_maintenance(enabled: bool, was: bool | None, journal: Journal, *,
                     undoes: str = "") -> MaintenancePlan:  # fmt: skip
    """The plan that switches maintenance mode to `enabled` (`was`: as the server says now)."""
    return MaintenancePlan(enabled, was, journal, undoes)


# ---------------------------------------------------------------------------- CORS


@dataclass(frozen=True)
class CorsPlan(PlanBase):
    """Setting the frontend API's CORS origins, the whole list (a `runner.Plan`)."""

    origins: tuple[str, ...]
    #: the list before (the server's `ui-config`; None: it did not say)
    was: tuple[str, ...] | None
    journal: Journal
    #: the Unleash release the request is made for ("": the sandbox, or 6.0 and later's route)
    release: str = ""
    undoes: str = ""

    action: Action = SET_CORS
    snapshot: Path | None = None
    nothing = "Nothing was changed."

    @property
    def request(self) -> WriteRequest:
        return cors_request(self.origins, self.release)

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.SETTINGS, "cors"),)

    def steps(self) -> tuple[Step, ...]:
        record: dict[str, Any] = {"origins": None if self.was is None else list(self.was)}
        if self.undoes:
            record["undoes"] = self.undoes
        return (Step(self.request, ["cors"], record, with_body=True),)

    @property
    def question(self) -> str:
        return "Undo: set the CORS origins back?" if self.undoes else "Set the CORS origins?"

    def lines(self) -> list[str]:
        where = f"{self.server} (connection “{self.journal.actor.connection}”)"
        out = [f"The frontend API's CORS origins on {where} will be: "
               f"{_origins_text(self.origins)}."]  # fmt: skip
        if self.was is not None:
            out.append(f"Now: {_origins_text(self.was)}.")
        out.append("Browsers on other origins are refused by the frontend API within seconds.")
        if self.undoes:
            out.append("The undo is journaled like any change.")
        elif self.was is not None:
            out.append("Undo sets the list before again.")
        return out


def plan_cors(origins: Sequence[str], was: Sequence[str] | None, journal: Journal, *,
              release: str = "", undoes: str = "") -> CorsPlan:  # fmt: skip
    """The plan that sets the CORS origins to `origins` (`check_origins`: `ValueError` for one
    the server would refuse); `release`: the Unleash release (`unleash_release`) whose route
    to take."""
    return CorsPlan(tuple(check_origins(origins)), None if was is None else tuple(was),
                    journal, release, undoes)  # fmt: skip


# ---------------------------------------------------------------------------- banners


def banner_json(banner: Banner) -> dict[str, Any]:
    """A banner as `--json` shows it and a snapshot keeps it."""
    data: dict[str, Any] = banner.model_dump(mode="json", exclude_none=True)
    return data


def banner_fields(banner: Banner) -> dict[str, Any]:
    """A banner's fields as `PUT` sends them (every one but id and createdAt), not checked."""
    fields = banner.model_dump(exclude={"id", "createdAt"}, exclude_none=True)
    extra = set(banner.model_extra or {})
    return {k: v for k, v in fields.items() if k not in extra}


def banner_body(banner: Banner) -> CreateBanner:
    """What `PUT` sends to make a banner what `banner` is; `ValueError` naming the fields the
    server's own form refuses (a server may hold control characters it would not take)."""
    from pydantic import ValidationError

    try:
        return CreateBanner.model_validate(banner_fields(banner))
    except ValidationError as exc:
        fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
        raise ValueError(
            f"the banner {label(banner)} holds in its {', '.join(fields)} what the server's own "
            "form refuses (control characters, or more than the field takes): it cannot be "
            "sent back as it is"
        ) from None


#: the link that opens a dialog in Unleash's UI instead of a page
DIALOG = "dialog"


def link_problem(link: str) -> str:
    """Why `link` cannot be a banner's link ("" when it can): an http or https URL with a host,
    a path on the server ("/projects"), or "dialog"."""
    if not link or link == DIALOG:
        return ""
    if link.startswith("/") and not link.startswith("//"):
        return ""
    parts = urlsplit(link)
    if parts.scheme in ("http", "https") and parts.netloc and " " not in link:
        return ""
    return (f"The link “{link[:80]}” is neither a web address (https://…), a path on the server "
            "(/…) nor “dialog”.")  # fmt: skip


def label(banner: Banner) -> str:
    """ "“Upgrade on Friday” (id 3)", the message's first line, shortened."""
    first = banner.message.splitlines()[0] if banner.message else ""
    shown = first if len(first) <= 60 else first[:59] + "…"
    return f"“{shown}” (id {banner.id})"


def find_banner(word: str, banners: Sequence[Banner], server: str) -> Banner:
    """The banner numbered `word`; `ValueError` naming it and the ids there are."""
    if word.strip().isdigit():
        found = [b for b in banners if b.id == int(word)]
        if found:
            return found[0]
    ids = ", ".join(str(b.id) for b in banners) or "none"
    raise ValueError(f"no banner on {server} has the id “{word}” (the ids there: {ids})")


def _write_banner(path: Path, banner: Banner) -> int:
    def fill(out: TextIO) -> int:
        json.dump({"banner": banner_json(banner)}, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return 1

    return write_whole(path, fill)


def read_banner_snapshot(path: Path) -> Banner:
    """The banner a snapshot holds; `ValueError` naming the file when it holds none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Banner.model_validate(data["banner"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a banner's snapshot ({exc})") from None


def _made(answer: Answer) -> dict[str, Any]:
    """What the journal keeps of a creation's answer: the new banner's id."""
    return {"id": Banner.model_validate_json(answer.response.content).id}


@dataclass(frozen=True)
class BannerPlan(PlanBase):
    """Creating, replacing or deleting one banner (a `runner.Plan`)."""

    action: Action
    journal: Journal
    #: the banner as the server gave it before (None: a creation)
    before: Banner | None
    #: what it becomes (None: a deletion)
    after: CreateBanner | None
    snapshot: Path | None
    undoes: str = ""
    nothing = "Nothing was changed."

    @property
    def request(self) -> WriteRequest:
        if self.action is CREATE_BANNER:
            assert self.after is not None
            return create_banner_request(self.after)
        assert self.before is not None
        if self.action is EDIT_BANNER:
            assert self.after is not None
            return update_banner_request(self.before.id, self.after)
        return delete_banner_request(self.before.id)

    @property
    def announced(self) -> tuple[Changes, ...]:
        ids = () if self.before is None else (self.before.id,)
        return (Changes.of(Resource.BANNERS, *ids),)

    def steps(self) -> tuple[Step, ...]:
        record: dict[str, Any] = {}
        if self.snapshot is not None:
            record["snapshot"] = self.snapshot.name
        if self.undoes:
            record["undoes"] = self.undoes
        if self.action is CREATE_BANNER:
            assert self.after is not None
            record["message"] = self.after.message
            # never retried: a second try would make a second banner
            return (Step(self.request, [self.after.message[:80]], record, with_body=True,
                         attempts=1, after=_made),)  # fmt: skip
        assert self.before is not None
        record["message"] = self.before.message
        if self.action is EDIT_BANNER:
            record["body"] = banner_fields(self.before)
        return (Step(self.request, [self.before.id], record,
                     with_body=self.action is EDIT_BANNER),)  # fmt: skip

    def write_snapshot(self) -> int:
        assert self.snapshot is not None and self.before is not None
        return _write_banner(self.snapshot, self.before)

    @property
    def question(self) -> str:
        if self.undoes:
            return "Undo the last change to a banner?"
        verb = {CREATE_BANNER.key: "Create", EDIT_BANNER.key: "Change",
                DELETE_BANNER.key: "Delete"}[self.action.key]  # fmt: skip
        return f"{verb} the banner?"

    def lines(self) -> list[str]:
        where = f"on {self.server} (connection “{self.journal.actor.connection}”)"
        out: list[str] = []
        if self.action is CREATE_BANNER:
            assert self.after is not None
            shown = "shown to every user of the server's UI" if self.after.enabled else "off"
            again = " again from its snapshot, under a new id" if self.undoes else ""
            out.append(f"A banner “{self.after.message}” ({self.after.variant or 'info'}, "
                       f"{shown}) will be created{again} {where}.")  # fmt: skip
        elif self.action is EDIT_BANNER:
            assert self.after is not None and self.before is not None
            how = "put back as it was" if self.undoes else "replaced"
            changed = _differences(self.before, self.after)
            out.append(f"The banner {label(self.before)} will be {how} {where}: "
                       f"{'; '.join(changed) or 'nothing differs'}.")  # fmt: skip
        else:
            assert self.before is not None
            out.append(f"The banner {label(self.before)} will be deleted {where}.")
        if self.snapshot is not None:
            out.append(f"A snapshot of the banner as it is now is written first to "
                       f"{self.snapshot}.")  # fmt: skip
        if self.undoes:
            out.append("The undo is journaled like any change.")
        elif self.action is CREATE_BANNER:
            out.append("Undo deletes it again.")
        elif self.action is EDIT_BANNER:
            out.append("Undo puts the banner back as the snapshot holds it.")
        else:
            out.append("Undo creates it again from the snapshot, under a new id.")
        return out


def _differences(before: Banner, after: CreateBanner) -> list[str]:
    """What `after` changes of the banner (as it is, unchecked: it may hold what the server's
    form refuses, which an edit then replaces), field by field."""
    defaults = {name: f.default for name, f in CreateBanner.model_fields.items()}
    old, new = {**defaults, **banner_fields(before)}, after.model_dump()
    return [f"{k} {old.get(k)!r} → {new[k]!r}" for k in new if old.get(k) != new[k]]


def plan_banner_create(body: CreateBanner, journal: Journal, *,
                       undoes: str = "") -> BannerPlan:  # fmt: skip
    return BannerPlan(CREATE_BANNER, journal, None, body, None, undoes)


def plan_banner_edit(banner: Banner, body: CreateBanner, journal: Journal, *,
                     undoes: str = "") -> BannerPlan:  # fmt: skip
    """`ValueError` when `body` changes nothing."""
    if not _differences(banner, body) and not undoes:
        raise ValueError(f"the banner {label(banner)} is that already: nothing to change")
    return BannerPlan(EDIT_BANNER, journal, banner, body,
                      journal.new_file(EDIT_BANNER.key, ".json"), undoes)  # fmt: skip


def plan_banner_delete(banner: Banner, journal: Journal, *, undoes: str = "") -> BannerPlan:
    return BannerPlan(DELETE_BANNER, journal, banner, None,
                      journal.new_file(DELETE_BANNER.key, ".json"), undoes)  # fmt: skip


async def origins_now(client: AdminClient) -> list[str] | None:
    """The CORS origins the server holds now (`ui-config`), None when it does not say."""
    origins = (await client.ui_config()).frontendApiOrigins
    return None if origins is None else list(origins)


def banners_text(count: int) -> str:
    return plural(count, "banner")
