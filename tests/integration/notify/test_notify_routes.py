"""The notification pages through HTTP: subscribe from a feed page, double opt-in, manage,
RFC 8058 one-click unsubscribe without a login, and /outbox."""

from __future__ import annotations

import re
from datetime import timedelta
from types import SimpleNamespace

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from fairfetch.notify.routes import router
from fairfetch.notify.sink import MailSink
from fairfetch.store import notify_repo as repo

from .conftest import T0


@pytest.fixture
def site(world):
    sink = MailSink(world.store).start()
    world.settings = world.settings.replace(smtp_url=sink.smtp_url)
    app = FastAPI()
    app.state.fairfetch = SimpleNamespace(settings=world.settings, store=world.store)
    app.include_router(router)
    with TestClient(app) as client:
        yield SimpleNamespace(client=client, world=world, sink=sink)
    sink.stop()


def _subscribe(site, email_addr, **form):
    fid = site.world.add_feed("https://a.example.test/feed")
    page = site.client.get(f"/subscribe?feed={fid}")
    assert page.status_code == 200
    assert 'action="/subscribe"' in page.text
    r = site.client.post("/subscribe", data={"feed": str(fid), "email": email_addr, **form})
    assert r.status_code == 200, r.text
    assert "confirmation mail" in r.text
    return fid


