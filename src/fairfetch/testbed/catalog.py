"""Which virtual hosts exist and what each one does: a pure function of (seed, options).

A :class:`Site` is the server-side description of one virtual host; a :class:`FeedSpec` is what a
test, the demo or a benchmark is told about the feed it serves (its URL, its behaviour, and what a
correct crawler should end up with).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fairfetch.testbed.names import person, rng, title, word
from fairfetch.testbed.options import TestbedOptions

__all__ = ["EDGE_BEHAVIOURS", "FeedSpec", "Site", "build_sites"]

DAY = 86400.0


@dataclass(frozen=True)
class FeedSpec:
    """One feed of the catalogue.

    ``expect`` is what a correct fetch of ``url`` ends with: ``"ok"``, ``"throttled"`` (429 or
    503 + Retry-After) or an error kind of :data:`fairfetch.net.outcome.ERROR_KINDS`.
    ``final_url`` is where the feed really lives (after redirects, a declared
    ``itunes:new-feed-url`` move or HTML discovery); ``None`` when nothing is found there.
    ``period``: advance the testbed clock by this many seconds and at least one new entry appears.
    ``hint``: the interval, in seconds, the publisher hints (``<ttl>``, ``sy:``, max-age).
    """

    url: str
    behaviour: str
    kind: str | None
    host: str
    platform: str | None = None
    format: str | None = None
    title: str | None = None
    period: float | None = None
    expect: str = "ok"
    final_url: str | None = None
    hint: float | None = None


@dataclass(frozen=True)
class Site:
    host: str
    behaviour: str
    kind: str | None
    feed_path: str
    format: str | None = "rss20"
    platform: str | None = None
    title: str = ""
    author: str = ""
    email: str = ""
    period: float = DAY
    phase: float = 0.0
    expect: str = "ok"
    final_path: str | None = None
    hint: float | None = None
    etag: bool = True
    last_modified: bool = True

    def spec(self, base: str) -> FeedSpec:
        """The catalogue entry, ``base`` being ``http://host:port``."""
        return FeedSpec(
            url=base + self.feed_path,
            behaviour=self.behaviour,
            kind=self.kind,
            host=self.host,
            platform=self.platform,
            format=self.format,
            title=self.title or None,
            period=self.period if self.expect == "ok" and self.kind else None,
            expect=self.expect,
            final_url=(base + self.final_path) if self.final_path else None,
            hint=self.hint,
        )


#: behaviour -> (expected kind, expect, feed path, final path, format, hint)
EDGE_BEHAVIOURS: dict[str, tuple[str | None, str, str, str | None, str | None, float | None]] = {
    "redirect-301": ("blog", "ok", "/feed", "/feed-new", "rss20", None),
    "redirect-308": ("blog", "ok", "/feed", "/feed-new", "atom10", None),
    "redirect-302": ("blog", "ok", "/feed", "/feed-new", "rss20", None),
    "redirect-307": ("blog", "ok", "/feed", "/feed-new", "atom10", None),
    "redirect-chain": ("blog", "ok", "/feed", "/hop/3", "rss20", None),
    "redirect-loop": (None, "redirect", "/feed", None, None, None),
    "redirect-long": (None, "redirect", "/feed", None, None, None),
    "new-feed-url": ("podcast", "ok", "/feed", "/moved-feed", "rss20", None),
    "status-404": (None, "http", "/feed", None, None, None),
    "status-410": (None, "gone", "/feed", None, None, None),
    "status-500": (None, "http", "/feed", None, None, None),
    "status-503": (None, "http", "/feed", None, None, None),
    "status-503-retry": (None, "throttled", "/feed", None, None, None),
    "blocked-403": (None, "blocked", "/feed", None, None, None),
    "slow-drip": (None, "timeout", "/feed", None, None, None),
    "no-answer": (None, "timeout", "/feed", None, None, None),
    "gzip-bomb": (None, "too_large", "/feed", None, None, None),
    "huge-body": (None, "too_large", "/feed", None, "rss20", None),
    "malformed": ("blog", "ok", "/feed", "/feed", "rss20", None),
    "mis-encoded": ("blog", "ok", "/feed", "/feed", "rss20", None),
    "entity-bomb": ("blog", "ok", "/feed", "/feed", "rss20", None),
    "html-page": (None, "not_a_feed", "/feed", None, None, None),
    "html-discovery": ("blog", "not_a_feed", "/", "/feed.xml", "rss20", None),
    "hint-ttl": ("blog", "ok", "/feed", "/feed", "rss20", 7200.0),
    "hint-sy": ("blog", "ok", "/feed", "/feed", "rss20", 1800.0),
    "hint-max-age": ("blog", "ok", "/feed", "/feed", "rss20", 7200.0),
    "robots-disallow": ("blog", "robots", "/feed", "/feed", "rss20", None),
    "robots-crawl-delay": ("blog", "ok", "/feed", "/feed", "rss20", None),
}

#: Redirect hops of the long chain: over the cap of 10.
LONG_CHAIN = 11


