"""OPML import and export (fairfetch.opml): pure bytes in, outlines out, and back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.errors import InputError
from fairfetch.opml import Outline, build_opml, parse_opml, read_opml


def test_opml_outlines_in_order_with_their_category_and_no_duplicates() -> None:
    data = b"""<?xml version="1.0"?><opml version="2.0"><head><title>x</title></head><body>
    <outline text="Tech"><outline text="A" xmlUrl="https://a.example/feed"/>
      <outline text="B" title="Bee" xmlUrl=" https://b.example/rss "/></outline>
    <outline text="A again" xmlUrl="https://a.example/feed"/>
    <outline text="folder without feeds"/>
    </body></opml>"""
    assert parse_opml(data) == [
        Outline("https://a.example/feed", "A", "Tech"),
        Outline("https://b.example/rss", "Bee", "Tech"),
    ]


@pytest.mark.parametrize("data", [b"", b"<html><body>no</body></html>", b"\x00\x01garbage"])
def test_opml_not_an_opml_document_names_the_file(data: bytes) -> None:
    with pytest.raises(InputError) as err:
        parse_opml(data, name="subs.opml")
    assert "subs.opml" in str(err.value)


def test_opml_entities_are_not_expanded() -> None:
    laughs = b"""<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa">
    <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
    <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">]>
    <opml version="2.0"><body><outline text="&e;" xmlUrl="https://a.example/feed"/></body></opml>"""
    [outline] = parse_opml(laughs)
    assert outline.url == "https://a.example/feed"
    assert len(outline.title or "") < 1000


def test_opml_export_of_titles_xml_cannot_hold_still_reads_back() -> None:
    """A stored title may hold characters XML 1.0 forbids (a JSON Feed can carry U+FFFE or
    an escape character): the export drops them instead of failing the whole directory."""
    feeds = [
        ("https://a.example/feed", "caf\u00e9 \ufffe\x1b\x0b ok", "https://a.example/"),
        ("https://b.example/feed", "lone \ud800 half", None),
        ("https://c.example/feed", None, None),
    ]
    back = parse_opml(build_opml(feeds))
    assert back == [
        Outline("https://a.example/feed", "caf\u00e9  ok", None),
        Outline("https://b.example/feed", "lone  half", None),
        Outline("https://c.example/feed", "https://c.example/feed", None),
    ]


@given(st.lists(st.tuples(st.text(min_size=1), st.one_of(st.none(), st.text())), max_size=5))
def test_opml_export_never_fails_and_keeps_every_feed(rows: list[tuple[str, str | None]]) -> None:
    feeds = [(f"https://f{i}.example/{u}", title, None) for i, (u, title) in enumerate(rows)]
    back = parse_opml(build_opml(feeds))
    assert len(back) == len(feeds)


def test_opml_outline_with_an_empty_xmlurl_is_kept_to_be_reported() -> None:
    """A feed outline whose xmlUrl is empty is a bad entry (reported by import), not nothing;
    a folder (no xmlUrl attribute) is nothing."""
    doc = (b'<opml version="2.0"><body><outline text="Folder">'
           b'<outline text="Lost" xmlUrl=" "/><outline text="Ok" xmlUrl="http://a.test/f"/>'
           b"</outline></body></opml>")
    assert parse_opml(doc) == [
        Outline("", "Lost", "Folder"), Outline("http://a.test/f", "Ok", "Folder")
    ]


def test_opml_bare_ampersands_and_html_entities_are_read_as_written() -> None:
    """Hand-made OPML files often carry a query string's ``&`` unescaped, or an HTML entity in
    a title: recovery read ``?a=1&b=2`` as ``?a=1=2`` (another feed's URL, added without a
    word) and ``Caf&eacute;`` as ``Caf``."""
    doc = (b'<opml version="2.0"><body>'
           b'<outline text="Caf&eacute; &amp; Co" xmlUrl="http://a.test/feed?a=1&b=2&amp;c=3"/>'
           b'</body></opml>')
    assert parse_opml(doc) == [Outline("http://a.test/feed?a=1&b=2&c=3", "Caf\u00e9 & Co")]


def test_opml_undeclared_latin1_is_read_as_latin1() -> None:
    """An OPML file saved by an old tool in Latin-1 without saying so: its URLs and titles are
    read as Windows-1252, as a browser would, not turned into U+FFFD."""
    doc = ('<opml version="2.0"><body><outline text="Caf\u00e9" '
           'xmlUrl="http://a.test/caf\u00e9.xml"/></body></opml>').encode("latin-1")
    assert parse_opml(doc) == [Outline("http://a.test/caf\u00e9.xml", "Caf\u00e9")]


@pytest.mark.parametrize(
    "broken",
    [
        b'<outline text="Lost" xmlUrl=http://lost.test/feed />',  # attribute not quoted
        b'<outline text="Lost" xmlUrl="http://lost.test/feed"',  # tag never closed
        b'<outline text="f">' * 300 + b'<outline xmlUrl="http://lost.test/feed"/>'
        + b"</outline>" * 300,  # deeper than the parser goes
    ],
    ids=["unquoted", "unclosed", "too-deep"],
)
def test_opml_markup_that_loses_outlines_is_reported_with_its_line(broken: bytes) -> None:
    """Recovery keeps what it can read, but an outline it had to drop was dropped without a
    word (a folder for all it said): every error the parser met is reported, with its line,
    beside the outlines that were read."""
    doc = (b'<opml version="2.0"><body>\n<outline text="Kept" xmlUrl="http://kept.test/feed"/>\n'
           + broken + b"</body></opml>")
    outlines, problems = read_opml(doc, name="subs.opml")
    assert Outline("http://kept.test/feed", "Kept") in outlines
    assert problems
    assert all(p.startswith("line ") for p in problems)
    assert any(p.startswith("line 3") for p in problems)


def test_opml_a_well_formed_document_has_no_problems() -> None:
    doc = (b'<?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body>'
           b'<outline text="A" xmlUrl="http://a.test/f"/></body></opml>')
    assert read_opml(doc, name="subs.opml") == ([Outline("http://a.test/f", "A")], [])


@pytest.mark.parametrize(
    "link",
    ["javascript:alert(1)", "data:text/html,<script>x</script>", "java\tscript:alert(1)",
     "vbscript:x", "http:///no-host", "/relative/page"],
)
def test_opml_export_names_a_site_only_when_it_is_a_web_address(link: str) -> None:
    """A feed's <link> is the publisher's word and may be javascript: or data:; readers that
    import the file show htmlUrl as a link. `feeds export` wrote it as it came, where the
    directory's /feeds.opml names a site only when it is an http(s) address."""
    doc = build_opml([
        ("https://a.example/feed", "A", link), ("https://b.example/feed", "B", "https://b.example/"),
    ])
    assert b"htmlUrl" in doc  # the good one is kept
    assert doc.count(b"htmlUrl") == 1, doc
    assert b'htmlUrl="https://b.example/"' in doc


def test_opml_an_undeclared_namespace_prefix_is_no_problem() -> None:
    """Exporters write ``itunes:``/``dc:`` attributes without declaring the prefix: libxml2
    says so, but the outline is read whole, so it is not reported as a bad entry."""
    doc = (b'<opml version="2.0"><body><outline text="a" xmlUrl="http://a.test/f" '
           b'itunes:type="episodic" dc:creator="x"/></body></opml>')
    assert read_opml(doc, name="subs.opml") == ([Outline("http://a.test/f", "a")], [])
