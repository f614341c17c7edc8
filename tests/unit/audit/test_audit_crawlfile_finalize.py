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
