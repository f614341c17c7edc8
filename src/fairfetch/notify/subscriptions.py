"""Subscribing, confirming and unsubscribing: input checks and the feed lookup around the repo.

Shared by the CLI and the web pages so both enforce the same rules (double opt-in: nothing but
the confirmation mail is sent before the reader confirms).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import getaddresses

from fairfetch.crawl.urls import normalize_feed_url
from fairfetch.errors import InputError, NotFoundError
from fairfetch.net.idn import idna2008, is_host_name
from fairfetch.net.politeness import politeness_key
from fairfetch.notify.filters import parse_categories
from fairfetch.notify.schedule import MODES, parse_weekday, zone
from fairfetch.store import feed_key
from fairfetch.store import notify_repo as repo
from fairfetch.store.records import FeedRecord
from fairfetch.store.sql import SqlStore

__all__ = ["SubscriptionRequest", "check_email", "find_or_add_feed", "request_subscription"]


def check_email(email: str) -> str:
    # one spelling of each character (NFC): "é" typed and "e" + U+0301 pasted are one mailbox,
    # which became two readers, each mailed every item
    text = unicodedata.normalize("NFC", email.strip())
    # one mailbox, in plain characters: parseaddr kept the first of "ana@…, bob@…" (the page
    # said the address given was subscribed), and control characters reached the database (a
    # NUL cannot be stored on PostgreSQL: the form answered 500)
    found = getaddresses([text])
    addr = found[0][1] if len(found) == 1 else ""
    local, _, domain = addr.rpartition("@")
    if (
        not local
        or "." not in domain
        or any(c.isspace() for c in addr)
        or not all(c.isprintable() for c in text)
    ):
        raise InputError(email, "not an email address")
    why = _undeliverable(local, domain)
    if why:
        raise InputError(email, f"not an email address ({why})")
    # one reader per mailbox, however it is capitalised (local parts are case-insensitive at
    # every provider that matters)
    return (local + "@" + domain).lower()


def _undeliverable(local: str, domain: str) -> str | None:
    """Why no mail server could deliver to ``local@domain`` (RFC 5321 §4.5.3.1's sizes, RFC
    1035's host names, RFC 5322's dot-atom), or None. Such an address made a reader and queued
    a confirmation mail that could only bounce."""
    if len(local.encode()) > 64:
        return "the part before @ is over 64 characters"
    if not local.startswith('"') and (
        local.startswith(".") or local.endswith(".") or ".." in local
    ):
        return "a dot at the start or end of the part before @, or two in a row"
    try:
        host = idna2008(domain).lower()  # the form the mail goes to: no IDNA 2003 stand-in
    except UnicodeError:
        return "the domain is no host name"
    if len(host) > 253:
        return "the domain is over 253 characters"
    if not is_host_name(host):
        return "the domain is no host name"
    return None


@dataclass(frozen=True)
class SubscriptionRequest:
    email: str
    mode: str = "realtime"
    hour: int = 8
    weekday: int = 0
    tz: str | None = None
    only: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        email: str,
        *,
        mode: str = "realtime",
        hour: int | None = None,
        weekday: str | int | None = None,
        tz: str | None = None,
        only: str | Iterable[str] | None = None,
        exclude: str | Iterable[str] | None = None,
    ) -> SubscriptionRequest:
        if mode not in MODES:
            raise InputError(mode, "mode must be realtime, daily or weekly")
        h = 8 if hour is None else int(hour)
        if not 0 <= h <= 23:
            raise InputError(str(hour), "hour must be 0 to 23")
        if tz:
            zone(tz)
        return cls(
            email=check_email(email),
            mode=mode,
            hour=h,
            weekday=parse_weekday(weekday) if weekday not in (None, "") else 0,
            tz=tz or None,
            only=tuple(parse_categories(only)),
            exclude=tuple(parse_categories(exclude)),
        )


def find_or_add_feed(store: SqlStore, key: str | int, now: datetime) -> FeedRecord:
    """A feed by id or URL (current or original); an unknown URL is added, due for its first
    crawl (which records its backlog without notifying anyone)."""
    key = feed_key(key)
    if isinstance(key, int):
        return store.get_feed(key)
    found = store.find_feed(key)
    if found is not None:
        return found
    # Spelled as `feeds add` stores it (another spelling of a directory feed finds that feed),
    # and refused naming it (InvalidURLError) when the crawler could never fetch it.
    url = normalize_feed_url(key)
    found = store.find_feed(url)
    if found is not None:
        return found
    feed, _created = store.add_feed(url, now=now, politeness_key=politeness_key(url))
    return feed


def request_subscription(
    store: SqlStore,
    req: SubscriptionRequest,
    feed_key: str | int,
    *,
    now: datetime | None = None,
    update_active: bool = True,
    confirms_per_day: int | None = None,
) -> repo.Subscribed:
    at = now or datetime.now(UTC)
    feed = find_or_add_feed(store, feed_key, at)
    return repo.subscribe(
        store,
        req.email,
        feed.id,
        mode=req.mode,
        hour=req.hour,
        weekday=req.weekday,
        tz=req.tz,
        only=req.only,
        exclude=req.exclude,
        now=at,
        update_active=update_active,
        confirms_per_day=confirms_per_day,
    )


def unsubscribe_email(store: SqlStore, email: str, feed_key: str, *, now: datetime) -> int:
    feed = store.find_feed(feed_key)
    if feed is None:
        raise NotFoundError(f"feed {feed_key!r}")
    return repo.unsubscribe(store, now, email=check_email(email), feed_id=feed.id)
