"""Which issues a search matches, held in `temp.fts_hits` in the form the next read needs.

A window walks its sort index and probes `temp.fts_hits` for each entry, so the table must
be exact for every entry the walk passes, and for the overlaid issues (their server rows are
subtracted by whether they matched). A count of a search alone needs only the total. When
most issues match, storing every match costs more than everything else a keystroke does
(18 ms of 40 for `the` at 100,000 issues), so a shallow walk gets only the matches among the
first issues in its order, counted and probed in one pass (`fts.load_probed_hits`); filters
that combine text with other terms, and deep walks, get every match.

A list's first rows come before its count (tracker_tui's issue window), so a shallow walk of
a plain search is first served without any pass over the big index: the first issues in its
order and their comments are indexed in cache.probe_docs (kept from snapshot to snapshot, what
changed indexed again), which every keystroke then matches in well under a millisecond; such
hits leave the total unknown, and `total` counts it when the list asks, after drawing the rows.
"""

from __future__ import annotations

import sqlite3

from cache import anchors, fts, probe_docs, search_text
from cache.filtering import CompiledFilter
from cache.fts import TextQuery
from cache.models import IssueSort, Resource
from cache.ordering import ORDERINGS
from cache.overlay import Overlay
from issuefields.frozen import Frozen

Need = tuple[IssueSort, int]
"""A walk of this sort that stops at its n-th match."""

_MEMO_KEY = "fts_hits"

# A window that stops within its first FAST_REACH matches of a search alone is served from
# the matches among the first PROBES_PER_ROW times as many issues in its order (at least
# MIN_PROBES, and more in a big cache, below), so a search matching most issues never stores
# them all; one matching few issues has too few among those and is evaluated in full, which
# is then cheap.
FAST_REACH = 500
PROBES_PER_ROW = 8
MIN_PROBES = 512
# And at least one probe for every ISSUES_PER_PROBE issues (up to MAX_PROBES): a search too
# rare for the probes to hold a window's matches is evaluated in full, and with probes in
# proportion to the issues, that evaluation stores at most about ISSUES_PER_PROBE matches a
# row of the window (16,000 for a first window of 64 rows, 9 ms), whatever the size. With 512
# probes at 1,000,000 issues, words matching 2-12 % of them (`tex`, `loca`) stored 50,000-115,000
# matches, 30-85 ms a keystroke; 4,000 probes are indexed in 34 ms, once per snapshot (issue 18).
ISSUES_PER_PROBE = 250
MAX_PROBES = 8192
# How common a search is, judged from the most recently stored issues before probing, so a
# search matching too few of the probes goes straight to full evaluation instead of paying
# for both.
SAMPLE_SPAN = 2000
# Up to this many matches, a search's window sorts its matches rather than walk an index.
FEW_HITS = 1000


class Hits(Frozen):
    """What `temp.fts_hits` holds for `text` in this snapshot: every match (`complete`), or
    the matches among the overlaid issues and among the first issues in `sort` order, of
    which `covered` match. `total` is exact, or None when not counted yet (`total`)."""

    _fields = ("text", "total", "sort", "covered", "complete")
    __slots__ = _fields
    text: TextQuery
    total: int | None
    sort: IssueSort | None
    covered: int
    complete: bool

    def __init__(
        self,
        text: TextQuery,
        total: int | None,
        sort: IssueSort | None,
        covered: int,
        complete: bool,
    ) -> None:
        self._init(text, total, sort, covered, complete)


