"""Discovery (pure): websub.rocks 100-104 as parsing cases, plus the rules around them."""

from __future__ import annotations

from fairfetch.websub.discovery import discover, parse_link_header

BASE = "http://pub.test/feed"
ATOM = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<link rel="hub" href="http://hub.test/atom"/><link rel="self" href="http://pub.test/atom-self"/>
</feed>"""
RSS = b"""<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel><title>t</title><atom:link rel="hub" href="http://hub.test/rss"/>
<atom:link rel="self" href="/rss-self"/></channel></rss>"""
HTML = b"""<!doctype html><html><head><title>x</title>
<link rel="hub" href="http://hub.test/html"><link rel="self" href="http://pub.test/html-self">
</head><body><link rel="hub" href="http://evil.test/body-hub"></body></html>"""
HEADERS = {"link": '<http://hub.test/hdr>; rel="hub", <http://pub.test/hdr-self>; rel="self"'}


def test_websub_100_headers_only() -> None:
    d = discover(HEADERS, b"", BASE)
    assert (d.hubs, d.self_url, d.source) == (("http://hub.test/hdr",), "http://pub.test/hdr-self",
                                             "headers")


def test_websub_101_html_only() -> None:
    d = discover({}, HTML, BASE)
    assert d.hubs == ("http://hub.test/html",)
    assert d.self_url == "http://pub.test/html-self"


def test_websub_html_body_links_are_not_discovered() -> None:
    body = b"<html><head><title>x</title></head><body><link rel=hub href=http://evil.test/h>" \
           b"<link rel=self href=http://evil.test/s></body></html>"
    assert not discover({}, body, BASE).found


def test_websub_102_atom() -> None:
    d = discover({"content-type": "text/plain"}, ATOM, BASE)  # content-type is not consulted
    assert d.hubs == ("http://hub.test/atom",)
    assert d.self_url == "http://pub.test/atom-self"


def test_websub_103_rss_relative_self_resolved() -> None:
    d = discover({"content-type": "text/html"}, RSS, BASE)
    assert d.hubs == ("http://hub.test/rss",)
    assert d.self_url == "http://pub.test/rss-self"


def test_websub_104_headers_win_over_body() -> None:
    d = discover(HEADERS, ATOM, BASE)
    assert d.hubs == ("http://hub.test/hdr",)
    assert d.self_url == "http://pub.test/hdr-self"


def test_websub_headers_without_exactly_one_self_fall_back_to_body() -> None:
    none = {"link": '<http://hub.test/hdr>; rel="hub"'}
    two = {"link": '<http://hub.test/hdr>; rel="hub", <http://a.test/1>; rel=self, '
                   '<http://a.test/2>; rel=self'}
    for headers in (none, two):
        d = discover(headers, ATOM, BASE)
        assert d.source == "document"
        assert d.hubs == ("http://hub.test/atom",)


def test_websub_headers_self_without_hub_falls_back() -> None:
    d = discover({"link": "<http://pub.test/s>; rel=self"}, RSS, BASE)
    assert d.hubs == ("http://hub.test/rss",)


def test_websub_nothing_advertised() -> None:
    assert not discover({}, b"<rss><channel><title>x</title></channel></rss>", BASE).found
    assert not discover({}, b"not markup at all", BASE).found
    assert not discover({}, b"", BASE).found


def test_websub_hub_without_self_is_not_enough() -> None:
    body = b'<feed xmlns="http://www.w3.org/2005/Atom"><link rel="hub" href="http://h.test/"/></feed>'
    assert not discover({}, body, BASE).found


def test_websub_multiple_hubs_kept_in_order() -> None:
    headers = {"link": "<http://h1.test/>; rel=hub, <http://h2.test/>; rel=hub, "
                       "<http://pub.test/s>; rel=self"}
    assert discover(headers, b"", BASE).hubs == ("http://h1.test/", "http://h2.test/")


def test_websub_link_header_parsing() -> None:
    links = parse_link_header(
        '<http://x.test/a?b=1,2>; rel="self"; title="a, b; c", <h>; REL="Hub alternate"'
    )
    assert links == [("http://x.test/a?b=1,2", frozenset({"self"})),
                     ("h", frozenset({"hub", "alternate"}))]
    assert parse_link_header(["<a>; rel=hub", "<b>; rel=self"]) == [
        ("a", frozenset({"hub"})), ("b", frozenset({"self"}))]


def test_websub_entity_bomb_is_not_expanded() -> None:
    bomb = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">
<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
<feed xmlns="http://www.w3.org/2005/Atom"><title>&c;</title>
<link rel="hub" href="http://hub.test/h"/><link rel="self" href="http://pub.test/s"/></feed>"""
    d = discover({}, bomb, BASE)
    assert d.hubs == ("http://hub.test/h",)
