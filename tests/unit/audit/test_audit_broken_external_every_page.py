"""broken-external-link is one finding per page linking to the dead URL, as
broken-internal-link is, and as the Broken Links sheet lists them: it reported the first three
linking pages only (the view's sample of sources), so a dead link in a footer on 2,000 pages
counted 3 where the same link to one of the site's own 404s counted 2,000."""

from __future__ import annotations

from pathlib import Path

from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"
DEAD = "http://other.test/dead"
ALIVE = "http://other.test/alive"
HTML = {"content-type": "text/html"}


def _doc(title: str, body: str, head: str = "") -> bytes:
    return (f"<html lang=en><head><title>{title}</title>{head}</head><body>{body}</body>"
            "</html>").encode()  # fmt: skip


def test_audit_broken_external_link_names_every_linking_page(tmp_path: Path) -> None:
    pages = [f"/p{i}" for i in range(7)]
    home = _doc("Home", "".join(f'<a href="{p}">{p}</a>' for p in pages))
    fetched = [Fetched(S + "/", 200, None, "", HTML, home, len(home), 0.01)]
    for p in pages:
        body = f'<a href="{DEAD}">dead</a> <a href="{DEAD}">again</a> <a href="{ALIVE}">ok</a>'
        fetched.append(Fetched(S + p, 200, None, "", HTML, _doc(p, body), 200, 0.01))
    # A page naming it only as its canonical: canonical-to-non-200's, not a broken link.
    canon = _doc("C", "", f'<link rel="canonical" href="{DEAD}">')
    fetched.append(Fetched(S + "/c", 200, None, "", HTML, canon, len(canon), 0.01))
    cf = crawl_file_of(tmp_path / "c.db", S + "/", fetched)
    cf.write_batch([
        ("external_result", (DEAD, "link", 404, DEAD, "[]", None, "HEAD", "2026-11-30", None)),
        ("external_result", (ALIVE, "link", 200, ALIVE, "[]", None, "HEAD", "2026-11-30", None)),
    ])  # fmt: skip
    try:
        view = load_view(cf.conn)
    finally:
        cf.close()
    broken = [(f.url, f.detail) for f in run_rules(view).findings
              if f.rule_id == "broken-external-link"]  # fmt: skip
    assert broken == [(S + p, f"{DEAD} (404)") for p in pages]
    # A healthy external keeps a sample of its sources (the view does not hold them all).
    assert len(view.external_by_url[ALIVE].sources) == 3
    assert view.external_by_url[ALIVE].source_count == 7
