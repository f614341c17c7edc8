"""The External Links sheet of an interrupted crawl (no links_to index: it is built when the crawl
finishes) is computed in one pass over the links, not one scan of them per external: a file
with 3,009 externals and 200,505 links took 60 s for that one sheet.

Work is counted in SQLite virtual-machine instructions (a progress handler), not in seconds:
a per-external scan grows with externals x links (16x when both grow 4x), one pass with their
sum (about 4x)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.export import SHEETS
from fairfetch.audit.pagerows import Fetched, PageRowBuilder
from fairfetch.audit.rules import run_rules
from fairfetch.audit.urls import Scope
from fairfetch.audit.view import load_view

S = "http://site.test"
SHEET = next(s for s in SHEETS if s.name == "External Links")


def _ext(i: int) -> str:
    return f"http://far{i % 7}.test/p{i}"


def _crawl_file(path: Path, pages: int, *, finished: bool) -> CrawlFile:
    """Page i links to externals i..i+3 (mod pages), and twice to external i."""
    cf = CrawlFile(path)
    builder = PageRowBuilder(Scope(S + "/"), {}, {})
    ops: list[tuple[str, object]] = []
    for i in range(pages):
        links = "".join(f'<a href="{_ext((i + j) % pages)}">e</a>' for j in range(4))
        links += f'<a href="{_ext(i)}">again</a><a href="/p{i + 1}">next</a>'
        body = f"<html><head><title>p{i}</title></head><body>{links}</body></html>".encode()
        url = f"{S}/p{i}"
        ops.append(("queue", (i + 1, url, i, i, "link")))
        ops.extend(builder.build(i + 1, Fetched(url, 200, None, "", {"content-type": "text/html"},
                                                body, len(body), 0.01)).ops)
        ops.append(("external", (_ext(i), "link")))
    ops.append(("external", ("http://img.elsewhere.test/x.png", "image")))
    cf.write_batch(ops)
    if finished:
        cf.finalize()
    cf.set_meta(start_url=S + "/p0", cut_short="")
    return cf


def _sheet(cf: CrawlFile) -> tuple[list[tuple[object, ...]], int]:
    """(rows, thousands of VM instructions) of the External Links sheet."""
    site = load_view(cf.conn)
    run = run_rules(site)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    cf.conn.set_progress_handler(count, 1000)
    try:
        rows = list(SHEET.rows(cf.conn, site, run))
    finally:
        cf.conn.set_progress_handler(None, 0)
    return rows, steps


@pytest.mark.parametrize("finished", [False, True], ids=["interrupted", "finished"])
def test_audit_external_links_sheet_counts_linking_pages(tmp_path: Path, finished: bool) -> None:
    cf = _crawl_file(tmp_path / "e.db", 10, finished=finished)
    try:
        rows, _ = _sheet(cf)
    finally:
        cf.close()
    linked = {r[0]: r[-1] for r in rows}
    # Four distinct pages link to each external (page i's second link to it counts once).
    assert {linked[_ext(i)] for i in range(10)} == {4}
    assert linked["http://img.elsewhere.test/x.png"] == 0
    assert [r[0] for r in rows] == [_ext(i) for i in range(10)] + [
        "http://img.elsewhere.test/x.png"
    ]


def test_audit_external_links_sheet_one_pass_on_an_interrupted_crawl(tmp_path: Path) -> None:
    small = _crawl_file(tmp_path / "small.db", 150, finished=False)
    large = _crawl_file(tmp_path / "large.db", 600, finished=False)
    try:
        assert small.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'links_to'"
        ).fetchone() is None
        _, work_small = _sheet(small)
        rows, work_large = _sheet(large)
    finally:
        small.close()
        large.close()
    assert len(rows) == 601
    # 4x the externals and 4x the links: ~4x the work in one pass, 16x with a scan per row.
    assert work_large < 8 * work_small, (work_small, work_large)
