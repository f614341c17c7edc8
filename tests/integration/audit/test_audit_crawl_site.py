"""A real crawl of the testbed's audit site through the fetch engine, into a real crawl file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.errors import AuditError
from fairfetch.testbed.site import BUNDLE, SHOP_HOST
from fairfetch.testing import Testbed

from .conftest import crawl


async def test_audit_two_redirects_to_one_foreign_host_both_checked(
    testbed: Testbed, tmp_path: Path
) -> None:
    out = tmp_path / "site.db"
    await crawl(testbed, out)
    db = sqlite3.connect(out)
    rows = dict(
        db.execute(
            "SELECT substr(from_url, instr(from_url, '/go/')), to_status FROM redirects "
            "WHERE to_internal = 0"
        ).fetchall()
    )
    assert rows == {"/go/alive": 200, "/go/pulled": 404}
    # discovered at separate moments: the two redirecting pages sit on different levels
    levels = [r[0] for r in db.execute(
        "SELECT level FROM pages WHERE url LIKE '%/go/%' ORDER BY url")]
    assert len(set(levels)) == 2
    stats = await testbed.stats()
    shop = stats["hosts"][SHOP_HOST]
    assert shop["requests"] == 2
    assert shop["max_in_flight"] == 1


async def test_audit_every_external_checked_or_counted_with_reason(
    testbed: Testbed, tmp_path: Path
) -> None:
    out = tmp_path / "site.db"
    stats = await crawl(testbed, out)
    db = sqlite3.connect(out)
    limbo = db.execute(
        "SELECT url FROM externals WHERE checked_at IS NULL AND not_checked IS NULL"
    ).fetchall()
    assert limbo == []
    assert db.execute("SELECT COUNT(*) FROM externals WHERE checked_at IS NOT NULL").fetchone()[
        0] == stats.externals_registered
    statuses = dict(
        db.execute("SELECT substr(url, instr(url, '.test:') + 6), method FROM externals "
                   "WHERE url LIKE 'http://links-elsewhere.test%'").fetchall()
    )
    assert any(k.endswith("/nohead") for k in statuses)
    assert [v for k, v in statuses.items() if k.endswith("/nohead")] == ["GET"]  # 405 fallback
    assert stats.links_skipped == {"not http(s): mailto": 1}

    # Under a cap, the rest are counted with their reason, never left in limbo.
    capped = tmp_path / "capped.db"
    stats = await crawl(testbed, capped, max_externals=3)
    db = sqlite3.connect(capped)
    assert db.execute(
        "SELECT COUNT(*) FROM externals WHERE checked_at IS NULL AND not_checked IS NULL"
    ).fetchone()[0] == 0
    over = db.execute("SELECT COUNT(*) FROM externals WHERE not_checked = 'over_cap'").fetchone()[0]
    assert over >= 4
    assert stats.not_checked["over_cap"] >= over


async def test_audit_crawl_file_contents(testbed: Testbed, tmp_path: Path) -> None:
    out = tmp_path / "site.db"
    stats = await crawl(testbed, out)
    db = sqlite3.connect(out)
    q = lambda sql: db.execute(sql).fetchall()  # noqa: E731
    for table, key in (("pages", "url"), ("images", "url"), ("resources", "url"),
                       ("externals", "url"), ("redirects", "from_url")):
        assert q(f"SELECT COUNT(*) = COUNT(DISTINCT {key}) FROM {table}") == [(1,)]
    sizes = dict(q("SELECT substr(url, instr(url, '/static/')), size FROM resources "
                   "WHERE url LIKE '%/static/%'"))
    assert sizes["/static/bundle.js"] == len(BUNDLE)
    assert sizes["/static/font.woff2"] is None  # chunked: no Content-Length, body not read
    pages_with_bundle = q("SELECT COUNT(*) FROM page_resources pr JOIN resources r "
                          "ON r.id = pr.resource_id WHERE r.url LIKE '%bundle.js'")[0][0]
    # The bundle is on every HTML page of the site: the page-resource pairs say so, each once.
    html_pages = q("SELECT COUNT(*) FROM pages WHERE status = 200 AND "
                   "content_type LIKE 'text/html%'")[0][0]
    assert html_pages > 100
    assert pages_with_bundle == html_pages
    assert pages_with_bundle > 100
    blocked = q("SELECT status, indexability FROM pages WHERE url LIKE '%/private/secret'")
    assert blocked == [(None, "blocked by robots.txt")]
    assert q("SELECT source, depth FROM pages WHERE url LIKE '%/orphan/1'") == [("sitemap", None)]
    assert q("SELECT loop FROM redirects WHERE from_url LIKE '%/loop-a'") == [(1,)]
    chain = q("SELECT final_status FROM redirects WHERE from_url LIKE '%/chain1'")
    assert chain == [(200,)]
    assert stats.cut_short == ""


async def test_audit_rules_on_the_testbed_site(testbed: Testbed, tmp_path: Path) -> None:
    out = tmp_path / "site.db"
    await crawl(testbed, out)
    run = run_rules(load_view(sqlite3.connect(out)))
    by_rule = {k: {f.url.split(".test:")[1].split("/", 1)[1] for f in v}
               for k, v in run.by_rule().items()}
    expect = {
        "orphan-in-sitemap": {"orphan/1", "orphan/2"},
        "noindex-meta": {"noindex-page"},
        "noindex-header": {"xrobots"},
        "blocked-by-robots": {"private/secret"},
        # One loop, one finding: loop-b is reached only through loop-a's redirect (the
        # Redirects sheet lists both rows); likewise chain1 -> chain2 -> chain3 is one chain.
        "redirect-loop": {"loop-a"},
        "redirect-chain": {"chain1"},
        "canonical-to-redirect": {"canon-src"},
        "jsonld-invalid": {"bad-jsonld"},
        "title-outside-head": {"title-in-body"},
        "heavy-page": {"heavy"},
        "near-duplicate-content": {"near-a", "near-b"},
        "duplicate-content": {"dup-a", "dup-b"},
        "hreflang-non-200": {"en/"},
        "hreflang-missing-return": {"en/"},
        "hreflang-invalid-code": {"bad-hreflang"},
        "meta-refresh": {"meta-refresh"},
    }
    for rule_id, urls in expect.items():
        assert by_rule.get(rule_id) == urls, rule_id
    assert {"go/pulled", "to-gone"} <= by_rule["redirect-to-error"]
    assert "go/alive" not in by_rule["redirect-to-error"]
    assert by_rule["heavy-resource"] == {"static/bundle.js"}
    # A healthy generated page is quiet on the page-level rules above.
    assert not any("page/5" in urls for urls in by_rule.values() if len(urls) < 20)


async def test_audit_max_pages_cuts_and_graph_rules_stay_silent(
    testbed: Testbed, tmp_path: Path
) -> None:
    out = tmp_path / "cut.db"
    stats = await crawl(testbed, out, max_pages=30)
    assert stats.cut_short == "max_pages"
    db = sqlite3.connect(out)
    assert db.execute("SELECT COUNT(*) FROM pages WHERE state='done'").fetchone()[0] == 30
    run = run_rules(load_view(db))
    assert "orphan-in-sitemap" in run.silenced
    assert "too-deep" in run.silenced
    assert not {"orphan-in-sitemap", "too-deep"} & {f.rule_id for f in run.findings}


async def test_audit_refuses_to_overwrite_without_resume(testbed: Testbed, tmp_path: Path) -> None:
    import pytest

    from fairfetch.errors import AuditError

    out = tmp_path / "x.db"
    out.write_bytes(b"")
    with pytest.raises(AuditError):
        await crawl(testbed, out)


async def test_audit_parse_process_writes_the_same_file(testbed: Testbed, tmp_path: Path) -> None:
    """Parsing and writing in a second process is an implementation choice, not a new result."""
    from .test_audit_resume import COMPARE

    one, two = tmp_path / "one.db", tmp_path / "two.db"
    await crawl(testbed, one, parse_process=False)
    await crawl(testbed, two, parse_process=True)
    a, b = sqlite3.connect(one), sqlite3.connect(two)
    for table, sql in COMPARE.items():
        assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), table


async def test_audit_probes_go_through_the_perimeter(testbed: Testbed, tmp_path: Path) -> None:
    from fairfetch.audit.crawler import CrawlOptions, crawl_site
    from fairfetch.testbed.site import PRIVATE_HOST

    out = tmp_path / "site.db"
    # The intranet host resolves to 127.0.0.2, outside the allowed 127.0.0.1/32.
    settings = testbed.settings(resolve=(f"{PRIVATE_HOST}:127.0.0.2", "*.test:127.0.0.1"))
    stats = await crawl_site(testbed.url("s120.acme-audit.test", "/"), out, settings,
                             CrawlOptions(concurrency=4))
    db = sqlite3.connect(out)
    row = db.execute("SELECT status, checked_at, not_checked, error FROM externals "
                     "WHERE url LIKE ?", (f"http://{PRIVATE_HOST}%",)).fetchone()
    assert row[0] is None
    assert row[1] is None  # not checked: no check time
    assert row[2] == "perimeter"
    assert row[3].startswith("perimeter")
    assert stats.not_checked == {"perimeter": 1}
    assert PRIVATE_HOST not in (await testbed.stats())["hosts"]


async def test_audit_resume_refuses_a_file_with_older_sketches(
    testbed: Testbed, tmp_path: Path
) -> None:
    """Sketches of two versions cannot be compared: resuming would hide near duplicates."""
    out = tmp_path / "crawl.db"
    await crawl(testbed, out, pages=40, max_pages=10)
    with sqlite3.connect(out) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'sketch_version'").fetchone()
        con.execute("DELETE FROM meta WHERE key = 'sketch_version'")  # as older versions wrote
        before = con.execute("SELECT COUNT(*), group_concat(sketch) FROM pages").fetchone()
    with pytest.raises(AuditError, match="older fairfetch"):
        await crawl(testbed, out, pages=40, resume=True)
    with sqlite3.connect(out) as con:
        assert con.execute("SELECT COUNT(*), group_concat(sketch) FROM pages").fetchone() == before


async def test_audit_resume_refuses_a_file_with_newer_sketches_without_calling_it_older(
    testbed: Testbed, tmp_path: Path
) -> None:
    out = tmp_path / "crawl.db"
    await crawl(testbed, out, pages=40, max_pages=10)
    with sqlite3.connect(out) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'sketch_version'")
    with pytest.raises(AuditError, match="written by another fairfetch") as refused:
        await crawl(testbed, out, pages=40, resume=True)
    assert "older" not in str(refused.value)


async def test_audit_no_sitemaps_read_is_not_no_sitemap(testbed: Testbed, tmp_path: Path) -> None:
    """--no-sitemaps: the site has a sitemap we did not read; "No readable XML sitemap ... none
    found in robots.txt or at /sitemap.xml" would be a false statement."""
    out = tmp_path / "nosm.db"
    await crawl(testbed, out, pages=40, use_sitemaps=False)
    db = sqlite3.connect(out)
    run = run_rules(load_view(db))
    assert "no-sitemap" not in {f.rule_id for f in run.findings}
    assert "--no-sitemaps" in run.silenced["no-sitemap"]
    read = tmp_path / "sm.db"
    await crawl(testbed, read, pages=40)
    assert "no-sitemap" not in run_rules(load_view(sqlite3.connect(read))).silenced
