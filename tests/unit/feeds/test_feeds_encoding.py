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


# Labels read as browsers read them (WHATWG): the superset the bytes on the web are written in.
# Each title uses a character only the superset has (NEC kanji, Windows-949 and GB18030
# extensions, Windows-1254 curly quotes in the C1 range).
@pytest.mark.parametrize(("label", "codec", "title"), [
    ("Shift_JIS", "cp932", "第①章 ～ 髙橋"),
    ("EUC-KR", "cp949", "똠방각하"),
    ("GB2312", "gb18030", "€ 和 𠀀"),
    ("ISO-8859-9", "cp1254", "“Türkçe” — €"),
])
def test_feeds_encoding_labels_read_as_their_web_superset(
    label: str, codec: str, title: str
) -> None:
    data = (
        f'<?xml version="1.0" encoding="{label}"?>'
        f"<rss version='2.0'><channel><title>{title}</title></channel></rss>"
    ).encode(codec)
    for headers in (None, {"Content-Type": f"application/rss+xml; charset={label}"}):
        feed = parse_feed(data, None, headers)
        assert feed.title == title, headers
        assert not any("replaced" in p for p in feed.problems)


def test_feeds_encoding_a_binary_codec_name_is_no_charset() -> None:
    """"base64" names a Python codec, not a charset: an unknown declaration, read as UTF-8."""
    data = doc("base64").encode("utf-8")
    feed = parse_feed(data)
    assert feed.title == TITLE
    assert "unknown declared encoding 'base64'" in feed.problems
