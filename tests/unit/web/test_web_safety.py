"""What may become a link and what feed HTML survives: both directions."""

from __future__ import annotations

import pytest

from fairfetch.web.safety import plain_text, safe_url, sanitize_html


@pytest.mark.parametrize(
    "url",
    [
        "http://example.test/",
        "https://example.test/a?b=c#d",
        "HTTPS://EXAMPLE.TEST/",
        "mailto:someone@example.test",
        "  https://padded.test/  ",
    ],
)
def test_web_safe_url_keeps_web_and_mail_links(url: str) -> None:
    assert safe_url(url) == url.strip()


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "jav\x00ascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "DATA:image/svg+xml;base64,AAAA",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "//evil.test/x",
        "/relative/path",
        "http:///nohost",
        "mailto:",
        "",
        None,
        42,
        "http://[::1",
    ],
)
def test_web_safe_url_refuses_everything_else(url: object) -> None:
    assert safe_url(url) is None


def test_web_sanitize_drops_scripts_handlers_and_remote_loads() -> None:
    dirty = (
        '<p onclick="steal()">Hello <b>world</b><script>alert(1)</script>'
        '<a href="javascript:alert(2)">js</a><a href="https://ok.test/">ok</a>'
        '<img src="http://tracker.test/p.gif" onerror="alert(3)"><iframe src="http://x.test/">'
        '</iframe><style>body{}</style><svg onload="alert(4)"></svg>'
        '<a href="data:text/html,x">data</a></p>'
    )
    clean = sanitize_html(dirty)
    for bad in (
        "<script",
        "onclick",
        "onerror",
        "onload",
        "javascript:",
        "data:",
        "<img",
        "<iframe",
        "<style",
        "<svg",
        "tracker.test",
    ):
        assert bad not in clean, bad
    # what is harmless is kept: text, emphasis, safe links
    assert "Hello <b>world</b>" in clean
    assert '<a href="https://ok.test/"' in clean
    assert ">js</a>" in clean
    assert ">data</a>" in clean


def test_web_sanitize_of_nothing() -> None:
    assert sanitize_html(None) == ""
    assert sanitize_html("") == ""


def test_web_plain_text_strips_markup_and_cuts() -> None:
    assert plain_text("<b>a &amp; b</b><script>x()</script>  <i>c</i>") == "a & b c"
    assert plain_text("word " * 100, limit=20).endswith("…")
    assert len(plain_text("word " * 100, limit=20)) == 20


def _hrefs(html: str) -> list[str | None]:
    import re

    return [m.group(2) for m in re.finditer(r"<a( href=\"([^\"]*)\")?[^>]*>", html)]


def test_web_sanitize_resolves_relative_links_against_the_publisher() -> None:
    """A feed's HTML is written for the publisher's page: a relative link shown on ours would
    point into the directory ('/p/2' → our /p/2, a 404; '?notice=deleted' → our notice)."""
    dirty = (
        '<a href="/p/2">a</a><a href="three">b</a><a href="#note">c</a>'
        '<a href="//cdn.example/y">d</a><a href="?notice=deleted">e</a>'
        '<a href="https://other.example/z">f</a><a href="mailto:me@blog.example">g</a>'
        '<a href="javascript:alert(1)">h</a><a href="/x javascript:alert(1)">i</a>'
    )
    clean = sanitize_html(dirty, base="https://blog.example/p/1")
    assert _hrefs(clean) == [
        "https://blog.example/p/2",
        "https://blog.example/p/three",
        "https://blog.example/p/1#note",
        "https://cdn.example/y",
        "https://blog.example/p/1?notice=deleted",
        "https://other.example/z",
        "mailto:me@blog.example",
        None,
        "https://blog.example/x%20javascript:alert(1)",
    ]
    assert 'href="javascript:' not in clean
    for text in "abcdefghi":
        assert f">{text}</a>" in clean  # every link's text is kept


@pytest.mark.parametrize("base", [None, "", "javascript:alert(1)", "data:text/html,x", "/rel"])
def test_web_sanitize_without_a_web_base_leaves_relative_links_without_a_target(
    base: str | None,
) -> None:
    clean = sanitize_html('<a href="/p/2">a</a><a href="https://ok.example/">b</a>', base=base)
    assert _hrefs(clean) == [None, "https://ok.example/"]
    assert ">a</a>" in clean
