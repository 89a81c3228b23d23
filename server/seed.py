"""Realistic demo data, loaded fast enough for 100,000 issues.

Everything is inserted with `executemany` in one transaction, with a page cache large enough
for the indexes (`LOAD_CACHE_KIB`). The full-text triggers are
dropped for the load and recreated after it, with the index rebuilt once in between, which is
several times faster than indexing row by row. Stamps are drawn as distinct random instants of
the last 90 days, so the data keeps the workspace invariant that no two writes share an
`updated_at`.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from server.db import Database
from server.ids import new_id
from server.keys import add_key
from server.migrations import FTS_TRIGGER_NAMES, FTS_TRIGGERS
from server.models import PERMISSIONS, PLANS
from server.records.workspaces import create_workspace, set_plan, workspace_id_by_name
from server.store import Transaction
from server.timestamps import to_micros, utc_now

SPAN_MICROS = timedelta(days=90) // timedelta(microseconds=1)
LOAD_CACHE_KIB = 400_000
"""The load's page cache (the default is 2 MiB): the issues' six indexes take rows in random
order, and a million rows' worth of index pages then stays in memory instead of going to
disk and back: 300,000 issues seeded in 45 s instead of 109 s. It lasts as long as the load's
own connection, which `seed_workspace` closes at its end."""

USERS = (
    "Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson",
    "Linus Torvalds", "Margaret Hamilton", "Dennis Ritchie", "Barbara Liskov",
)  # fmt: skip
PROJECTS = (
    ("WEB", "Web app", "The browser client."),
    ("API", "Public API", "Endpoints, SDKs and their documentation."),
    ("MOB", "Mobile", "iOS and Android apps."),
    ("OPS", "Operations", "Deployment, monitoring and on-call."),
    ("DATA", "Data platform", "Pipelines, warehouse and reports."),
    ("DOCS", "Documentation", "Guides and the help centre."),
)
PROBLEMS = (
    "Crash when", "Timeout while", "Slow response when", "Wrong total after",
    "Blank screen after", "Duplicate entries when", "Memory leak while", "Error 500 when",
    "Broken layout when", "Login loop after", "Stale data after", "Missing translation when",
)  # fmt: skip
FEATURES = (
    "Add support for", "Allow", "Improve", "Redesign", "Speed up", "Document",
    "Add keyboard shortcuts for", "Add an export option for",
)  # fmt: skip
SUBJECTS = (
    "saving a draft", "uploading attachments", "exporting reports", "switching workspaces",
    "editing comments", "filtering by label", "resetting a password", "syncing offline changes",
    "opening large projects", "sharing a link", "importing a CSV file", "merging accounts",
    "scrolling the issue list", "archiving a project", "changing the theme", "searching issues",
)  # fmt: skip
CONTEXTS = (
    "on mobile", "in Safari", "with a slow network", "for new users", "on the dashboard",
    "in the settings page", "with more than 1,000 items", "after the last release", "",
)  # fmt: skip
DETAILS = (
    "Steps to reproduce are in the linked support ticket.",
    "Reported by several customers this week.",
    "Happens about one time in ten; logs attached.",
    "The console shows a stack trace pointing at the cache layer.",
    "Expected the change to apply immediately; it only shows after a reload.",
    "This blocks the release checklist.",
    "A workaround exists but it is not obvious to users.",
    "Design mockups are in the shared folder.",
    "Performance budget: under 200 ms at the 95th percentile.",
)
COMMENTS = (
    "I can reproduce this on the latest build.", "Looking into it now.",
    "Could this be related to the caching change?", "Fixed on main, please verify.",
    "Adding the logs from production.", "Let's discuss this in the planning meeting.",
    "Not reproducible on my machine; any more details?", "Bumping priority, customers hit it.",
)  # fmt: skip
LABELS = (
    "bug", "feature", "ux", "performance", "security", "docs", "tech-debt", "regression",
    "good-first-issue",
)  # fmt: skip
STATUS_WEIGHTS = {"backlog": 15, "todo": 25, "in_progress": 20, "in_review": 10, "done": 25,
                  "canceled": 5}  # fmt: skip
PRIORITY_WEIGHTS = {"urgent": 5, "high": 20, "medium": 35, "low": 25, "none": 15}


@dataclass
class _Layout:
    """The workspace being filled: the members and projects that issues refer to, and the
    stamps still to hand out, in increasing order."""

    workspace_id: str
    stamps: list[int]
    users: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    used: int = 0

    def take(self, count: int) -> list[int]:
        taken = self.stamps[self.used : self.used + count]
        self.used += count
        return taken


def seed_workspace(
    db_path: str | Path,
    workspace: str,
    issues: int,
    *,
    plan: str | None = None,
    rng_seed: int = 0,
) -> str:
    """Fill `workspace` (created if missing) with members, projects, `issues` issues in every
    status and priority, labels and comments; return a new key with every permission.

    `plan` sets the workspace's plan (a new one is free when None); `rng_seed` makes the data
    reproducible apart from ids and stamps (which follow the clock, from their own generator
    so that the content does not depend on the time of day).
    """
    if issues < 0:
        raise ValueError("the number of issues must not be negative")
    if plan is not None and plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r}; known: {', '.join(PLANS)}")
    rng = random.Random(rng_seed)
    timing = random.Random(rng_seed)
    db = Database(db_path)
    try:
        with db.writing() as conn:
            conn.execute(f"PRAGMA cache_size = -{LOAD_CACHE_KIB}")
            now = to_micros(utc_now())
            workspace_id = workspace_id_by_name(conn, workspace) or create_workspace(
                conn, workspace, plan or "free", now - SPAN_MICROS
            )
            tx = Transaction(conn, workspace_id, utc_now)
            if plan is not None:
                set_plan(tx, plan)
            comments = issues // 2
            stamps = _stamps(tx, len(USERS) + len(PROJECTS) + 2 * issues + comments, timing)
            layout = _Layout(workspace_id, stamps)
            _insert_users(conn, layout)
            _insert_projects(conn, layout, rng)
            issue_ids = _insert_issues(conn, layout, issues, rng)
            _insert_comments(conn, layout, issue_ids, comments, rng)
            return add_key(tx, layout.users[0], "demo", list(PERMISSIONS))
    finally:
        db.close()


def _stamps(tx: Transaction, count: int, rng: random.Random) -> list[int]:
    """`count` distinct increasing stamps after every stamp the workspace has used, ending
    about now, and the workspace's clock moved past them."""
    now = to_micros(tx.clock())
    (last,) = tx.conn.execute(
        "SELECT last_stamp FROM workspaces WHERE id = ?", (tx.workspace_id,)
    ).fetchone()
    start = max(now - SPAN_MICROS, last + 1)
    span = max(now - start, count)
    stamps = sorted(start + offset for offset in rng.sample(range(span), count))
    if stamps:
        tx.conn.execute(
            "UPDATE workspaces SET last_stamp = ? WHERE id = ?", (stamps[-1], tx.workspace_id)
        )
    return stamps


