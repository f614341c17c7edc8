"""Knobs of the simulated web. Every default is what the tests, demo and benchmarks expect."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["TestbedOptions"]


@dataclass(frozen=True)
class TestbedOptions:
    __test__ = False

    #: Blogs ``blogN.test`` (every 10th under the shared host ``blogN.blogs.test``, every 10th
    #: + 1 at ``www.blogN.test``); RSS 2.0 and Atom 1.0 mixed.
    blogs: int = 2000
    #: Letterbox newsletters at ``<name>.letterbox.test``.
    letterbox: int = 220
    #: Letterbox newsletters on custom domains ``<name>-news.test`` (same backend, same limit).
    letterbox_custom: int = 20
    #: Podcasts ``podN.test`` (plus one declared show with no episodes, ``pod-empty.test``).
    podcasts: int = 200
    #: Feeds that publish every ``growing_period`` seconds of testbed time: ``growingN.test``.
    growing: int = 50
    growing_period: float = 600.0
    #: Copies of each edge-case behaviour (redirects, errors, bombs, …): ``<behaviour>-<i>.test``.
    edge_copies: int = 3
    #: Entries shown in a feed (the newest ones).
    items: int = 10

    #: Letterbox's platform-wide token bucket: requests per second and burst, across every
    #: Letterbox hostname and custom domain.
    letterbox_rate: float = 20.0
    letterbox_burst: int = 40
    #: Seconds announced in Retry-After on a 429 (both as delay-seconds and as an HTTP-date).
    letterbox_retry_after: int = 60

    #: Testbed clock start (epoch seconds); None: midnight UTC today.
    start: float | None = None
    #: Let the testbed clock also tick with the wall clock (the ``fairfetch testbed`` command).
    realtime: bool = False

    #: Seconds every answer of a virtual host waits before it starts: the round trip and server
    #: time a real site has. 0 (the default) measures the crawler's own cost; a realistic value
    #: (e.g. 0.05) shows what concurrency buys.
    latency: float = 0.0

    #: Seconds between bytes of the slow drip.
    drip_interval: float = 0.5
    #: Inflated size of the gzip bomb (compressed it is ~1/1000 of this).
    gzip_bomb_bytes: int = 1 << 30
    #: Size of the huge (but honest) feed body.
    huge_body_bytes: int = 11 * 1024 * 1024

    def __post_init__(self) -> None:
        # Refused here, naming the option: NaN passes every "< 0" check and then stalls or
        # breaks the server far from where it was given (a NaN latency held every answer).
        for name in ("latency", "drip_interval", "letterbox_rate", "growing_period"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number of at least 0, not {value!r}")
