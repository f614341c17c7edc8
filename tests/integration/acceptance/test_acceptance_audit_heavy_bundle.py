"""Issue 7, "Rules" and "Outputs": heavy resources — "a 900 KB bundle.js served on every page,
with the number of pages it costs" — and the Resources sheet "with the number of pages each
resource appears on".

The crawl-file test of the audit suite compares the bundle's page count with the HTML pages in an
assertion that ends ``or True`` (it cannot fail), and the workbook test only asks for more than
100 pages. Here the count must be every HTML page crawled, and the finding and the sheet must say
that same number.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import openpyxl

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.audit.export import export_crawl
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.testbed.site import BUNDLE
from fairfetch.testing import running_testbed


async def test_acceptance_bundle_on_every_page_counted_in_finding_and_sheet(
    tmp_path: Path,
) -> None:
    out = tmp_path / "site.db"
    async with running_testbed() as tb:
        await crawl_site(
            tb.url("s120.acme-audit.test", "/"), out, tb.settings(), CrawlOptions(concurrency=4)
        )
    db = sqlite3.connect(out)
    html_pages = {
        r[0] for r in db.execute(
            "SELECT id FROM pages WHERE status = 200 AND content_type LIKE 'text/html%'")
    }
    bundle_pages = {
        r[0] for r in db.execute(
            "SELECT pr.page_id FROM page_resources pr JOIN resources r ON r.id = pr.resource_id "
            "WHERE r.url LIKE '%/static/bundle.js'")
    }
    assert len(html_pages) > 100
    assert bundle_pages == html_pages  # every page of the template serves it, each once

    run = run_rules(load_view(db))
    [finding] = run.by_rule()["heavy-resource"]
    assert finding.url.endswith("/static/bundle.js")
    assert str(len(BUNDLE)) in finding.detail
    assert f"{len(html_pages)} page" in finding.detail  # the number of pages it costs

    xlsx = tmp_path / "audit.xlsx"
    export_crawl(out, xlsx=xlsx)
    rows = list(openpyxl.load_workbook(xlsx, read_only=True)["Resources"].iter_rows(
        values_only=True))
    header, data = rows[0], rows[1:]
    by_url = {r[0]: r[header.index("Pages")] for r in data}
    [bundle_url] = [u for u in by_url if str(u).endswith("/static/bundle.js")]
    assert by_url[bundle_url] == len(html_pages)
    assert data[0][0] == bundle_url  # the largest, first
