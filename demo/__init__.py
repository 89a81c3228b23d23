"""The product with no account: `tracker-tui demo`, and the screenshots made from demo data.

`demo.launch` opens the app against the reference service embedded in this process
(`demo.service`), seeded with issues, with a colleague editing some of them
(`demo.activity`) when asked. `demo.data` builds deterministic records for a cache without
any service, for the screenshots (`demo.screenshots`) and the snapshot tests.

This is the only client package that imports `server`, so it needs the `service` extra
(`pip install 'tracker-tui[service]'`: fastapi and uvicorn); nothing else of the client
imports it, except `tracker-tui demo`'s command, which opens it lazily (the import-linter
contracts in pyproject.toml keep it so). The app and the command line start without it.
"""
