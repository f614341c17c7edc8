"""The directory pages against a real SQLite store, rows written through SqlStore."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree

from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.net.outcome import Hop
from fairfetch.store import SqlStore

from .conftest import add_crawled


def test_web_home_lists_counts_and_latest_entries(client, store: SqlStore) -> None:
    add_crawled(
        store,
        "http://pod.test/feed",
        title="Pod One",
        kind="podcast",
        entries=[Entry(id="e1", title="Episode one")],
    )
    add_crawled(store, "http://blog.test/feed", title="Blog One", kind="blog")
    r = client.get("/")
    assert r.status_code == 200
    assert 'action="/search"' in r.text
    assert re.search(r"<strong>1</strong> podcasts", r.text)
    assert "Episode one" in r.text


def test_web_listing_by_kind_sorted_and_paginated(client, store: SqlStore) -> None:
    for i, name in enumerate(["charlie", "Alpha", "bravo", "delta"]):
        add_crawled(store, f"http://p{i}.test/feed", title=f"{name} cast", kind="podcast")
    add_crawled(store, "http://b.test/feed", title="Aardvark blog", kind="blog")
    r = client.get("/podcasts", params={"per_page": 2})
    assert r.status_code == 200
    titles = re.findall(r'class="feed-title" href="/feeds/\d+">([^<]+)<', r.text)
    assert titles == ["Alpha cast", "bravo cast"]  # case-insensitive title order, blog excluded
    assert "Page 1 of 2" in r.text
    r2 = client.get("/podcasts", params={"per_page": 2, "page": 2})
    assert re.findall(r'class="feed-title" href="/feeds/\d+">([^<]+)<', r2.text) == [
        "charlie cast",
        "delta cast",
    ]
    r3 = client.get("/podcasts", params={"order": "desc", "per_page": 1})
    assert re.findall(r'class="feed-title" href="/feeds/\d+">([^<]+)<', r3.text) == ["delta cast"]


def test_web_listing_filters_by_status_and_accepts_empty_form_values(client, store) -> None:
    add_crawled(store, "http://ok.test/feed", title="Fine feed")
    add_crawled(
        store,
        "http://bad.test/feed",
        title="Broken feed",
        status="error",
        error_count=3,
        last_error="timeout: slow",
        outcome="error",
        error_kind="timeout",
    )
    r = client.get("/feeds", params={"status": "error", "sort": "", "order": ""})
    assert r.status_code == 200
    assert "Broken feed" in r.text
    assert "Fine feed" not in r.text
    assert "Fine feed" in client.get("/feeds", params={"status": ""}).text


def test_web_bad_parameters_are_4xx_with_a_message(client) -> None:
    r = client.get("/feeds", params={"status": "sleepy"})
    assert r.status_code == 400
    assert "status must be one of new, ok, error, dead" in r.text
    assert client.get("/feeds", params={"page": "0"}).status_code == 422
    assert client.get("/feeds", params={"page": "x"}).status_code == 422
    assert "page" in client.get("/feeds", params={"page": "x"}).text
    assert client.get("/podcasts", params={"sort": "nonsense"}).status_code == 400
    assert client.get("/feeds/0").status_code == 422
    assert client.get("/feeds/99999999999999999999999").status_code == 422
    assert client.get("/feeds/12345").status_code == 404
    assert client.get("/search", params={"q": "x" * 500}).status_code == 422


def test_web_feed_page_shows_health_history_redirects_kind_people_entries(client, store) -> None:
    at = datetime.now(UTC) - timedelta(minutes=3)
    fid = add_crawled(
        store,
        "http://show.test/feed",
        title="The Show",
        kind="podcast",
        at=at,
        entries=[
            Entry(
                id=f"e{i}",
                title=f"Episode {i}",
                link=f"http://show.test/{i}",
                summary="<p>Listen <b>now</b></p>",
            )
            for i in range(3)
        ],
        authors=[(Person(name="Ada Host", email="ada@show.test"), "itunes:owner")],
        contacts=[Contact(url="mailto:ada@show.test", network="email", source="itunes:owner")],
        hops=[Hop(url="http://old.test/feed", status=301, location="http://show.test/feed")],
        kind_evidence=["itunes:type episodic", "audio enclosures (3)"],
    )
    r = client.get(f"/feeds/{fid}")
    assert r.status_code == 200
    t = r.text
    assert "The Show" in t
    assert "status-ok" in t
    assert at.strftime("%Y-%m-%d %H:%M:%S UTC") in t  # last success / last fetch
    assert "itunes:type episodic" in t
    assert "audio enclosures (3)" in t
    assert "Ada Host" in t
    assert "from itunes:owner" in t
    assert 'href="mailto:ada@show.test"' in t
    assert "http://old.test/feed" in t
    assert "<strong>301</strong>" in t
    assert 'id="crawl-history"' in t
    assert "<td>poll</td>" in t
    assert "Episode 2" in t
    assert "<b>now</b>" in t
    assert f'href="/subscribe?feed={fid}"' in t
    assert 'id="refresh-button"' in t


def test_web_hostile_strings_are_escaped_and_unsafe_links_not_rendered(client, store) -> None:
    evil_title = '<script>alert("t")</script><img src=x onerror=alert(1)>'
    fid = add_crawled(
        store,
        "http://evil.test/feed",
        title=evil_title,
        link="javascript:alert('site')",
        description='<p onmouseover="alert(2)">desc<script>alert(3)</script></p>',
        entries=[
            Entry(
                id="x1",
                title="<b onclick=alert(4)>click</b>",
                link="javascript:alert(5)",
                summary='<a href="javascript:alert(6)">a</a><iframe src="http://x/">'
                "</iframe><svg onload=alert(7)></svg>",
            ),
            Entry(id="x2", title="data link", link="data:text/html,<script>alert(8)</script>"),
        ],
        authors=[
            (Person(name='"><script>alert(9)</script>', url="javascript:alert(10)"), "author")
        ],
    )
    for path in (f"/feeds/{fid}", "/feeds", "/blogs", "/search?q=script", "/"):
        t = client.get(path).text
        assert "<script>alert" not in t, path
        assert "onerror=alert" not in t.replace("onerror=alert(1)&gt;", ""), path
        assert not re.search(r"<[^>]+\son\w+\s*=", t), path  # no event handler attribute
        assert not re.search(r'href="\s*(javascript|data):', t, re.I), path
        assert "<iframe" not in t, path
        assert "<svg onload" not in t, path
    page = client.get(f"/feeds/{fid}").text
    assert "&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt;" in page
    # the stored data keeps every character: escaping happens on output only
    assert store.get_feed(fid).title == evil_title
    assert store.entries_of(fid)[-1]["link"] == "javascript:alert(5)"


def test_web_opml_export_is_valid_xml_with_every_feed(client, store) -> None:
    add_crawled(store, "http://a.test/feed", title='Tom & "Jerry" <3 \x01', kind="podcast")
    add_crawled(store, "http://b.test/feed", title="B", kind="blog")
    r = client.get("/feeds.opml")
    assert r.status_code == 200
    root = ElementTree.fromstring(r.content)
    outlines = root.findall("./body/outline")
    assert {o.get("xmlUrl") for o in outlines} == {"http://a.test/feed", "http://b.test/feed"}
    assert {o.get("text") for o in outlines} == {'Tom & "Jerry" <3 ', "B"}
    only = ElementTree.fromstring(client.get("/feeds.opml", params={"kind": "podcast"}).content)
    assert [o.get("xmlUrl") for o in only.findall("./body/outline")] == ["http://a.test/feed"]


def test_web_security_headers_forbid_scripts(client) -> None:
    csp = client.get("/").headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src" not in csp  # falls back to 'none'
