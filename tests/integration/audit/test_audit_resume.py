"""Resume after SIGKILL: the resumed crawl file equals an uninterrupted crawl's, row for row."""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from fairfetch.testing import testbed_thread

PAGES = 800
KILL_AFTER = 120

#: Volatile columns (timings, clocks, storage ids) left out of the comparison.
COMPARE = {
    "pages": "SELECT id, url, level, depth, source, state, status, error, content_type, size, "
    "title, title_count, meta_description, h1, heading_levels, canonical, canonical_count, "
    "meta_robots, x_robots_tag, hreflang, lang, word_count, indexable, indexability, "
    "redirect_to, content_hash, sketch, og_title, og_image, jsonld_total, jsonld_invalid, hsts, "
    "csp, x_content_type_options, mixed_content, in_sitemap FROM pages ORDER BY id",
    "links": "SELECT from_id, seq, to_url, anchor, rel, internal, location FROM links "
    "ORDER BY from_id, seq",
    "images": "SELECT url, internal, status, content_type, size, error FROM images ORDER BY url",
    "page_images": "SELECT pi.page_id, i.url, pi.alt, pi.width, pi.height FROM page_images pi "
    "JOIN images i ON i.id = pi.image_id ORDER BY 1, 2",
    "resources": "SELECT url, type, internal, status, content_type, size, error FROM resources "
    "ORDER BY url",
    "page_resources": "SELECT pr.page_id, r.url FROM page_resources pr JOIN resources r "
    "ON r.id = pr.resource_id ORDER BY 1, 2",
    "redirects": "SELECT from_url, status, to_url, to_internal, to_status, final_url, "
    "final_status, chain, loop FROM redirects ORDER BY from_url",
    "externals": "SELECT url, via, status, final_url, hops, error, method, not_checked "
    "FROM externals ORDER BY url",
    "robots": "SELECT url, status, body, error FROM robots ORDER BY url",
    "sitemaps": "SELECT url, status, kind, url_count, error FROM sitemaps ORDER BY url",
    "sitemap_urls": "SELECT url, sitemap FROM sitemap_urls ORDER BY url",
}


def _cmd(url: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", "from fairfetch.cli import main; main()", "audit", "crawl",
            url, "--out", str(out), "--concurrency", "2", "--quiet", *extra]


def _done_pages(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1)
        try:
            return con.execute("SELECT COUNT(*) FROM pages WHERE state='done'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0  # not created yet, or the schema is being written


def _children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (Linux /proc: the writer process of a crawl)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry.name))
    return out


def _dump(path: Path) -> dict[str, list[tuple]]:
    con = sqlite3.connect(path)
    try:
        return {name: con.execute(sql).fetchall() for name, sql in COMPARE.items()}
    finally:
        con.close()


def test_audit_resume_after_sigkill_equals_clean_run(tmp_path: Path) -> None:
    with testbed_thread() as tb:
        env = {**os.environ, **tb.env()}
        url = tb.url(f"s{PAGES}.acme-audit.test", "/")
        clean = tmp_path / "clean.db"
        subprocess.run(_cmd(url, clean), env=env, check=True, timeout=300)

        killed = tmp_path / "killed.db"
        # The writer process explicitly: the default on two cores, and what must not linger.
        proc = subprocess.Popen(_cmd(url, killed, "--parse-process"), env=env)
        try:
            deadline = time.monotonic() + 120
            while _done_pages(killed) < KILL_AFTER:  # poll the file: the crawl's own progress
                assert proc.poll() is None, "crawl finished before it could be killed"
                assert time.monotonic() < deadline, "crawl made no progress"
                time.sleep(0.005)
            writers = _children(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        # The writer process must notice that the crawl is gone and exit, not linger forever
        # holding the crawl file: an exit makes its pidfd readable (60 s: a deadline, not a
        # synchronisation).
        assert writers, "the crawl has a writer process (parse_process on two cores)"
        for pid in writers:
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue  # already gone
            try:
                ready, _, _ = select.select([fd], [], [], 60)
            finally:
                os.close(fd)
            assert ready, f"writer process {pid} outlived the crawl process"
        at_kill = _done_pages(killed)
        assert KILL_AFTER <= at_kill < _done_pages(clean)
        meta = dict(sqlite3.connect(killed).execute("SELECT key, value FROM meta").fetchall())
        assert "finished_at" not in meta

        subprocess.run(_cmd(url, killed, "--resume"), env=env, check=True, timeout=300)

    a, b = _dump(clean), _dump(killed)
    for table in COMPARE:
        assert len(a[table]) == len(b[table]), table
        assert a[table] == b[table], table
    assert len(a["pages"]) > PAGES
    # The counts of what was not followed or not checked cover the whole crawl, the part
    # before the kill too (the Overview sheet shows them).
    counted = ("links_skipped", "not_checked")
    ma, mb = (dict(sqlite3.connect(p).execute(
        "SELECT key, value FROM meta WHERE key IN (?, ?)", counted).fetchall())
        for p in (clean, killed))  # fmt: skip
    assert json.loads(ma["links_skipped"]), "the site has links not followed: a case to count"
    for key in counted:
        assert json.loads(mb[key]) == json.loads(ma[key]), key
