"""Relative URLs inside an entry's HTML (content, summary) under an ``xml:base``: only the parser
knows that base, so it resolves them, as feedparser does. Later readers of the content (the
notification mail resolves what is left against the entry's link) would otherwise put the
images of ``<entry xml:base="…/post/">`` one directory too high when the link has no trailing
slash. Without an xml:base the content is left as written (the mail resolves it against the
entry's own link, where the post's relative links were written to work)."""

from __future__ import annotations

import feedparser
import pytest

from fairfetch.feeds import parse_feed

URL = "https://example.com/feed.atom"


def _atom(content: str, *, entry_base: str = "https://example.com/2024/05/post/",
          content_attrs: str = "") -> bytes:
    from xml.sax.saxutils import escape

    return (
        "<feed xmlns='http://www.w3.org/2005/Atom'><title>F</title><id>urn:f</id>"
        f"<entry xml:base='{entry_base}'><id>urn:1</id><title>P</title>"
        "<link href='https://example.com/2024/05/post'/>"
        f"<summary type='html'>{escape(content)}</summary>"
        f"<content type='html'{content_attrs}>{escape(content)}</content>"
        "</entry></feed>").encode()


CASES = [
    ('<img src="photo.jpg">', '<img src="https://example.com/2024/05/post/photo.jpg">'),
    ("<a href='../other/'>x</a>", "<a href='https://example.com/2024/05/other/'>x</a>"),
    ('<a href=/about>x</a>', '<a href=https://example.com/about>x</a>'),
    ('<video poster="p.png" src="v.mp4"></video>',
     '<video poster="https://example.com/2024/05/post/p.png" '
     'src="https://example.com/2024/05/post/v.mp4"></video>'),
    ('<A HREF="x.html">x</A>', '<A HREF="https://example.com/2024/05/post/x.html">x</A>'),
    ('<img srcset="a.jpg 1x, /b.jpg 2x">',
     '<img srcset="https://example.com/2024/05/post/a.jpg 1x, https://example.com/b.jpg 2x">'),
]


@pytest.mark.parametrize(("html", "resolved"), CASES)
def test_feeds_content_relative_urls_resolve_against_xml_base(html: str, resolved: str) -> None:
    entry = parse_feed(_atom(html), URL).entries[0]
    assert entry.content == resolved
    assert entry.summary == resolved


@pytest.mark.parametrize("html", [
    '<a href="https://other.example/x">x</a>', '<a href="mailto:a@example.com">m</a>',
    '<a href="#note-1">1</a>', '<p>write &lt;img src="x.png"&gt; to show it</p>',
    '<p>src="x.png" in plain text</p>', '<a href="">empty</a>', "<p>no links</p>",
    '<img src="data:image/png;base64,AAAA">',
])
def test_feeds_content_what_is_not_a_relative_url_is_left_alone(html: str) -> None:
    assert parse_feed(_atom(html), URL).entries[0].content == html


def test_feeds_content_base_on_the_content_element_wins() -> None:
    doc = _atom('<img src="i.png">', content_attrs=" xml:base='https://cdn.example.com/m/'")
    entry = parse_feed(doc, URL).entries[0]
    assert entry.content == '<img src="https://cdn.example.com/m/i.png">'
    assert entry.summary == '<img src="https://example.com/2024/05/post/i.png">'


def test_feeds_content_without_xml_base_is_left_as_written() -> None:
    doc = (b"<rss version='2.0'><channel><title>F</title><item><guid>1</guid>"
           b"<link>https://example.com/2024/05/post/</link>"
           b"<description>&lt;img src=\"photo.jpg\"&gt;</description></item></channel></rss>")
    assert parse_feed(doc, "https://example.com/feed").entries[0].summary == '<img src="photo.jpg">'


def test_feeds_content_agrees_with_feedparser_on_the_image_url() -> None:
    doc = _atom('<p><img src="photo.jpg"> <a href="../other/">x</a></p>')
    fp = feedparser.parse(doc, response_headers={"content-location": URL})
    ours = parse_feed(doc, URL).entries[0].content or ""
    theirs = fp.entries[0].content[0].value
    for url in ("https://example.com/2024/05/post/photo.jpg", "https://example.com/2024/05/other/"):
        assert url in theirs
        assert url in ours
