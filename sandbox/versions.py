"""`flagdesk serve --as-version 5.12|6.10|7.6|8.2`: the sandbox plays that open-source Unleash
release, with the differences between them that flagdesk meets (measured on the real servers,
tests/compat):

- `GET /api/admin/ui-config` names that release (`versionInfo.current.oss`, "Open Source"), and
  there are no groups endpoints (open-source Unleash has none), nor service accounts (404);
- the archive endpoint `GET /api/admin/archive/features/:projectId` until 7.0, then 404; the
  search API filters archived flags with `archived=IS:true` from 6.4, `lifecycle=IS:archived`
  from 8.0.1;
- the personal dashboard from 6.3 (404 before), answering an admin API token with 500 (no user
  behind it);
- a context field's usage: archived flags' strategies too before 7.0; deleting a field in use:
  deleted before 7.0, 409 from 7.0; the legal-value routes not on 5.x (404);
- the client metrics endpoint takes an admin API token too before 8.0; bulk metrics of a flag
  it does not know are stored before 7.0, dropped from 7.0; a bulk application item needs
  `strategies` too on 5.x, and a frontend SDK's item needs no `started`/`interval` from 6.0;
- deleting an unknown flag from the archive: 404 before 8.0 ("No feature toggle found" on 5.x),
  200 (nothing done) on 8.x;
- a new context field without a sort order: 10 on 5.x, 0 from 6.x (measured);
- a context field's `PUT`: 5.x never changes the sort order (whatever is sent), 6.x and later
  set it to 0 (whatever is sent: their schema strips it), as the sandbox does unplayed;
- a bulk-metrics application without `started` or `interval`: 400 with an empty body on every
  release, and on 5.x without `strategies` too;
- reviving flags into an unknown project: 200 on 5.x (it checks only that the flags named
  belong to it), 404 "Active project ... does not exist" from 6.x;
- a second password-reset link for a user within the minute: 429 from 6.x, 500 on 5.x (its
  limiter fails: "Cannot read properties of undefined (reading 'toString')");
- API tokens: the type `backend` from 7.0 (400 before: its schema has client and frontend);
- deleting a personal access token that is not the caller's (or no one's): 404 "No PAT found."
  before 8.0, 200 (nothing done) on 8.x;
- a flag's variants per environment (flag configuration, issue 37): written for any flag on
  5.x; from 6.x refused (403 "Environment variants deprecated") to a flag with none yet in any
  environment (their `verifyLegacyVariants`, without `enableLegacyVariants`: read in their
  source, and measured on 8.2); the flag configuration's routes are all there from 5.12 on;
- the batch import (issue 37): the admin API token's refusal points at the docs'
  `reference/` pages before 7.0, `concepts/` from 7.0; `data.links` is refused (400) before 7.0
  and a tag type's `color` on 5.x; an unknown project is "Project with id x does not exist" on
  5.x, "Active project ..." from 6.0; a description the data leaves out is kept on 5.x;
- instance settings (issue 38): the statistics' fields (`statistics_fields`: 8.x's and 7.x's
  alike; 6.x without `edgeInstanceUsage`, `readOnlyUsers`, `releasePlans`, `releaseTemplates`;
  5.x also without `SCIMenabled`, `licensedUsers`, `maxConstraintValues`, `maxConstraints`,
  `maxEnvironmentStrategies`, `passwordAuthEnabled`, and its `apiTokens` always `{}`); the CORS
  origins set through `POST /api/admin/ui-config/cors` from 6.x (404 on 5.x) and through
  `POST /api/admin/ui-config {frontendSettings}` before 7.0 (404 from 7.0); maintenance mode
  alike on all four; no banners (Enterprise's: 404);
- the event log (issue 38, `sandbox.store.events`): `GET /api/admin/events` gives a project's
  newest 100 events on 5.x and 6.x, 50 from 7.0 (100 of all of them on every release); the
  search `GET /api/admin/search/events` from 6.0 (404 on 5.x), its `id` and `groupId` filters
  honoured from 7.0 (6.x ignores them); `GET /api/admin/event-creators` from 6.0 (404 on 5.x);
  an event's `groupType` and `groupId` from 7.0;
- an API token's events (`preData`, `data`: its listing without the secret) add `secure` on
  8.x, `username` (its name) on 5.x and 6.x, nothing on 7.x;
- a personal access token's events (`data`): `{id, description, expiresAt, secure}` on 8.x,
  the secret masked as "***" before (created: the body; deleted: the whole token);
- a path asked with a method it is not served with: 404 as an unknown path (unplayed: 405);
- error bodies (`sandbox.responses.error_response`): the checks before a route (tokens, unknown
  paths, the request's schema, the content type, permissions) answer `{id, name, message,
  details}` on every release, what a route's handler raises (not found, name taken, bad data)
  has the `id` before 7.0 only, and 5.x repeats each detail's message as its `description`;
  a wrong kind of token, no or an unknown token on the client API, a malformed JSON body and
  a body past the limit get `{message}` alone (who refuses is `Refusal.by`:
  `sandbox.responses.played_error_body`). Unplayed, the sandbox keeps the spec's bodies.

Measured on 5.12.8, 6.10.1, 7.6.5 and 8.2.0 (tests/compat; "5.x" and "6.x" mean what 5.12 and
6.10 do: releases in between were not measured).

Standard library only (`sandbox.options` reads `PLAYABLE`)."""

