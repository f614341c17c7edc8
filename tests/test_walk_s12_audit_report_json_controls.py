"""``audit report --json`` prints the site's own text (a meta robots value is the noindex-meta
finding's detail). JSON escapes C0 controls, but DEL and C1 went out raw: U+009B is a
one-character CSI to a terminal. They are escaped now, as the CLI's other --json outputs do,
and the JSON still reads back to the same text."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pagerows import Fetched, PageRowBuilder
from fairfetch.audit.urls import Scope
from fairfetch.cli import app

S = "http://site.test"
ROBOTS = "noindex, \x9b2J, \x7f, \x1b[2J"
PAGE = ('<html lang=en><head><title>A page of a hostile site</title>'
        f'<meta name="robots" content="{ROBOTS}"></head><body><h1>x</h1></body></html>')


def _crawl_file(path: Path) -> None:
    body = PAGE.encode()
    fetched = Fetched(S + "/", 200, None, "", {"content-type": "text/html; charset=utf-8"},
                      body, len(body), 0.01)  # fmt: skip
    cf = CrawlFile(path)
    try:
        cf.write_batch([("queue", (1, fetched.url, 0, 0, "start")),
                        *PageRowBuilder(Scope(S + "/"), {}, {}).build(1, fetched).ops])
        cf.finalize()
        cf.set_meta(start_url=S + "/", finished_at="2026-12-01T00:00:00+00:00", cut_short="")
    finally:
        cf.close()


def test_walk_s12_audit_report_json_escapes_del_and_c1(tmp_path: Path) -> None:
    _crawl_file(tmp_path / "site.crawl")
    result = CliRunner().invoke(app, ["audit", "report", str(tmp_path / "site.crawl"), "--json"])
    assert result.exit_code == 0, result.output
    raw = [c for c in result.output if "\x7f" <= c <= "\x9f" or (c < " " and c not in "\n")]
    assert raw == []
    data = json.loads(result.output)
    details = [f["detail"] for r in data["rules"] if r["id"] == "noindex-meta"
               for f in r["findings"]]  # fmt: skip
    assert details == [ROBOTS.lower()]  # read back as it was (directives are lower-cased)
