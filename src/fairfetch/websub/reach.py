"""Can a hub call us back? A pure decision on addresses.

A hub verifies a subscription by calling the callback built on ``public_url``. When that URL
names a loopback address (the default, ``http://127.0.0.1:8080``) or a private one, only a hub
on the same machine or the same private network can ever reach it: a public hub told to verify
there calls its own loopback, the subscription stays ``pending`` and is requested again every
hour, while the operator believes pushes are on. Such a hub is not asked; the feed is polled and
the reason says which setting to change.

A ``public_url`` that names a host by DNS name is trusted: we cannot know where it resolves for
the hub.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = ["callback_scope", "unreachable_callback"]


def _host_scope(host: str) -> str | None:
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return "loopback"  # RFC 6761: always the loopback interface
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return None  # a name
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if addr.is_loopback:
        return "loopback"
    return None if addr.is_global else "private"


def callback_scope(public_url: str) -> str | None:
    """``loopback``, ``private``, or None when hubs anywhere may reach ``public_url``."""
    try:
        host = urlsplit(public_url.strip()).hostname
    except ValueError:
        return None
    return _host_scope(host) if host else None


def unreachable_callback(
    public_url: str, hub_url: str, hub_addresses: Sequence[str]
) -> str | None:
    """Why the hub at ``hub_url`` (resolved to ``hub_addresses``) cannot reach callbacks on
    ``public_url``, or None when it may. A hub with no known address is taken to be elsewhere:
    every one of its addresses must be as near as the callback."""
    scope = callback_scope(public_url)
    if scope is None:
        return None
    scopes = [_host_scope(a) for a in hub_addresses]
    if scopes and all(s == "loopback" for s in scopes):
        return None  # on this machine: it reaches loopback and private callbacks alike
    if scope == "private" and scopes and all(s is not None for s in scopes):
        return None  # on a private network too (ours, we must assume)
    netloc = urlsplit(public_url.strip()).netloc
    hub = urlsplit(hub_url).hostname or hub_url
    where = "this machine" if scope == "loopback" else "a private network"
    return (
        f"public_url {netloc} is on {where}; the hub {hub} "
        f"({', '.join(hub_addresses) or 'address unknown'}) cannot call it back: "
        "set FAIRFETCH_PUBLIC_URL to an address the hub reaches (the feed is polled meanwhile)"
    )
