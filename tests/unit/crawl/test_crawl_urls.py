"""normalize_feed_url: what `feeds add`, OPML import and the web form accept, and the clear error
naming the input for what they do not."""

from __future__ import annotations

import pytest

from fairfetch.crawl.urls import normalize_feed_url
from fairfetch.errors import InvalidURLError


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        # A byte that is not UTF-8 on the command line arrives as a lone surrogate
        # (surrogateescape); it used to reach the store and fail there with a traceback.
        ("https://a.example/\udcff", "not valid UTF-8"),
        ("https://a.example/feed\udce9.xml", "not valid UTF-8"),
        ("https://a.example/a\x00b", "control character"),
        ("https://a.example/a\x7fb", "control character"),
        ("https://a.exa\x01mple/feed", "control character"),
        # Host names the fetcher cannot use: they were added, then failed every crawl as an
        # "internal" error (never counted against the feed, so never dead either).
        ("https://" + "\u00e9" * 64 + ".example/feed", "not a valid host name"),
        ("https://\u200b.example/feed", "not a valid host name"),
    ],
)
def test_unusable_characters_are_refused_naming_the_input(raw: str, reason: str) -> None:
    with pytest.raises(InvalidURLError, match=reason) as caught:
        normalize_feed_url(raw)
    assert caught.value.reason.startswith(reason)
    assert repr(raw) in str(caught.value) or raw in str(caught.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://A.Example/Feed", "https://a.example/Feed"),
        ("a.example/feed#top", "https://a.example/feed"),
        ("https://a.example/caf\u00e9", "https://a.example/caf\u00e9"),  # an IRI is fine
        ("https://a.example:8443/", "https://a.example:8443/"),
    ],
)
def test_good_urls_are_kept(raw: str, expected: str) -> None:
    assert normalize_feed_url(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["http://bücher.test/feed", "http://BÜCHER.test/feed", "http://xn--bcher-kva.test/feed"],
)
def test_an_international_host_has_one_spelling(raw: str) -> None:
    """The host as the fetcher sends it (IDNA, as browsers' URL parser spells it): the Unicode
    and punycode spellings of one host were two feeds, crawled twice."""
    assert normalize_feed_url(raw) == "http://xn--bcher-kva.test/feed"


def test_a_url_too_long_to_store_is_refused_naming_it() -> None:
    # PostgreSQL refused the feeds.url index row (~2,700 bytes), SQLite took it: the add
    # failed with a database error on one backend only. Refused here, one error per entry.
    from fairfetch.crawl.urls import MAX_URL_BYTES

    base = "https://long.test/"
    ok = base + "a" * (MAX_URL_BYTES - len(base))
    assert normalize_feed_url(ok) == ok
    with pytest.raises(InvalidURLError) as err:
        normalize_feed_url(ok + "a")
    assert "2,001 bytes long" in str(err.value)
    assert "long.test" in str(err.value)
    # Bytes, not characters: a non-ASCII path counts as sent.
    with pytest.raises(InvalidURLError):
        normalize_feed_url(base + "é" * 1000)


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("http://x.test:80/f", "http://x.test/f"),
        ("https://x.test:443/f", "https://x.test/f"),
        ("HTTP://x.test:80", "http://x.test/"),
        ("http://x.test:443/f", "http://x.test:443/f"),  # another scheme's port is a port
        ("https://x.test:8443/f", "https://x.test:8443/f"),
    ],
)
def test_the_schemes_own_port_is_no_part_of_the_feeds_address(given: str, stored: str) -> None:
    # Two spellings of one URL were two feeds, crawled twice.
    assert normalize_feed_url(given) == stored


@pytest.mark.parametrize("raw", ["feed.xml", "index.rss", "blog.atom/feed", "site.php?x=1"])
def test_a_relative_path_is_not_taken_for_a_host(raw: str) -> None:
    """An OPML's relative xmlUrl ("feed.xml") was read as the host feed.xml and stored as
    https://feed.xml/: a scheme is guessed only for a host whose top-level domain exists."""
    with pytest.raises(InvalidURLError, match="no scheme") as caught:
        normalize_feed_url(raw)
    assert raw in str(caught.value)
    assert "full http(s):// URL" in caught.value.reason


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("example.com", "https://example.com/"),
        ("news.bbc.co.uk/feed", "https://news.bbc.co.uk/feed"),
        ("blog.test/feed.xml", "https://blog.test/feed.xml"),  # special-use TLDs are hosts
        ("printer.local/rss", "https://printer.local/rss"),
        ("127.0.0.1:8080/feed", "https://127.0.0.1:8080/feed"),
        ("bücher.de/feed", "https://xn--bcher-kva.de/feed"),
    ],
)
def test_a_bare_host_with_a_real_tld_still_gets_https(raw: str, expected: str) -> None:
    assert normalize_feed_url(raw) == expected
