"""Which encoding a feed is really in: BOM, HTTP charset, declaration, and the bytes' veto."""

from __future__ import annotations

import codecs

import pytest

from fairfetch.feeds import parse_feed

TITLE = "Café “quotes” — €5"


def doc(decl: str | None) -> str:
    head = f'<?xml version="1.0" encoding="{decl}"?>' if decl else ""
    return f"{head}<rss version='2.0'><channel><title>{TITLE}</title></channel></rss>"


@pytest.mark.parametrize(("data", "headers"), [
    (doc("utf-8").encode("utf-8"), None),
    (codecs.BOM_UTF8 + doc(None).encode("utf-8"), None),
    (codecs.BOM_UTF16_LE + doc("utf-16").encode("utf-16-le"), None),
    (codecs.BOM_UTF16_BE + doc("utf-16").encode("utf-16-be"), None),
    (doc("windows-1252").encode("cp1252"), None),
    (doc("utf-8").encode("cp1252"), None),  # declared UTF-8, written in Windows-1252
    (doc("iso-8859-1").encode("utf-8"), None),  # declared Latin-1, written in UTF-8
    (doc("utf-8").encode("cp1252"), {"Content-Type": "text/xml; charset=windows-1252"}),
    (doc(None).encode("cp1252"), {"content-type": "application/rss+xml;charset=\"cp1252\""}),
])
def test_feeds_encoding_title_survives(data: bytes, headers: dict[str, str] | None) -> None:
    assert parse_feed(data, None, headers).title == TITLE


def test_feeds_encoding_overruled_declaration_is_a_problem() -> None:
    feed = parse_feed(doc("utf-8").encode("cp1252"))
    assert feed.encoding == "cp1252"
    assert any("utf-8" in p and "cp1252" in p for p in feed.problems)


def test_feeds_encoding_valid_utf8_reports_nothing() -> None:
    feed = parse_feed(doc("utf-8").encode("utf-8"))
    assert feed.problems == []
    assert feed.encoding == "utf-8"


def test_feeds_encoding_html_entities_in_xml() -> None:
    data = b"<rss version='2.0'><channel><title>a&nbsp;&eacute;&hellip;</title>" \
           b"<item><title>x</title><description><![CDATA[&nbsp; stays]]></description>" \
           b"</item></channel></rss>"
    feed = parse_feed(data)
    assert feed.title == "a\u00a0é…"
    assert feed.entries[0].summary == "&nbsp; stays"  # CDATA is the publisher's text