def evaluate(
    conn: sqlite3.Connection,
    memo: dict[object, object],
    kept: dict[object, object],
    view: Overlay,
    compiled: CompiledFilter,
    text: TextQuery,
    need: Need | None,
) -> Hits:
    """Make `temp.fts_hits` right for what comes next: `need` is `(sort, n)` when a window
    walks `sort` until its n-th match, None when only the total and the overlaid issues
    matter. Filters combining text with other terms, and deep walks, get every match.
    `memo` is what this thread remembers of this snapshot, `kept` of earlier ones
    (`db.ThreadState`)."""
    full = (
        compiled.kinds != {"text"} or (need is not None and need[1] > FAST_REACH) or not text.plain
    )
    found = memo.get(_MEMO_KEY)
    if isinstance(found, Hits) and found.text == text and _serves(found, full, need):
        return found
    if not text.plain:
        total = search_text.load_hits(conn, _matching(conn, memo, text), text)
        hits = Hits(text, total, None, 0, True)
    elif full:
        hits = Hits(text, fts.load_hits(conn, _matching(conn, memo, text)), None, 0, True)
    else:
        served = need is not None and _from_probe_docs(conn, memo, kept, view, text, need)
        hits = served or _probed(conn, memo, view, text, need)
    memo[_MEMO_KEY] = hits
    return hits


def total(
    conn: sqlite3.Connection,
    memo: dict[object, object],
    kept: dict[object, object],
    view: Overlay,
    compiled: CompiledFilter,
    text: TextQuery,
) -> int:
    """How many server issues `text` matches (for a filter of text alone), with
    `temp.fts_hits` right for the overlaid issues: counted without storing the matches when
    the hits held came from the probe index."""
    hits = evaluate(conn, memo, kept, view, compiled, text, None)
    if hits.total is not None:
        return hits.total
    key = ("total", text)
    found = memo.get(key)
    if not isinstance(found, int):
        search = _matching(conn, memo, text)
        found = fts.count_matches(conn, search, _comment_matches(conn, memo, text, search))
        memo[key] = found
    return found


_PROBE_DOCS_KEY = "probe_docs"
_UNUSABLE = "unusable"
"""Marks a probe index that came out incomplete in this snapshot: not built again until the
data changes, the walks evaluate in full meanwhile."""
MAX_CHANGED = 4096
"""Past this many changes to the issues since the probe index was last brought up to date, it
is built afresh rather than read the log for them."""


def _from_probe_docs(
    conn: sqlite3.Connection,
    memo: dict[object, object],
    kept: dict[object, object],
    view: Overlay,
    text: TextQuery,
    need: Need,
) -> Hits | None:
    """The matches among the first issues in `need`'s order (and the overlaid ones), from the
    probe index (made right for this snapshot and order unless it already is); None when too
    few of them match for the walk, which then needs a pass over the big index anyway."""
    sort, reach = need
    probes = _probes(conn, reach)
    overlaid = [e.server_rid for e in view.of(Resource.ISSUES).values() if e.server_rid is not None]
    built = memo.get(_PROBE_DOCS_KEY)
    if built == (sort, probes, _UNUSABLE):
        return None
    if not (isinstance(built, ProbeDocs) and built.serves(sort, probes, overlaid)):
        built = _probe_docs(conn, kept, sort, probes, overlaid)
        if built is None:
            memo[_PROBE_DOCS_KEY] = (sort, probes, _UNUSABLE)
            return None
        memo[_PROBE_DOCS_KEY] = built
    first = built.first
    matched = probe_docs.matches(conn, text)
    covered = sum(rid in matched for rid in first)
    complete = len(first) < built.probes
    if covered < reach and not complete:
        return None
    fts.store_hits(conn, matched)
    return Hits(text, len(matched) if complete else None, sort, covered, complete)


