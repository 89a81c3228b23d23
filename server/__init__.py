"""The reference service (`tracker-server`): the published API over SQLite.

`server.app.create_app` builds the ASGI application; `server.cli` is the command line;
`server.seed` and `server.keys` are the library functions that tests, the client's demo and the
benchmarks call directly. Errors are `server.errors.ServiceError` and its subclasses.

The package never imports the client (`tracker_tui`, `sync`, `cache`) or textual: the service
must run on a box without a terminal UI, and the client must rely on the published API alone.
"""
