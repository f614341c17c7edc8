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
