"""Deterministic demo records shaped like the reference service's, for screenshots and tests.

The same arguments always give the same workspace (a seeded `random.Random`), with times
counted back from a given "now", so screenshots and snapshot tests never drift. Records go
into a cache through `Cache.apply_page`, exactly as a pull would store them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cache import Cache, Resource
from issuefields import PRIORITY, STATUS

Record = dict[str, Any]

USERS = (
    ("usr_ada", "Ada Lovelace"),
    ("usr_grace", "Grace Hopper"),
    ("usr_alan", "Alan Turing"),
    ("usr_edsger", "Edsger Dijkstra"),
    ("usr_barbara", "Barbara Liskov"),
)
PROJECTS = (
    ("prj_web", "WEB", "Web app"),
    ("prj_api", "API", "Public API"),
    ("prj_ops", "OPS", "Operations"),
)
LABELS = ("bug", "feature", "ux", "perf", "docs", "security")
VERBS = ("Fix", "Add", "Remove", "Speed up", "Document", "Refactor", "Test", "Migrate")
NOUNS = ("login form", "rate limiter", "search index", "webhook retries", "export", "sync")
TAILS = ("on Safari", "for admins", "after upgrade", "in dark mode", "under load", "")
DESCRIPTION = """Steps to reproduce:

1. Open the **{noun}**
2. Do it twice
3. See the error

Expected: it works. See `{issue_id}` for the logs.
"""


def stamp(moment: datetime) -> str:
    """The API's timestamp format: microseconds and `Z`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class DemoRecords:
    users: list[Record]
    projects: list[Record]
    issues: list[Record]
    comments: list[Record]


def generate(issues: int, now: datetime, *, seed: int = 0) -> DemoRecords:
    """A workspace of `issues` issues, five users, three projects and a few comments each."""
    rng = random.Random(seed)
    start = stamp(now - timedelta(days=400))
    users = [
        {
            "id": uid,
            "name": name,
            "email": f"{uid[4:]}@example.com",
            "created_at": start,
            "updated_at": start,
        }
        for uid, name in USERS
    ]
    projects = [
        {
            "id": pid,
            "key": key,
            "name": name,
            "description": f"Everything about the {name}.",
            "state": "active",
            "lead": USERS[index][0],
            "created_at": start,
            "updated_at": start,
        }
        for index, (pid, key, name) in enumerate(PROJECTS)
    ]
    records: list[Record] = []
    comments: list[Record] = []
    for index in range(issues):
        issue_id = f"iss_{issues - 1 - index:06d}"  # iss_000000 is the newest
        updated = now - timedelta(minutes=7 * (issues - index) + rng.randrange(5))
        created = updated - timedelta(days=rng.randrange(60))
        noun = NOUNS[rng.randrange(len(NOUNS))]
        title = " ".join(
            part for part in (VERBS[rng.randrange(8)], noun, TAILS[rng.randrange(6)]) if part
        )
        records.append(
            {
                "id": issue_id,
                "number": index + 1,
                "title": title,
                "description": DESCRIPTION.format(noun=noun, issue_id=issue_id),
                "status": STATUS.values[rng.randrange(len(STATUS.values))],
                "priority": PRIORITY.values[rng.randrange(len(PRIORITY.values))],
                "assignee": None if rng.random() < 0.15 else USERS[rng.randrange(5)][0],
                "project_id": None if rng.random() < 0.2 else PROJECTS[rng.randrange(3)][0],
                "labels": sorted(rng.sample(LABELS, rng.randrange(3))),
                "created_at": stamp(created),
                "updated_at": stamp(updated),
            }
        )
        for number in range(rng.randrange(3)):
            when = stamp(updated - timedelta(hours=number + 1))
            comments.append(
                {
                    "id": f"cmt_{index:06d}_{number}",
                    "issue_id": issue_id,
                    "body": rng.choice(
                        (
                            "I can reproduce this.",
                            "Fixed on main, please check.",
                            "Is this still happening after the upgrade?",
                            "Adding logs below.",
                        )
                    ),
                    "author": USERS[rng.randrange(5)][0],
                    "created_at": when,
                    "updated_at": when,
                }
            )
    return DemoRecords(users, projects, records, comments)


def fill(cache: Cache, records: DemoRecords, *, page: int = 1000) -> None:
    """Store the records as a pull would (pages of server records)."""
    cache.apply_page(Resource.USERS, records.users)
    cache.apply_page(Resource.PROJECTS, records.projects)
    for offset in range(0, len(records.issues), page):
        cache.apply_page(Resource.ISSUES, records.issues[offset : offset + page])
    for offset in range(0, len(records.comments), page):
        cache.apply_page(Resource.COMMENTS, records.comments[offset : offset + page])
