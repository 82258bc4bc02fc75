"""Snapshots and their comparison (issue 37): what a server's configuration is at one time, and
how two of them (or two environments of one) differ. No Qt, no I/O but a snapshot's file.

- `app.snapshot.model`: the snapshot model (`Snapshot` and its parts, pydantic, `schemaVersion`
  1), never a secret;
- `app.snapshot.files`: `load` and `save` (0600, whole or nothing), errors naming the file and
  the JSON path;
- `app.snapshot.compare`: the comparison engine, `compare(source, target, ...) -> Comparison`,
  pure computation, its JSON, Markdown and text.

A package of its own, one layer below `app.actions` and above `app.connection` (the
`layers` contract in pyproject.toml): the promote planner (an action) and the window's
view-models will use it, and reading a live server into a snapshot will use the client, so it
sits between them. It imports pydantic and the standard library only, today."""
