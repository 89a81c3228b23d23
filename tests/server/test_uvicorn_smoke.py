"""One round trip over a real loopback socket, through uvicorn, as a deployed service runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_support import bearer, served

from server.app import create_app
from server.keys import create_key


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    with served(create_app(tmp_path / "served.db")) as url:
        yield url


def test_a_real_server_round_trip(base_url: str, tmp_path: Path) -> None:
    key = create_key(tmp_path / "served.db", "Acme", "smoke")
    with httpx.Client(base_url=base_url, headers=bearer(key), timeout=10) as client:
        created = client.post("/issues", json={"title": "Served over TCP"})
        assert created.status_code == 201
        issue = created.json()
        fetched = client.get(f"/issues/{issue['id']}")
        assert fetched.json() == issue
        assert fetched.headers["etag"]
        assert client.get("/search", params={"q": "tcp"}).json()["data"] == [issue]
        unauthorized = client.get("/issues", headers={"Authorization": ""})
        assert unauthorized.status_code == 401
        assert unauthorized.json()["error"]["code"] == "unauthorized"
        chunked = client.post(
            "/issues",
            content=iter([b"x" * 65_536] * 17),
            headers={"Content-Type": "application/json"},
        )
        assert chunked.status_code == 413
        assert chunked.json()["error"]["code"] == "payload_too_large"
        assert client.get(base_url.replace("/v1", "/v2") + "/issues").status_code == 404
