"""The admin endpoints (`sync.admin`) against the reference service on a loopback port: the
workspace, API keys, webhooks with their deliveries, and what a server without an operation
says. Every call goes through the session's rate limiter and request log."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from push_support import session_for

from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.admin import AdminApi
from sync.errors import Forbidden, NotFound, Unauthorized, Unsupported

DISCARD = "http://127.0.0.1:9/hook"
"""Nothing listens on the discard port: a delivery fails at once."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "Acme", 3, plan="pro")
    with ServiceThread(create_app(db)) as service:
        yield service.base_url, key, db


async def test_the_workspace_reads_and_renames(
    served: tuple[str, str, Path], tmp_path: Path
) -> None:
    base_url, key, _ = served
    async with session_for(key, tmp_path / "c.db", server=base_url) as session:
        api = AdminApi(session.client)
        before = len(session.cache.requests.request_times(0))
        workspace = (await api.workspace()).value
        assert workspace.name == "Acme" and workspace.plan == "pro"
        renamed = (await api.rename_workspace(workspace.id, "Acme Labs")).value
        assert renamed.name == "Acme Labs"
        assert (await api.workspace()).value.name == "Acme Labs"
        assert len(session.cache.requests.request_times(0)) == before + 3


async def test_a_key_is_made_shown_once_listed_and_revoked(
    served: tuple[str, str, Path], tmp_path: Path
) -> None:
    base_url, key, _ = served
    async with session_for(key, tmp_path / "c.db", server=base_url) as session:
        api = AdminApi(session.client)
        made = (await api.create_key("ci", ["issues:read"], expires_in_days=1)).value
        assert made.key is not None and made.key.startswith("trk_")
        assert made.key not in repr(made) and made.key not in str(made)
        assert made.permissions == ["issues:read"] and made.expires_at is not None
        listed = {k.id: k for k in await api.list_keys()}
        assert listed[made.id].key is None and not listed[made.id].revoked
        async with session_for(made.key, tmp_path / "ci.db", server=base_url) as reader:
            assert (await reader.client.me()).value.permissions == ["issues:read"]
            with pytest.raises(Forbidden) as refused:
                await AdminApi(reader.client).list_keys()
            assert refused.value.permission == "admin"
            revoked = (await api.revoke_key(made.id)).value
            assert revoked is not None and revoked.revoked
            with pytest.raises(Unauthorized, match="revoked"):
                await reader.client.list_issues(per_page=1)


async def test_a_webhook_is_registered_changed_and_lists_its_delivery_attempts(
    served: tuple[str, str, Path], tmp_path: Path
) -> None:
    """Signed deliveries to a receiver are the command line's test (tests/cli); here the
    receiver is the discard port, so the attempt fails and says why."""
    base_url, key, _ = served
    async with session_for(key, tmp_path / "c.db", server=base_url) as session:
        api = AdminApi(session.client)
        made = (await api.create_webhook(DISCARD, ["issue.created"])).value
        assert made.secret is not None and made.secret not in repr(await api.get_webhook(made.id))
        assert [hook.id for hook in await api.list_webhooks()] == [made.id]
        await session.client.create_issue({"title": "Hooked"})
        attempts = []
        for _ in range(200):
            attempts = await api.deliveries(made.id)
            if attempts and attempts[0].status != "pending":
                break
            await asyncio.sleep(0.05)
        assert attempts[0].event_type == "issue.created"
        assert attempts[0].status in {"retrying", "failed"} and attempts[0].response_code is None
        assert attempts[0].error
        with pytest.raises(Unsupported, match="cannot redeliver"):
            await api.redeliver(made.id, attempts[0].event_id or "")
        changed = (await api.update_webhook(made.id, {"events": ["*"]})).value
        assert changed.events == ["*"] and changed.secret is None
        await api.delete_webhook(made.id)
        assert await api.list_webhooks() == []
        with pytest.raises(NotFound):
            await api.redeliver(made.id, "evt_1")
