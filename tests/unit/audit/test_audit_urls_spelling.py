"""One page, one spelling: URLs the fetch engine would request alike normalise alike.

The fetch engine sends what yarl makes of a URL (percent-escapes of unreserved characters
decoded, hex in upper case, non-ASCII and unsafe characters escaped, IDN hosts in punycode).
Two spellings of one request must be one row, or the crawl fetches the page twice and reports
it as its own exact duplicate.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from yarl import URL

from fairfetch.audit.urls import normalize, resolve_link

BASE = "http://site.test/dir/page"
ORIGIN = "http://site.test"


@pytest.mark.parametrize(
    "spellings",
    [
        ["/a~b", "/a%7eb", "/a%7Eb", "http://site.test/a%7Eb"],
        ["/caf%C3%A9", "/café", "/caf%c3%a9", "http://site.test/café"],
        ["/a%20b", "/a b", "http://site.test/a%20b"],
        ["/p?q=~", "/p?q=%7e", "http://site.test/p?q=%7E"],
        ["/%41", "/A"],
        ["/x%E9", "/x%e9"],  # not UTF-8: kept escaped, hex in upper case
        ["/a%22b", '/a"b'],
    ],
)
def test_audit_one_request_one_spelling(spellings: list[str]) -> None:
    got = {resolve_link(BASE, s, ORIGIN) for s in spellings}
    got |= {resolve_link(BASE, s) for s in spellings}
    assert len(got) == 1, got
    (url,) = got
    assert url is not None
    assert str(URL(url)) == url  # what the fetch engine sends, byte for byte


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://[::1]:80/", "http://[::1]/"),
        ("http://[2001:DB8::1]:8080/x?y=1#z", "http://[2001:db8::1]:8080/x?y=1"),
        ("https://[fd00::1]/", "https://[fd00::1]/"),
        ("http://Bücher.test/", "http://xn--bcher-kva.test/"),
        ("http://xn--bcher-kva.test/", "http://xn--bcher-kva.test/"),
        ("http://site.test/x?", "http://site.test/x"),
        ("http://site.test:/x", "http://site.test/x"),
        ("http://user:pw@site.test/", "http://site.test/"),
    ],
)
def test_audit_normalize_hosts(raw: str, expected: str) -> None:
    assert normalize(raw) == expected
    assert normalize(expected) == expected


_CHARS = "/.?=&%:@~-_aAzZ09 \"'<>{}|^`[]é€😀"


@given(st.text(alphabet=_CHARS, max_size=16))
@settings(max_examples=500, deadline=None)
def test_audit_normalized_urls_are_what_is_sent(path: str) -> None:
    """Whatever the page wrote, the stored URL is the request the fetch engine makes."""
    url = normalize("http://site.test/" + path)
    if url is None:
        return
    assert normalize(url) == url
    assert str(URL(url)) == url