def _probe_docs(
    conn: sqlite3.Connection,
    kept: dict[object, object],
    sort: IssueSort,
    probes: int,
    overlaid: list[int],
) -> ProbeDocs | None:
    """Make the probe index hold the first `probes` issues in `sort` order and the overlaid
    ones, with their comments; None when it came out incomplete.

    It is kept from one snapshot to the next on this thread (`kept`). Of the issues, only
    those the issues table's log says changed since (migration `issue_moves`, as
    cache.anchors reads it), and those that joined or left the first issues, are indexed
    again or deleted, so a search key after a sync that brought a few issues no longer builds
    the index again (21 ms for 1,024 issues; issue 18); when most of them changed, as at each
    commit of a first pull's backfill, the issues are indexed afresh (`_churn`). Of the comments,
    those of the issues indexed again or deleted, and those added since to the others, unless
    a comment was rewritten or deleted (cache.probe_docs.update_comments): a first pull's
    comments come after its issues, and indexing them afresh at each of their pages read
    every comment."""
    first = _first_rids(conn, sort, probes)
    needed = frozenset(first).union(overlaid)
    token = anchors.revision(conn)
    was = kept.pop(_PROBE_DOCS_KEY, None)
    if not isinstance(was, ProbeDocs) or probe_docs.generation(conn) != was.generation:
        was = None
    changed = _changed_since(conn, was, token) if was is not None else None
    stay = None if was is None or changed is None else (was.indexed & needed) - changed
    if was is not None and stay is not None and _churn(was.indexed, needed, stay) <= len(needed):
        gone, new = sorted(was.indexed - stay), sorted(needed - stay)
        added = probe_docs.index_issues(conn, new, gone, afresh=False)
        indexed = None if added is None else stay | added
    else:
        indexed = probe_docs.index_issues(conn, sorted(needed), (), afresh=True)
    if indexed is None or probe_docs.issue_docs(conn) != len(indexed):
        return None
    comments = None
    if was is not None and stay is not None:
        comments = probe_docs.update_comments(
            conn,
            was.comments,
            join=sorted(indexed - stay),
            leave=sorted(was.indexed - stay),
            stay=sorted(stay),
        )
    if comments is None:
        comments = probe_docs.index_comments(conn, sorted(indexed))
    if comments is None:
        return None
    docs = ProbeDocs(
        sort,
        probes,
        first,
        frozenset(overlaid),
        indexed,
        token,
        comments,
        probe_docs.generation(conn),
    )
    kept[_PROBE_DOCS_KEY] = docs
    return docs


def _churn(held: frozenset[int], needed: frozenset[int], stay: frozenset[int]) -> int:
    """How many issue documents bringing the index from `held` to `needed` deletes and adds.
    Past the number it would index afresh, it is indexed afresh (emptying it costs nothing,
    and deleting a document as much as adding one): during a first pull's backfill, each
    commit's issues are newer than those before and take most of the first issues' places."""
    return len(held - stay) + len(needed - stay)


def _changed_since(
    conn: sqlite3.Connection, was: ProbeDocs, token: anchors.Token | None
) -> frozenset[int] | None:
    """The issues (rids) inserted, changed or deleted since `was` was made; None when that
    cannot be told (no log, or it no longer holds `was`'s revision: `anchors.changed_rows`)
    or is too long to read (`MAX_CHANGED`)."""
    if token is None or was.token is None:
        return None
    if token == was.token:
        return frozenset()
    return anchors.changed_rows(conn, was.token, MAX_CHANGED)


class ProbeDocs:
    """What the probe index holds: the first `probes` issues in `sort` order (`first`, fewer
    when that is all there are) and the overlaid issues' server rows (`overlaid`), of which
    `indexed` exist, as of the issues table's revision `token`, their `comments`, as of the
    index's `generation` (a transaction rolled back on this connection takes its changes to
    the TEMP tables back with it). A plain class: this module loads with the app's first
    frame, where each dataclass costs its build."""

    __slots__ = (
        "comments",
        "first",
        "generation",
        "indexed",
        "overlaid",
        "probes",
        "sort",
        "token",
    )

    def __init__(
        self,
        sort: IssueSort,
        probes: int,
        first: list[int],
        overlaid: frozenset[int],
        indexed: frozenset[int],
        token: anchors.Token | None,
        comments: probe_docs.CommentDocs,
        generation: int,
    ) -> None:
        self.sort = sort
        self.probes = probes
        self.first = first
        self.overlaid = overlaid
        self.indexed = indexed
        self.token = token
        self.comments = comments
        self.generation = generation

    def serves(self, sort: IssueSort, probes: int, overlaid: list[int]) -> bool:
        return (
            self.sort == sort
            and (self.probes >= probes or len(self.first) < self.probes)
            and self.overlaid.issuperset(overlaid)
        )


