"""A Link header is the server's text, read on every feed crawl (WebSub hubs, ``self``) and
every audited page. Its target was ``<([^>]*)>``: every "<" started a scan to the next ">",
so a header of "<" with no ">" took time quadratic in its length (20,000 characters: 3 s of
CPU; one 64 KiB header, the fetcher's field limit, half a minute; several joined, an hour),
blocking the event loop on each crawl of that feed. A "<" cannot be part of a URI reference
(RFC 3986), so a target never holds one: the scan stops at the next "<"."""

from __future__ import annotations

from fairfetch.net.link_header import LinkValue, parse_link_header


def test_a_header_of_opening_brackets_is_read_in_one_pass() -> None:
    """A quadratic scan would not finish (suite timeout): 1 MiB, about 5·10^11 steps."""
    assert parse_link_header("<" * (1 << 20)) == []
    hub = '<https://hub.test/>; rel="hub"'
    assert parse_link_header("<a" * (1 << 19) + ", " + hub) == [
        LinkValue("https://hub.test/", frozenset({"hub"}), {})
    ]


def test_a_stray_opening_bracket_does_not_become_part_of_the_target() -> None:
    assert parse_link_header('<<https://hub.test/>; rel="hub"') == [
        LinkValue("https://hub.test/", frozenset({"hub"}), {})
    ]
    assert parse_link_header('<broken, <https://a.test/feed>; rel=self') == [
        LinkValue("https://a.test/feed", frozenset({"self"}), {})
    ]
