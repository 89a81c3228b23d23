"""The push engine: local writes from the cache's outbox to the server, exactly once.

Modules, one job each: `engine` (the run: rounds, lock, recovery), `single` and `bulk` (one
request's worth of entries), `outcomes` (SYNC.md 4's outcomes applied to entries), `reads`
(the run's reads, retried in place), `lock` (one pusher per cache), `report` (what a run did,
backoff). Reconciling unknown outcomes is in
`sync.reconcile`, conflict checks in `sync.conflicts`, bulk grouping in `sync.bulkplan`.
"""

from sync.push.engine import push_outbox
from sync.push.report import Backoff, PushReport

__all__ = ["Backoff", "PushReport", "push_outbox"]
