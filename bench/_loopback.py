"""For peers that resolve names themselves (reader, requests, rss2email): ``*.test`` → 127.0.0.1.

The equivalent of our ``FAIRFETCH_RESOLVE``, so every contender's traffic stays on loopback. Any
other name is refused rather than resolved (our perimeter refuses it too): a peer that followed
a link off the testbed would otherwise reach the real network.
"""

from __future__ import annotations

import ipaddress
import socket


def _on_loopback(host: str | None) -> bool:
    if host is None or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def patch_resolver() -> None:
    real = socket.getaddrinfo

    def fake(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if isinstance(host, str) and host.rstrip(".").endswith(".test"):
            host = "127.0.0.1"
        elif not _on_loopback(host):
            raise socket.gaierror(socket.EAI_NONAME, f"bench: {host!r} is not on loopback")
        return real(host, *args, **kwargs)

    socket.getaddrinfo = fake  # type: ignore[assignment]


def warm(port: int, urls: list[str]) -> None:
    """Fetch every feed once from the testbed on ``port`` (the Host header names the feed's
    host), so its render cache is warm before the first contender: otherwise the first one
    measured (ours) pays the rendering alone."""
    import urllib.parse
    import urllib.request

    for u in urls:
        parts = urllib.parse.urlsplit(u)
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}{parts.path}", headers={"Host": parts.netloc}
        )
        with urllib.request.urlopen(req) as resp:  # loopback only
            resp.read()
