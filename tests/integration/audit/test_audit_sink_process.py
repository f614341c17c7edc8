"""The writer process's pipe: big pages one way and big replies the other never deadlock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pagerows import Built, Fetched
from fairfetch.audit.sink import ProcessSink
from fairfetch.testing import Testbed

from .conftest import crawl

PAGES = 40
LINKS = 1500  # unique external links a page: each reply carries ~100 KB of URLs to check


def _page(i: int) -> Fetched:
    links = "".join(
        f'<a href="http://far{i}-{j}.test/some/long/path/to/a/page">x</a>' for j in range(LINKS)
    )
    body = f"<html><body><main><p>{'words ' * 30_000}</p>{links}</main></body></html>".encode()
    return Fetched(
        f"http://site.test/p{i}", 200, None, "", {"content-type": "text/html"}, body,
        len(body), 0.01,
    )  # fmt: skip


async def test_audit_sink_big_pages_and_big_replies_complete(tmp_path: Path) -> None:
    # Both pipe buffers (~200 KB each) overflow: pages of ~270 KB go out while replies of
    # ~100 KB come back. A send that blocked the event loop would stop it reading replies
    # while the writer blocks sending one: each waiting for the other, forever.
    path = tmp_path / "c.db"
    CrawlFile(path).close()
    cf = CrawlFile(path, create=False)
    cf.write_batch([("queue_many", [(i + 1, f"http://site.test/p{i}", 1, 1, "link")
                                     for i in range(PAGES)])])
    cf.close()
    sink = ProcessSink(str(path), "http://site.test/", False, 256)

    async def run() -> list[Built]:
        sink.start()
        try:
            futs = [await sink.submit_page(i + 1, _page(i)) for i in range(PAGES)]
            built = await asyncio.gather(*futs)
            await sink.flush()
            return built
        finally:
            await sink.aclose()

    # A deadline for a hang, not a timed assertion: the work takes about a second.
    built = await asyncio.wait_for(run(), timeout=120)
    assert [len(b.probes) for b in built] == [LINKS] * PAGES
    con = CrawlFile(path, create=False).conn
    assert con.execute("SELECT COUNT(*) FROM links").fetchone()[0] == PAGES * LINKS
    assert con.execute("SELECT COUNT(*) FROM pages WHERE state='done'").fetchone()[0] == PAGES


async def test_audit_sink_writer_process_killed_fails_the_crawl_loudly(tmp_path: Path) -> None:
    # The writer process dies (OOM killer, a crash in lexbor): the pages in flight and every
    # later one fail with the cause instead of waiting for replies that will never come.
    import os
    import signal

    import pytest

    from fairfetch.errors import AuditError

    path = tmp_path / "c.db"
    CrawlFile(path).close()
    sink = ProcessSink(str(path), "http://site.test/", False, 256)

    async def run() -> None:
        sink.start()
        try:
            first = await sink.submit_page(1, _page(0))
            await first  # the writer works
            os.kill(sink.proc.pid, signal.SIGKILL)
            await asyncio.to_thread(sink.proc.join)
            with pytest.raises(AuditError, match="writer process"):
                for i in range(1, PAGES):  # a dead pipe is found on a write or on the replies
                    await (await sink.submit_page(i + 1, _page(i)))
        finally:
            with pytest.raises(AuditError):
                await sink.aclose()

    await asyncio.wait_for(run(), timeout=120)  # a deadline for a hang, not a timed assertion


async def test_audit_level_end_sends_held_pages_without_waiting_for_the_timer(
    testbed: Testbed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages go to the writer process a few at a time, or when the send timer fires. At a
    # level's end no more pages will join the held ones: the crawl sends them at once rather
    # than sitting idle until the timer (5 ms a level by default; an hour here, so a crawl
    # that waited for it would never finish within the deadline).
    defaults = list(ProcessSink.__init__.__defaults__ or ())
    assert defaults[2] == 0.005  # max_pending, send_batch, send_delay, max_pending_bytes
    defaults[2] = 3600.0
    monkeypatch.setattr(ProcessSink.__init__, "__defaults__", tuple(defaults))
    out = tmp_path / "c.db"
    # A deadline for a hang, not a timed assertion: the crawl takes about a second.
    stats = await asyncio.wait_for(crawl(testbed, out, parse_process=True), timeout=60)
    assert stats.pages_done > 100
    con = CrawlFile(out, create=False).conn
    assert con.execute("SELECT COUNT(*) FROM pages WHERE state='done'").fetchone()[0] == (
        stats.pages_done
    )


async def test_audit_sink_waiting_for_room_sends_the_pages_that_hold_it(tmp_path: Path) -> None:
    # Room for more bytes comes back only when the writer has built the pages holding it:
    # pages held back for company must go before the crawl waits for that room, or it waits
    # for the send timer (an hour here) with both processes idle.
    path = tmp_path / "c.db"
    CrawlFile(path).close()
    sink = ProcessSink(
        str(path), "http://site.test/", False, 256, send_delay=3600.0, max_pending_bytes=1000
    )

    async def run() -> list[Built]:
        sink.start()
        try:
            futs = [await sink.submit_page(i + 1, _page(i)) for i in range(3)]
            sink.push()
            return list(await asyncio.gather(*futs))
        finally:
            await sink.aclose()

    # A deadline for a hang, not a timed assertion: the work takes well under a second.
    built = await asyncio.wait_for(run(), timeout=60)
    assert [len(b.probes) for b in built] == [LINKS] * 3
