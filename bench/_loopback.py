"""For peers that resolve names themselves (reader, requests, rss2email): ``*.test`` → 127.0.0.1.

The equivalent of our ``FAIRFETCH_RESOLVE``, so every contender's traffic stays on loopback.
"""

from __future__ import annotations

import socket


def patch_resolver() -> None:
    real = socket.getaddrinfo

    def fake(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(host, str) and host.endswith(".test"):
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    socket.getaddrinfo = fake  # type: ignore[assignment]
