"""Crawler traps (audit/traps.py), the rule that reports them, and the view that finds the pages
linking to them: pure tests, and a crawl file written as a crawl writes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import CATALOGUE, Thresholds, run_rules
from fairfetch.audit.traps import MAX_RUN, TrapLimits, describe, repeated_run, trap_reason
from fairfetch.audit.urls import resolve_link
from fairfetch.audit.view import load_view
from fairfetch.config import Settings
from fairfetch.errors import InputError

from .conftest import BASE, crawl_file_of, good_page, site

LIMITS = TrapLimits()
S = "http://site.test"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/blog/blog/blog/", "repeated_path_segment"),
        ("/blog/blog/blog", "repeated_path_segment"),
        ("/x/blog/blog/blog/post", "repeated_path_segment"),
        ("/a/b/a/b/a/b/", "repeated_path_segment"),
        ("/a/b/c/a/b/c/a/b/c", "repeated_path_segment"),
        ("/blog//blog//blog/", "repeated_path_segment"),
        ("/page/page/page/2", "repeated_path_segment"),
        ("/s?" + "&".join(f"p{i}=1" for i in range(11)), "too_many_parameters"),
        ("/" + "x" * (2000 - len(S)), "url_too_long"),
        # the first reason that applies, in REASONS' order
        ("/a/a/a/" + "x" * 2000, "url_too_long"),
    ],
)
def test_audit_traps_skipped_with_reason(path: str, reason: str) -> None:
    assert trap_reason(S + path, LIMITS) == reason


@pytest.mark.parametrize(
    "path",
    [
        "/", "/blog/", "/blog/blog/", "/a/a/", "/2026/12/01/", "/2026/12/12/post",
        "/a/b/a/b/", "/a/b/a/c/a/b/", "/en/us/en/", "/page/2", "/list?page=999",
        "/cal?month=2027-01", "/s?" + "&".join(f"p{i}=1" for i in range(10)),
        "/s?a=1&&&&&&&&&&&&b=2",  # empty parameters are no parameters
        "/" + "x" * (2000 - len(S) - 1),  # 2,000 characters: at the limit, not over
        "/wiki/Talk:Blog/blog/Blog",  # a segment differs in case: no repeat
    ],
)
def test_audit_traps_ordinary_urls_followed(path: str) -> None:
    assert trap_reason(S + path, LIMITS) is None


def test_audit_traps_limits_turn_off_and_move() -> None:
    spiral = S + "/a/a/a/a/"
    assert trap_reason(spiral, TrapLimits(max_segment_repeats=None)) is None
    assert trap_reason(spiral, TrapLimits(max_segment_repeats=5)) is None
    assert trap_reason(spiral, TrapLimits(max_segment_repeats=4)) == "repeated_path_segment"
    assert trap_reason(S + "/a/a/", TrapLimits(max_segment_repeats=2)) == "repeated_path_segment"
    long = S + "/" + "y" * 5000
    assert trap_reason(long, TrapLimits(max_url_length=None)) is None
    assert trap_reason(S + "/abc", TrapLimits(max_url_length=10)) == "url_too_long"
    params = S + "/?a=1&b=2"
    assert trap_reason(params, TrapLimits(max_parameters=1)) == "too_many_parameters"
    assert trap_reason(params, TrapLimits(max_parameters=None)) is None
    assert trap_reason(S + "/?a=1", TrapLimits(max_parameters=0)) == "too_many_parameters"


def test_audit_traps_limits_round_trip_through_the_crawl_file_meta() -> None:
    limits = TrapLimits(max_url_length=None, max_segment_repeats=4, max_parameters=20)
    assert TrapLimits.from_json(limits.to_json()) == limits
    # A file written before the limits were recorded, or holding something else: defaults.
    for text in (None, "", "not json", "[1, 2]", '{"max_parameters": "many"}', '{"x": 1}'):
        assert TrapLimits.from_json(text) == TrapLimits()
    assert TrapLimits.from_json('{"max_parameters": 3}') == TrapLimits(max_parameters=3)


_SEGMENT = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789-_."), min_size=1, max_size=12
).filter(lambda s: s not in (".", ".."))


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.lists(_SEGMENT, max_size=4, unique=True),
    unit=st.lists(_SEGMENT, min_size=1, max_size=3),
    slash=st.booleans(),
)
def test_audit_traps_a_segment_appended_k_times_is_skipped_from_three_on(
    prefix: list[str], unit: list[str], slash: bool
) -> None:
    """Appending the same segment (or run) k times: skipped from k = 3 on, for every k after."""
    limits = TrapLimits(max_url_length=None)
    verdicts = []
    for k in range(1, 9):
        path = "/" + "/".join(prefix + unit * k) + ("/" if slash else "")
        verdicts.append(trap_reason(S + path, limits))
    assert verdicts[2:] == ["repeated_path_segment"] * 6
    first = verdicts.index("repeated_path_segment")
    assert all(v == "repeated_path_segment" for v in verdicts[first:])


@settings(max_examples=300, deadline=None)
@given(
    segments=st.lists(_SEGMENT, max_size=8, unique=True),
    params=st.dictionaries(_SEGMENT, _SEGMENT, max_size=10),
)
def test_audit_traps_ordinary_urls_are_never_skipped(
    segments: list[str], params: dict[str, str]
) -> None:
    """Distinct segments, at most ten parameters, at most 2,000 characters: followed."""
    url = S + "/" + "/".join(segments)
    if params:
        url += "?" + "&".join(f"{k}={v}" for k, v in params.items())
    assert len(url) <= 2000
    assert trap_reason(url, LIMITS) is None


@settings(max_examples=100, deadline=None)
@given(
    base=st.lists(_SEGMENT, min_size=1, max_size=3, unique=True),
    href=_SEGMENT,
    page_is_dir=st.booleans(),
)
def test_audit_traps_a_relative_link_spiral_ends(
    base: list[str], href: str, page_is_dir: bool
) -> None:
    """A page whose template links "href/", served for any path: followed link after link, the
    URLs are cut within a few hops, whatever the segments."""
    url = S + "/" + "/".join(base) + ("/" if page_is_dir else "")
    crawled = 0
    for _ in range(50):
        nxt = resolve_link(url, href + "/")
        assert nxt is not None
        if trap_reason(nxt, LIMITS) is not None:
            break
        url, crawled = nxt, crawled + 1
    else:
        pytest.fail(f"spiral never cut: {url}")
    assert crawled <= 3 + len(base)


def _naive_repeated_run(path: str, times: int) -> tuple[str, ...] | None:
    """Every period, every start, by slices: what repeated_run must agree with."""
    segs = [s for s in path.split("/") if s]
    for period in range(1, min(len(segs) // times, MAX_RUN) + 1):
        for i in range(len(segs) - times * period + 1):
            unit = segs[i : i + period]
            if all(segs[i + k * period : i + (k + 1) * period] == unit for k in range(times)):
                return tuple(unit)
    return None


@settings(max_examples=500, deadline=None)
@given(
    segs=st.lists(st.sampled_from(["a", "b", "c"]), max_size=40),
    times=st.integers(min_value=2, max_value=4),
)
def test_audit_traps_repeated_run_agrees_with_the_naive_search(
    segs: list[str], times: int
) -> None:
    path = "/" + "/".join(segs) + "/"
    fast, naive = repeated_run(path, times), _naive_repeated_run(path, times)
    assert (fast is None) == (naive is None)
    if fast is not None and naive is not None:
        assert len(fast) == len(naive)  # the shortest period is found by both


def test_audit_traps_a_long_path_without_a_cube_is_followed() -> None:
    """Some thousand one-letter segments in Thue-Morse order never repeat three times in a row
    (the search over every period used to be the expensive case): not a spiral."""
    thue_morse = ["ab"[bin(i).count("1") % 2] for i in range(980)]
    url = S + "/" + "/".join(thue_morse)
    assert len(url) + len("/z/z/z") <= 2000
    assert trap_reason(url, LIMITS) is None
    # One more segment doubled three times somewhere is found, however deep.
    assert trap_reason(url + "/z/z/z", LIMITS) == "repeated_path_segment"


def test_audit_traps_describe_names_the_reason() -> None:
    spiral = describe(S + "/blog/blog/blog/", "repeated_path_segment", LIMITS)
    assert spiral.startswith("relative link spiral: /blog/blog/blog/ ('blog' repeated 3")
    long = describe(S + "/" + "z" * 3000, "url_too_long", LIMITS)
    assert long.startswith(f"URL of {len(S) + 3001:,} characters, over 2,000 (url_too_long): ")
    assert len(long) < 250  # the URL is shortened, not printed whole
    many = describe(S + "/?" + "&".join(f"p{i}=1" for i in range(12)), "too_many_parameters",
                    LIMITS)  # fmt: skip
    assert many.startswith("12 query parameters, over 10 (too_many_parameters)")


def test_audit_traps_rule_fires_on_the_linking_page_and_stays_quiet() -> None:
    r = CATALOGUE["link-to-crawler-trap"]
    a = good_page("/a")
    bad = site(a, trap_links=[(a.url, BASE + "/a/a/a/", "repeated_path_segment")])
    fired = list(r.check(bad, Thresholds()))
    assert [(f.url, f.detail.split(":")[0]) for f in fired] == [(a.url, "relative link spiral")]
    assert list(r.check(site(a), Thresholds())) == []


def _page(url: str, links: list[str]) -> Fetched:
    body = "".join(f'<a href="{h}">x</a>' for h in links)
    html = f"<html lang=en><head><title>t</title></head><body>{body}</body></html>".encode()
    return Fetched(url, 200, None, "", {"content-type": "text/html"}, html, len(html), 0.01)


def test_audit_traps_view_finds_the_pages_linking_to_skipped_urls(tmp_path: Path) -> None:
    start = "http://t.test/"
    cf = crawl_file_of(tmp_path / "c.db", start, [
        _page(start, ["/blog/", "/a/a/a/"]),
        _page("http://t.test/blog/", ["blog/", "/"]),
        # listed in a sitemap and crawled: no trap the crawl skipped, whatever it looks like
        _page("http://t.test/x/x/x/", ["/"]),
    ])  # fmt: skip
    cf.close()
    conn = sqlite3.connect(tmp_path / "c.db")
    try:
        view = load_view(conn)
        assert view.trap_links == [
            (start, "http://t.test/a/a/a/", "repeated_path_segment"),
        ]
        # /blog/blog/ (twice "blog") was no trap: a page the crawl would have fetched.
        findings = run_rules(view).by_rule()["link-to-crawler-trap"]
        assert [f.url for f in findings] == [start]
        # The limits the crawl recorded are the ones asked: with repeats off, nothing.
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('trap_limits', ?)",
            (TrapLimits(max_segment_repeats=None).to_json(),),
        )
        assert load_view(conn).trap_links == []
        conn.execute("UPDATE meta SET value = ? WHERE key = 'trap_limits'",
                     (TrapLimits(max_segment_repeats=2).to_json(),))  # fmt: skip
        assert sorted(load_view(conn).trap_links) == [
            (start, "http://t.test/a/a/a/", "repeated_path_segment"),
            ("http://t.test/blog/", "http://t.test/blog/blog/", "repeated_path_segment"),
        ]
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("name", "value"),
    [("trap_max_url_length", 0), ("trap_max_segment_repeats", 1), ("trap_max_parameters", -1)],
)
async def test_audit_traps_options_refused_below_their_minimum(
    tmp_path: Path, name: str, value: int
) -> None:
    out = tmp_path / "never.db"
    with pytest.raises(InputError, match=f"{name}={value}"):
        await crawl_site(
            "http://t.test/", out, Settings(), CrawlOptions(**{name: value})  # type: ignore[arg-type]
        )
    assert not out.exists()
