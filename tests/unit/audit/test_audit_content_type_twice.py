"""A Content-Type sent twice (an application and a proxy both set it) reaches the audit as the
fetch engine joins repeated headers: "text/html, text/html; charset=utf-8". Browsers read such
a page as HTML (the Fetch standard's "extract a MIME type" takes the last type of the list); it
was "not HTML": never parsed, non-indexable, out of every page rule. (One whose first value had
a charset was read right by chance: the text before its first ";" was "text/html".)"""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit.indexability import indexability, is_html
from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.view import PageRow, load_view

from .conftest import crawl_file_of

S = "http://site.test"
TWICE = [
    "text/html; charset=utf-8, text/html; charset=utf-8", "text/html, text/html",
    "text/html, text/html; charset=utf-8",
    "text/plain, text/html", "application/octet-stream, text/html;charset=UTF-8",
]  # fmt: skip
NOT_HTML = ["text/html, application/pdf", "text/html, image/png; q=1", "", "text/html-ish"]


@pytest.mark.parametrize("value", TWICE)
def test_audit_content_type_sent_twice_is_read_as_browsers_do(value: str) -> None:
    assert is_html(value)
    assert PageRow(S + "/", content_type=value).is_html
    verdict = indexability(
        url=S + "/", status=200, error=None, content_type=value, meta_robots=None,
        x_robots_tag=None, canonical=None,
    )  # fmt: skip
    assert verdict == (True, "indexable")


@pytest.mark.parametrize("value", NOT_HTML)
def test_audit_last_content_type_not_html_is_not_html(value: str) -> None:
    assert not is_html(value)
    assert not PageRow(S + "/", content_type=value).is_html


def test_audit_page_with_content_type_twice_is_parsed(tmp_path: Path) -> None:
    doc = "<html lang=en><head><title>Caf\u00e9</title></head><body>x</body></html>".encode()
    headers = {"content-type": "text/html, text/html; charset=utf-8"}
    cf = crawl_file_of(tmp_path / "c.db", S + "/",
                       [Fetched(S + "/", 200, None, "", headers, doc, len(doc), 0.01)])
    try:
        page = load_view(cf.conn).by_url[S + "/"]
    finally:
        cf.close()
    assert (page.title, page.indexable, page.is_html) == ("Caf\u00e9", True, True)
