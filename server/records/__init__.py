"""Reading and writing records, one module per resource.

Functions take a connection (reads) or a `server.store.Transaction` (writes) and speak in API
records: plain dicts shaped as the endpoints return them. The single endpoints and bulk
operations call the same functions, so validation and workflow rules exist once.
"""