def test_notify_subscribe_confirm_and_one_click_unsubscribe(site):
    fid = _subscribe(site, "ana@example.test", mode="daily", hour="7", tz="Europe/Paris",
                     only="Tech")
    [sub] = repo.list_subscriptions(site.world.store)
    assert (sub["status"], sub["mode"], sub["hour"], sub["tz"], sub["only_categories"]) == (
        "pending", "daily", 7, "Europe/Paris", ["tech"])
    # the confirmation mail went out (after the response) and links to the public URL
    [mail] = site.sink.mails
    text = next(mail.message.iter_parts()).get_content()
    link = re.search(r"https://news\.example\.test(/confirm/\S+)", text)
    assert link is not None
    # nothing but that mail before confirming: a new entry notifies nobody
    site.world.write(fid, [site.world.entry("early")], at=T0 + timedelta(minutes=1))
    assert [r["kind"] for r in site.world.outbox()] == ["confirm"]
    # GET shows a button (link scanners do not confirm); POST confirms
    page = site.client.get(link.group(1))
    assert page.status_code == 200
    assert repo.list_subscriptions(site.world.store)[0]["status"] == "pending"
    done = site.client.post(link.group(1))
    assert done.status_code == 200
    [sub] = repo.list_subscriptions(site.world.store)
    assert sub["status"] == "active"
    # RFC 8058: a POST with List-Unsubscribe=One-Click, no cookie, no login
    r = site.client.post(f"/unsubscribe/{sub['manage_token']}",
                         content=b"List-Unsubscribe=One-Click",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200
    assert repo.list_subscriptions(site.world.store)[0]["status"] == "unsubscribed"
    # a GET does not unsubscribe anything (it shows the button), and unknown tokens are 404
    assert site.client.get("/unsubscribe/nope").status_code == 404


def test_notify_unsubscribe_get_does_not_act(site):
    fid = site.world.add_feed("https://b.example.test/feed")
    sub = site.world.subscribe("bob@example.test", fid)
    page = site.client.get(f"/unsubscribe/{sub['manage_token']}")
    assert page.status_code == 200
    assert 'method="post"' in page.text
    assert repo.list_subscriptions(site.world.store)[0]["status"] == "active"


def test_notify_digest_one_click_unsubscribe(site):
    w = site.world
    f1 = w.add_feed("https://a.example.test/feed")
    f2 = w.add_feed("https://b.example.test/feed")
    s1 = w.subscribe("ana@example.test", f1, mode="daily", hour=8)
    w.subscribe("ana@example.test", f2, mode="daily", hour=8)
    rt = w.subscribe("ana@example.test", w.add_feed("https://c.example.test/feed"))
    token = repo.subscription_by_token(w.store, s1["manage_token"])["reader_token"]
    r = site.client.post(f"/unsubscribe/digest/{token}/daily@08",
                         content=b"List-Unsubscribe=One-Click",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200
    status = {s["id"]: s["status"] for s in repo.list_subscriptions(w.store)}
    # both feeds of that digest end; the real-time subscription is untouched
    assert sorted(status.values()) == ["active", "unsubscribed", "unsubscribed"]
    assert status[rt["id"]] == "active"
    assert site.client.post("/unsubscribe/digest/bogus/daily@08").status_code == 404


def test_notify_manage_changes_the_filter(site):
    fid = site.world.add_feed("https://a.example.test/feed")
    sub = site.world.subscribe("ana@example.test", fid)
    r = site.client.post(f"/manage/{sub['manage_token']}",
                         data={"mode": "weekly", "hour": "9", "weekday": "fri", "tz": "UTC",
                               "only": "", "exclude": "Sport, Ads"})
    assert r.status_code == 200
    assert "Saved." in r.text
    [s] = repo.list_subscriptions(site.world.store)
    assert (s["mode"], s["weekday"], s["except_categories"]) == ("weekly", 4, ["sport", "ads"])
    bad = site.client.post(f"/manage/{sub['manage_token']}", data={"mode": "hourly"})
    assert bad.status_code == 422


def test_notify_subscribe_rejects_bad_input(site):
    fid = site.world.add_feed("https://a.example.test/feed")
    r = site.client.post("/subscribe", data={"feed": str(fid), "email": "not-an-address"})
    assert r.status_code == 422
    assert "not an email address" in r.text
    assert repo.list_subscriptions(site.world.store) == []
    r = site.client.post("/subscribe", data={"feed": str(fid), "email": "a@b.example",
                                             "tz": "Mars/Base"})
    assert r.status_code == 422


def test_notify_outbox_page_lists_rows_and_captured_mails(site):
    _subscribe(site, "ana@example.test")
    page = site.client.get("/outbox")
    assert page.status_code == 200
    assert "ana@example.test" in page.text
    assert "Confirm your subscription to" in page.text
    [m] = repo.list_sink(site.world.store)
    shown = site.client.get(f"/outbox?mail={m['id']}")
    assert "Content-Type: multipart/alternative" in shown.text


def test_notify_outbox_page_is_not_served_for_a_real_mail_server(world):
    world.settings = world.settings.replace(smtp_url="smtp://mail.example.test:25")
    app = FastAPI()
    app.state.fairfetch = SimpleNamespace(settings=world.settings, store=world.store)
    app.include_router(router)
    with TestClient(app) as client:
        assert client.get("/outbox").status_code == 404


def test_notify_public_form_cannot_mail_bomb_or_change_active_subscriptions(site):
    fid = _subscribe(site, "ana@example.test")
    for _ in range(3):  # posted again and again: still one confirmation mail
        r = site.client.post("/subscribe", data={"feed": str(fid), "email": "ana@example.test"})
        assert "less than an hour ago" in r.text
    assert len(site.sink.mails) == 1
    [sub] = repo.list_subscriptions(site.world.store)
    repo.confirm(site.world.store, sub["confirm_token"], T0)
    # a stranger posting the form for an active reader changes nothing and sends nothing
    r = site.client.post("/subscribe", data={"feed": str(fid), "email": "ana@example.test",
                                             "mode": "weekly", "only": "spam"})
    assert "already subscribed" in r.text
    [after] = repo.list_subscriptions(site.world.store)
    assert (after["mode"], after["only_categories"]) == ("realtime", [])
    assert len(site.sink.mails) == 1


def test_notify_old_confirmation_link_does_not_undo_an_unsubscribe(site):
    """The confirmation token is spent once the subscription ends: replaying the first mail's
    link (a stale tab, a mail scanner that POSTs, anyone who saw the mail) must not re-subscribe
    a reader who unsubscribed. Subscribing again mints a fresh link."""
    fid = _subscribe(site, "ana@example.test")
    [mail] = site.sink.mails
    text = next(mail.message.iter_parts()).get_content()
    link = re.search(r"https://news\.example\.test(/confirm/\S+)", text).group(1)
    assert site.client.post(link).status_code == 200
    [sub] = repo.list_subscriptions(site.world.store)
    r = site.client.post(f"/unsubscribe/{sub['manage_token']}",
                         content=b"List-Unsubscribe=One-Click",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200
    # the old link again, by the page's button (POST) and by its GET
    again = site.client.post(link)
    assert again.status_code == 404
    assert "confirmation" in again.text
    assert site.client.get(link).status_code == 404
    [after] = repo.list_subscriptions(site.world.store)
    assert after["status"] == "unsubscribed"
    # and so nothing is mailed for the feed's next entry
    site.world.write(fid, [site.world.entry("after unsubscribing")], at=T0 + timedelta(hours=2))
    assert [r["kind"] for r in site.world.outbox()] == ["confirm"]
    # confirming twice while active stays harmless (the direction that must keep working)
    r = site.client.post("/subscribe", data={"feed": str(fid), "email": "ana@example.test"})
    assert r.status_code == 200
    fresh = [m for m in site.sink.mails if m is not mail]
    assert len(fresh) == 1
    text = next(fresh[0].message.iter_parts()).get_content()
    new_link = re.search(r"https://news\.example\.test(/confirm/\S+)", text).group(1)
    assert new_link != link
    assert site.client.post(new_link).status_code == 200
    assert site.client.post(new_link).status_code == 200
    assert repo.list_subscriptions(site.world.store)[0]["status"] == "active"


def test_notify_public_form_does_not_move_an_active_readers_time_zone(site):
    """The public form never changes an active subscription — nor, through the reader's time
    zone, the hour her live digests arrive at: subscribing to one more feed with the form's
    default zone (UTC), or a stranger posting her address, left her Paris digest an hour off."""
    w = site.world
    fid = _subscribe(site, "ana@example.test", mode="daily", hour="7", tz="Europe/Paris")
    [mail] = site.sink.mails
    link = re.search(r"https://news\.example\.test(/confirm/\S+)",
                     next(mail.message.iter_parts()).get_content()).group(1)
    assert site.client.post(link).status_code == 200
    other = w.add_feed("https://other.example.test/feed")
    r = site.client.post("/subscribe", data={"feed": str(other), "email": "ana@example.test",
                                              "mode": "daily", "hour": "7", "tz": "UTC"})
    assert r.status_code == 200
    subs = {s["feed_id"]: s for s in repo.list_subscriptions(w.store)}
    assert subs[fid]["tz"] == "Europe/Paris"
    assert subs[fid]["status"] == "active"
    # her digest still goes out at 07:00 Paris time (06:00 UTC in March)
    w.write(fid, [w.entry("news")], at=T0 + timedelta(hours=1))
    [issue] = [r for r in w.outbox() if r["kind"] == "digest"]
    assert issue["due_at"].hour == 6


def test_notify_public_form_sets_the_zone_of_a_reader_without_live_subscriptions(site):
    """The other direction: nothing of hers is live, so the form's zone is hers to set."""
    fid = _subscribe(site, "bob@example.test", mode="daily", hour="7", tz="UTC")
    r = site.client.post("/subscribe", data={"feed": str(fid), "email": "bob@example.test",
                                              "mode": "daily", "hour": "7",
                                              "tz": "America/New_York"})
    assert r.status_code == 200
    [sub] = repo.list_subscriptions(site.world.store)
    assert (sub["status"], sub["tz"]) == ("pending", "America/New_York")


@pytest.mark.parametrize("key", ["²", "٣", "99999999999999999999999", str(2**63)])
def test_notify_subscribe_odd_feed_ids_are_unknown_feeds_not_errors(site, key):
    """``str.isdigit`` accepts ``²``, which ``int`` refuses, and ids past 64 bits overflow
    the database: each was a 500 on the page and its form, and a traceback in the CLI."""
    site.world.add_feed("https://a.example.test/feed")
    assert site.client.get("/subscribe", params={"feed": key}).status_code == 404
    r = site.client.post("/subscribe", data={"feed": key, "email": "ana@example.test"})
    assert r.status_code in (400, 404), r.text
    assert repo.list_subscriptions(site.world.store) == []


def test_notify_find_or_add_feed_normalises_and_checks_the_url(site):
    """The library path the subscribe page and API share: another spelling of a directory feed
    finds it (no duplicate feed), and a URL the crawler could never fetch is refused naming it."""
    from fairfetch.errors import InputError
    from fairfetch.notify.subscriptions import find_or_add_feed

    fid = site.world.add_feed("https://a.example.test/feed")
    store = site.world.store
    assert find_or_add_feed(store, "HTTPS://A.EXAMPLE.TEST/feed#top", T0).id == fid
    for bad in ("https://a.example.test/\x07feed", "http://[oops/feed"):
        with pytest.raises(InputError) as err:
            find_or_add_feed(store, bad, T0)
        assert repr(bad) in str(err.value) or bad in str(err.value)
    assert len(store.list_feeds()) == 1


def test_notify_subscribe_page_never_says_a_queued_mail_was_sent(site):
    """The form's answer comes before the confirmation mail is handed to the mail server (it
    goes after the response, and may wait in the outbox while the server is away): the page
    says it is on its way, and a second request within the hour that one was queued."""
    _subscribe(site, "bo@example.test")
    fid = site.world.add_feed("https://a.example.test/feed")
    first = site.client.post("/subscribe", data={"feed": str(fid), "email": "cy@example.test"})
    again = site.client.post("/subscribe", data={"feed": str(fid), "email": "cy@example.test"})
    for page in (first, again):
        assert page.status_code == 200
        assert "was sent" not in page.text
        assert "We sent" not in page.text
    assert "on its way to cy@example.test" in first.text
    assert "was queued less than an hour ago" in again.text
