"""A page is read in the encoding a browser reads it in (the HTML Standard's order: byte-order
mark, then the HTTP charset, then a <meta> charset in the first 1024 bytes, else UTF-8 — or
Windows-1252 when the bytes are not UTF-8). Titles, descriptions, anchors and word counts of
older sites in Windows-1252, Shift_JIS or EUC-KR were U+FFFD soup: wrong lengths and pixel
widths, false duplicates."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from fairfetch.audit.extract import extract_page
from fairfetch.audit.pagerows import Fetched

from .conftest import crawl_file_of

URL = "http://site.test/"
TITLE = "Café “naïve” – €5"
ANCHOR = "Résumé"


def _page(meta: str = "") -> str:
    return (
        f"<!doctype html><html lang=fr><head>{meta}<title>{TITLE}</title>"
        f'<meta name="description" content="{TITLE}"></head>'
        f'<body><h1>{TITLE}</h1><a href="/r%C3%A9sum%C3%A9">{ANCHOR}</a></body></html>'
    )


@pytest.mark.parametrize(("body", "content_type"), [
    # <meta charset>, and the older http-equiv form, with no charset over HTTP
    (_page('<meta charset="windows-1252">').encode("cp1252"), "text/html"),
    (_page('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">')
     .encode("cp1252"), None),
    # The HTTP charset, with no <meta>; and over a <meta> that says otherwise
    (_page().encode("cp1252"), "text/html; charset=windows-1252"),
    (_page('<meta charset="utf-8">').encode("cp1252"), "text/html; charset=iso-8859-1"),
    # A byte-order mark over both
    (codecs.BOM_UTF8 + _page('<meta charset="windows-1252">').encode("utf-8"),
     "text/html; charset=windows-1252"),
    (codecs.BOM_UTF16_LE + _page().encode("utf-16-le"), "text/html"),
    # Nothing declared: UTF-8 when the bytes are UTF-8, else what browsers fall back to
    (_page().encode("utf-8"), "text/html"),
    (_page().encode("cp1252"), "text/html"),
    # A <meta> claiming UTF-16 on bytes that are not: UTF-8, as the Standard says
    (_page('<meta charset="utf-16">').encode("utf-8"), None),
])
def test_audit_page_text_is_read_in_the_page_encoding(
    body: bytes, content_type: str | None
) -> None:
    facts = extract_page(body, URL, content_type)
    assert facts.titles == [TITLE]
    assert facts.descriptions == [TITLE]
    assert facts.h1s == [TITLE]
    assert [(link.url, link.anchor) for link in facts.links] == [
        ("http://site.test/r%C3%A9sum%C3%A9", ANCHOR)
    ]


@pytest.mark.parametrize(("codec", "label", "title"), [
    ("cp932", "Shift_JIS", "第①章　日本語のページ"),
    ("cp949", "EUC-KR", "한국어 페이지"),
])
def test_audit_cjk_page_by_http_charset_or_meta(codec: str, label: str, title: str) -> None:
    html = f"<html><head><title>{title}</title></head><body><p>{title}</p></body></html>"
    by_http = extract_page(html.encode(codec), URL, f"text/html; charset={label}")
    by_meta = extract_page(
        html.replace("<head>", f'<head><meta charset="{label}">').encode(codec), URL, None
    )
    assert by_http.titles == by_meta.titles == [title]
    assert by_http.word_count == by_meta.word_count == len(title.split())


def test_audit_page_rows_hold_the_decoded_title(tmp_path: Path) -> None:
    """Through the row builder into the crawl file, as a crawl writes it."""
    body = _page('<meta charset="windows-1252">').encode("cp1252")
    headers = {"content-type": "text/html"}
    cf = crawl_file_of(tmp_path / "c.db", URL, [Fetched(URL, 200, None, "", headers, body,
                                                        len(body), 0.01)])
    try:
        row = cf.conn.execute("SELECT title, meta_description, h1 FROM pages").fetchone()
        anchors = [r[0] for r in cf.conn.execute("SELECT anchor FROM links")]
    finally:
        cf.close()
    assert (row[0], row[1], json.loads(row[2])) == (TITLE, TITLE, [TITLE])
    assert anchors == [ANCHOR]


def test_audit_title_collapses_html_white_space_only() -> None:
    """Runs of ASCII white space are one space, as browsers show them; an ideographic space
    (U+3000, a full em of a Japanese title) and a no-break space are text."""
    title = " Tokyo \n\t 東京\u3000公式サイト\u00a0| Home "
    body = f"<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"
    facts = extract_page(body.encode("utf-8"), URL, "text/html; charset=utf-8")
    assert facts.titles == facts.h1s == ["Tokyo 東京\u3000公式サイト\u00a0| Home"]