def _insert_users(conn: sqlite3.Connection, layout: _Layout) -> None:
    """The demo cast; members already in the workspace under the same name are reused."""
    existing = dict(conn.execute(
        "SELECT name, id FROM users WHERE workspace_id = ?", (layout.workspace_id,)
    ).fetchall())  # fmt: skip
    rows = []
    for name, stamp in zip(USERS, layout.take(len(USERS)), strict=True):
        if name not in existing:
            existing[name] = new_id("usr")
            email = name.lower().replace(" ", ".") + "@example.com"
            rows.append((existing[name], layout.workspace_id, name, email, stamp, stamp))
        layout.users.append(existing[name])
    conn.executemany("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?)", rows)


def _insert_projects(conn: sqlite3.Connection, layout: _Layout, rng: random.Random) -> None:
    """The demo projects; a project already holding one of their keys is reused."""
    existing = dict(conn.execute(
        "SELECT key, id FROM projects WHERE workspace_id = ?", (layout.workspace_id,)
    ).fetchall())  # fmt: skip
    rows = []
    for (key, name, description), stamp in zip(PROJECTS, layout.take(len(PROJECTS)), strict=True):
        lead = rng.choice(layout.users)
        if key not in existing:
            existing[key] = new_id("prj")
            rows.append((existing[key], layout.workspace_id, key, name, description, "active",
                         lead, stamp, stamp))  # fmt: skip
        layout.projects.append(existing[key])
    conn.executemany("INSERT INTO projects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def _title(rng: random.Random) -> str:
    opening = rng.choice(PROBLEMS if rng.random() < 0.6 else FEATURES)
    return " ".join(part for part in (opening, rng.choice(SUBJECTS), rng.choice(CONTEXTS)) if part)


def _insert_issues(
    conn: sqlite3.Connection, layout: _Layout, count: int, rng: random.Random
) -> list[str]:
    """Insert the issues (two stamps each: created, and perhaps updated later); returns their
    ids."""
    (first,) = conn.execute(
        "UPDATE workspaces SET issue_counter = issue_counter + ? WHERE id = ? "
        "RETURNING issue_counter - ?",
        (count, layout.workspace_id, count),
    ).fetchone()
    statuses, status_weights = zip(*STATUS_WEIGHTS.items(), strict=True)
    priorities, priority_weights = zip(*PRIORITY_WEIGHTS.items(), strict=True)
    stamps = layout.take(2 * count)
    issue_rows: list[tuple[Any, ...]] = []
    created: list[str] = []
    for index in range(count):
        issue_id = new_id("iss")
        created_at = stamps[2 * index]
        updated_at = created_at if rng.random() < 0.5 else stamps[2 * index + 1]
        labels = rng.sample(LABELS, rng.choice((0, 1, 1, 2, 3)))
        issue_rows.append((
            issue_id, layout.workspace_id, first + index + 1, _title(rng),
            " ".join(rng.sample(DETAILS, rng.randint(1, 3))),
            rng.choices(statuses, status_weights)[0], rng.choices(priorities, priority_weights)[0],
            rng.choice(layout.users) if rng.random() < 0.8 else None,
            rng.choice(layout.projects) if layout.projects and rng.random() < 0.85 else None,
            json.dumps(labels), created_at, updated_at,
        ))  # fmt: skip
        created.append(issue_id)
    for name in FTS_TRIGGER_NAMES:
        conn.execute(f"DROP TRIGGER {name}")
    conn.executemany(
        "INSERT INTO issues (id, workspace_id, number, title, description, status, priority, "
        "assignee, project_id, labels, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        issue_rows,
    )
    conn.execute(
        "INSERT INTO issue_labels (workspace_id, label, issue_seq) "
        "SELECT issues.workspace_id, labels.value, issues.seq "
        "FROM issues, json_each(issues.labels) AS labels "
        "WHERE issues.workspace_id = ? AND issues.number > ?",
        (layout.workspace_id, first),
    )
    conn.execute("INSERT INTO issues_fts (issues_fts) VALUES ('rebuild')")
    for trigger in FTS_TRIGGERS:
        conn.execute(trigger)
    return created


def _insert_comments(
    conn: sqlite3.Connection,
    layout: _Layout,
    issues: list[str],
    count: int,
    rng: random.Random,
) -> None:
    """Comments come after all seeded issues, so each is younger than its issue."""
    rows = [
        (new_id("cmt"), layout.workspace_id, rng.choice(issues), rng.choice(COMMENTS),
         rng.choice(layout.users), stamp, stamp)
        for stamp in layout.take(count)
    ]  # fmt: skip
    conn.executemany("INSERT INTO comments VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
