"""Review of 2c4a28e (feeds/_encoding._doctype_start): a prolog instruction without its '?>'.

The new scan skips an instruction up to its '?>' and, finding none, decides there is no
DOCTYPE. libxml2 (recover=True) does not stop there: a declaration missing its '?'
(``<?xml version="1.0">``) is an error it recovers from at the next '>', and it then reads the
DOCTYPE and its entity declarations. So the DTD that strip_doctype is there to remove is kept:
in an OPML file libxml2 expands internal entities in attribute values (opml.py says so), and an
outline's xmlUrl becomes what the entity says; in a feed an entity bomb stops the parse at
libxml2's amplification limit and the entries after it are lost (the symptom 2c4a28e fixed
for a long comment). Before 2c4a28e the DOCTYPE was found (first 4 KB) and removed."""

from __future__ import annotations

from fairfetch.feeds._encoding import strip_doctype
from fairfetch.feeds.parse import parse_feed
from fairfetch.opml import read_opml

BROKEN_DECL = b'<?xml version="1.0">\n'  # '?>' missing: recovered from at the '>'
LOL = b'<!ENTITY lol "lol">' + b"".join(
    b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
    for i in range(1, 10)
)
def test_review_doctype_after_a_broken_declaration_is_stripped() -> None:
    doctype = b'<!DOCTYPE x [<!ENTITY e "EXPANDED">]>'
    data = BROKEN_DECL + doctype + b"<opml/>"
    out, entities = strip_doctype(data)
    assert (out, entities) == (BROKEN_DECL + b"<opml/>", True)


def test_review_opml_entities_after_a_broken_declaration_do_not_make_the_urls() -> None:
    data = (BROKEN_DECL + b'<!DOCTYPE opml [<!ENTITY e "evil.test/x">]>'
            b'<opml version="2.0"><body><outline text="a" type="rss" '
            b'xmlUrl="https://&e;"/></body></opml>')
    outlines, _problems = read_opml(data)
    assert all("evil.test" not in o.url for o in outlines), outlines


def test_review_feed_with_a_bomb_after_a_broken_declaration_keeps_its_entries() -> None:
    data = (BROKEN_DECL + b"<!DOCTYPE feed [" + LOL + b"]>"
            b'<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
            b'<entry><id>x1</id><title>one</title><link href="https://e.test/&lol9;"/></entry>'
            b"<entry><id>x2</id><title>two</title></entry></feed>")
    feed = parse_feed(data)
    assert [e.id for e in feed.entries] == ["x1", "x2"], feed.problems
    assert "DTD entity declarations ignored" in feed.problems
