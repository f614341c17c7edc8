"""A canonical or hreflang alternates given in an HTTP ``Link`` header (Google reads both
there: the only way for a PDF, common behind CDNs for HTML too) are the page's, as the same
<link> in its <head> would be. The row builder read the facts of the HTML only (these were
strict xfails until it read the header)."""

from __future__ import annotations

from pathlib import Path

from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"


def _doc(title: str) -> bytes:
    return f"<html lang=en><head><title>{title}</title></head><body>x</body></html>".encode()


def _view(tmp_path: Path, link: str):  # type: ignore[no-untyped-def]
    headers = {"content-type": "text/html", "link": link}
    fetched = [
        Fetched(S + "/", 200, None, "", {"content-type": "text/html"}, _doc("Home"), 60, 0.01),
        Fetched(S + "/copy", 200, None, "", headers, _doc("Copy"), 60, 0.01),
    ]
    cf = crawl_file_of(tmp_path / "c.db", S + "/", fetched)
    try:
        return load_view(cf.conn)
    finally:
        cf.close()


def test_audit_canonical_in_a_link_header_is_the_pages(tmp_path: Path) -> None:
    view = _view(tmp_path, f'<{S}/>; rel="canonical"')
    page = view.by_url[S + "/copy"]
    assert (page.canonical, page.indexable) == (S + "/", False)
    fired = {(f.rule_id, f.url) for f in run_rules(view).findings}
    assert ("canonical-missing", S + "/copy") not in fired
    assert ("canonicalised", S + "/copy") in fired


def test_audit_hreflang_in_a_link_header_is_the_pages(tmp_path: Path) -> None:
    view = _view(
        tmp_path, f'<{S}/copy>; rel="alternate"; hreflang="en", <{S}/>; rel="alternate"; '
        'hreflang="x-default"',
    )  # fmt: skip
    assert view.by_url[S + "/copy"].hreflang == [("en", S + "/copy"), ("x-default", S + "/")]
