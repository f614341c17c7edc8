"""Review of 2c4a28e (feeds/_encoding.strip_doctype, the quote-aware _DOCTYPE).

The quote-aware pattern is tried first, and the loose one (quotes read as plain characters)
only when it finds no match at all. A DOCTYPE whose literal misses its closing quote is then
matched by the quote-aware pattern whenever the document after it holds the closing quote:
an apostrophe in a title ("Bob's blog") closes 'rss.dtd>... and the DOCTYPE "ends" at the
next '>' after it, so the root element and the channel's head are cut away with it and the
feed is "not a feed: root element 'link'". Before 2c4a28e the DOCTYPE ended at its first '>'
and the same bytes gave all five entries."""

from __future__ import annotations

import pytest

from fairfetch.feeds._encoding import strip_doctype
from fairfetch.feeds.parse import parse_feed

ITEMS = b"".join(
    b"<item><title>Item %d</title><link>https://ex.test/%d</link></item>" % (i, i)
    for i in range(5)
)
BODY = (
    b'<rss version="2.0"><channel><title>Bob\'s blog</title><link>https://ex.test/</link>'
    + ITEMS + b"</channel></rss>"
)
CASES = {
    "single": b"<!DOCTYPE rss SYSTEM 'rss.dtd>",
    "double": b'<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN>',
}


def _doc(doctype: bytes, quote: bytes) -> bytes:
    # The body holds one closing quote of the literal's kind, as text (an apostrophe, 5").
    body = BODY if quote == b"'" else BODY.replace(b"Bob's blog", b'The 5" screens blog')
    return b'<?xml version="1.0"?>\n' + doctype + b"\n" + body


@pytest.mark.parametrize("name", sorted(CASES))
def test_review_doctype_with_an_unclosed_literal_is_stripped_alone(name: str) -> None:
    doctype = CASES[name]
    data = _doc(doctype, b"'" if name == "single" else b'"')
    out, _ = strip_doctype(data)
    # Only the DOCTYPE goes (up to its first '>', as before 2c4a28e); the document stays whole.
    assert out == data.replace(doctype, b"")
    feed = parse_feed(data)
    assert feed.ok, feed.problems
    assert [e.title for e in feed.entries] == [f"Item {i}" for i in range(5)]
