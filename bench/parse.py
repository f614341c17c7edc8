"""Parse speed and field agreement: parse_feed next to feedparser and fastfeedparser.

Same corpus, same run, ratios printed (absolute times are noise on shared machines).

    .venv/bin/python bench/parse.py [--feeds N] [--items N] [--repeat N]

Every parser is timed the same way (best of --repeat over the whole corpus), and the entries it
returned are counted: a parser that reads fewer entries than the corpus holds is flagged, as is
a small feed it fails (feedparser 6 reads no JSON Feed), since its time is then over less work.

Speed corpus: generated content-heavy RSS 2.0 and Atom 1.0 feeds (long HTML bodies in
content:encoded / atom:content, as blogs and newsletters ship them). Small feeds: the testbed's
own renderings (RSS blog, Atom, JSON Feed, RSS 1.0, newsletter, podcast; 10 entries, 5-10 KB),
where the fixed cost of each call dominates, as it does for the crawler's real feeds.
Agreement: every field both model (titles, links, ids, dates, authors, enclosures, categories),
against feedparser, on the speed corpus and on tests/data/feeds/agreement/ (many small feeds of
every XML format).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "feeds"))
sys.path.insert(0, str(ROOT / "src"))

import feedparser  # noqa: E402
from agreement import (  # noqa: E402
    Agreement,
    compare,
    fastfeedparser_view,
    feedparser_view,
    ours,
)

from fairfetch.feeds import parse_feed  # noqa: E402

try:
    import fastfeedparser
except ImportError:  # bench extra not installed
    fastfeedparser = None

WORDS = [
    'the', 'of', 'and', 'to', 'in', 'is', 'that', 'for', 'it', 'as', 'with', 'was', 'on', 'be',
    'at', 'by', 'this', 'had', 'not', 'are', 'but', 'from', 'or', 'have', 'an', 'they',
    'which', 'one', 'you', 'were', 'her', 'all', 'she', 'there', 'would', 'their', 'we', 'him',
    'been', 'has', 'when', 'who', 'will', 'more', 'no', 'if', 'out', 'so', 'said', 'what',
    'up', 'its', 'about', 'into', 'than', 'them', 'can', 'only', 'other', 'new', 'some',
    'could', 'time', 'these', 'two', 'may', 'then', 'do', 'first', 'any', 'my', 'now', 'such',
    'like', 'our', 'over', 'man', 'me', 'even', 'most', 'café', 'naïve', 'résumé', '—',
    '“quoted”', '日本語',
]


def _para(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _html(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        p = f"<p>{_para(rng, 60)} <a href=\"https://example.com/{rng.randrange(10**6)}\">link</a>" \
            f" <em>{_para(rng, 5)}</em></p>\n"
        if rng.random() < 0.1:
            p += f'<figure><img src="https://cdn.example.com/{rng.randrange(10**6)}.jpg" ' \
                 f'alt="{_para(rng, 3)}"/></figure>\n'
        parts.append(p)
        total += len(p)
    return "".join(parts)


def _date(rng: random.Random) -> time.struct_time:
    return time.gmtime(1_500_000_000 + rng.randrange(200_000_000))


def content_rss(rng: random.Random, n: int, items: int, body: int) -> bytes:
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" '
           'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">',
           "<channel>", f"<title>Blog {n}: {_para(rng, 3)}</title>",
           f"<link>https://blog{n}.example.com/</link>",
           f"<description>{escape(_para(rng, 12))}</description>",
           f'<atom:link rel="self" href="https://blog{n}.example.com/feed"/>',
           "<generator>WordPress 6.4</generator>"]
    for i in range(items):
        link = f"https://blog{n}.example.com/{i}/{rng.randrange(10**6)}"
        out += ["<item>", f"<title>{escape(_para(rng, 8))}</title>", f"<link>{link}</link>",
                f"<dc:creator><![CDATA[{rng.choice(['Ann Lee', 'Bo Park', 'Cy Vance'])}]]>"
                "</dc:creator>",
                f"<pubDate>{time.strftime('%a, %d %b %Y %H:%M:%S +0000', _date(rng))}</pubDate>",
                f"<category><![CDATA[{rng.choice(['News', 'Tech', 'Life'])}]]></category>",
                f'<guid isPermaLink="false">https://blog{n}.example.com/?p={i}</guid>',
                f"<description><![CDATA[{_para(rng, 40)} [&#8230;]]]></description>",
                f"<content:encoded><![CDATA[{_html(rng, body)}]]></content:encoded>"]
        if rng.random() < 0.2:
            out.append(f'<enclosure url="https://cdn.example.com/{n}/{i}.mp3" '
                       f'length="{rng.randrange(10**8)}" type="audio/mpeg"/>')
        out.append("</item>")
    out += ["</channel>", "</rss>"]
    return "\n".join(out).encode("utf-8")


def content_atom(rng: random.Random, n: int, items: int, body: int) -> bytes:
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           '<feed xmlns="http://www.w3.org/2005/Atom">',
           f"<title>Atom blog {n}</title>",
           f'<link rel="alternate" type="text/html" href="https://atom{n}.example.com/"/>',
           f'<link rel="self" href="https://atom{n}.example.com/atom.xml"/>',
           f"<id>https://atom{n}.example.com/</id>",
           f"<updated>{time.strftime('%Y-%m-%dT%H:%M:%SZ', _date(rng))}</updated>"]
    for i in range(items):
        out += ["<entry>", f"<title>{escape(_para(rng, 8))}</title>",
                f'<link rel="alternate" type="text/html" href="https://atom{n}.example.com/{i}"/>',
                f"<id>tag:atom{n}.example.com,2020:{i}</id>",
                f"<published>{time.strftime('%Y-%m-%dT%H:%M:%SZ', _date(rng))}</published>",
                f"<updated>{time.strftime('%Y-%m-%dT%H:%M:%S+02:00', _date(rng))}</updated>",
                f"<author><name>{rng.choice(['Ann Lee', 'Bo Park'])}</name></author>",
                f'<category term="{rng.choice(["News", "Tech"])}"/>',
                f'<summary type="html">{escape(_para(rng, 30))}</summary>',
                f'<content type="html">{escape(_html(rng, body))}</content>', "</entry>"]
    out.append("</feed>")
    return "\n".join(out).encode("utf-8")


def corpus(feeds: int, items: int, body: int) -> list[bytes]:
    rng = random.Random(42)
    docs = []
    for n in range(feeds):
        make = content_rss if n % 2 == 0 else content_atom
        docs.append(make(rng, n, items, body))
    return docs


def _pure_python_fastfeedparser(data: bytes) -> Any:
    """fastfeedparser with its compiled core (Rust, quick-xml) switched off: the same package's
    lxml path, the one a pure Python + lxml parser can be compared with like for like."""
    core = fastfeedparser.main._core
    fastfeedparser.main._core = None
    try:
        return fastfeedparser.parse(data)
    finally:
        fastfeedparser.main._core = core


def _time(fn: Callable[[bytes], Any], docs: list[bytes], repeat: int) -> tuple[float, int]:
    best = float("inf")
    entries = 0
    for _ in range(repeat):
        start = time.perf_counter()
        entries = 0
        for d in docs:
            result = fn(d)
            entries += len(result.entries if hasattr(result, "entries") else result["entries"])
        best = min(best, time.perf_counter() - start)
    return best, entries


def small_corpus() -> list[tuple[str, bytes, str, dict[str, str]]]:
    """One testbed feed of each (format, kind, platform), 10 entries, as the testbed serves it:
    (label, body, url, headers)."""
    from fairfetch.testbed.catalog import build_sites
    from fairfetch.testbed.options import TestbedOptions
    from fairfetch.testbed.render import entries_at, render_feed

    out = []
    seen = set()
    for host, site in sorted(build_sites(7, TestbedOptions()).items()):
        key = (site.format, site.kind, site.platform)
        if site.format is None or key in seen:
            continue
        seen.add(key)
        base = f"http://{host}:8080"
        r = render_feed(site, base, site.feed_path, entries_at(7, site, 1.7e9, 30, 10))
        label = "/".join(str(k) for k in key if k)
        out.append((label, r.body, base + site.feed_path,
                    {"content-type": r.content_type, "etag": r.etag}))
    return out


def _small(parsers: list[tuple[str, Callable[..., Any]]], rounds: int) -> None:
    docs = small_corpus()
    print(f"\nsmall feeds (testbed renderings, 10 entries): microseconds per document, best of "
          f"{rounds} rounds; '!' = the parser read fewer than the 10 entries (a failure, timed)")
    print(f"{'feed':<26}{'bytes':>7}" + "".join(f"{n:>16}" for n, _ in parsers))
    times: dict[str, list[float]] = {n: [] for n, _ in parsers}
    read_by_all: list[bool] = []
    for label, body, url, headers in docs:
        row = f"{label:<26}{len(body):>7}"
        everyone = True
        for name, fn in parsers:
            call = (partial(fn, body, url=url, headers=headers) if name == "parse_feed"
                    else partial(fn, body))
            result = call()
            got = len(result.entries if hasattr(result, "entries") else result["entries"])
            n = 20 if name == "feedparser" else 200
            best = float("inf")
            for _ in range(rounds):
                start = time.perf_counter()
                for _ in range(n):
                    call()
                best = min(best, (time.perf_counter() - start) / n)
            times[name].append(best)
            everyone = everyone and got >= 10
            row += f"{best * 1e6:>15.0f}" + (" " if got >= 10 else "!")
        read_by_all.append(everyone)
        print(row)
    common = sum(read_by_all)
    print(f"{'mean':<33}" + "".join(f"{sum(times[n]) / len(docs) * 1e6:>16.0f}"
                                     for n, _ in parsers))
    if common < len(docs):
        kept = {n: [t for t, ok in zip(times[n], read_by_all, strict=True) if ok] for n in times}
        print(f"{f'mean of the {common} read by all':<33}" + "".join(
            f"{sum(kept[n]) / common * 1e6:>16.0f}" for n, _ in parsers))


def _agreement(docs: list[bytes], which: str) -> Agreement:
    total = Agreement()
    for d in docs:
        reference = feedparser_view(feedparser.parse(d))
        if which == "ours":
            view = ours(parse_feed(d))
        else:
            try:
                view = fastfeedparser_view(fastfeedparser.parse(d))
            except Exception:
                view = {"feed": {"title": None, "link": None}, "entries": []}
        total.add(compare(view, reference))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feeds", type=int, default=20)
    ap.add_argument("--items", type=int, default=30)
    ap.add_argument("--body", type=int, default=12_000, help="bytes of HTML per entry")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--small-rounds", type=int, default=5,
                    help="rounds for the small-feed table (0: skip it)")
    args = ap.parse_args()

    docs = corpus(args.feeds, args.items, args.body)
    mb = sum(map(len, docs)) / 1e6
    print(f"speed corpus: {len(docs)} content-heavy feeds (RSS 2.0 + Atom 1.0), "
          f"{args.items} entries each, {mb:.1f} MB")

    parsers: list[tuple[str, Callable[[bytes], Any]]] = [("parse_feed", parse_feed)]
    if fastfeedparser is not None:
        parsers.append(("fastfeedparser", fastfeedparser.parse))
        if getattr(fastfeedparser.main, "_core", None) is not None:
            parsers.append(("ffp (pure Py)", _pure_python_fastfeedparser))
    parsers.append(("feedparser", feedparser.parse))
    results: dict[str, tuple[float, int]] = {}
    for name, fn in parsers:
        # Every parser the same way: best of --repeat. (feedparser used to be timed once, its
        # first and coldest pass, against the best of 3 of the others.)
        results[name] = _time(fn, docs, args.repeat)

    base_t = results["feedparser"][0]
    expected = args.feeds * args.items
    print(f"\n{'parser':<16}{'MB/s':>10}{'entries/s':>12}{'x feedparser':>14}{'entries':>9}"
          f"   (best of {args.repeat})")
    for name, (t, n) in results.items():
        flag = "" if n == expected else f"  NOT {expected}: its speed is over less work"
        print(f"{name:<16}{mb / t:>10.1f}{n / t:>12.0f}{base_t / t:>14.1f}{n:>9}{flag}")
    if "fastfeedparser" in results:
        ratio = results["fastfeedparser"][0] / results["parse_feed"][0]
        print(f"\nparse_feed / fastfeedparser speed ratio: {ratio:.2f}x")
    if "ffp (pure Py)" in results:
        ratio = results["ffp (pure Py)"][0] / results["parse_feed"][0]
        print(f"parse_feed / fastfeedparser without its Rust core (its lxml path): {ratio:.2f}x")

    if args.small_rounds:
        _small(parsers, args.small_rounds)

    small = [p.read_bytes() for p in sorted(
        (ROOT / "tests" / "data" / "feeds" / "agreement").glob("*.xml"))]
    print("\nfield agreement with feedparser (titles, links, ids, dates, authors, enclosures, "
          "categories):")
    for label, set_ in (("speed corpus", docs), (f"agreement corpus ({len(small)} feeds)", small)):
        for which in ("ours", "fastfeedparser") if fastfeedparser else ("ours",):
            a = _agreement(set_, which)
            name = "parse_feed" if which == "ours" else which
            extra = f", {a.derived} derived by contract" if a.derived else ""
            print(f"  {label:<30} {name:<16} {100 * a.ratio:6.2f}%  "
                  f"({a.agree}/{a.total}{extra})")


if __name__ == "__main__":
    main()