from __future__ import annotations

from dataclasses import dataclass

#: what `--as-version` takes -> the release played (the latest of each major version on npm)
PLAYABLE: dict[str, str] = {"5.12": "5.12.8", "6.10": "6.10.1", "7.6": "7.6.5", "8.2": "8.2.0"}


@dataclass(frozen=True, slots=True)
class Played:
    """The Unleash release the sandbox plays."""

    release: str

    @classmethod
    def of(cls, line: str) -> Played:
        """`Played.of("6.10")`; ValueError naming the choices for another."""
        if line not in PLAYABLE:
            raise ValueError(f"--as-version {line}: not one of {', '.join(PLAYABLE)}")
        return cls(PLAYABLE[line])

    @property
    def version(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.release.split("."))

    def since(self, *version: int) -> bool:
        return self.version >= version

    @property
    def archive_endpoint(self) -> bool:
        return not self.since(7, 0)

    def archived_filter(self, params: dict[str, str]) -> bool:
        """Whether the search's query parameters ask for archived flags, as this release reads
        them (an unknown filter is ignored: live flags are listed)."""
        by_lifecycle = self.since(8, 0, 1) and params.get("lifecycle") == "IS:archived"
        by_flag = self.since(6, 4) and params.get("archived") == "IS:true"
        return by_lifecycle or by_flag

    @property
    def dashboard(self) -> bool:
        return self.since(6, 3)

    @property
    def refuses_deleting_fields_in_use(self) -> bool:
        return self.since(7, 0)

    @property
    def usage_leaves_archived_out(self) -> bool:
        return self.since(7, 0)

    @property
    def legal_value_routes(self) -> bool:
        return self.since(6, 0)

    @property
    def drops_unknown_flag_metrics(self) -> bool:
        """Bulk metrics of a flag it does not know are not stored from 7 on (7.6's and 8.2's
        `registerBulkMetrics` sifts them out; 5.12's and 6.10's store them: measured)."""
        return self.since(7, 0)

    @property
    def frontend_applications_need_no_start(self) -> bool:
        """A bulk application item of a frontend SDK (`sdkType` "frontend" with an
        `sdkVersion`) is taken without `started` and `interval` from 6 on (5.12: 400)."""
        return self.since(6, 0)

    @property
    def admin_token_sends_metrics(self) -> bool:
        return not self.since(8, 0)

    @property
    def unknown_archive_delete_is_404(self) -> bool:
        return not self.since(8, 0)

    @property
    def unknown_pat_delete_is_404(self) -> bool:
        return not self.since(8, 0)

    @property
    def put_keeps_sort_order(self) -> bool:
        return not self.since(6, 0)

    @property
    def bulk_applications_need_strategies(self) -> bool:
        return not self.since(6, 0)

    @property
    def revive_checks_the_project(self) -> bool:
        return self.since(6, 0)

    @property
    def reset_link_limit_fails(self) -> bool:
        return not self.since(6, 0)

    @property
    def handler_errors_have_ids(self) -> bool:
        return not self.since(7, 0)

    @property
    def details_repeat_as_description(self) -> bool:
        return not self.since(6, 0)

    @property
    def backend_tokens(self) -> bool:
        """`POST /api/admin/api-tokens` takes the type `backend` (7.0 on; 5.12 and 6.10: 400)."""
        return self.since(7, 0)

    @property
    def flag_word(self) -> str:
        """What its messages call a flag."""
        return "toggle" if not self.since(6, 0) else "flag"

    # flag configuration (issue 37, slice 1)
    @property
    def refuses_new_environment_variants(self) -> bool:
        """Variants per environment only for a flag that has some already (6.x on)."""
        return self.since(6, 0)

    # the batch import (issue 37)
    @property
    def import_docs(self) -> str:
        """Where the admin token's refusal of an import points: the docs' `reference/` pages
        before 7.0, `concepts/` from 7.0 (their controllers' text)."""
        return "concepts" if self.since(7, 0) else "reference"

    @property
    def import_takes_links(self) -> bool:
        """An import's `data.links` (7.0 on; 5.12 and 6.10: 400, additional property)."""
        return self.since(7, 0)

    @property
    def import_takes_tag_type_colour(self) -> bool:
        """A tag type's `color` in an import's data (6.0 on; 5.12: 400)."""
        return self.since(6, 0)

    @property
    def import_project_word(self) -> str:
        """How an import's unknown project begins its 404: "Project with id x does not exist"
        on 5.x, "Active project ..." from 6.0."""
        return "Active project" if self.since(6, 0) else "Project"

    @property
    def import_keeps_description(self) -> bool:
        """An imported flag's description the data leaves out is kept on 5.x (measured on
        5.12.8), emptied from 6.0 (8.2.0: its schema's default)."""
        return not self.since(6, 0)

    # instance settings (issue 38)
    @property
    def statistics_fields(self) -> tuple[str, ...]:
        """The fields of `GET /api/admin/instance-admin/statistics` this release sends, in its
        order (measured on each)."""
        fields: tuple[str, ...] = STATISTICS_FIELDS
        if not self.since(7, 0):
            fields = tuple(f for f in fields if f not in _NOT_ON_6)
        if not self.since(6, 0):
            fields = tuple(f for f in fields if f not in _NOT_ON_5)
        return fields

    @property
    def counts_tokens_in_statistics(self) -> bool:
        """The statistics' `apiTokens` by type (5.x answers `{}` whatever tokens there are)."""
        return self.since(6, 0)

    @property
    def cors_route(self) -> bool:
        """`POST /api/admin/ui-config/cors` (6.x on; 404 on 5.x)."""
        return self.since(6, 0)

    @property
    def ui_config_sets_origins(self) -> bool:
        """`POST /api/admin/ui-config {frontendSettings}` (5.x and 6.x; 404 from 7.0)."""
        return not self.since(7, 0)

    # the event log (issue 38)
    @property
    def event_search(self) -> bool:
        """`GET /api/admin/search/events` (6.0 on; 404 on 5.x)."""
        return self.since(6, 0)

    @property
    def event_search_by_id(self) -> bool:
        """The event search honours `id` and `groupId` (7.0 on; 6.x ignores them)."""
        return self.since(7, 0)

    @property
    def project_events(self) -> int:
        """How many of a project's newest events `GET /api/admin/events?project=` gives."""
        return 50 if self.since(7, 0) else 100

    @property
    def event_creators(self) -> bool:
        """`GET /api/admin/event-creators` (6.0 on; 404 on 5.x)."""
        return self.since(6, 0)

    @property
    def event_groups(self) -> bool:
        """An event has `groupType` and `groupId` (7.0 on)."""
        return self.since(7, 0)

    @property
    def new_field_sort_order(self) -> int:
        """The sort order of a context field created without one (5.12: 10; 6.10 on: 0)."""
        return 0 if self.since(6, 0) else 10

    @property
    def token_event_field(self) -> str:
        """What an API token's events log besides its listing: "secure" (8.x), "username"
        (5.x, 6.x) or nothing (7.x) (measured)."""
        if self.since(8, 0):
            return "secure"
        return "" if self.since(7, 0) else "username"


#: the statistics' fields in the order Unleash 8.2 sends them (and its CSV's columns)
STATISTICS_FIELDS = (
    "timestamp", "instanceId", "versionOSS", "versionEnterprise", "users", "serviceAccounts",
    "apiTokens", "activeUsers", "licensedUsers", "featureToggles", "archivedFeatureToggles",
    "projects", "contextFields", "roles", "customRootRoles", "customRootRolesInUse", "groups",
    "environments", "segments", "strategies", "SAMLenabled", "OIDCenabled",
    "passwordAuthEnabled", "SCIMenabled", "clientApps", "featureExports", "featureImports",
    "productionChanges", "previousDayMetricsBucketsCount", "maxEnvironmentStrategies",
    "maxConstraintValues", "maxConstraints", "releaseTemplates", "releasePlans",
    "edgeInstanceUsage", "readOnlyUsers", "sum",
)  # fmt: skip
_NOT_ON_6 = {"edgeInstanceUsage", "readOnlyUsers", "releasePlans", "releaseTemplates"}
_NOT_ON_5 = {"SCIMenabled", "licensedUsers", "maxConstraintValues", "maxConstraints",
             "maxEnvironmentStrategies", "passwordAuthEnabled"}  # fmt: skip
