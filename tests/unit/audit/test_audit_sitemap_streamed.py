"""Sitemaps read by expat, streaming, give what lxml's tree gave, for every input.

The crawl process no longer imports lxml for a well-formed sitemap (its RSS); the documents
expat does not read as lxml would (broken ones, a DOCTYPE, another encoding) go to lxml."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from fairfetch.audit.sitemapxml import _with_lxml, parse_sitemap

_NAMES = ["urlset", "sitemapindex", "url", "sitemap", "loc", "image:loc", "x:url", "b"]
_TEXT = st.lists(
    st.sampled_from(
        [" http://s.test/a ", "http://s.test/b?x=1&amp;y=2", "&#38;", "\t\n", "é",
         "<!-- c -->", "<?pi x?>", "<![CDATA[ c ]]>", "\u00a0", ""]
    ),
    max_size=3,
).map("".join)  # fmt: skip


@st.composite
def _element(draw: st.DrawFn, depth: int = 0) -> str:
    name = draw(st.sampled_from(_NAMES))
    ns = draw(st.sampled_from(["", ' xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"',
                               ' xmlns:image="i"', ' xmlns:x="x"']))  # fmt: skip
    parts = [draw(_TEXT)]
    if depth < 4:
        for _ in range(draw(st.integers(0, 3))):
            parts.append(draw(_element(depth + 1)))
            parts.append(draw(_TEXT))
    return f"<{name}{ns}>{''.join(parts)}</{name}>"


@st.composite
def _document(draw: st.DrawFn) -> bytes:
    root = draw(st.sampled_from(["urlset", "sitemapindex", "html"]))
    entry = "url" if root == "urlset" else "sitemap"
    body = "".join(
        f"<{entry}>{draw(_TEXT)}{draw(_element(2))}{draw(_TEXT)}</{entry}>"
        if draw(st.booleans()) else draw(_element(1))
        for _ in range(draw(st.integers(0, 4)))
    )  # fmt: skip
    head = draw(st.sampled_from(["", '<?xml version="1.0"?>', '<?xml version="1.0" '
                                 'encoding="UTF-8"?>', "\ufeff", "<!-- before -->",
                                 '<!DOCTYPE u [<!ENTITY a "x">]>']))  # fmt: skip
    # Mostly well-formed (expat's), sometimes broken (lxml's recover mode).
    tail = draw(st.sampled_from(["", "", "", "<!-- after -->", " junk", "<more/>"]))
    cut = draw(st.sampled_from([None, None, None, None, 10, 37]))
    if draw(st.integers(0, 5)) == 0:
        body = body.replace("é", draw(st.sampled_from(["a&b", "<", "]]>"])))
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="i" xmlns:x="x"'
    doc = f"{head}<{root} {ns}>{body}</{root}>"
    data = (doc + tail).encode()
    return data[:-cut] if cut else data


@settings(max_examples=300, deadline=None)
@given(_document())
def test_audit_sitemap_streamed_reads_what_lxml_reads(doc: bytes) -> None:
    assert parse_sitemap(doc) == _with_lxml(doc)


def test_audit_sitemap_streamed_cases_lxml_reads_its_own_way() -> None:
    cases = [
        b"<urlset><url><loc>a<!--c-->b</loc></url></urlset>",  # text ends at a child node
        b"<urlset><url><loc>a<?pi x?>b</loc></url></urlset>",
        b"<urlset><url><loc>a<![CDATA[ b ]]>c</loc></url></urlset>",
        b"<urlset><url><loc><b>x</b>tail</loc></url></urlset>",
        b"<urlset><url><loc>a&b</loc></url></urlset>",  # broken: lxml recovers
        b"<urlset><url><loc>a</loc></url>",  # cut short
        b'<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>caf\xe9</loc></url>'
        b"</urlset>",
        "<urlset><url><loc>é</loc></url></urlset>".encode("utf-16"),
        b"<urlset>" + b"<d>" * 300 + b"</d>" * 300 + b"<url><loc>deep</loc></url></urlset>",
        b"<urlset><url><loc>" + b"x" * 1_100_000 + b"</loc></url></urlset>",
    ]
    for doc in cases:
        assert parse_sitemap(doc) == _with_lxml(doc), doc[:80]
    assert parse_sitemap(cases[0]) == ("urlset", ["a"])
    assert parse_sitemap(cases[3])[0] == "urlset"


def test_audit_crawl_process_reads_a_sitemap_without_lxml() -> None:
    """The memory this saves: lxml is not loaded by the crawl's modules nor by a sitemap
    that is well-formed; a broken one still loads it (and is read)."""
    code = (
        "import sys\n"
        "import fairfetch.audit.crawler as c\n"
        "ok = b'<urlset><url><loc>http://s.test/a</loc></url></urlset>'\n"
        "assert c._parse_sitemap(ok) == ('urlset', ['http://s.test/a'])\n"
        "print('lxml' in sys.modules)\n"
        "assert c._parse_sitemap(b'<urlset><url><loc>a&b</loc></url>')[0] == 'urlset'\n"
        "print('lxml' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]
