"""The live-updates webhook receiver, attacked over real loopback sockets.

It listens on loopback only; it wakes the app only for a delivery signed with the secret, signed
within five minutes of the server's time, and never seen before (whatever id the unsigned
header claims); it refuses bodies over the limit before reading them; and it answers each
connection at once, however slow another one is.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
import pytest

from sync.live import PATH, WebhookReceiver
from sync.webhook_verify import MAX_AGE, MAX_BODY, signature

SECRET = "whsec_receiver-security"
NOW = 1_800_000_000


@dataclass
class Receiving:
    """A receiver whose clock (the server's time as estimated) the test sets, and the wakes
    it has made."""

    now: list[float] = field(default_factory=lambda: [float(NOW)])
    woken: list[int] = field(default_factory=list)
    server: WebhookReceiver = field(init=False)

    def __post_init__(self) -> None:
        self.server = WebhookReceiver(
            SECRET, lambda: self.woken.append(1), clock=lambda: self.now[0]
        )


@pytest.fixture
async def receiving() -> AsyncIterator[Receiving]:
    state = Receiving()
    await state.server.start()
    yield state
    await state.server.stop()


def delivery(
    event_id: str, *, at: int = NOW, secret: str = SECRET, header_id: str | None = None
) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"id": event_id, "type": "issue.updated", "data": {"object": {}}}).encode()
    headers = {
        "Content-Type": "application/json",
        "X-Tracker-Event": "issue.updated",
        "X-Tracker-Delivery": event_id if header_id is None else header_id,
        "X-Tracker-Signature": signature(secret, at, body),
    }
    return body, headers


async def post(receiving: Receiving, body: bytes, headers: dict[str, str]) -> int:
    async with httpx.AsyncClient() as http:
        response = await http.post(receiving.server.url, content=body, headers=headers)
    return response.status_code


async def raw(url: str, request: bytes) -> bytes:
    """Send bytes as they are; the receiver's status line."""
    where = urlsplit(url)
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.readline(), 5)
    finally:
        writer.close()
        await writer.wait_closed()


