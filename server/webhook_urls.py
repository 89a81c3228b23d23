"""Which URLs the service will deliver webhooks to.

A webhook makes the service send requests on a client's behalf, so an unchecked URL would let
anyone with ``webhooks:manage`` probe or poke the service's own network (server-side request
forgery). By default only loopback receivers are allowed, which is what a reference service run
on a developer's machine needs; ``allow_private`` lifts the host restriction for deployments
that trust their users.

Hosts are checked by resolving them exactly as the HTTP client will, and every address a name
resolves to must be loopback: a name with one public and one loopback address, a numeric form
such as ``2130706433``, or an IPv4-mapped IPv6 address are all judged by where they lead. The
dispatcher checks again before each attempt, so a name that later starts resolving elsewhere is
caught then; a change of DNS answer in the instant between that check and the connection is not.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import httpx

ALLOWED_SCHEMES = frozenset({"http", "https"})


class WebhookURLError(ValueError):
    """A webhook URL the service refuses to call; the message says why, for the API caller."""


def check_webhook_url(url: str, *, allow_private: bool = False) -> None:
    """Raise :class:`WebhookURLError` unless the service may deliver webhooks to ``url``."""
    try:
        parts = urlsplit(url)
        port = parts.port
        httpx.URL(url)  # what the dispatcher will send to; control characters fail here
    except (ValueError, httpx.InvalidURL) as exc:
        reason = str(exc).rstrip(".")
        raise WebhookURLError(f"webhook URL {url!r} is malformed: {reason}") from None
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        raise WebhookURLError(
            f"webhook URL {url!r} must use http or https, not {parts.scheme or 'no scheme'!r}"
        )
    host = parts.hostname
    if not host:
        raise WebhookURLError(f"webhook URL {url!r} has no host")
    if allow_private:
        return
    for address in _resolve(host, port):
        if not _is_loopback(address):
            raise WebhookURLError(
                f"webhook URL host {host!r} leads to {address}, which is not a loopback"
                " address; this server delivers webhooks to loopback receivers only"
            )


def _resolve(host: str, port: int | None) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise WebhookURLError(f"webhook URL host {host!r} does not resolve: {exc}") from None
    return [ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in infos]


def _is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback
