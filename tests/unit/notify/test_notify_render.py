"""Messages as a mail client parses them: multipart/alternative, text then HTML, RFC 8058."""

from __future__ import annotations

import email
from datetime import UTC, datetime
from email import policy

from fairfetch.notify import render

LINKS = render.Links("https://news.example.test")
NOW = datetime(2026, 5, 1, 9, tzinfo=UTC)
FEED = {"id": 3, "url": "https://blog.example.test/feed.xml", "title": "Example Blog",
        "link": "https://blog.example.test/"}
SUB = {"email": "ana@example.test", "manage_token": "MTOKEN", "confirm_token": "CTOKEN",
       "mode": "realtime"}
HOSTILE = (
    '<p onclick="steal()">Hello <a href="/post/1">relative</a> '
    '<a href="javascript:alert(1)">js</a><img src="img/a.png" onerror="x()"></p>'
    "<script>alert('feed')</script><iframe src='https://evil.test'></iframe>"
)
ENTRY = {"title": "Post <One>", "link": "https://blog.example.test/post/1", "content": HOSTILE,
         "summary": None, "published": NOW, "categories": ["Tech"]}


def _parse(msg):
    return email.message_from_bytes(render.as_bytes(msg), policy=policy.default)


def _check_structure(parsed):
    assert parsed.get_content_type() == "multipart/alternative"
    parts = list(parsed.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    return parts[0].get_content(), parts[1].get_content()


def test_notify_item_message_shape_and_headers():
    r = render.item(SUB, FEED, ENTRY, LINKS)
    msg = render.to_email(r, to=SUB["email"], mail_from="fairfetch <mail@news.example.test>",
                          msg_id=render.message_id("abc", "fairfetch <mail@news.example.test>"),
                          date=NOW)
    parsed = _parse(msg)
    text, html = _check_structure(parsed)
    assert parsed["Subject"] == "[Example Blog] Post <One>"
    assert parsed["Message-ID"] == "<abc@news.example.test>"
    assert parsed["List-Unsubscribe"] == "<https://news.example.test/unsubscribe/MTOKEN>"
    assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "feed-3.news.example.test" in parsed["List-Id"]
    # the feed's script, handlers, javascript: links and iframes are gone
    lowered = html.lower()
    for bad in ("<script", "onclick", "onerror", "javascript:", "<iframe", "alert('feed')"):
        assert bad not in lowered
    # relative links were made absolute against the entry's URL; visible unsubscribe link
    assert 'href="https://blog.example.test/post/1"' in html
    assert 'src="https://blog.example.test/post/img/a.png"' in html
    assert "https://news.example.test/unsubscribe/MTOKEN" in html
    assert "https://news.example.test/unsubscribe/MTOKEN" in text
    assert "Post &lt;One&gt;" in html  # the title is escaped, not markup
    assert "Hello" in text
    assert "<p" not in text


def test_notify_digest_message_groups_feeds():
    items = [
        {"feed_id": 3, "feed_title": "Example Blog", "feed_url": FEED["url"],
         "feed_link": FEED["link"], "manage_token": "M3", "title": f"Post {i}",
         "link": f"/p/{i}", "summary": "<b>bold</b><script>x()</script>", "content": None,
         "published": NOW}
        for i in range(3)
    ] + [
        {"feed_id": 4, "feed_title": "Other", "feed_url": "https://other.test/f",
         "feed_link": None, "manage_token": "M4", "title": "Elsewhere", "link": None,
         "summary": None, "content": None, "published": None}
    ]
    r = render.digest({"token": "RTOKEN"}, "daily@08", items, LINKS,
                      exhausted_feeds=["Example Blog"])
    assert r.subject == "Daily digest: 4 new items from Example Blog, Other"
    msg = render.to_email(r, to="ana@example.test", mail_from="f@news.example.test",
                          msg_id="<d1@news.example.test>", date=NOW)
    parsed = _parse(msg)
    text, html = _check_structure(parsed)
    assert parsed["List-Unsubscribe"] == (
        "<https://news.example.test/unsubscribe/digest/RTOKEN/daily@08>"
    )
    assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "<script" not in html.lower()
    assert 'href="https://blog.example.test/p/2"' in html
    assert "https://news.example.test/unsubscribe/M4" in html  # per-feed link too
    assert "credit has run out" in text
    assert "credit has run out" in html


def test_notify_confirmation_message():
    r = render.confirmation(SUB, FEED, LINKS)
    msg = render.to_email(r, to=SUB["email"], mail_from="f@x.test", msg_id="<c@x.test>",
                          date=NOW)
    text, html = _check_structure(_parse(msg))
    assert "https://news.example.test/confirm/CTOKEN" in text
    assert "https://news.example.test/confirm/CTOKEN" in html
    assert r.subject == "Confirm your subscription to Example Blog"


def test_notify_non_ascii_subject_and_body_survive():
    feed = {**FEED, "title": "Café Blog"}
    entry = {**ENTRY, "title": "Crème brûlée — 🍮", "content": "<p>Ça marche</p>"}
    r = render.item(SUB, feed, entry, LINKS)
    # (an ASCII recipient: a non-ASCII one goes only with SMTPUTF8, in UTF-8; see below)
    msg = render.to_email(r, to="zoe@example.test", mail_from="Zoë's feeds <f@x.test>",
                          msg_id="<u@x.test>", date=NOW)
    raw = render.as_bytes(msg)
    assert raw.isascii()  # encoded for any SMTP server, 8BITMIME or not
    parsed = _parse(msg)
    assert parsed["Subject"] == "[Café Blog] Crème brûlée — 🍮"
    assert "Zoë" in str(parsed["From"])
    text, html = _check_structure(parsed)
    assert "Ça marche" in text
    assert "Ça marche" in html


def test_notify_long_lines_never_exceed_the_smtp_limit():
    long_html = "<p>" + ("word " * 2000) + "</p>" + "<p>" + "x" * 3000 + "</p>"
    entry = {**ENTRY, "content": long_html, "title": "T" * 500}
    r = render.item(SUB, FEED, entry, LINKS)
    raw = render.as_bytes(render.to_email(r, to="a@b.test", mail_from="f@x.test",
                                          msg_id="<l@x.test>", date=NOW))
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    parsed = email.message_from_bytes(raw, policy=policy.default)
    text, html = _check_structure(parsed)
    assert "x" * 3000 in html
    assert "word word" in text
    assert len(str(parsed["Subject"])) <= 200


HOSTILE_LINKS = [
    "javascript:alert(1)",
    " JavaScript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
]


def _hrefs(html: str) -> list[str]:
    import re

    return re.findall(r'href="([^"]*)"', html)


def test_notify_feed_supplied_links_other_than_http_are_never_hrefs():
    """The entry's and the feed's own links come from the feed like its HTML does: a
    ``javascript:`` or ``data:`` link must not become a link in the mail (nh3 cleans the body,
    and these links went around it). The title stays, as text."""
    for bad in HOSTILE_LINKS:
        feed = {**FEED, "link": bad}
        entry = {**ENTRY, "link": bad, "content": '<p><a href="/rel">relative</a></p>'}
        r = render.item(SUB, feed, entry, LINKS)
        hrefs = _hrefs(r.html)
        assert all(h.startswith(("https://", "http://")) for h in hrefs), (bad, hrefs)
        assert "Post &lt;One&gt;" in r.html  # the title is still shown
        # the body's relative link still resolves, against the feed's URL
        assert "https://blog.example.test/rel" in hrefs
        assert bad.strip() not in r.text  # not offered as a link in the text part either
        item = {"feed_id": 3, "feed_title": "Example Blog", "feed_url": FEED["url"],
                "feed_link": bad, "manage_token": "M3", "title": "Post", "link": bad,
                "summary": '<a href="/rel">relative</a>', "content": None, "published": NOW}
        d = render.digest({"token": "RTOKEN"}, "daily@08", [item], LINKS)
        hrefs = _hrefs(d.html)
        assert all(h.startswith(("https://", "http://")) for h in hrefs), (bad, hrefs)
        assert "https://blog.example.test/rel" in hrefs


def test_notify_feed_supplied_http_links_stay_links():
    """The other direction: ordinary links, absolute or relative, are kept (made absolute)."""
    r = render.item(SUB, FEED, {**ENTRY, "link": "/post/9"}, LINKS)
    assert 'href="https://blog.example.test/post/9"' in r.html
    r = render.item(SUB, FEED, {**ENTRY, "link": "http://blog.example.test/post/8"}, LINKS)
    assert 'href="http://blog.example.test/post/8"' in r.html
    assert "http://blog.example.test/post/8" in r.text


def _raw_headers(msg) -> list[bytes]:
    """The header block as sent, one physical line each."""
    return render.as_bytes(msg).split(b"\r\n\r\n", 1)[0].split(b"\r\n")


def _logical(lines: list[bytes], name: bytes) -> bytes:
    """One header's value as sent, its folded continuation lines included."""
    out: list[bytes] = []
    for line in lines:
        if out and line[:1] in (b" ", b"\t"):
            out.append(line)
        elif out:
            break
        elif line.lower().startswith(name.lower() + b":"):
            out.append(line)
    return b"\r\n".join(out)


def test_notify_long_non_ascii_headers_fold_into_short_encoded_words():
    """RFC 2047: an encoded-word is at most 75 characters, and RFC 5322 a line at most 998
    octets. Non-ASCII subjects and feed titles were written as one encoded-word on one line:
    a title of 200 emoji made a 1,061-octet Subject line, which a server refuses ('500 Line
    too long': a hard failure, counted against the reader) — and any long one broke the
    75-character rule."""
    import re

    for feed_title, entry_title in [
        ("Blog", "🍮" * 300),
        ("漢字ブログ" * 40, "日本語のタイトル" * 30),
        ("Café " * 400, "é" * 300),
    ]:
        r = render.item(SUB, {**FEED, "title": feed_title}, {**ENTRY, "title": entry_title},
                        LINKS)
        msg = render.to_email(r, to="a@b.test", mail_from="Zoë's feeds <f@x.test>",
                              msg_id="<l@x.test>", date=NOW)
        lines = _raw_headers(msg)
        assert max(len(line) for line in lines) <= 998, feed_title[:10]
        words = re.findall(rb"=\?[^?]+\?[bBqQ]\?[^?]*\?=", b"\r\n".join(lines))
        assert words, "non-ASCII text must be encoded"
        assert max(len(w) for w in words) <= 75, feed_title[:10]
        assert all(len(line) <= 78 for line in _logical(lines, b"Subject").split(b"\r\n"))
        parsed = _parse(msg)
        subject = str(parsed["Subject"])
        assert subject.startswith(f"[{' '.join(feed_title.split())[:20]}")
        assert 20 < len(subject) <= 200
        assert subject == r.subject[:199] + "…"


def test_notify_long_ascii_feed_title_keeps_the_list_id_line_short():
    """The List-Id named the whole feed title: a 3,000-character title made a 3,038-octet
    header line (refused by servers as above); its description is cut like the subject."""
    r = render.item(SUB, {**FEED, "title": "A" * 3000}, ENTRY, LINKS)
    msg = render.to_email(r, to="a@b.test", mail_from="f@x.test", msg_id="<l@x.test>",
                          date=NOW)
    assert max(len(line) for line in _raw_headers(msg)) <= 998
    assert str(_parse(msg)["List-Id"]).endswith("<feed-3.news.example.test>")


def test_notify_list_id_keeps_its_identifier_in_the_clear():
    """RFC 2919: ``List-Id: phrase <list-id>``; only the phrase may be RFC 2047-encoded. A
    non-ASCII feed title encoded the whole value, the ``<feed-3.…>`` identifier inside the
    encoded-word, where filters never find it; a title ending in a backslash escaped the
    closing quote of the phrase."""
    from email.header import decode_header, make_header
    from email.utils import parseaddr

    for title in ["Café Blog", "Blog\\", 'Say "hi" \\o/', "Ünïcödé " * 30]:
        r = render.item(SUB, {**FEED, "title": title}, ENTRY, LINKS)
        msg = render.to_email(r, to="a@b.test", mail_from="f@x.test", msg_id="<l@x.test>",
                              date=NOW)
        raw = _logical(_raw_headers(msg), b"List-Id").decode("ascii")
        assert raw.endswith(" <feed-3.news.example.test>"), title
        name, list_id = parseaddr(raw.replace("\r\n", "")[len("List-Id: "):])
        assert list_id == "feed-3.news.example.test", title
        shown = str(make_header(decode_header(name))) if "=?" in name else name
        expected = " ".join(title.split())
        assert shown == expected or (shown.endswith("…") and expected.startswith(shown[:-1])), (
            title, shown)


def test_notify_non_ascii_recipient_is_an_address_in_utf8():
    """A non-ASCII address goes with SMTPUTF8, where RFC 6532 writes it in the header as
    UTF-8. It was RFC 2047-encoded as a whole (``To: =?utf-8?b?…?=``), which RFC 2047 forbids
    in an address: parsed, it is a local part with no domain (a reply to all goes nowhere)."""
    r = render.item(SUB, FEED, ENTRY, LINKS)
    msg = render.to_email(r, to="zoë@exämple.test", mail_from="Zoë's feeds <f@x.test>",
                          msg_id="<u@x.test>", date=NOW)
    lines = _raw_headers(msg)
    assert "To: zoë@exämple.test".encode() in lines
    parsed = email.message_from_string(render.as_bytes(msg).decode("utf-8"),
                                       policy=policy.SMTPUTF8)
    [to] = parsed["To"].addresses
    assert (to.username, to.domain) == ("zoë", "exämple.test")
    # (Python notes a non-ASCII local part, which RFC 6532 allows; nothing else is wrong)
    assert [type(d).__name__ for d in parsed["To"].defects] == ["NonASCIILocalPartDefect"]
    # everything else stays 7-bit: the display name is still encoded
    assert all(line.isascii() for line in lines if not line.startswith(b"To:"))


def test_notify_a_digest_of_hundreds_of_long_items_stays_small_and_lists_every_item():
    """The HTML part carried every item's whole content (the text part an excerpt): 300 items
    of full-text feeds made a 12 MB mail, over the 10 MB most servers take (Postfix's default),
    and a digest refused for its size is lost whole. Each entry shows an excerpt, and past a
    budget a title and a link; short summaries keep their HTML."""
    body = "<p>" + "Lorem ipsum dolor sit amet, consectetur. " * 700 + "</p>"
    items = [
        {"feed_id": i % 5, "feed_title": f"Feed {i % 5}", "feed_url": "https://b.test/f",
         "feed_link": None, "manage_token": "M", "title": f"Post {i}", "link": f"/p/{i}",
         "summary": None, "content": body + f"<p>end {i}</p>", "published": NOW}
        for i in range(300)
    ] + [
        {"feed_id": 9, "feed_title": "Short", "feed_url": "https://s.test/f", "feed_link": None,
         "manage_token": "S", "title": "Brief", "link": "/brief", "summary": "<b>bold</b> news",
         "content": None, "published": NOW}
    ]
    r = render.digest({"token": "RTOKEN"}, "weekly@mon@08", items, LINKS)
    raw = render.as_bytes(render.to_email(r, to="a@b.test", mail_from="f@x.test",
                                          msg_id="<d@x.test>", date=NOW))
    assert len(raw) < 2_000_000
    text, html = _check_structure(email.message_from_bytes(raw, policy=policy.default))
    for i in range(300):
        assert f'href="https://b.test/p/{i}"' in html
        assert f"https://b.test/p/{i}\n" in text
        assert f">Post {i}</a>" in html
    assert 'href="https://s.test/brief"' in html
    assert "<b>bold</b> news" in html  # a short summary keeps its HTML
    assert "Lorem ipsum dolor" in html  # and the first long ones their excerpt
    assert r.subject == "Weekly digest: 301 new items from Feed 0, Feed 1, Feed 2 and 3 more"


def test_notify_a_digest_past_its_body_budget_lists_the_rest_by_title_and_link():
    summary = "<p>" + "Some words of news. " * 90 + "</p>"  # just under the HTML cut
    items = [
        {"feed_id": 1, "feed_title": "Busy", "feed_url": "https://b.test/f", "feed_link": None,
         "manage_token": "M", "title": f"Post {i}", "link": f"/p/{i}",
         "summary": summary.replace("news", f"news{i}"), "content": None, "published": NOW}
        for i in range(1500)
    ]
    r = render.digest({"token": "RTOKEN"}, "daily@08", items, LINKS)
    raw = render.as_bytes(render.to_email(r, to="a@b.test", mail_from="f@x.test",
                                          msg_id="<d@x.test>", date=NOW))
    assert len(raw) < 4_000_000
    text, html = _check_structure(email.message_from_bytes(raw, policy=policy.default))
    for i in range(1500):
        assert f'href="https://b.test/p/{i}"' in html
        assert f"* Post {i} (" in text
    # the first ones with their summary, the last by title and link
    assert "news0." in html
    assert "news0." in text
    assert "news1499." not in html
    assert "news1499." not in text


def test_notify_a_non_ascii_sender_address_is_written_in_utf8_with_its_name():
    """``mail_from`` with a non-ASCII address (sent with SMTPUTF8, like a non-ASCII reader's):
    formataddr raised UnicodeEncodeError on it, out of every message's rendering; its display
    name is quoted or encoded as for an ASCII address."""
    r = render.item(SUB, FEED, ENTRY, LINKS)
    for mail_from, name, sent_as in [
        ('"Feeds, Inc." <envoyé@éditions.test>', "Feeds, Inc.", "envoyé@éditions.test"),
        ("Zoë <envoyé@éditions.test>", "Zoë", "envoyé@éditions.test"),
        ("envoyé@éditions.test", "", "envoyé@éditions.test"),
        # an ASCII mailbox: its domain in IDNA form, no SMTPUTF8 needed
        ('"Feeds, Inc." <envoi@éditions.test>', "Feeds, Inc.", "envoi@xn--ditions-9xa.test"),
    ]:
        msg = render.to_email(r, to="a@b.test", mail_from=mail_from, msg_id="<u@x.test>",
                              date=NOW)
        parsed = email.message_from_string(render.as_bytes(msg).decode("utf-8"),
                                           policy=policy.SMTPUTF8)
        [sender] = parsed["From"].addresses
        assert (sender.display_name, sender.addr_spec) == (name, sent_as)


def test_notify_message_id_on_a_non_ascii_sender_domain_is_ascii():
    assert render.message_id("abc", "envoi@éditions.test") == "<abc@xn--ditions-9xa.test>"
    assert render.message_id("abc", "Zoë <f@x.test>") == "<abc@x.test>"
    r = render.item(SUB, FEED, ENTRY, LINKS)
    msg = render.to_email(r, to="a@b.test", mail_from="envoi@éditions.test",
                          msg_id=render.message_id("abc", "envoi@éditions.test"), date=NOW)
    assert b"Message-ID: <abc@xn--ditions-9xa.test>" in _raw_headers(msg)


def test_notify_list_id_on_a_non_ascii_public_host_is_ascii():
    """A public_url on an IDN host named the List-Id in UTF-8, sent 8-bit to any server."""
    links = render.Links("https://éditions.test")
    r = render.item(SUB, FEED, ENTRY, links)
    msg = render.to_email(r, to="a@b.test", mail_from="f@x.test", msg_id="<l@x.test>",
                          date=NOW)
    assert b'List-Id: "Example Blog" <feed-3.xn--ditions-9xa.test>' in _raw_headers(msg)
    assert render.as_bytes(msg).isascii()


def test_notify_one_click_unsubscribe_on_a_non_ascii_public_host_is_a_url():
    """RFC 8058's List-Unsubscribe on an IDN public_url was an encoded-word, no URL at all."""
    links = render.Links("https://Éditions.test:8443/")
    r = render.item(SUB, FEED, ENTRY, links)
    msg = render.to_email(r, to="a@b.test", mail_from="f@x.test", msg_id="<l@x.test>",
                          date=NOW)
    assert (b"List-Unsubscribe: <https://xn--ditions-9xa.test:8443/unsubscribe/MTOKEN>"
            in _raw_headers(msg))
    _text, html = _check_structure(_parse(msg))
    assert 'href="https://xn--ditions-9xa.test:8443/unsubscribe/MTOKEN"' in html
    assert links.url("/x") == "https://xn--ditions-9xa.test:8443/x"
    assert render.Links("https://news.example.test/").url("/x") == "https://news.example.test/x"


def test_notify_idn_domains_take_their_idna_2008_form_never_another_domain():
    """Python's "idna" codec is IDNA 2003: it maps "straße.de" to "strasse.de" and
    "ςa.gr" to "σa.gr" — other domains, other owners, who would get the reader's mail."""
    assert render.wire_address("ana@straße.de") == "ana@xn--strae-oqa.de"
    assert render.wire_address("ana@bücher.test") == "ana@xn--bcher-kva.test"
    assert render.wire_address("ana@example.test") == "ana@example.test"
    assert render.wire_address("zoë@straße.de") == "zoë@straße.de"  # goes with SMTPUTF8
    assert render.message_id("x", "f@straße.de") == "<x@xn--strae-oqa.de>"
    assert render.Links("https://straße.de").url("/u") == "https://xn--strae-oqa.de/u"
