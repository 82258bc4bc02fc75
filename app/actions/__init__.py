"""The changes flagdesk makes on a server, the same for the window and the command line: each
action of `app.registry` that writes (deleting inactive users first), with the safety around it:
the snapshot of what is changed and the journal (`app.actions.journal`) written before the
request goes out and completed after the answer. No Qt here; the view-models and the commands
call these."""
