"""Lifting bodies out before parsing changes nothing but speed (differential tests).

Every document is parsed twice: with every text run and CDATA section lifted (the threshold
forced down to one byte, so each restore path is exercised, not only the article bodies) and
with lifting switched off (libxml2 reads everything). The two models must be equal.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import fairfetch.feeds._xml as xml
import fairfetch.feeds.parse as parse_module
from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Feed

from .conftest import DATA, case_inputs, case_request

ROOT = Path(__file__).resolve().parents[3]


@contextmanager
def _lifting(mode: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        if mode == "all":
            mp.setattr(xml, "_LIFT_MIN", 1)
        elif mode == "none":
            mp.setattr(parse_module, "lift_bodies", lambda data: (data, {}))
        yield


def _both(data: bytes, url: str | None = None,
          headers: dict[str, str] | None = None) -> tuple[Feed, Feed]:
    with _lifting("all"):
        lifted = parse_feed(data, url, headers)
    with _lifting("none"):
        whole = parse_feed(data, url, headers)
    return lifted, whole


def _assert_same(data: bytes, url: str | None = None,
                 headers: dict[str, str] | None = None) -> Feed:
    lifted, whole = _both(data, url, headers)
    assert lifted == whole
    for e in lifted.entries:
        assert not xml._MARK_RE.search((e.content or "") + (e.summary or "") + (e.title or ""))
    return lifted


CORPUS = [*case_inputs(), *sorted((DATA / "agreement").glob("*.xml"))]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_feeds_lift_changes_nothing_on_the_corpus(path: Path) -> None:
    url, headers = case_request(path) if path.parent.name == "cases" else (None, {})
    _assert_same(path.read_bytes(), url, headers)


def test_feeds_lift_changes_nothing_on_the_bench_corpus() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import parse as bench  # bench/parse.py
    finally:
        sys.path.pop(0)
    rng = random.Random(3)
    for doc in (bench.content_rss(rng, 0, 4, 9000), bench.content_atom(rng, 1, 4, 9000)):
        lifted, whole = _both(doc)
        assert lifted == whole
        with _lifting("default"):
            assert len(xml.lift_bodies(doc)[1]) == 4  # the real threshold lifts each body
            assert parse_feed(doc) == whole


def test_feeds_lift_escaped_atom_body_is_unescaped_exactly() -> None:
    body = "<p>caf\u00e9 &amp; \u201cq\u201d <a href=\"x?a=1&b=2\">l</a> &#8230; &#x1F600;</p>\n"
    from xml.sax.saxutils import escape
    doc = ('<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>e</id>'
           f'<content type="html">{escape(body * 60)}&#38;lt;</content></entry></feed>').encode()
    feed = _assert_same(doc)
    assert feed.entries[0].content == (body * 60 + "&lt;").strip()


@pytest.mark.parametrize(("raw", "text"), [
    (b"a &amp;lt; b", "a &lt; b"),
    (b"&#38;lt; &#8230; &#x1F600; &lt;p&gt;", "&lt; \u2026 \U0001F600 <p>"),
    (b"x\r\ny\rz &#13;", "x\ny\nz \r"),
    (b"&quot;&apos;&gt;", "\"'>"),
    (b"caf\xc3\xa9", "caf\u00e9"),
])
def test_feeds_lift_character_data_as_libxml2_reads_it(raw: bytes, text: str) -> None:
    assert xml._character_data(raw) == text


@pytest.mark.parametrize("raw", [
    b"&nbsp;", b"a & b", b"&#0;", b"&#xD800;", b"&#X41;", b"x\x01", b"caf\xe9", b"\xef\xbf\xbe",
    b"&#65", b"\xff&#65;",
])
def test_feeds_lift_character_data_leaves_what_libxml2_would_report(raw: bytes) -> None:
    assert xml._character_data(raw) is None


# Fragments that have broken lifting schemes: entities XML lacks, numeric references libxml2
# refuses, "]]>", CR LF, controls, markup inside comments and CDATA, ">" in attribute values.
# Half the documents use only well-formed fragments: a document with any error is parsed whole
# whatever was lifted, so only clean documents exercise the restore paths.
_CLEAN_TEXT = [
    "plain words ", "caf\u00e9 ", "\u65e5\u672c ", "&amp;", "&lt;p&gt;", "&quot;", "&apos;",
    "&#8230;", "&#x1F600;", "&#38;lt;", "\r\n", "\r", "\t", ">", "&#13;", "\ue000",
]
_HOSTILE_TEXT = ["&#0;", "&#xD800;", "&#X41;", "&nbsp;", "& ", "]]>", "\x01", "\ufffe", "&#65",
                 "&#99999999;"]
_CLEAN_MARKUP = [
    "<b>bold</b>", "<br/>", "<!-- <p> c -->", "<![CDATA[<p>x & y]]>", "<?pi x?>", "<?pi <p> ?>",
    "<b>x &amp; &lt;y&gt; \r\n &#13; <![CDATA[& <]]></b>",
]
# A ">" in an attribute value is well-formed, but a lift there breaks the skeleton: the
# document is then parsed whole (equal, only slower), so it is not "clean" here.
_HOSTILE_MARKUP = ["<i>", "</x>", "<a b='<'>", "<?pi <p> x?>", '<a title="1 > 0">t</a>']


@st.composite
def _documents(draw: st.DrawFn) -> tuple[bytes, bool]:
    clean = draw(st.booleans())
    text = st.sampled_from(_CLEAN_TEXT + ([] if clean else _HOSTILE_TEXT))
    markup = st.sampled_from(_CLEAN_MARKUP + ([] if clean else _HOSTILE_MARKUP))

    def chunk() -> str:
        return "".join(draw(st.lists(st.one_of(text, text, markup), max_size=12)))
    atom = draw(st.booleans())
    entries = []
    for i in range(draw(st.integers(1, 3))):
        body = chunk() * draw(st.integers(1, 40))
        summary = chunk()
        if atom:
            ctype = draw(st.sampled_from(["html", "text", "xhtml"]))
            inner = f"<div xmlns='http://www.w3.org/1999/xhtml'>{body}</div>" if (
                ctype == "xhtml") else body
            entries.append(f"<entry><id>e{i}</id><title>{chunk()}</title>"
                           f"<summary>{summary}</summary>"
                           f"<content type='{ctype}'>{inner}</content></entry>")
        else:
            entries.append(f"<item><guid>g{i}</guid><title>{chunk()}</title>"
                           f"<description>{summary}</description>"
                           f"<content:encoded>{body}</content:encoded></item>")
    if atom:
        doc = ("<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'>"
               f"<title>{chunk()}</title>{''.join(entries)}</feed>")
    else:
        doc = ("<rss version='2.0' xmlns:content='http://purl.org/rss/1.0/modules/content/'>"
               f"<channel><title>{chunk()}</title>{''.join(entries)}</channel></rss>")
    return doc.encode("utf-8", "surrogatepass"), clean


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_feeds_lift_changes_nothing_on_hostile_fragments(case: tuple[bytes, bool]) -> None:
    doc, clean = case
    _assert_same(doc)
    # And the lift really happened: a clean document libxml2 reads without error gives a
    # skeleton it reads without error (else every lift above was undone by the whole parse).
    _, whole_errors = parse_module._parse_tree(doc)
    if clean and not whole_errors:
        with _lifting("all"):
            skeleton, sections = xml.lift_bodies(doc)
        assert sections
        _, errors = parse_module._parse_tree(skeleton)
        assert not errors


def test_feeds_lift_scan_is_linear_on_hostile_runs() -> None:
    """">" everywhere and "]" everywhere: a quadratic scan would not finish (suite timeout)."""
    head = b"<rss version='2.0'><channel><title>G</title><item><guid>g</guid><description>"
    gt = head + b"a>" * 1_000_000 + b"</description></item></channel></rss>"
    assert parse_feed(gt).entries[0].summary == "a>" * 1_000_000
    truncated = head + b"a>" * 1_000_000  # no "<" after the run: every ">" would rescan it
    assert parse_feed(truncated).entries[0].summary == "a>" * 1_000_000
    brackets = (b"<rss version='2.0'><channel><title>B</title><item><guid>g</guid><description>"
                b"<![CDATA[" + b"]" * 2_000_000 + b"]]></description></item></channel></rss>")
    assert parse_feed(brackets).entries[0].summary == "]" * 2_000_000


@pytest.mark.parametrize("byte", [*range(0, 9), 11, 12, *range(14, 32)])
def test_feeds_lift_clean_refuses_each_forbidden_control(byte: int) -> None:
    body = b"caf\xc3\xa9 " * 300
    assert xml._clean(body)
    assert not xml._clean(body + bytes([byte]) + body)


def test_feeds_lift_clean_refuses_only_the_two_noncharacters_after_ef() -> None:
    assert xml._clean(b"\t\n\r \x7f\xc2\x85 \xef\xbc\x81 \xef\xbf\xbd \xef\xbb\xbf")  # U+FF01 ...
    assert not xml._clean(b"a \xef\xbf\xbe b")
    assert not xml._clean(b"a \xef\xbf\xbf b")


# Escaped runs are read by expat in one pass over all of a document's runs; the per-run reading
# (_character_data) is the reference, and the fallback from the first run expat refuses.
_RUN_FRAGMENTS = [f.encode("utf-8", "surrogatepass") for f in [
    *(t for t in _CLEAN_TEXT), *(t for t in _HOSTILE_TEXT if t != "]]>"),
    "&amp;lt;", "&#38;#38;", "&#x10FFFF;", "&#x110000;", "&#xFFFE;", "\ufdd0", "\x85", "&#x7f;",
    "&#9;&#10;", "&#65;&#x42;", "&amp;amp;", "&ap", "&;", "&#;", "&#x;", "a]]b", "\u00e9",
]] + [b"\xe9", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xef\xbf\xbf", b"\x00", b"\x1f"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_RUN_FRAGMENTS), max_size=8).map(b"".join),
                min_size=1, max_size=5))
def test_feeds_lift_runs_read_together_as_each_alone(raws: list[bytes]) -> None:
    assert xml._runs_text(raws) == [xml._character_data(r) for r in raws]


def test_feeds_lift_runs_fall_back_only_from_the_first_refused_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    per_run: list[bytes] = []

    def reference(raw: bytes) -> str | None:
        per_run.append(raw)
        return "per-run"
    monkeypatch.setattr(xml, "_character_data", reference)
    raws = [b"&lt;p&gt;caf\xc3\xa9 &amp;lt; &#8230;&#x1F600; x\r\ny &#13;", b"&nbsp;", b"&quot;"]
    assert xml._runs_text(raws) == ["<p>caf\u00e9 &lt; \u2026\U0001F600 x\ny \r", "per-run",
                                    "per-run"]
    assert per_run == raws[1:]


def test_feeds_lift_escaped_body_with_numeric_references_is_lifted() -> None:
    body = "<p>It\u2019s &amp; caf\u00e9 \u2026 &lt;b&gt; \U0001F600</p>\n" * 800  # > 32 KiB
    escaped = (body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
               .replace("\u2019", "&#8217;").replace("\u2026", "&#x2026;")
               .replace("\U0001F600", "&#128512;"))
    doc = ('<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>e</id>'
           f'<content type="html">{escaped}</content></entry></feed>').encode()
    with _lifting("default"):
        assert list(xml.lift_bodies(doc)[1].values()) == [body]
    assert _assert_same(doc).entries[0].content == body.strip()


def test_feeds_lift_cdata_split_around_its_terminator() -> None:
    """``]]>`` in CDATA text is written by ending the section after ``]]`` and opening another
    for ``>``: the large first section is lifted, the small second one read by libxml2."""
    body = "<p>" + "x[i]] " * 400 + "</p>"
    doc = ("<rss version='2.0' xmlns:content='http://purl.org/rss/1.0/modules/content/'>"
           "<channel><title>C</title><item><guid>g</guid><content:encoded>"
           f"<![CDATA[{body}]]]]><![CDATA[> tail]]></content:encoded></item></channel></rss>"
           ).encode()
    with _lifting("default"):
        assert list(xml.lift_bodies(doc)[1].values()) == [body + "]]"]
    assert _assert_same(doc).entries[0].content == body + "]]> tail"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b"[", b"<![CDATA[", b"<![", b"CDATA[", b"<", b"!", b"]", b"a"]),
                max_size=40).map(b"".join), st.integers(0, 400))
@example(b"[" * 8 + b"<![CDATA[", 0)
@example(b"[" * 7 + b"<![CDATA[", 0)
@example(b"a[" * 9 + b"<![CDATA[x", 1)
def test_feeds_lift_cdata_start_is_the_plain_search(data: bytes, pos: int) -> None:
    """The memchr-on-"[" search gives up after a few brackets and searches plainly from where
    it got to: the answer must be the plain search's, however many brackets come first."""
    pos = min(pos, len(data))
    assert xml._cdata_start(data, pos) == data.find(b"<![CDATA[", pos)


@pytest.mark.parametrize("extra", [-2, -1, 0, 1, 2])
def test_feeds_lift_cdata_threshold_boundary(extra: int) -> None:
    """A section is lifted exactly when its text reaches the threshold, "]" at its end
    included (the short sections are settled by a search bounded near the threshold)."""
    n = xml._LIFT_MIN + extra
    body = ("a" * (n - 2) + "]]")[-n:]
    doc = ("<rss version='2.0'><channel><title>B</title><item><guid>g</guid><description>"
           f"<![CDATA[{body}]]></description></item><item><guid>h</guid><description>"
           "<![CDATA[short]]></description></item></channel></rss>").encode()
    with _lifting("default"):
        sections = xml.lift_bodies(doc)[1]
        assert list(sections.values()) == ([body] if n >= xml._LIFT_MIN else [])
        feed = parse_feed(doc)
    assert [e.summary for e in feed.entries] == [body, "short"]