def _matching(
    conn: sqlite3.Connection, memo: dict[object, object], text: TextQuery
) -> fts.Matching:
    key = ("matching", text)
    found = memo.get(key)
    if not isinstance(found, fts.Matching):
        found = memo[key] = fts.matching(conn, text)
    return found


def _comment_matches(
    conn: sqlite3.Connection, memo: dict[object, object], text: TextQuery, search: fts.Matching
) -> frozenset[int]:
    """Kept per snapshot: a keystroke's count probes with no sort, then its window probes
    again with one, and for a word most comments hold this join is most of either pass."""
    key = ("comment_matches", text)
    found = memo.get(key)
    if not isinstance(found, frozenset):
        found = memo[key] = fts.comment_matches(conn, search)
    return found


def _serves(hits: Hits, full: bool, need: Need | None) -> bool:
    if hits.complete:
        return True
    return not full and (need is None or (need[0] == hits.sort and need[1] <= hits.covered))


def _probed(
    conn: sqlite3.Connection,
    memo: dict[object, object],
    view: Overlay,
    text: TextQuery,
    need: Need | None,
) -> Hits:
    sort, reach = need if need is not None else (None, 0)
    first: list[int] = []
    probes = _probes(conn, reach)
    search = _matching(conn, memo, text)
    if sort is not None and not _worth_probing(conn, search, reach, probes):
        return Hits(text, fts.load_hits(conn, search), None, 0, True)
    if sort is not None:
        first = _first_rids(conn, sort, probes)
    overlaid = [e.server_rid for e in view.of(Resource.ISSUES).values() if e.server_rid is not None]
    by_comment = _comment_matches(conn, memo, text, search)
    total, matched = fts.load_probed_hits(conn, search, [*first, *overlaid], by_comment)
    covered = sum(rid in matched for rid in first)
    complete = sort is not None and len(first) < probes
    if covered < reach and not complete:
        return Hits(text, fts.load_hits(conn, search), None, 0, True)
    return Hits(text, total, sort, covered, complete)


def _probes(conn: sqlite3.Connection, reach: int) -> int:
    """How many of the first issues to probe for a walk to its `reach`-th match (the module's
    constants say why); the highest rid stands for the number of issues (a read of one
    index entry, where counting them reads an index)."""
    top = int(conn.execute("SELECT coalesce(max(rid), 0) FROM issues").fetchone()[0])
    return max(MIN_PROBES, PROBES_PER_ROW * reach, min(MAX_PROBES, int(top / ISSUES_PER_PROBE)))


def _worth_probing(conn: sqlite3.Connection, search: fts.Matching, reach: int, probes: int) -> bool:
    """Whether `probes` issues likely hold `reach` matches (with a margin of two), judged
    from a sample. A native prefix query costs as much on a sample as in full, so it is
    probed without one: its prefix has more terms than `fts.MAX_EXPANSION`, which makes it
    common, and when it is not, the probe's pass is what the full evaluation after it costs
    again. Probed, `con` at 1,000,000 issues (453,736 matches) cost 125 ms of CPU against
    238 stored in full, and left no 15 MB table of its matches (issue 18)."""
    if not search.spelled_out:
        return True
    matches, sampled = fts.recent_matches(conn, search, SAMPLE_SPAN)
    return 2 * reach * sampled <= probes * matches


def few(memo: dict[object, object], text: TextQuery | None) -> bool:
    """Whether `text`'s matches are all held and few enough to sort rather than walk."""
    found = memo.get(_MEMO_KEY)
    return (
        isinstance(found, Hits)
        and found.text == text
        and found.complete
        and found.total is not None
        and found.total <= FEW_HITS
    )


def _first_rids(conn: sqlite3.Connection, sort: IssueSort, probes: int) -> list[int]:
    """The server rows of the first `probes` issues in the list's order (its index's walk)."""
    ordering = ORDERINGS[sort.key]
    return [
        int(row[0])
        for row in conn.execute(
            f"SELECT rid FROM issues INDEXED BY {ordering.index} "
            f"ORDER BY {ordering.sql(sort.descending)} LIMIT ?",
            (probes,),
        )
    ]
