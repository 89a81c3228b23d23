"""The push engine: local writes from the cache's outbox to the server, exactly once.

Modules, one job each: `engine` (the run: rounds, lock, recovery), `bulkplan` (which entries
share a bulk request), `single` and `bulk` (one request's worth of entries), `outcomes` (SYNC.md
4's outcomes applied to entries), `reconcile` (did a create whose answer was lost happen?),
`conflicts` (per-field conflicts before an edit goes out), `forbidden` (whose refusal a 403
is), `reads` (the run's reads, retried in place), `lock` (one pusher per cache), `report`
(what a run did).
"""

from sync.push.engine import push_outbox
from sync.push.report import PushReport, Stop, StopReason
from sync.retry import Backoff

__all__ = ["Backoff", "PushReport", "Stop", "StopReason", "push_outbox"]
"""`Backoff` (`sync.retry`) is how a run waits after a retryable failure: its callers pass one."""
