"""The pull engine: incremental sync from the server into the local cache (SYNC.md 5-7).

`pull(session)` is the entry point; modules, one job each: `engine` (per-resource strategy),
`keyset` and `walk` (the two ways of paging), `deletes` (count check and id sweep), `context`
(fetching, page size, storing), `stamps` (cursor arithmetic), `report`. Its reads retry
under `sync.retry`.
"""

from sync.pull.engine import pull
from sync.pull.report import Mode, PullProgress, PullReport, ResourceReport

__all__ = [
    "Mode",
    "PullProgress",
    "PullReport",
    "ResourceReport",
    "pull",
]