def _local_non_loopback_address() -> str | None:
    """An address of this machine other than loopback, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if ipaddress.ip_address(address).is_loopback else address


async def test_it_listens_on_loopback_only(receiving: Receiving) -> None:
    server = receiving.server._server
    assert server is not None
    addresses = [ipaddress.ip_address(sock.getsockname()[0]) for sock in server.sockets]
    assert addresses and all(address.is_loopback for address in addresses)
    assert urlsplit(receiving.server.url).hostname == "127.0.0.1"
    port = urlsplit(receiving.server.url).port
    outside = _local_non_loopback_address()
    if outside is not None:
        with pytest.raises(OSError):
            await asyncio.wait_for(asyncio.open_connection(outside, port), 5)


def _forged() -> list[tuple[str, bytes, dict[str, str]]]:
    body, headers = delivery("evt_forged")
    good = headers["X-Tracker-Signature"]
    digest = good.split("v1=")[1]
    cases = [
        ("wrong secret", *delivery("evt_forged", secret="another secret")),
        ("tampered body", body.replace(b"updated", b"deleted"), headers),
        ("other timestamp", body, {**headers, "X-Tracker-Signature": f"t={NOW + 1},v1={digest}"}),
        ("upper-case digest", body, {**headers, "X-Tracker-Signature": good.upper()}),
        ("v0 scheme", body, {**headers, "X-Tracker-Signature": good.replace("v1=", "v0=")}),
        ("empty v1", body, {**headers, "X-Tracker-Signature": f"t={NOW},v1="}),
        ("no timestamp", body, {**headers, "X-Tracker-Signature": f"v1={digest}"}),
        ("negative time", body, {**headers, "X-Tracker-Signature": f"t=-{NOW},v1={digest}"}),
        ("garbage", body, {**headers, "X-Tracker-Signature": "=,=,,t,v1"}),
        ("truncated", body, {**headers, "X-Tracker-Signature": good[:-1]}),
        ("unsigned", body, {k: v for k, v in headers.items() if k != "X-Tracker-Signature"}),
    ]
    return cases


@pytest.mark.parametrize(("label", "body", "headers"), _forged(), ids=lambda v: str(v)[:20])
async def test_bad_signatures_are_refused(
    receiving: Receiving, label: str, body: bytes, headers: dict[str, str]
) -> None:
    assert await post(receiving, body, headers) == 401, label
    assert receiving.woken == []
    assert receiving.server.stats.refused == 1


async def test_stale_and_future_timestamps_are_refused_on_the_servers_clock(
    receiving: Receiving,
) -> None:
    limit = int(MAX_AGE)
    for number, (offset, expected) in enumerate(
        [(-limit - 1, 401), (limit + 1, 401), (-limit, 200), (limit, 200), (-86_400, 401)]
    ):
        body, headers = delivery(f"evt_age_{number}", at=NOW + offset)
        assert await post(receiving, body, headers) == expected, offset
    assert receiving.woken == [1, 1]


async def test_replays_never_wake_twice(receiving: Receiving) -> None:
    body, headers = delivery("evt_once")
    assert await post(receiving, body, headers) == 200
    assert await post(receiving, body, headers) == 200
    receiving.now[0] += 60
    resigned = delivery("evt_once", at=NOW + 60)
    assert await post(receiving, *resigned) == 200
    relabelled = {**headers, "X-Tracker-Delivery": "evt_fresh"}
    assert await post(receiving, body, relabelled) == 400
    receiving.now[0] += MAX_AGE
    assert await post(receiving, body, headers) == 401
    assert receiving.woken == [1]
    assert receiving.server.stats.duplicates == 2


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[]", b'{"type": "issue.updated"}', b'{"id": 5}', b'{"id": ""}'],
)
async def test_a_signed_body_without_its_event_id_is_refused(
    receiving: Receiving, body: bytes
) -> None:
    headers = {"X-Tracker-Delivery": "evt_x", "X-Tracker-Signature": signature(SECRET, NOW, body)}
    assert await post(receiving, body, headers) == 400
    assert receiving.woken == []


@pytest.mark.parametrize(
    ("length", "status"),
    [
        (str(MAX_BODY + 1), b"413"),
        ("9" * 5000, b"413"),
        ("-1", b"400"),
        ("+5", b"400"),
        ("1_0", b"400"),
        ("abc", b"400"),
    ],
)
async def test_oversized_or_odd_lengths_are_refused_before_the_body_is_read(
    receiving: Receiving, length: str, status: bytes
) -> None:
    head = f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()
    line = await raw(receiving.server.url, head)
    assert line.split()[1] == status, line
    assert receiving.woken == []


async def test_malformed_requests_are_refused(receiving: Receiving) -> None:
    url = receiving.server.url
    chunked = f"POST {PATH} HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    assert (await raw(url, chunked.encode())).split()[1] == b"411"
    huge_header = f"POST {PATH} HTTP/1.1\r\nX-Big: {'a' * 100_000}\r\n\r\n"
    assert (await raw(url, huge_header.encode())).split()[1] == b"400"
    many = f"POST {PATH} HTTP/1.1\r\n" + "X-A: b\r\n" * 200 + "\r\n"
    assert (await raw(url, many.encode())).split()[1] == b"400"
    assert (await raw(url, b"\xff\xfe\r\n\r\n")).split()[1] == b"400"
    assert receiving.woken == []


async def test_it_answers_at_once_while_another_connection_stalls(receiving: Receiving) -> None:
    where = urlsplit(receiving.server.url)
    stalled = []
    for _ in range(20):
        _, writer = await asyncio.open_connection(where.hostname, where.port)
        writer.write(f"POST {PATH} HTTP/1.1\r\nContent-Length: 10\r\n\r\n{{".encode())
        await writer.drain()
        stalled.append(writer)
    try:
        body, headers = delivery("evt_meanwhile")
        async with httpx.AsyncClient(timeout=3) as http:
            response = await http.post(receiving.server.url, content=body, headers=headers)
        assert response.status_code == 200
        assert receiving.woken == [1]
    finally:
        for writer in stalled:
            writer.close()
