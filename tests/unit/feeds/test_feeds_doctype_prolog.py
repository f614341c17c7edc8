"""The DOCTYPE is found wherever the prolog puts it, and only there.

strip_doctype looked in the first 4 KB: behind a longer comment an entity bomb kept its DTD and
libxml2 stopped the parse at its amplification limit, losing every entry (the acceptance tests
have the bombs). These pin the prolog scan itself."""

from __future__ import annotations

from fairfetch.feeds._encoding import strip_doctype

ROOT = b'<rss version="2.0"><channel><title>t</title></channel></rss>'


def test_feeds_doctype_after_instructions_and_comments_is_removed() -> None:
    data = (
        b'<?xml version="1.0"?>\n<?xml-stylesheet href="s.xsl"?>' + b"<!--" + b"c" * 9000
        + b'--><!DOCTYPE rss [<!ENTITY e "x">]>' + ROOT
    )
    out, entities = strip_doctype(data)
    assert entities
    assert b"DOCTYPE" not in out
    assert out.endswith(ROOT)


def test_feeds_doctype_text_inside_a_comment_is_left_alone() -> None:
    data = b'<?xml version="1.0"?><!-- <!DOCTYPE rss [<!ENTITY e "x">]> -->' + ROOT
    assert strip_doctype(data) == (data, False)


def test_feeds_no_doctype_is_looked_for_past_the_root_element() -> None:
    data = b"<?xml version=\"1.0\"?>" + ROOT[:-6] + b'<!DOCTYPE x [<!ENTITY e "x">]></rss>'
    assert strip_doctype(data) == (data, False)


def test_feeds_doctype_with_quoted_gt_or_an_unbalanced_quote_is_removed_whole() -> None:
    quoted = b'<!DOCTYPE rss SYSTEM "a>b.dtd" [<!ENTITY e "]x">]>'
    out, entities = strip_doctype(b'<?xml version="1.0"?>' + quoted + ROOT)
    assert (out, entities) == (b'<?xml version="1.0"?>' + ROOT, True)
    unbalanced = b"<!DOCTYPE rss SYSTEM \"it's [<!ENTITY e 'x'>]>"
    out, _ = strip_doctype(unbalanced + ROOT)
    assert out == ROOT


def test_feeds_unterminated_prolog_is_left_alone() -> None:
    for data in (b"<!-- never closed " + ROOT, b"<?xml never closed " + ROOT, b"no markup"):
        assert strip_doctype(data) == (data, False)
