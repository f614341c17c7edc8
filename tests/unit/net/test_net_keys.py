"""Politeness keys (PSL, private section, backends, IPs) and backend grouping by evidence."""

from __future__ import annotations

import pytest

from fairfetch.net.backends import BACKENDS, detect_backend
from fairfetch.net.politeness import (
    BackendGrouper,
    host_of,
    politeness_key,
    registrable_domain,
)


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("example.com", "example.com"),
        ("www.example.com", "example.com"),
        ("a.b.example.co.uk", "example.co.uk"),
        ("foo.blogspot.com", "foo.blogspot.com"),  # the PSL's private section says so
        ("x.github.io", "x.github.io"),
        ("feeds.example.test", "example.test"),  # unknown TLD: "*" rule
        ("WWW.Example.COM.", "example.com"),
        ("127.0.0.1", "127.0.0.1"),
        ("::1", "::1"),
        ("com", "com"),
        ("localhost", "localhost"),
    ],
)
def test_registrable_domain(host: str, domain: str) -> None:
    assert registrable_domain(host) == domain


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://www.example.com/feed", "example.com"),
        ("https://blog.example.com/feed", "example.com"),  # shares www's budget
        ("http://a.b.example.co.uk/x", "example.co.uk"),
        # private-section suffix: one backend serves every blog under it
        ("https://foo.blogspot.com/feeds/posts/default", "blogspot.com"),
        ("https://bar.blogspot.com/", "blogspot.com"),
        ("https://someone.github.io/feed.xml", "github.io"),
        ("https://github.io/", "github.io"),
        # IP literals key by themselves
        ("http://127.0.0.1:8080/feed", "127.0.0.1"),
        ("http://[::1]:8080/feed", "::1"),
        ("example.org", "example.org"),
        ("example.org:8443", "example.org"),
    ],
)
def test_politeness_key(url: str, key: str) -> None:
    assert politeness_key(url) == key


def test_backend_beats_everything() -> None:
    assert politeness_key("https://news.custom-domain.com/feed", "backend:substack") == (
        "backend:substack"
    )
    assert politeness_key("https://foo.blogspot.com/", "backend:blogger") == "backend:blogger"


def test_host_of() -> None:
    assert host_of("HTTP://User@Example.COM.:80/x?y") == "example.com"
    assert host_of("[::1]:80") == "::1"
    assert host_of("example.com") == "example.com"


# --- backend fingerprints ---


@pytest.mark.parametrize(
    ("headers", "generator", "backend"),
    [
        ({"X-Served-By": "Substack"}, None, "backend:substack"),
        ({}, "Substack", "backend:substack"),
        ({}, "Ghost 5.82", "backend:ghost"),
        ({"x-ghost-cache-status": "HIT"}, None, "backend:ghost"),
        ({}, "beehiiv", "backend:beehiiv"),
        ({}, "Buttondown", "backend:buttondown"),
        ({}, "http://wordpress.com/", "backend:wordpress.com"),
        ({"x-hacker": "If you're reading this…"}, None, "backend:wordpress.com"),
        ({}, "Blogger", "backend:blogger"),
        ({}, "Medium", "backend:medium"),
        ({"x-platform": "letterbox"}, None, "backend:letterbox"),
        ({"X-Platform": "Letterbox"}, None, "backend:letterbox"),
        ({}, "Letterbox 2.1", "backend:letterbox"),
    ],
)
def test_detect_backend_finds(headers: dict[str, str], generator: str | None, backend: str) -> None:
    assert detect_backend(headers, generator) == backend
    assert backend in BACKENDS


@pytest.mark.parametrize(
    ("headers", "generator"),
    [
        ({}, None),
        ({"server": "nginx", "x-served-by": "cache-fra-123"}, None),
        ({}, "https://wordpress.org/?v=6.4.2"),  # self-hosted WordPress: not a shared backend
        ({}, "WordPress 6.4"),
        ({}, "Jekyll v4.3"),
        ({}, "Hugo 0.120"),
        ({}, "Not a Ghost story"),  # the word elsewhere is not the platform
        ({"x-platform": "other"}, "Mastodon"),
    ],
)
def test_detect_backend_keeps_out(headers: dict[str, str], generator: str | None) -> None:
    assert detect_backend(headers, generator) is None


