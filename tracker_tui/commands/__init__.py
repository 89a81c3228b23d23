"""Subcommands of `tracker-tui`, one module per group.

Each module offers `register(subparsers, issue_commands)`, adding its commands with
`set_defaults(run=...)` and, for a top-level command, the summary `tracker-tui --help` shows
(`tracker_tui.command_summaries`, where a new command's summary goes); a `run` takes the
parsed namespace and returns the exit status.

A command imports its own group only (`tracker_tui.cli.COMMAND_GROUPS`: a new top-level or
`issues` command is added there too, else the whole parser reads it), `--help` none (it
prints the summaries), and `completion` and `man` every group; what a group imports at its
top is paid by each of its commands, the reads included. The top of a module imports what
its reads need (the cache, the profile, `tracker_tui.output`); the network layer
(`sync.session`, `sync.client`, the pull and push engines, and so httpx and the pydantic
models, and `sync.errors` and `sync.connection`) is imported inside the function that goes
online, and the demo inside its command. Textual is never imported here: the app opens
through `tracker_tui.launch`, which `tracker_tui.cli` imports only to open it. The
import-linter contracts in pyproject.toml and tests/cli/test_cli_imports.py keep it so.
"""
