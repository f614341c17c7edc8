"""CrawlFile.finalize: redirect chains resolved from the pages they pass through only."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairfetch.audit.crawlfile import CrawlFile, _resolve_chain

_URLS = [f"http://s.test/{i}" for i in range(8)]


@st.composite
def _sites(draw: st.DrawFn) -> list[tuple[str, str, int | None, str | None]]:
    """Pages (url, state, status, redirect_to): redirects to pages, loops, unknown URLs."""
    pages: list[tuple[str, str, int | None, str | None]] = []
    for url in draw(st.lists(st.sampled_from(_URLS), unique=True, min_size=1)):
        state = draw(st.sampled_from(["done", "done", "queued"]))
        if state == "queued":
            pages.append((url, state, None, None))
            continue
        target = draw(st.one_of(st.none(), st.sampled_from([*_URLS, "http://far.test/x"])))
        status = draw(st.sampled_from([301, 302])) if target else draw(st.sampled_from([200, 404]))
        pages.append((url, state, status, target))
    return pages


@given(_sites())
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_audit_finalize_chains_equal_whole_site_definition(
    tmp_path: Path, site: list[tuple[str, str, int | None, str | None]]
) -> None:
    # Definition: _resolve_chain over every done page's status and every redirect_to (what
    # finalize loaded before); finalize now looks up only the pages the chains pass through.
    path = tmp_path / f"c{abs(hash(tuple(site)))}.db"
    cf = CrawlFile(path)
    try:
        ops: list[tuple[str, object]] = []
        for i, (url, _state, status, target) in enumerate(site, 1):
            ops.append(("queue", (i, url, 1, 1, "link")))
            if target is not None:
                ops.append(("redirect", (url, status, target, int(target.startswith("http://s.")))))
        cf.write_batch(ops)
        cf.conn.executemany(
            "UPDATE pages SET state=?, status=?, redirect_to=? WHERE url=?",
            [(state, status, target, url) for url, state, status, target in site],
        )
        page_status = {u: st_ for u, state, st_, _ in site if state == "done"}
        page_next = {u: t for u, _, _, t in site if t is not None}
        expected = {
            from_url: _resolve_chain(from_url, status, to_url, page_status, page_next, {})
            for from_url, status, to_url in cf.conn.execute(
                "SELECT from_url, status, to_url FROM redirects"
            )
        }
        cf.finalize()
        got = {
            r[0]: tuple(r[1:])
            for r in cf.conn.execute(
                "SELECT from_url, to_status, final_url, final_status, chain, loop FROM redirects"
            )
        }
        assert got == expected
    finally:
        cf.close()


@st.composite
def _writes(draw: st.DrawFn) -> list[tuple[str, str]]:
    """Queue, page-written and sitemap-URL events over a few URLs, in any order (a page
    queued before it is written)."""
    urls = draw(st.lists(st.sampled_from(_URLS), unique=True, min_size=1))
    events: list[tuple[str, str]] = []
    for url in urls:
        events.append(("queue", url))
        if draw(st.booleans()):
            events.append(("page", url))
    for url in draw(st.lists(st.sampled_from([*_URLS, "http://s.test/not-a-page"]), unique=True)):
        events.append(("sitemap", url))
    out: list[tuple[str, str]] = []
    held: dict[str, tuple[str, str]] = {}
    for kind, url in draw(st.permutations(events)):
        if kind == "page" and ("queue", url) not in out:
            held[url] = (kind, url)  # written right after its queue row, as the crawl does
            continue
        out.append((kind, url))
        if kind == "queue" and url in held:
            out.append(held.pop(url))
    return out


@given(_writes(), st.integers(1, 3))
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_audit_finalize_in_sitemap_whatever_came_first(
    tmp_path: Path, events: list[tuple[str, str]], batch: int
) -> None:
    # A page's flag is set when it is written if its sitemap entry is already there; finalize
    # sets the others. Either way the finished file says: in the sitemap iff listed there.
    from fairfetch.audit.pagerows import Fetched, PageRowBuilder
    from fairfetch.audit.urls import Scope

    path = tmp_path / f"s{abs(hash((tuple(events), batch)))}.db"
    cf = CrawlFile(path)
    try:
        builder = PageRowBuilder(Scope("http://s.test/"), {}, {})
        ids: dict[str, int] = {}
        ops: list[tuple[str, object]] = []
        for kind, url in events:
            if kind == "queue":
                ids[url] = len(ids) + 1
                ops.append(("queue", (ids[url], url, 1, 1, "link")))
            elif kind == "page":
                fetched = Fetched(url, 200, None, "", {"content-type": "text/html"},
                                  b"<title>t</title><p>words here</p>", 33, 0.01)  # fmt: skip
                ops.extend(builder.build(ids[url], fetched).ops)
            else:
                ops.append(("sitemap_urls_many", [(url, "http://s.test/sitemap.xml")]))
            if len(ops) >= batch:
                cf.write_batch(ops)
                ops = []
        if ops:
            cf.write_batch(ops)
        cf.finalize()
        listed = {url for kind, url in events if kind == "sitemap"}
        flags = dict(cf.conn.execute("SELECT url, in_sitemap FROM pages"))
        assert flags == {url: int(url in listed) for url in ids}
    finally:
        cf.close()
