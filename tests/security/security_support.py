"""Helpers for the security checks: the service's routes as a table, real records behind them,
and the error-envelope check.

`ROUTES` lists every operation of the service with the permission it needs and a valid request
for it. `assert_routes_covered` compares it with the routes the application really has, so a
new endpoint fails the security checks until it is listed here, and is then checked like every
other one (cross-workspace 404, 403 without its permission, 401 for a revoked or expired key).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from fastapi import FastAPI

from server.app import API_PREFIX

MakeKey = Callable[..., str]
"""`make_key(workspace="Acme", *, permissions=None, expires_in_days=None)`: a new key."""
OpenClient = Callable[..., AbstractAsyncContextManager[httpx.AsyncClient]]
"""`open_client(key=None, address="127.0.0.1")`: a client of the app with that key."""

START = datetime(2026, 11, 21, 15, 33, 11, 561385, tzinfo=UTC)
HOOK_URL = "http://127.0.0.1:9/hook"
"""The discard port: nothing listens there, so a delivery fails at once and harms nothing."""
HOOK_EVENTS = ["project.deleted"]
"""Rare enough that the many webhooks the checks make do not flood the dispatcher."""
PERMISSIONS = frozenset(
    {
        "issues:read",
        "issues:write",
        "projects:read",
        "projects:write",
        "comments:read",
        "comments:write",
        "webhooks:manage",
        "admin",
    }
)


class SteppingClock:
    """Stands still until told to move, so a test decides what "now" is."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass(frozen=True)
class Route:
    """One operation: who may call it and a request that succeeds for its owner."""

    method: str
    path: str
    permission: str | None
    body: dict[str, Any] | None = None
    query: dict[str, str] | None = None

    def url(self, ids: dict[str, str]) -> str:
        return self.path.format(**ids)

    def json(self, ids: dict[str, str]) -> Any:
        return _fill(self.body, ids)

    def label(self) -> str:
        return f"{self.method} {self.path}"


ROUTES = [
    Route("GET", "/me", None),
    Route("GET", "/users", None),
    Route("GET", "/workspaces", None),
    Route("GET", "/workspaces/{workspace_id}", None),
    Route("PATCH", "/workspaces/{workspace_id}", "admin", {"name": "Acme"}),
    Route("GET", "/issues", "issues:read"),
    Route("POST", "/issues", "issues:write", {"title": "New"}),
    Route(
        "POST",
        "/issues/bulk",
        "issues:write",
        {"operations": [{"op": "update", "id": "{issue_id}", "changes": {"priority": "high"}}]},
    ),
    Route("GET", "/issues/{issue_id}", "issues:read"),
    Route("PATCH", "/issues/{issue_id}", "issues:write", {"title": "Changed"}),
    Route("DELETE", "/issues/{issue_id}", "issues:write"),
    Route("GET", "/projects", "projects:read"),
    Route("POST", "/projects", "projects:write", {"name": "New project"}),
    Route("GET", "/projects/{project_id}", "projects:read"),
    Route("PATCH", "/projects/{project_id}", "projects:write", {"name": "Changed"}),
    Route("DELETE", "/projects/{project_id}", "projects:write"),
    Route("GET", "/comments", "comments:read"),
    Route("POST", "/comments", "comments:write", {"issue_id": "{issue_id}", "body": "Hi"}),
    Route("GET", "/comments/{comment_id}", "comments:read"),
    Route("PATCH", "/comments/{comment_id}", "comments:write", {"body": "Edited"}),
    Route("DELETE", "/comments/{comment_id}", "comments:write"),
    Route("GET", "/search", "issues:read", query={"q": "record"}),
    Route("GET", "/webhooks", "webhooks:manage"),
    Route("POST", "/webhooks", "webhooks:manage", {"url": HOOK_URL, "events": HOOK_EVENTS}),
    Route("GET", "/webhooks/{webhook_id}", "webhooks:manage"),
    Route("PATCH", "/webhooks/{webhook_id}", "webhooks:manage", {"events": ["project.updated"]}),
    Route("DELETE", "/webhooks/{webhook_id}", "webhooks:manage"),
    Route("GET", "/webhooks/{webhook_id}/deliveries", "webhooks:manage"),
    Route("GET", "/api-keys", "admin"),
    Route("POST", "/api-keys", "admin", {"name": "Spare"}),
    Route("DELETE", "/api-keys/{key_id}", "admin"),
]
RECORD_PATHS = sorted({route.path for route in ROUTES if "{" in route.path})
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _fill(template: Any, ids: dict[str, str]) -> Any:
    if isinstance(template, str):
        return template.format(**ids)
    if isinstance(template, dict):
        return {name: _fill(value, ids) for name, value in template.items()}
    if isinstance(template, list):
        return [_fill(value, ids) for value in template]
    return template


def app_operations(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path below /v1) the application serves, from its own OpenAPI document
    (the service hides no route from it: tests/server/test_openapi.py)."""
    found: set[tuple[str, str]] = set()
    for path, item in app.openapi()["paths"].items():
        assert path.startswith(API_PREFIX + "/"), path
        found.update((method.upper(), path[len(API_PREFIX) :]) for method in item)
    return found


def assert_routes_covered(app: FastAPI) -> None:
    """`ROUTES` is exactly what the application serves: no endpoint escapes the checks."""
    listed = {(route.method, route.path) for route in ROUTES}
    served = app_operations(app)
    assert served == listed, {"unlisted": served - listed, "gone": listed - served}


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is the published error body with this status and code; returns the error."""
    assert response.status_code == status, (response.request.url, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    return error


def assert_refusal(response: httpx.Response) -> None:
    """A 4xx in the error envelope, never a 5xx, never a stack trace."""
    assert 400 <= response.status_code < 500, (response.request.url, response.text[:500])
    body = response.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"]["code"], str) and body["error"]["message"]
    assert "Traceback" not in response.text


_made = itertools.count()


async def make_records(client: httpx.AsyncClient) -> dict[str, str]:
    """One record of each kind in the client's workspace, keyed by path parameter name."""
    project_key = "".join(chr(ord("A") + int(digit)) for digit in f"{next(_made):04d}")

    async def made(path: str, body: dict[str, Any]) -> str:
        response = await client.post(path, json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    issue = await made("/issues", {"title": "A record"})
    comment = await made("/comments", {"issue_id": issue, "body": "A comment"})
    me = (await client.get("/me")).json()
    return {
        "issue_id": issue,
        "comment_id": comment,
        "project_id": await made("/projects", {"name": "A project", "key": project_key}),
        "webhook_id": await made("/webhooks", {"url": HOOK_URL, "events": HOOK_EVENTS}),
        "key_id": await made("/api-keys", {"name": "Another key"}),
        "workspace_id": str(me["workspace"]["id"]),
    }


MISSING_IDS = {
    "issue_id": "iss_missing",
    "comment_id": "cmt_missing",
    "project_id": "prj_missing",
    "webhook_id": "whk_missing",
    "key_id": "key_missing",
    "workspace_id": "wsp_missing",
}


def routes_with_ids() -> Iterator[Route]:
    return (route for route in ROUTES if "{" in route.path)