# --- grouping by evidence ---


def test_grouper_groups_different_domains_on_one_address_throttled_together() -> None:
    g = BackendGrouper(window=60.0)
    assert g.observe_throttle("news.alpha.test", "203.0.113.5", 100.0) is None
    assert g.backend_for("news.alpha.test") is None
    key = g.observe_throttle("www.beta.test", "203.0.113.5", 130.0)
    assert key == "backend:addr:203.0.113.5"
    assert g.backend_for("news.alpha.test") == key
    assert g.backend_for("www.beta.test") == key
    # A later host throttled on that address together with the group joins it...
    assert g.observe_throttle("gamma.test", "203.0.113.5", 150.0) == key
    assert g.groups() == {key: ["gamma.test", "news.alpha.test", "www.beta.test"]}
    # ...but not on a throttle of its own: on a CDN address that is a coincidence, and the
    # grouping used to be sticky and join it at once (see test_net_backend_grouper.py).
    assert g.observe_throttle("delta.test", "203.0.113.5", 1_000.0) is None
    assert g.observe_throttle("epsilon.test", "203.0.113.5", 10_000.0) is None


def test_grouper_needs_the_same_window() -> None:
    g = BackendGrouper(window=60.0)
    g.observe_throttle("alpha.test", "203.0.113.5", 100.0)
    assert g.observe_throttle("beta.test", "203.0.113.5", 161.0) is None  # outside the window
    assert g.backend_for("alpha.test") is None


def test_grouper_needs_different_registrable_domains_and_one_address() -> None:
    g = BackendGrouper(window=60.0)
    g.observe_throttle("a.alpha.test", "203.0.113.5", 100.0)
    assert g.observe_throttle("b.alpha.test", "203.0.113.5", 101.0) is None  # same domain
    assert g.observe_throttle("beta.test", "203.0.113.6", 102.0) is None  # other address
    assert g.backend_for("beta.test") is None


@pytest.mark.parametrize(
    ("cname", "backend"),
    [
        ("target.substack-custom-domains.com.", "backend:substack"),
        ("ghs.google.com", "backend:blogger"),
        ("someone.ghost.io", "backend:ghost"),
        ("news.letterbox.test", "backend:letterbox"),
        ("lb.wordpress.com", "backend:wordpress.com"),
        ("example.com", None),
        ("notghost.io", None),  # suffix means a whole label, not a string tail
        (None, None),
    ],
)
def test_backend_from_cname(cname: str | None, backend: str | None) -> None:
    assert detect_backend({}, None, cname) == backend


def test_headers_and_generator_beat_cname() -> None:
    assert detect_backend({}, "Substack", "ghs.google.com") == "backend:substack"


@pytest.mark.parametrize(
    ("unicode_form", "ascii_form"),
    [
        ("http://bücher.de/rss", "http://xn--bcher-kva.de/atom"),
        ("http://ｅｘａｍｐｌｅ.com/feed", "http://example.com/other"),  # fullwidth letters
        ("http://Bücher.DE./rss", "http://XN--BCHER-KVA.de/atom"),
        # A trailing dot that IDNA maps to "." (ideographic, fullwidth full stop) was kept:
        # "example.com." got a host slot of its own beside "example.com".
        ("http://example.com\u3002/feed", "http://example.com/other"),
        ("http://bücher\uff0ede\uff0e/rss", "http://xn--bcher-kva.de/atom"),
    ],
)
def test_one_host_spelled_two_ways_is_one_host_and_one_key(
    unicode_form: str, ascii_form: str
) -> None:
    """The connection goes to the IDNA form either way; keyed apart, one host got a slot per
    spelling (an OPML list with the Unicode form, another with the punycode one)."""
    assert host_of(unicode_form) == host_of(ascii_form)
    assert politeness_key(unicode_form) == politeness_key(ascii_form)
