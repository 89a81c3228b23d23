"""The one-line summary of each top-level command, in the order `tracker-tui --help` lists them.

Each group registers its commands with these lines, and `tracker-tui --help`, which shows
nothing else of them, prints the list from here without importing a single group's module
(`tracker_tui.cli.summary_parser`): the groups' imports had made it cost three times the
interpreter's start (issue 18). The module is outside `tracker_tui.commands`, so that
`--version`, which builds the `issues` command's entry, loads nothing of that package.
tests/cli/test_cli_imports.py checks that both ways print the same help.
"""

SUMMARIES = {
    "issues": "list, show, create, edit, delete and comment on issues",
    "demo": "open the app against an embedded demo service (no account needed)",
    "outbox": "local writes waiting to be sent",
    "conflicts": "fields changed here and on the server",
    "login": "check an API key against a server and remember both as a profile",
    "logout": "forget a profile's stored key",
    "profiles": "list the stored profiles",
    "projects": "list, create, edit, archive and delete projects",
    "users": "list the workspace's members from the local cache (offline)",
    "status": "last sync, cursors, pending edits and limits left (offline)",
    "doctor": "explain where keys, config and data are, and check cache and server",
    "sync": "send local edits, then fetch what changed on the server",
    "inbox": "what changed in your issues since you last looked (offline)",
    "watch": "pull now and then and print each change to your issues as it arrives",
    "workspace": "show the key's workspace, or rename it",
    "keys": "list, create and revoke the workspace's API keys (online; needs admin)",
    "webhooks": "register and manage webhook receivers (online; needs webhooks:manage)",
    "usage": "use of each rate limit this minute and today, and background sync's share (offline)",
    "config": "where config.toml is, its JSON Schema, and a check of a file",
    "completion": "print a tab-completion script for bash, zsh or fish",
    "man": "print the manual page (roff; read it with `tracker-tui man | man -l -`)",
}
