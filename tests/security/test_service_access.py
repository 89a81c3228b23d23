"""Who may do what, on every route of the service and with every method.

The routes come from `security_support.ROUTES`, which must equal the application's own route
table (first test), so an endpoint added later is checked here without anyone remembering to:
another workspace's records are 404 and indistinguishable from missing ones, a key without the
route's permission is 403, a revoked or expired key is 401, and failed authentications are
limited per address whatever the failure.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from security_support import (
    HTTP_METHODS,
    MISSING_IDS,
    PERMISSIONS,
    RECORD_PATHS,
    ROUTES,
    MakeKey,
    OpenClient,
    Route,
    SteppingClock,
    app_operations,
    assert_error,
    assert_routes_covered,
    make_records,
)

from server.keys import create_key, revoke_key


def test_the_route_table_is_the_whole_application(app: FastAPI) -> None:
    assert_routes_covered(app)
    assert len(app_operations(app)) == len(ROUTES)


async def _answer(
    client: httpx.AsyncClient, method: str, path: str, ids: dict[str, str]
) -> httpx.Response:
    route = next((r for r in ROUTES if (r.method, r.path) == (method, path)), None)
    body = route.json(ids) if route is not None and route.body is not None else {"name": "x"}
    return await client.request(method, path.format(**ids), json=body)


async def test_foreign_records_are_404_on_every_route_and_method(
    open_client: OpenClient, make_key: MakeKey, clock: SteppingClock
) -> None:
    async with open_client(make_key()) as mine, open_client(make_key("Globex")) as theirs:
        foreign = await make_records(theirs)
        routed = {(route.method, route.path) for route in ROUTES}
        for path in RECORD_PATHS:
            for method in HTTP_METHODS:
                clock.advance(minutes=1)
                stolen = await _answer(mine, method, path, foreign)
                missing = await _answer(mine, method, path, MISSING_IDS)
                where = f"{method} {path}"
                assert stolen.status_code == missing.status_code, (where, stolen.text)
                assert stolen.json()["error"]["code"] == missing.json()["error"]["code"], where
                if (method, path) in routed:
                    assert_error(stolen, 404, "not_found")
                else:
                    assert_error(stolen, 405, "method_not_allowed")
        for path in RECORD_PATHS:
            if ("GET", path) in routed:
                assert (await theirs.get(path.format(**foreign))).status_code == 200, path
        record = (await theirs.get(f"/issues/{foreign['issue_id']}")).json()
        assert record["title"] == "A record"
        assert (await theirs.get("/me")).json()["workspace"]["name"] == "Globex"


async def test_lists_of_every_route_show_nothing_of_another_workspace(
    open_client: OpenClient, make_key: MakeKey
) -> None:
    async with open_client(make_key()) as mine, open_client(make_key("Globex")) as theirs:
        foreign = await make_records(theirs)
        own = await make_records(mine)
        for route in ROUTES:
            if route.method != "GET" or "{" in route.path:
                continue
            response = await mine.get(route.path, params=route.query)
            assert response.status_code == 200, (route.path, response.text)
            for name, value in foreign.items():
                assert value not in response.text, (route.path, name)
            assert "Globex" not in response.text, route.path
        assert own["issue_id"] in (await mine.get("/issues")).text


async def test_bulk_operations_on_foreign_issues_fail_like_missing_ones(
    open_client: OpenClient, make_key: MakeKey
) -> None:
    async with open_client(make_key()) as mine, open_client(make_key("Globex")) as theirs:
        foreign = (await make_records(theirs))["issue_id"]
        operations = [
            {"op": "update", "id": foreign, "changes": {"title": "stolen"}},
            {"op": "delete", "id": foreign},
            {"op": "update", "id": "iss_missing", "changes": {"title": "stolen"}},
            {"op": "delete", "id": "iss_missing"},
        ]
        response = await mine.post("/issues/bulk", json={"operations": operations})
        assert response.status_code == 200, response.text
        results = response.json()["data"]
        assert [result["status"] for result in results] == [404] * 4
        assert {result["error"]["code"] for result in results} == {"not_found"}
        kept = (await theirs.get(f"/issues/{foreign}")).json()
        assert kept["title"] == "A record"


async def _call(client: httpx.AsyncClient, route: Route, ids: dict[str, str]) -> httpx.Response:
    return await client.request(
        route.method, route.url(ids), params=route.query, json=route.json(ids)
    )


async def test_every_route_refuses_a_key_without_its_permission(
    open_client: OpenClient, make_key: MakeKey, clock: SteppingClock
) -> None:
    async with open_client(make_key()) as owner, open_client(make_key(permissions=[])) as bare:
        for route in ROUTES:
            clock.advance(minutes=1)
            ids = await make_records(owner)
            if route.permission is None:
                assert (await _call(bare, route, ids)).status_code == 200, route.label()
                continue
            lacking = make_key(permissions=sorted(PERMISSIONS - {route.permission}))
            async with open_client(lacking) as limited:
                for refused in (await _call(limited, route, ids), await _call(bare, route, ids)):
                    error = assert_error(refused, 403, "forbidden")
                    assert f"`{route.permission}`" in error["message"], route.label()
            assert (await owner.get(f"/issues/{ids['issue_id']}")).json()["title"] == "A record"
            async with open_client(make_key(permissions=[route.permission])) as only:
                allowed = await _call(only, route, ids)
            assert allowed.status_code in {200, 201}, (route.label(), allowed.text)


async def _count_issues(client: httpx.AsyncClient) -> int:
    total: int = (await client.get("/issues")).json()["pagination"]["total"]
    return total


async def test_revoked_and_expired_keys_are_401_on_every_route(
    open_client: OpenClient, make_key: MakeKey, clock: SteppingClock, db_path: Path
) -> None:
    async with open_client(make_key()) as owner:
        ids = await make_records(owner)
        created = (await owner.post("/api-keys", json={"name": "to revoke"})).json()
        revoked_by_api = created["key"]
        assert (await owner.delete(f"/api-keys/{created['id']}")).status_code == 200
        revoked_by_cli = make_key()
        revoke_key(db_path, revoked_by_cli, clock=clock)
        expired = make_key(expires_in_days=1)
        clock.advance(days=1)
        before = await _count_issues(owner)
        dead = {"revoked-api": revoked_by_api, "revoked": revoked_by_cli, "expired": expired}
        for number, route in enumerate(ROUTES):
            for kind, key in dead.items():
                # A fresh address per request: this checks 401s, not the failure limit.
                address = f"10.1.{number}.{len(kind)}"
                async with open_client(key, address) as client:
                    response = await _call(client, route, ids)
                error = assert_error(response, 401, "unauthorized")
                assert response.headers["www-authenticate"] == "Bearer", route.label()
                assert kind.split("-")[0] in error["message"], (kind, error)
                assert "x-ratelimit-remaining" not in response.headers
        assert await _count_issues(owner) == before
        assert (await owner.get(f"/issues/{ids['issue_id']}")).status_code == 200


async def test_failed_authentications_are_limited_per_address_whatever_the_failure(
    open_client: OpenClient, make_key: MakeKey, clock: SteppingClock, db_path: Path
) -> None:
    good = make_key()
    revoked = make_key()
    revoke_key(db_path, revoked, clock=clock)
    expired = make_key(expires_in_days=1)
    clock.advance(days=1)
    attempts: list[dict[str, Any]] = [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer trk_" + "x" * 40},
        {"Authorization": f"Bearer {revoked}"},
        {"Authorization": f"Bearer {expired}"},
        {"Authorization": f"Bearer {good}x"},
    ]
    async with open_client(None, "10.9.9.9") as attacker:
        for number in range(21):
            route = ROUTES[number % len(ROUTES)]
            response = await attacker.request(
                route.method,
                route.path.format(**MISSING_IDS),
                headers=attempts[number % len(attempts)],
            )
            assert_error(response, 401, "unauthorized")
        for route in (ROUTES[0], ROUTES[-1]):
            blocked = await attacker.request(
                route.method,
                route.path.format(**MISSING_IDS),
                headers={"Authorization": f"Bearer {good}"},
            )
            error = assert_error(blocked, 429, "rate_limit_exceeded")
            assert int(blocked.headers["retry-after"]) == error["retry_after"] >= 1
    async with open_client(good, "10.9.9.10") as neighbour:
        assert (await neighbour.get("/me")).status_code == 200
    clock.advance(minutes=1)
    async with open_client(good, "10.9.9.9") as later:
        assert (await later.get("/me")).status_code == 200


def test_the_served_service_counts_failures_by_peer_not_by_forwarded_headers(
    tmp_path: Path,
) -> None:
    """`tracker-server serve` over a real socket: a client cannot spread its failed
    authentications over made-up addresses with `X-Forwarded-For` or `Forwarded`."""
    db = tmp_path / "served.db"
    key = create_key(db, "Acme", "served")
    script = Path(sys.executable).with_name("tracker-server")
    # Minutes of an hour: windows are fixed, and 22 requests on a loaded machine crossed a
    # minute's boundary, which starts the count of failures again.
    argv = [str(script), "serve", "--db", str(db), "--port", "0", "--window-seconds", "3600"]
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True) as process:
        try:
            assert process.stderr is not None
            base_url = ""
            for line in process.stderr:
                found = re.search(r"running on (http://127\.0\.0\.1:\d+)", line)
                if found:
                    base_url = found.group(1) + "/v1"
                    break
            assert base_url, "the service did not report its address"
            with httpx.Client(base_url=base_url, timeout=10) as http:
                for number in range(21):
                    spoofed = {
                        "Authorization": "Bearer trk_" + "x" * 40,
                        "X-Forwarded-For": f"203.0.113.{number}",
                        "Forwarded": f"for=198.51.100.{number}",
                    }
                    assert_error(http.get("/me", headers=spoofed), 401, "unauthorized")
                blocked = http.get(
                    "/me",
                    headers={"Authorization": f"Bearer {key}", "X-Forwarded-For": "192.0.2.9"},
                )
            assert_error(blocked, 429, "rate_limit_exceeded")
        finally:
            process.terminate()
            process.wait(timeout=10)
