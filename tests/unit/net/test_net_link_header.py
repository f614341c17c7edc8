"""The Link header parser (RFC 8288) the crawl and the audit share."""

from __future__ import annotations

from fairfetch.net.link_header import LinkValue, parse_link_header


def test_link_header_links_rels_and_params() -> None:
    value = (
        '<https://hub.test/>; rel="hub", <https://a.test/feed>; rel=self, '
        '<https://a.test/de/>; rel="alternate"; hreflang="de", '
        '<https://a.test/x,y>; rel="canonical next"; title="a, b; \\"c\\""'
    )
    assert parse_link_header(value) == [
        LinkValue("https://hub.test/", frozenset({"hub"}), {}),
        LinkValue("https://a.test/feed", frozenset({"self"}), {}),
        LinkValue("https://a.test/de/", frozenset({"alternate"}), {"hreflang": "de"}),
        LinkValue("https://a.test/x,y", frozenset({"canonical", "next"}), {"title": 'a, b; "c"'}),
    ]


def test_link_header_second_rel_and_param_are_ignored_and_garbage_skipped() -> None:
    value = '<https://a.test/>; rel="canonical"; rel="hub"; HrefLang=en; hreflang=fr, junk, <>'
    assert parse_link_header(value) == [
        LinkValue("https://a.test/", frozenset({"canonical"}), {"hreflang": "en"}),
        LinkValue("", frozenset(), {}),
    ]
    assert parse_link_header("") == []
    assert parse_link_header("no links here") == []