def _unique_names(seed: int, count: int, salt: str) -> list[str]:
    r = rng(seed, salt)
    seen: set[str] = set()
    names: list[str] = []
    while len(names) < count:
        name = word(r, r.randint(2, 3))
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


_FEED_PATHS = {"rss20": "/feed.xml", "atom10": "/atom.xml", "json11": "/feed.json",
               "rss10": "/index.rdf"}


def _blog_host(n: int) -> str:
    if n % 10 == 0:
        return f"blog{n}.blogs.test"
    if n % 10 == 1:
        return f"www.blog{n}.test"
    return f"blog{n}.test"


def build_sites(seed: int, options: TestbedOptions) -> dict[str, Site]:
    """Every virtual host of the testbed, by hostname, in catalogue order."""
    sites: dict[str, Site] = {}

    def add(site: Site) -> None:
        sites[site.host] = site

    for n in range(options.blogs):
        host = _blog_host(n)
        r = rng(seed, "blog", n)
        fmt = "atom10" if r.random() < 0.4 else "rss20"
        if n % 25 == 7:
            fmt = "json11"
        elif n % 25 == 13:
            fmt = "rss10"
        variant = ("blog", "blog", "blog", "blog", "blog", "blog-etag-only",
                   "blog-lastmod-only", "blog-no-validators")[n % 8]
        period = r.choice((6 * 3600.0, DAY, 2 * DAY, 3 * DAY, 7 * DAY))
        add(Site(
            host=host, behaviour=variant, kind="blog",
            feed_path=_FEED_PATHS[fmt], format=fmt,
            title=title(r), author=person(r), email=f"editor@{host}", period=period,
            phase=r.uniform(0, period),
            etag=variant in ("blog", "blog-etag-only"),
            last_modified=variant in ("blog", "blog-lastmod-only"),
        ))

    names = _unique_names(seed, options.letterbox + options.letterbox_custom, "letterbox")
    for i, name in enumerate(names):
        custom = i >= options.letterbox
        host = f"{name}-news.test" if custom else f"{name}.letterbox.test"
        r = rng(seed, "letterbox", name)
        period = r.choice((DAY, 3 * DAY, 7 * DAY))
        writer = person(r)
        add(Site(
            host=host, behaviour="letterbox-custom" if custom else "letterbox",
            kind="newsletter", feed_path="/feed", format="rss20", platform="letterbox",
            title=f"{writer.split()[0]}'s {title(r)}", author=writer,
            email=f"{name}@letterbox.test", period=period, phase=r.uniform(0, period),
        ))

    for n in range(options.podcasts):
        host = f"pod{n}.test"
        r = rng(seed, "podcast", n)
        period = 7 * DAY
        add(Site(
            host=host, behaviour="podcast", kind="podcast", feed_path="/podcast.xml",
            format="rss20", title=f"The {title(r)} Podcast", author=person(r),
            email=f"host@{host}", period=period, phase=r.uniform(0, period),
            hint=7 * DAY,  # podcast:updateFrequency FREQ=WEEKLY
        ))
    r = rng(seed, "podcast-empty")
    add(Site(
        host="pod-empty.test", behaviour="podcast-empty", kind="podcast",
        feed_path="/podcast.xml", format="rss20", title="Coming Soon: " + title(r),
        author=person(r), email="host@pod-empty.test", period=0.0,
    ))

    for n in range(options.growing):
        host = f"growing{n}.test"
        r = rng(seed, "growing", n)
        period = options.growing_period
        add(Site(
            host=host, behaviour="growing", kind="blog", feed_path="/feed.xml", format="rss20",
            title=title(r), author=person(r), email=f"news@{host}", period=period,
            phase=r.uniform(0, period),
        ))

    for behaviour, (kind, expect, path, final, edge_fmt, hint) in EDGE_BEHAVIOURS.items():
        for i in range(options.edge_copies):
            host = f"{behaviour}-{i}.test"
            r = rng(seed, behaviour, i)
            add(Site(
                host=host, behaviour=behaviour, kind=kind, feed_path=path, format=edge_fmt,
                title=title(r), author=person(r), email=f"owner@{host}", period=DAY,
                phase=r.uniform(0, DAY), expect=expect, final_path=final, hint=hint,
            ))
    return sites


def select(
    specs: Iterable[FeedSpec], n: int | None = None, behaviours: Iterable[str] | None = None
) -> list[FeedSpec]:
    """The first ``n`` specs whose behaviour is one of ``behaviours`` (prefix ``x*`` allowed)."""
    if n is not None and n < 0:
        raise ValueError(f"n={n!r}: a count of feeds cannot be negative")
    wanted = list(behaviours) if behaviours is not None else None
    out: list[FeedSpec] = []
    if n == 0:
        return out
    for spec in specs:
        if wanted is not None and not any(
            spec.behaviour == w or (w.endswith("*") and spec.behaviour.startswith(w[:-1]))
            for w in wanted
        ):
            continue
        out.append(spec)
        if n is not None and len(out) >= n:
            break
    return out
