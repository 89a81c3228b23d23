"""`tracker-server` and the library functions behind it: keys and seeding."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from server_support import bearer

from server.app import create_app
from server.cli import _demo_key, main
from server.keys import create_key
from server.seed import seed_workspace

KEY = re.compile(r"trk_[A-Za-z0-9_-]{40}")
SCRIPT = Path(sys.executable).parent / "tracker-server"


def _rows(db_path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute(sql, params).fetchall()


def test_keys_create_prints_the_key_alone_on_the_last_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "nested" / "tracker.db"
    status = main(["keys", "create", "--db", str(db), "--workspace", "Acme", "--name", "ci",
                   "--permissions", "issues:read", "issues:write", "--plan", "pro",
                   "--expires-in", "30"])  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out
    assert KEY.fullmatch(out.splitlines()[-1])
    [(plan,)] = _rows(db, "SELECT plan FROM workspaces WHERE name = 'Acme'")
    [(permissions, expires_at, created_at)] = _rows(
        db, "SELECT permissions, expires_at, created_at FROM api_keys"
    )
    assert plan == "pro"
    assert permissions == '["issues:read", "issues:write"]'
    assert isinstance(expires_at, int) and isinstance(created_at, int)
    assert expires_at - created_at == 30 * 86_400 * 1_000_000


def test_create_key_defaults_and_plan_changes(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    create_key(db, "Acme", "one")
    assert _rows(db, "SELECT plan FROM workspaces") == [("free",)]
    create_key(db, "Acme", "two")
    assert _rows(db, "SELECT plan FROM workspaces") == [("free",)]
    create_key(db, "Acme", "three", plan="enterprise")
    assert _rows(db, "SELECT plan FROM workspaces") == [("enterprise",)]
    assert len(_rows(db, "SELECT id FROM users")) == 1
    [(permissions,)] = _rows(db, "SELECT permissions FROM api_keys LIMIT 1")
    assert "admin" in str(permissions) and "webhooks:manage" in str(permissions)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"plan": "gold"}, "unknown plan"),
        ({"permissions": ["issues:delete"]}, "unknown permission"),
        ({"expires_in_days": 0}, "positive"),
        ({"name": " "}, "key name"),
    ],
)
def test_create_key_refuses_bad_arguments(
    tmp_path: Path, arguments: dict[str, object], message: str
) -> None:
    options = {"name": "k", **arguments}
    with pytest.raises(ValueError, match=message):
        create_key(tmp_path / "t.db", "Acme", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "argv",
    [
        [
            "keys",
            "create",
            "--db",
            "x.db",
            "--workspace",
            "A",
            "--name",
            "n",
            "--permissions",
            "bogus",
        ],
        ["keys", "create", "--db", "x.db", "--workspace", "A", "--name", "n", "--plan", "gold"],
        ["keys", "create", "--db", "x.db", "--workspace", "A", "--name", "n", "--expires-in", "-1"],
        ["keys", "create", "--db", "x.db", "--workspace", "A"],
        ["seed", "--db", "x.db", "--issues", "many"],
        ["seed", "--db", "x.db", "--issues", "-3"],
        ["serve", "--db", "x.db", "--port", "70000"],
        ["serve", "--db", "x.db", "--window-seconds", "0"],
        ["launch"],
        [],
    ],
)
def test_bad_arguments_end_with_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err.splitlines()[-1]
    assert "Traceback" not in err


def test_runtime_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("this is not a database\n" * 100)
    status = main(["keys", "create", "--db", str(not_a_db), "--workspace", "A", "--name", "n"])
    assert status == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tracker-server: error:")
    assert main(["keys", "revoke", "--db", str(tmp_path / "t.db"), "trk_unknown"]) == 1
    assert "no such key" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command", [[], ["serve"], ["keys"], ["keys", "create"], ["keys", "revoke"], ["seed"]]
)
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: tracker-server" in capsys.readouterr().out


def test_seed_makes_realistic_consistent_data(tmp_path: Path) -> None:
    db = tmp_path / "seeded.db"
    key = seed_workspace(db, "Demo", 400, plan="pro")
    assert KEY.fullmatch(key)
    [(issues, statuses, priorities, unassigned, unfiled)] = _rows(
        db,
        "SELECT count(*), count(DISTINCT status), count(DISTINCT priority), "
        "sum(assignee IS NULL), sum(project_id IS NULL) FROM issues",
    )
    assert (issues, statuses, priorities) == (400, 6, 5)
    assert 0 < int(str(unassigned)) < 400 and 0 < int(str(unfiled)) < 400
    assert _rows(db, "SELECT count(*) FROM comments") == [(200,)]
    assert _rows(db, "SELECT count(*) FROM users") == [(8,)]
    assert _rows(db, "SELECT count(*) FROM projects") == [(6,)]
    assert _rows(db, "SELECT min(number), max(number) FROM issues") == [(1, 400)]
    [(labelled,)] = _rows(db, "SELECT count(DISTINCT issue_seq) FROM issue_labels")
    [(with_labels,)] = _rows(db, "SELECT count(*) FROM issues WHERE labels != '[]'")
    assert labelled == with_labels > 0
    stamps = _rows(
        db,
        "SELECT updated_at FROM issues UNION ALL SELECT updated_at FROM comments "
        "UNION ALL SELECT updated_at FROM users UNION ALL SELECT updated_at FROM projects",
    )
    assert len(stamps) == len(set(stamps)) == 400 + 200 + 8 + 6
    [(last_stamp, plan)] = _rows(db, "SELECT last_stamp, plan FROM workspaces")
    assert last_stamp == max(stamp for (stamp,) in stamps)
    assert plan == "pro"
    assert _rows(db, "SELECT count(*) FROM issues WHERE created_at > updated_at") == [(0,)]


async def test_seeded_data_is_served_searched_and_stays_indexed(tmp_path: Path) -> None:
    db = tmp_path / "seeded.db"
    key = seed_workspace(db, "Demo", 300, rng_seed=7)
    app = create_app(db)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app), base_url="http://test/v1", headers=bearer(key)
        ) as client,
    ):
        listed = (await client.get("/issues", params={"per_page": 100})).json()
        assert listed["pagination"]["total"] == 300
        first = listed["data"][0]
        word = re.findall(r"[a-z]+", first["title"].lower())[-1]
        found = (await client.get("/search", params={"q": word[:4], "per_page": 100})).json()
        assert first["id"] in {issue["id"] for issue in found["data"]}
        created = (await client.post("/issues", json={"title": "Xylophone tuning"})).json()
        assert created["number"] == 301
        assert (await client.get("/search", params={"q": "xylo"})).json()["data"] == [created]
        assert created["updated_at"] > max(issue["updated_at"] for issue in listed["data"])
    again = seed_workspace(db, "Demo", 10, rng_seed=7)
    assert again != key
    assert _rows(db, "SELECT max(number), count(*) FROM issues") == [(311, 311)]
    assert _rows(db, "SELECT count(*) FROM users") == [(8,)]
    assert _rows(db, "SELECT count(*) FROM projects") == [(6,)]


def test_seeding_is_reproducible(tmp_path: Path) -> None:
    seed_workspace(tmp_path / "a.db", "Demo", 50, rng_seed=3)
    seed_workspace(tmp_path / "b.db", "Demo", 50, rng_seed=3)
    query = "SELECT number, title, status, priority, labels FROM issues ORDER BY number"
    assert _rows(tmp_path / "a.db", query) == _rows(tmp_path / "b.db", query)


def test_serve_demo_prints_a_key_and_serves_it(tmp_path: Path) -> None:
    """Also with `--allow-private-webhooks`, which lets a webhook name a non-loopback host."""
    db = tmp_path / "demo" / "tracker.db"
    process = subprocess.Popen(
        [
            str(SCRIPT),
            "serve",
            "--db",
            str(db),
            "--port",
            "0",
            "--demo",
            "--allow-private-webhooks",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        key = process.stdout.readline().strip()
        assert KEY.fullmatch(key)
        address = None
        for line in process.stderr:
            if match := re.search(r"running on (http://\S+)", line):
                address = match.group(1)
                break
        assert address is not None
        response = httpx.get(f"{address}/v1/issues", headers=bearer(key), timeout=10)
        assert response.json()["pagination"]["total"] == 1_000
        hook = {"url": "http://10.20.30.40/hook", "events": ["*"]}
        created = httpx.post(f"{address}/v1/webhooks", json=hook, headers=bearer(key), timeout=10)
        assert created.status_code == 201, created.text
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout:
            process.stdout.close()
        if process.stderr:
            process.stderr.close()


def test_the_demo_seeds_once_and_then_only_adds_keys(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    first, second = _demo_key(db), _demo_key(db)
    assert KEY.fullmatch(first) and KEY.fullmatch(second) and first != second
    assert _rows(db, "SELECT count(*) FROM issues") == [(1_000,)]
    assert _rows(db, "SELECT count(*) FROM workspaces") == [(1,)]


def test_a_new_seeded_workspace_spreads_its_history_over_weeks(tmp_path: Path) -> None:
    """Demo data with every record stamped "just now" hides the relative times and sorts."""
    db = tmp_path / "s.db"
    seed_workspace(db, "Demo", 200)
    with closing(sqlite3.connect(db)) as conn:
        query = "SELECT min(created_at), max(updated_at) FROM issues"
        oldest, newest = conn.execute(query).fetchone()
    assert newest - oldest > 30 * 24 * 3600 * 1_000_000
