"""Subcommands of `tracker-tui`, one module per group.

Each module offers `register(subparsers, issue_commands)`, adding its commands with
`set_defaults(run=...)`; a `run` takes the parsed namespace and returns the exit status.
"""
