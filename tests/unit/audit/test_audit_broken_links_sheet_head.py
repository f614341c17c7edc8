"""The Broken Links sheet lists what broken-internal-link and broken-external-link count: links
in a page's body. A canonical or hreflang <link> (or a meta refresh) to another site's 404 is
canonical-to-non-200's / hreflang-non-200's / meta-refresh's finding (docs: "judged by the
canonical and hreflang rules only"), as an internal one already is: it was also a row of the
sheet, with no broken-external-link finding behind it."""

from __future__ import annotations

import csv
from pathlib import Path

from fairfetch.audit.export import export_crawl
from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"
OTHER = "http://other.test"
HEAD = (
    f'<link rel="canonical" href="{OTHER}/canon"><link rel="alternate" hreflang="de" '
    f'href="{OTHER}/de"><meta http-equiv="refresh" content="30; url={OTHER}/moved">'
)
BODY = f'<a href="{OTHER}/dead">a dead link</a>'


def test_audit_broken_links_sheet_is_body_links_only(tmp_path: Path) -> None:
    doc = (f"<html lang=en><head><title>Home</title>{HEAD}</head><body>{BODY}</body>"
           "</html>").encode()  # fmt: skip
    path = tmp_path / "c.db"
    fetched = [Fetched(S + "/", 200, None, "", {"content-type": "text/html"}, doc, len(doc), 0.01)]
    cf = crawl_file_of(path, S + "/", fetched)
    cf.write_batch([
        ("external_result",
         (OTHER + p, via, 404, OTHER + p, "[]", None, "HEAD", "2026-11-30", None))
        for p, via in (("/canon", "canonical"), ("/de", "hreflang"), ("/moved", "refresh"),
                       ("/dead", "link"))
    ])  # fmt: skip
    try:
        run = run_rules(load_view(cf.conn))
    finally:
        cf.close()
    found = {(f.rule_id, f.detail.split(" ")[0]) for f in run.findings}
    assert ("broken-external-link", OTHER + "/dead") in found
    assert {r for r, _ in found} >= {"canonical-to-non-200", "hreflang-non-200", "meta-refresh"}
    export_crawl(path, csv_dir=tmp_path / "csv")
    with (tmp_path / "csv" / "broken_links.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["To"], r["Where"]) for r in rows] == [(OTHER + "/dead", "content")]
    broken_external = [f for f in run.findings if f.rule_id == "broken-external-link"]
    assert len(rows) == len(broken_external)
