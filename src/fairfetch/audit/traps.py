"""Crawler traps: internal URLs the site crawl does not follow, each with a named reason.

A site can hold infinitely many URLs that answer 200: a soft-404 server behind a broken
relative link (``href="blog/"`` on /blog/ makes /blog/blog/, /blog/blog/blog/, ...), links
that grow a parameter at every hop, URLs that only grow. Without a defence a crawl without
``--max-pages`` never ends on such a site, and with one it spends its pages on the trap. SEO
crawlers limit URL length, repeated path segments and query parameters, and say what they
skipped: so does the audit (``links_skipped`` in the crawl file, rule ``link-to-crawler-trap``).

The decision reads the URL alone, not the page it was found on: the same URL is skipped
however (and in whatever order) it is reached, and the rules can ask again later with the
limits the crawl used (``meta.trap_limits``) instead of the crawl file storing every skipped
URL. It runs once per newly seen internal URL (not per link row): a URL with nothing odd
about it leaves after a length test, a count of ``?``/``&`` and one set of its segments.

Not judged here, on purpose: a pager (``?page=2`` ... ``?page=N``) or a calendar (``?month=``
for ever) looks the same URL by URL as a real one, and skipping it would drop real pages of
real sites; ``--max-depth``/``--max-pages`` bound those.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

__all__ = [
    "MAX_RUN",
    "NUMBER",
    "REASONS",
    "TrapLimits",
    "describe",
    "repeated_run",
    "trap_reason",
]

#: Every reason, in the order they are tested (a URL gets the first that applies).
REASONS = ("url_too_long", "repeated_path_segment", "too_many_parameters")


@dataclass(frozen=True, slots=True)
class TrapLimits:
    """What makes an internal URL a trap. ``None`` turns a test off."""

    #: Characters of the whole normalised URL (browsers and search engines stop around 2,000;
    #: the sitemaps protocol allows 2,048).
    max_url_length: int | None = 2000
    #: The same path segment, or the same run of segments, this many times in a row
    #: (/a/a/a/, /a/b/a/b/a/b/). Twice is left alone: /a/a/ happens on real sites.
    max_segment_repeats: int | None = 3
    #: Query parameters (``&``-separated, empty ones not counted) over this many.
    max_parameters: int | None = 10

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> TrapLimits:
        """The limits a crawl file's ``meta.trap_limits`` holds; the defaults for a file
        written before the limits were recorded (or holding something unreadable)."""
        if not text:
            return cls()
        try:
            raw = json.loads(text)
        except ValueError:
            return cls()
        if not isinstance(raw, dict):
            return cls()
        values: dict[str, int | None] = {}
        for name in ("max_url_length", "max_segment_repeats", "max_parameters"):
            if name in raw:
                v = raw[name]
                if v is None or (isinstance(v, int) and not isinstance(v, bool)):
                    values[name] = v
        return cls(**values)


def _path_and_query(url: str) -> tuple[str, str]:
    """Path and query of a normalised URL (``scheme://host[:port]/path[?query]``, no
    fragment: urls.normalize's spelling)."""
    start = url.find("/", url.find("//") + 2)
    if start < 0:
        return "/", ""
    q = url.find("?", start)
    if q < 0:
        return url[start:], ""
    return url[start:q], url[q + 1 :]


#: The longest run of segments looked for (a relative link's own segments, in practice one to
#: three). Bounds the work on a hostile path: a 2,000-character path of a thousand one-letter
#: segments that never repeats three times in a row (a Thue-Morse sequence) took 0.32 s with
#: every period tried by slices; at most 16 periods of one linear pass each, 1.2 ms. A longer
#: run repeated is left to the length limit.
MAX_RUN = 16


#: How a number stands in a run of segments whose numbers differ (a pager's spiral).
NUMBER = "N"


def repeated_run(path: str, times: int) -> tuple[str, ...] | None:
    """The first run of path segments (at most MAX_RUN long) that appears ``times`` times in
    a row, or None.

    Empty segments (``//``, a trailing ``/``) are not segments: /blog/blog/blog/ is "blog"
    three times. Shortest run first. A run of p segments repeated k times is (k - 1) * p
    segments in a row each equal to the one p places after it: one pass per period.

    A run holding a word and numbers also repeats when only its numbers differ: a theme's
    relative pager link (``href="page/3/"``) on a soft-404 server makes
    /blog/page/2/page/3/page/4/, "page/N" three times (with N for the numbers). Numbers alone
    never make such a run: /2026/12/01/ is a date, not a spiral; and words must repeat as
    they are: /tag/a/tag/b/tag/c is a facet path.
    """
    segs = [s for s in path.split("/") if s]
    n = len(segs)
    if times < 2 or n < times or len(set(segs)) == n:
        return None  # a run repeated needs at least one segment seen twice
    found = _run(segs, times)
    if found is not None:
        return found
    shape = [NUMBER if s.isdigit() else s for s in segs]
    if shape == segs:
        return None
    return _run(shape, times, needs_word=True)


def _run(segs: list[str], times: int, needs_word: bool = False) -> tuple[str, ...] | None:
    n = len(segs)
    for period in range(1, min(n // times, MAX_RUN) + 1):
        need = (times - 1) * period
        matched = 0
        for i in range(n - period):
            if segs[i] == segs[i + period]:
                matched += 1
                if matched == need:
                    start = i - need + 1
                    run = tuple(segs[start : start + period])
                    if not needs_word or any(s != NUMBER for s in run):
                        return run
                    matched -= 1  # numbers alone: look on (a longer run may hold a word)
            else:
                matched = 0
    return None


def _parameters(query: str) -> int:
    return sum(1 for part in query.split("&") if part)


def trap_reason(url: str, limits: TrapLimits) -> str | None:
    """Why the crawl must not follow this (normalised, internal) URL, or None to follow it."""
    max_len = limits.max_url_length
    if max_len is not None and len(url) > max_len:
        return "url_too_long"
    path, query = _path_and_query(url)
    repeats = limits.max_segment_repeats
    if repeats is not None and repeated_run(path, repeats) is not None:
        return "repeated_path_segment"
    max_params = limits.max_parameters
    # Cheap bound first: n parameters need n - 1 "&".
    if (
        max_params is not None
        and query
        and query.count("&") >= max_params
        and _parameters(query) > max_params
    ):
        return "too_many_parameters"
    return None


def _short(url: str, keep: int = 120) -> str:
    return url if len(url) <= keep else url[:keep] + "…"


def describe(url: str, reason: str, limits: TrapLimits) -> str:
    """What a person reads about a skipped URL (a finding's detail)."""
    path, query = _path_and_query(url)
    if reason == "url_too_long":
        return (
            f"URL of {len(url):,} characters, over {limits.max_url_length:,} "
            f"(url_too_long): {_short(url)}"
        )
    if reason == "repeated_path_segment":
        run = repeated_run(path, limits.max_segment_repeats or 2) or ()
        what = "/".join(run)
        return (
            f"relative link spiral: {_short(path)} ('{_short(what, 40)}' repeated "
            f"{limits.max_segment_repeats} times or more in a row: repeated_path_segment)"
        )
    if reason == "too_many_parameters":
        return (
            f"{_parameters(query)} query parameters, over {limits.max_parameters} "
            f"(too_many_parameters): {_short(url)}"
        )
    return f"{reason}: {_short(url)}"
