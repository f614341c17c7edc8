"""References to UTF-16 surrogates next to markup that only looks like CDATA: libxml2 stores
such a reference as bytes no decoder takes, so every one it reads as character data must be
replaced before the tree is read. A "<![CDATA[" inside a processing instruction, a comment or
an attribute value opens no CDATA section, and the references after it are character data
(found by hypothesis: the golden case broken_surrogate_references with "<![CDATA[" put inside
its XML declaration cost the whole feed, 'internal parser error: UnicodeDecodeError')."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed

from .conftest import CASES

HEAD = b"<rss version='2.0'><channel><title>t &#xD800;</title>"
# a real CDATA section after them: a scan that took the opener for one ran on to its end
ITEM = (b"<item><guid>1</guid><title>&#xD83D;&#xDE00; &#xDE00;</title>"
        b"<description><![CDATA[<p>&#xD800;</p>]]></description></item></channel></rss>")


@pytest.mark.parametrize("markup", [
    b"<?pi <![CDATA[ ?>", b"<!-- <![CDATA[ -->", b"<x a='&lt;![CDATA['/>",
    b"<x a='<![CDATA['/>", b"<x a='<!--'/>", b"<x a='<?'/>",
], ids=["in-pi", "in-comment", "escaped-in-attribute", "in-attribute", "comment-in-attribute",
        "pi-in-attribute"])
def test_feeds_surrogate_refs_after_markup_that_opens_no_cdata(markup: bytes) -> None:
    feed = parse_feed(HEAD + markup + ITEM)
    assert not [p for p in feed.problems if p.startswith("internal parser error")]
    assert feed.ok
    assert feed.title == "t \ufffd"
    assert [e.title for e in feed.entries] == ["\U0001F600 \ufffd"]
    assert "character references to surrogates or past U+10FFFF replaced" in feed.problems
    assert (feed.entries[0].summary or "").startswith("<p>")


def test_feeds_surrogate_refs_after_cdata_opener_in_the_xml_declaration() -> None:
    data = (CASES / "broken_surrogate_references.feed.xml").read_bytes()
    feed = parse_feed(data.replace(b"<?x", b"<?x<![CDATA[", 1))
    assert not [p for p in feed.problems if p.startswith("internal parser error")]
    assert feed.title == "Surrogates \U0001F600 escaped as UTF-16"
    assert [e.title for e in feed.entries] == ["Smile \U0001F600\U0001F600", "Second"]
    # a real CDATA section further on is still the publisher's text, left as written
    assert feed.entries[0].categories == ["&#xD800; stays as written in CDATA"]


def test_feeds_surrogate_refs_inside_real_cdata_comment_and_pi_left_as_written() -> None:
    doc = (b"<rss version='2.0'><channel><title>&#xD800;</title><!-- &#xD800; -->"
           b"<?pi &#xD800; ?><item><guid>1</guid>"
           b"<title><![CDATA[&#xD83D;&#xDE00;]]></title></item></channel></rss>")
    feed = parse_feed(doc)
    assert feed.title == "\ufffd"
    assert [e.title for e in feed.entries] == ["&#xD83D;&#xDE00;"]
