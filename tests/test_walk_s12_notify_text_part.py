"""The plain-text part as a text-only mail client (mutt, a phone's preview) shows it.

Found walking through docs/notify.md: the post's text was one run of words — paragraphs and list
items run together, every link in the post gone (a link post said "see this" and nothing
more), a digest excerpt's second line at the margin under its bullet, and an item without a
link had its body glued to the header line.
"""

from __future__ import annotations

import email
from datetime import UTC, datetime
from email import policy

from fairfetch.notify import render

LINKS = render.Links("https://news.example.test")
NOW = datetime(2026, 5, 1, 9, tzinfo=UTC)
FEED = {"id": 3, "url": "https://blog.example.test/feed.xml", "title": "Example Blog",
        "link": "https://blog.example.test/"}
SUB = {"email": "ana@example.test", "manage_token": "M", "mode": "realtime"}
POST = (
    "<p>Read <a href='/essay'>this essay</a> first.</p>"
    "<p>Then the list:</p><ul><li>one</li><li>two</li></ul>"
    "<p>Source: <a href='https://src.example.test/a'>https://src.example.test/a</a></p>"
    "<p>wo<b>rd</b> joined</p>"
)


def _text_part(r: render.Rendered) -> str:
    msg = render.to_email(r, to="ana@example.test", mail_from="f@x.test", msg_id="<t@x.test>",
                          date=NOW)
    parsed = email.message_from_bytes(render.as_bytes(msg), policy=policy.default)
    text, _html = list(parsed.iter_parts())
    return str(text.get_content())


def test_walk_text_part_keeps_paragraphs_lists_and_links() -> None:
    entry = {"title": "Post", "link": "https://blog.example.test/post", "content": POST,
             "published": NOW}
    text = _text_part(render.item(SUB, FEED, entry, LINKS))
    assert "Read this essay <https://blog.example.test/essay> first.\n\nThen the list:\n\n" \
           "- one\n- two\n\nSource: https://src.example.test/a\n\nword joined" in text
    # a link shown by its own address is not written twice; no markup leaks
    assert text.count("https://src.example.test/a") == 1
    for tag in ("<p", "<a", "<li", "<ul", "<b>"):
        assert tag not in text


def test_walk_text_part_of_an_item_without_link_keeps_its_blank_line() -> None:
    entry = {"title": "Post", "link": None, "content": "<p>Body here.</p>", "published": NOW}
    text = _text_part(render.item(SUB, FEED, entry, LINKS))
    assert text.startswith("Post\nExample Blog — 2026-05-01 09:00 UTC\n\nBody here.\n")
    entry = {**entry, "link": "/post"}
    text = _text_part(render.item(SUB, FEED, entry, LINKS))
    assert text.startswith("Post\nExample Blog — 2026-05-01 09:00 UTC\n"
                           "https://blog.example.test/post\n\nBody here.\n")


def test_walk_digest_excerpts_stay_under_their_bullet() -> None:
    long_words = " ".join(f"word{i}" for i in range(60))
    long_post = f"<p>{long_words} <a href='/more'>more</a></p>" + "<p>" + "x " * 1200 + "</p>"
    items = [
        {"feed_id": 3, "feed_title": "Example Blog", "feed_url": FEED["url"],
         "feed_link": FEED["link"], "manage_token": "M3", "title": title, "link": "/p",
         "summary": summary, "content": None, "published": NOW}
        for title, summary in (("Short", f"<p>{long_words}</p>"), ("Long", long_post))
    ]
    r = render.digest({"token": "R"}, "daily@08", items, LINKS)
    text = _text_part(r)
    block = text.split("* Short", 1)[1].split("* Long", 1)[0]
    body_lines = [line for line in block.splitlines()[2:] if line]
    assert len(body_lines) > 1  # wrapped, and every line indented under the bullet
    assert all(line.startswith("  ") for line in body_lines), body_lines
    # the long entry's text excerpt keeps its link; its HTML excerpt is words only
    assert "more <https://blog.example.test/more>" in text
    assert "&lt;https://blog.example.test/more&gt;" not in r.html
    assert "word59 more" in r.html
