"""Applying a batch of crawl results in one transaction, with a handful of statements.

A statement per row is what makes a crawler's store the bottleneck: SQLAlchemy spends far more
time building and compiling a statement than SQLite spends running it. So each kind of row is
written with one ``executemany`` for the whole batch (entries, crawls, hops, contacts, authors),
feed updates are grouped by the set of columns they change, and the statements are built once.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.feeds.model import Entry
from fairfetch.store.hooks import run_new_entries_hooks
from fairfetch.store.records import CrawlWrite, FeedRecord, WriteResult
from fairfetch.store.tables import (
    author_links,
    authors,
    crawls,
    entries,
    feed_links,
    feeds,
    redirects,
)
from fairfetch.store.types import (
    AUTHOR_KEY_BYTES,
    UTCDateTime,
    bindable_text,
    index_safe,
    key_text,
)
from fairfetch.store.upserts import CONFLICT_DIALECTS, conflict_insert

_CHUNK = 400  # bound IN (...) lists; PostgreSQL plans very long ones badly
#: Outcomes that add one to the feed's ``crawl_count`` (a throttle and an internal error touch
#: no health column, and may be written as decided whatever the row holds).
_COUNTED = frozenset({"ok", "not_modified", "error"})

_INSERT_ENTRY = entries.insert()
#: Rows come back in any order: each carries its feed id, and ids are sorted per feed after.
#: (Asking for parameter order makes SQLAlchemy run one INSERT per row on SQLite.)
_INSERT_ENTRY_RETURNING = entries.insert().returning(entries.c.id, entries.c.feed_id)
_UPDATE_ENTRY = (
    entries.update()
    .where(entries.c.id == sa.bindparam("_id"))
    .values(
        {
            c: sa.bindparam("v_" + c)
            for c in (
                "title",
                "link",
                "published",
                "updated",
                "summary",
                "content",
                "authors",
                "categories",
                "enclosures",
                "image_url",
                "content_hash",
                "last_seen_at",
            )
        }
    )
)
_INSERT_CRAWL = crawls.insert()
_INSERT_HOP = redirects.insert()
_INSERT_LINK = feed_links.insert()
_INSERT_AUTHOR = authors.insert()
_INSERT_AUTHOR_LINK = author_links.insert()


def entry_hash(e: Entry) -> str:
    """What makes an entry "changed" for us: the fields a reader sees.

    One digest of the fields' reprs, each followed by a NUL, then the enclosures' — the same
    bytes (so the same stored hashes) as feeding them one by one, at a third of the cost."""
    text = "\x00".join(
        [repr(part) for part in (e.title, e.link, e.summary, e.content, e.published, e.updated)]
    )
    text += "\x00" + "".join([repr((x.url, x.type, x.length)) for x in e.enclosures])
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


def entry_row(e: Entry) -> dict[str, Any]:
    return {
        "title": e.title,
        "link": e.link,
        "published": e.published,
        "updated": e.updated,
        "summary": e.summary,
        "content": e.content,
        # Spelled out, not dataclasses.asdict: its deep copy was a tenth of the write's CPU.
        "authors": [{"name": p.name, "email": p.email, "url": p.url} for p in e.authors],
        "categories": list(e.categories),
        "enclosures": [{"url": x.url, "type": x.type, "length": x.length} for x in e.enclosures],
        "image_url": e.image_url,
        "content_hash": entry_hash(e),
    }


def link_row(url: str, network: str | None, source: str | None) -> dict[str, str]:
    """The one bind site for contact and author links.

    ``source`` and ``network`` are not-null columns: a remote database driver refuses a missing
    value outright (the incident in seeds/000), so they get their default here, where no caller
    can bypass it.
    """
    return {"url": url, "network": network or "web", "source": source or "unknown"}


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


@functools.lru_cache(maxsize=64)
def _pairs_sql(n: int, marker: str) -> str:
    """The lookup of ``n`` (feed_id, entry_id) pairs: a VALUES list joined to the unique index.

    Each pair is one probe of the unique index (SQLite: SEARCH … USING INDEX per row of the
    list; PostgreSQL: an index nested loop once the table is large, a hash join while it is
    small). The alternatives cost more: a row-value ``IN`` makes SQLite scan the whole table;
    one ``feed_id = ? AND entry_id IN (…)`` per feed, OR-ed, probes the same rows, but building
    its expression tree made the lookup 4-5x slower (640 pairs: 8.4 ms against 1.8 ms).
    Written as SQL because SQLite cannot name the columns of a VALUES subquery (``AS w (f, e)``),
    which is how SQLAlchemy renders one; a CTE names them on both.
    """
    row = f"(CAST({marker} AS BIGINT), CAST({marker} AS TEXT))" if marker != "?" else "(?, ?)"
    return (
        "WITH wanted (f, e) AS (VALUES " + ", ".join([row] * n) + ") "
        "SELECT entries.feed_id, entries.entry_id, entries.id, entries.content_hash "
        "FROM wanted JOIN entries ON entries.feed_id = wanted.f AND entries.entry_id = wanted.e"
    )


def _find_pairs(
    conn: sa.Connection, pairs: Sequence[tuple[int, str]]
) -> Iterator[tuple[int, str, int, str | None]]:
    """Rows (feed_id, entry_id, id, content_hash) of the stored entries among ``pairs``,
    looked up ``_CHUNK`` pairs a statement (bind limits, and plans that stay simple)."""
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    for part in _chunks(pairs):
        params = tuple(x for pair in part for x in pair)
        for row in conn.exec_driver_sql(_pairs_sql(len(part), marker), params):
            yield row[0], row[1], row[2], row[3]


def write_batch(
    conn: sa.Connection, batch: Sequence[CrawlWrite], settings: Settings | None = None
) -> list[WriteResult]:
    """Apply ``batch``; a feed appearing twice is split into successive sub-batches.

    ``settings`` reach the new-entries hooks (the notification outbox reads its limits there).
    A result for a feed deleted meanwhile (`run` crawls while the web deletes) keeps only its
    crawl row, with no feed: its entries and links would break the foreign keys and fail the
    whole batch."""
    alive = _lock_feeds(conn, {w.feed_id for w in batch})
    gone = [w for w in batch if w.feed_id not in alive]
    if gone:
        conn.execute(_INSERT_CRAWL, [{**_crawl_row(w, 0), "feed_id": None} for w in gone])
    results: list[WriteResult] = []
    current: list[CrawlWrite] = []
    seen: set[int] = set()
    for w in batch:
        if w.feed_id not in alive:
            continue
        if w.feed_id in seen:
            results.extend(_write_unique(conn, current, settings, alive))
            current, seen = [], set()
        current.append(w)
        seen.add(w.feed_id)
    if current:
        results.extend(_write_unique(conn, current, settings, alive))
    if not gone:
        return results
    written = iter(results)
    return [next(written) if w.feed_id in alive else WriteResult(w.feed_id, 0, None) for w in batch]


def _lock_feeds(conn: sa.Connection, ids: set[int]) -> dict[int, int]:
    """``crawl_count`` of the feeds among ``ids`` that still exist, their rows locked until
    commit: against deletion, and against another writer's update between this read and ours
    (``FOR NO KEY UPDATE`` on PostgreSQL, in id order so two batches never wait on each other
    crosswise; SQLite's write transaction began IMMEDIATE, see SqlStore.write). The counts are
    what ``_rebased`` compares a result's with."""
    found: dict[int, int] = {}
    for part in _chunks(sorted(ids)):
        q = (
            sa.select(feeds.c.id, feeds.c.crawl_count)
            .where(feeds.c.id.in_(part))
            .order_by(feeds.c.id)
            .with_for_update(key_share=True)
        )
        found.update((row[0], row[1]) for row in conn.execute(q))
    return found


def _rebased(conn: sa.Connection, w: CrawlWrite, counts: dict[int, int]) -> CrawlWrite:
    """``w`` as it must be written on the feed's row as it is now: decided again when another
    writer moved the feed's ``crawl_count`` since the row ``w`` was decided on."""
    if w.redecide is None or w.read_crawl_count is None or w.outcome not in _COUNTED:
        return w
    now = counts[w.feed_id]
    if now == w.read_crawl_count:
        return w
    row = conn.execute(sa.select(feeds).where(feeds.c.id == w.feed_id)).mappings().one()
    feed = FeedRecord.from_row(row)
    changes = dict(w.redecide.changes(feed))
    # A first read's backlog notifies nobody; another process's success stored it meanwhile,
    # and what only this read found is news (as on any later read of the feed).
    first = w.first_crawl and feed.last_success_at is None and feed.entry_count == 0
    return dataclasses.replace(w, feed_changes=changes, read_crawl_count=now, first_crawl=first)


def _crawl_row(w: CrawlWrite, new_entries: int) -> dict[str, Any]:
    return {
        "feed_id": w.feed_id,
        "url": w.url,
        "at": w.at,
        "outcome": w.outcome,
        "http_status": w.http_status,
        "error_kind": w.error_kind,
        "error_detail": w.error_detail or None,
        "bytes": w.bytes,
        "duration": w.duration,
        "politeness_key": w.politeness_key or "",
        "new_entries": new_entries,
        "trigger": w.trigger or "poll",
    }


def _write_unique(
    conn: sa.Connection,
    batch: Sequence[CrawlWrite],
    settings: Settings | None,
    counts: dict[int, int],
) -> list[WriteResult]:
    """Write ``batch`` (each feed once); ``counts``: the feeds' ``crawl_count`` as locked,
    kept up to date for a later sub-batch."""
    batch = [_rebased(conn, w, counts) for w in batch]
    for w in batch:
        if w.outcome in _COUNTED:
            counts[w.feed_id] += 1
    moved = _moves(conn, batch)
    new_ids, newest = _entries(conn, batch)
    _feed_updates(conn, batch, moved, new_ids, newest)
    duplicates = [w.feed_id for w in batch if w.feed_changes.get("duplicate_of") is not None]
    if duplicates:
        # The readers of a feed recorded as a duplicate follow it in this same transaction,
        # before this batch's new entries are enqueued (see follow_duplicates: why here).
        from fairfetch.store.notify_subscriptions import follow_duplicates

        follow_duplicates(conn, max(w.at for w in batch), duplicates, settings)
    _hops(conn, batch)
    _contacts(conn, batch)
    _authors(conn, batch)
    conn.execute(_INSERT_CRAWL, [_crawl_row(w, len(new_ids.get(w.feed_id, ()))) for w in batch])
    for w in batch:
        ids = new_ids.get(w.feed_id)
        if ids:
            run_new_entries_hooks(conn, w.feed_id, ids, w.at, w.first_crawl, settings)
    if duplicates:
        # ... and, once this batch's new entries are enqueued, are not told twice of an item
        # the duplicate told them of (see settle_duplicates).
        from fairfetch.store.notify_subscriptions import settle_duplicates

        settle_duplicates(conn, duplicates)
    return [
        WriteResult(w.feed_id, len(new_ids.get(w.feed_id, ())), moved.get(w.feed_id)) for w in batch
    ]


def _moves(conn: sa.Connection, batch: Sequence[CrawlWrite]) -> dict[int, str]:
    """A feed moves to a new URL unless another feed already has it, or an earlier feed of
    this batch is moving onto it (two copies of one feed redirected to the same place), or it
    is longer than the unique index on ``feeds.url`` holds (the publisher's server names the
    target: on PostgreSQL such a move failed the whole batch, on every pass)."""
    out: dict[int, str] = {}
    claimed: set[str] = set()
    for w in batch:
        target = w.feed_changes.get("url")
        if target is None:
            continue
        stored = bindable_text(target)
        if stored in claimed or index_safe(stored) != stored:
            continue
        taken = conn.execute(
            sa.select(feeds.c.id).where(feeds.c.url == target, feeds.c.id != w.feed_id)
        ).first()
        if taken is None:
            out[w.feed_id] = target
            claimed.add(bindable_text(target))
    return out


def _entries(
    conn: sa.Connection, batch: Sequence[CrawlWrite]
) -> tuple[dict[int, list[int]], dict[int, datetime]]:
    """Insert new entries and update changed ones; identity is (feed, entry id)."""
    wanted: dict[tuple[int, str], tuple[Entry, datetime]] = {}
    newest: dict[int, datetime] = {}
    for w in batch:
        for e in w.entries or ():
            # The id as the column stores it, so the look-up below finds what was stored.
            eid = key_text(e.id) if e.id else e.id
            if not eid or (w.feed_id, eid) in wanted:
                continue
            wanted[(w.feed_id, eid)] = (e, w.at)
            when = e.published or e.updated
            if when is not None and (w.feed_id not in newest or when > newest[w.feed_id]):
                newest[w.feed_id] = when
    if not wanted:
        return {}, newest
    existing: dict[tuple[int, str], tuple[int, str | None]] = {}
    for feed_id, entry_id, row_id, content_hash in _find_pairs(conn, list(wanted)):
        existing[(feed_id, entry_id)] = (row_id, content_hash)
    existing.update(_rekey(conn, wanted, existing))
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for (feed_id, eid), (e, at) in wanted.items():
        values = entry_row(e)
        old = existing.get((feed_id, eid))
        if old is None:
            values.update(feed_id=feed_id, entry_id=eid, first_seen_at=at, last_seen_at=at)
            inserts.append(values)
        elif old[1] != values["content_hash"]:
            params = {"v_" + k: v for k, v in values.items()}
            params["v_last_seen_at"] = at
            params["_id"] = old[0]
            updates.append(params)
    if updates:
        conn.execute(_UPDATE_ENTRY, updates)
    new_ids: dict[int, list[int]] = {}
    if inserts:
        if conn.dialect.insert_executemany_returning:
            # The new ids straight from the INSERT (SQLite >= 3.35, PostgreSQL). A row another
            # writer stored since the look-up above is skipped, not a failed batch, and only
            # the rows this statement stored come back as new.
            stmt = _insert_entries_returning(conn.dialect.name)
            for found in conn.execute(stmt, inserts):
                new_ids.setdefault(found.feed_id, []).append(found.id)
        else:
            conn.execute(_INSERT_ENTRY, inserts)
            new_pairs = [(r["feed_id"], r["entry_id"]) for r in inserts]
            for feed_id, _eid, row_id, _hash in _find_pairs(conn, new_pairs):
                new_ids.setdefault(feed_id, []).append(row_id)
        for ids in new_ids.values():
            ids.sort()
    return new_ids, newest


def _rekey(
    conn: sa.Connection,
    wanted: dict[tuple[int, str], tuple[Entry, datetime]],
    existing: dict[tuple[int, str], tuple[int, str | None]],
) -> dict[tuple[int, str], tuple[int, str | None]]:
    """Stored entries that come back under a new id, moved to it: {(feed, new id): row}.

    An entry without a guid is identified by its link; when that identity is derived anew
    (tracking parameters left out of it) or the publisher starts giving guids, the same post
    arrives under another id. A new id whose link is both the id and the link of a stored entry
    of the feed, not itself listed in this crawl, is that entry: one newcomer per stored row.
    Without this the post was a second row, listed and counted twice, an undated one mailed
    again."""
    by_link: dict[tuple[int, str], tuple[int, str]] = {}
    for (feed_id, eid), (e, _at) in wanted.items():
        if (feed_id, eid) in existing or not e.link:
            continue
        link = key_text(e.link)  # as an entry id made of it is stored
        if link != eid and (feed_id, link) not in wanted:
            by_link.setdefault((feed_id, link), (feed_id, eid))
    if not by_link:
        return {}
    found = {
        (feed_id, entry_id): (row_id, content_hash)
        for feed_id, entry_id, row_id, content_hash in _find_pairs(conn, list(by_link))
    }
    if not found:
        return {}
    ids = [row_id for row_id, _hash in found.values()]
    same_link = {
        r.id
        for part in _chunks(ids)
        for r in conn.execute(
            sa.select(entries.c.id, entries.c.link, entries.c.entry_id).where(
                entries.c.id.in_(part)
            )
        )
        if r.link is not None and key_text(r.link) == r.entry_id
    }
    moved: dict[tuple[int, str], tuple[int, str | None]] = {}
    for pair, (row_id, content_hash) in found.items():
        if row_id in same_link:
            moved[by_link[pair]] = (row_id, content_hash)
    if moved:
        conn.execute(
            entries.update()
            .where(entries.c.id == sa.bindparam("_id"))
            .values(entry_id=sa.bindparam("_eid")),
            [{"_id": row_id, "_eid": eid} for (_f, eid), (row_id, _h) in moved.items()],
        )
    return moved


@functools.lru_cache(maxsize=4)
def _insert_entries_returning(dialect: str) -> Any:
    """INSERT … ON CONFLICT (feed_id, entry_id) DO NOTHING RETURNING id, feed_id: two writers
    (the web process crawling on a WebSub ping and `run` polling, or two workers) may both
    find an entry missing and both insert it."""
    if dialect not in CONFLICT_DIALECTS:
        return _INSERT_ENTRY_RETURNING
    stmt = conflict_insert(entries, dialect)
    return stmt.on_conflict_do_nothing(index_elements=["feed_id", "entry_id"]).returning(
        entries.c.id, entries.c.feed_id
    )


_NEWEST = sa.bindparam("_newest", type_=UTCDateTime())


def _feed_updates(
    conn: sa.Connection,
    batch: Sequence[CrawlWrite],
    moved: dict[int, str],
    new_ids: dict[int, list[int]],
    newest: dict[int, datetime],
) -> None:
    """One executemany per shape of change: only the columns a decision named are set."""
    groups: dict[tuple[frozenset[str], bool, bool, bool], list[dict[str, Any]]] = {}
    for w in batch:
        changes = {k: v for k, v in w.feed_changes.items() if k != "url"}
        if w.feed_id in moved:
            changes["url"] = moved[w.feed_id]
        elif "url" in w.feed_changes and not str(changes.get("politeness_key")).startswith(
            "backend:"
        ):
            # The move was refused (_moves): the feed stays, on its own domain's key, not on
            # the target's that came with the move (a backend's key names no URL: it stands).
            changes.pop("politeness_key", None)
        inc = len(new_ids.get(w.feed_id, ()))
        counts = w.outcome in _COUNTED
        new_newest = newest.get(w.feed_id)
        if not changes and not inc and not counts and new_newest is None:
            continue
        shape = (frozenset(changes), inc > 0, counts, new_newest is not None)
        params = {"v_" + k: v for k, v in changes.items()}
        params["_fid"] = w.feed_id
        if inc:
            params["_inc"] = inc
        if new_newest is not None:
            params["_newest"] = new_newest
        groups.setdefault(shape, []).append(params)
    for (columns, has_inc, counts, has_newest), rows in groups.items():
        values: dict[str, Any] = {c: sa.bindparam("v_" + c) for c in columns}
        if has_inc:
            values["entry_count"] = feeds.c.entry_count + sa.bindparam("_inc")
        if counts:
            values["crawl_count"] = feeds.c.crawl_count + 1
        if has_newest:
            values["newest_entry_at"] = sa.case(
                (feeds.c.newest_entry_at.is_(None), _NEWEST),
                (feeds.c.newest_entry_at < _NEWEST, _NEWEST),
                else_=feeds.c.newest_entry_at,
            )
        stmt = feeds.update().where(feeds.c.id == sa.bindparam("_fid")).values(values)
        conn.execute(stmt, rows)


def _hops(conn: sa.Connection, batch: Sequence[CrawlWrite]) -> None:
    touched = [w for w in batch if w.hops is not None]
    if not touched:
        return
    for part in _chunks([w.feed_id for w in touched]):
        conn.execute(redirects.delete().where(redirects.c.feed_id.in_(part)))
    rows = [
        {
            "feed_id": w.feed_id,
            "hop": i,
            "url": h.url,
            "status": h.status,
            "location": h.location,
            "seen_at": w.at,
        }
        for w in touched
        for i, h in enumerate(w.hops or ())
    ]
    if rows:
        conn.execute(_INSERT_HOP, rows)


def _contacts(conn: sa.Connection, batch: Sequence[CrawlWrite]) -> None:
    touched = [w for w in batch if w.contacts is not None]
    if not touched:
        return
    for part in _chunks([w.feed_id for w in touched]):
        conn.execute(feed_links.delete().where(feed_links.c.feed_id.in_(part)))
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    for w in touched:
        for c in w.contacts or ():
            # Keyed as the unique index sees the URL (stored form): two spellings that are
            # stored alike are one link, not a second row that fails the batch.
            if c.url and (w.feed_id, key_text(c.url)) not in rows:
                rows[(w.feed_id, key_text(c.url))] = {
                    "feed_id": w.feed_id,
                    **link_row(c.url, c.network, c.source),
                }
    if rows:
        conn.execute(_INSERT_LINK, list(rows.values()))


def _authors(conn: sa.Connection, batch: Sequence[CrawlWrite]) -> None:
    touched = [w for w in batch if w.authors is not None]
    if not touched:
        return
    ids = [w.feed_id for w in touched]
    for part in _chunks(ids):
        conn.execute(authors.delete().where(authors.c.feed_id.in_(part)))  # cascades to links
    rows: dict[tuple[int, str, str, str], dict[str, Any]] = {}
    for w in touched:
        for person, source in w.authors or ():
            name, email, url = person.name or "", person.email or "", person.url or ""
            # Keyed as the unique index sees them (stored form), as the contacts are.
            key = (w.feed_id, key_text(name, AUTHOR_KEY_BYTES),
                   key_text(email, AUTHOR_KEY_BYTES), key_text(url, AUTHOR_KEY_BYTES))
            if key[1:] == ("", "", "") or key in rows:
                continue
            rows[key] = {
                "feed_id": w.feed_id,
                "name": name,
                "email": email,
                "url": url,
                "source": source or "unknown",
            }
    if not rows:
        return
    conn.execute(_INSERT_AUTHOR, list(rows.values()))
    # Keyed by (author, url), the unique index: an author whose profile is their own mailbox
    # (Atom <email>a@b</email> with <uri>mailto:a@b</uri>) gets it once, not a second copy
    # that fails the whole batch's transaction.
    links: dict[tuple[int, str], dict[str, Any]] = {}
    for part in _chunks(ids):
        for a in conn.execute(
            sa.select(
                authors.c.id,
                authors.c.feed_id,
                authors.c.name,
                authors.c.email,
                authors.c.url,
                authors.c.source,
            ).where(authors.c.feed_id.in_(part))
        ):
            if a.email:
                links.setdefault(
                    (a.id, "mailto:" + a.email),
                    {"author_id": a.id, **link_row("mailto:" + a.email, "email", a.source)},
                )
            if a.url:
                links.setdefault(
                    (a.id, a.url), {"author_id": a.id, **link_row(a.url, "web", a.source)}
                )
    if links:
        conn.execute(_INSERT_AUTHOR_LINK, list(links.values()))
