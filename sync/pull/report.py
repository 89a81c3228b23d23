"""What a pull did, for the command line, the app's status bar and the benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from sync.models import SkippedRecord

if TYPE_CHECKING:
    from sync.pull.backfill import StepReport


class Mode(StrEnum):
    """How a resource was paged (docs/sync.md#keyset-paging, docs/sync.md#page-walking)."""

    KEYSET = "keyset"
    PAGES = "pages"


@dataclass
class ResourceReport:
    """One resource's pull. `passes` > 1 when a page walk saw `total` move and walked again."""

    resource: str
    mode: Mode = Mode.KEYSET
    requests: int = 0
    pages: int = 0
    received: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    passes: int = 0
    swept: bool = False
    skipped: list[SkippedRecord] = field(default_factory=list)
    note: str | None = None
    seconds: float = 0.0


@dataclass
class PullReport:
    """Every resource's pull; `requests` counts retries too, `retries` only the retries."""

    resources: dict[str, ResourceReport] = field(default_factory=dict)
    full: bool = False
    retries: int = 0
    clock_offset: float | None = None
    features_refreshed: bool = False
    seconds: float = 0.0
    withheld: dict[str, str] = field(default_factory=dict)
    """Resources not pulled because the key may not read them, each with the permission it
    lacks (`sync.pull.engine`): the pull is partial, and says so once."""
    head_first: bool = False
    """A cold start read the newest issues first (docs/sync.md#head-first)."""
    backfill: StepReport | None = None
    """What this pull did of a pending backfill, when it went on with it."""

    @property
    def requests(self) -> int:
        return sum(report.requests for report in self.resources.values())

    @property
    def skipped(self) -> list[SkippedRecord]:
        return [item for report in self.resources.values() for item in report.skipped]

    @property
    def changed(self) -> int:
        """Records inserted, updated or deleted locally."""
        return sum(r.inserted + r.updated + r.deleted for r in self.resources.values())


@dataclass(frozen=True)
class PullProgress:
    """Sent after every page: enough for a progress bar.

    `received` counts the records of this phase (the pull, or the id sweep that follows it);
    `total` estimates what the phase fetches in all, `received` included, from the server's
    `pagination.total` of the query in flight (None when the server gives none). It is an
    estimate: records edited during the pull move it, and it never falls below `received`."""

    resource: str
    pages: int
    received: int
    total: int | None
    phase: str = "pull"
