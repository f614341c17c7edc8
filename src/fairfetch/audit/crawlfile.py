"""The crawl file: one SQLite database per audit. The only module of audit/ that writes SQL.

Schema (documented for users in docs/audit.md). Every table has a unique index per URL (or per
pair), and every write is an upsert on it, so resuming a crawl updates rows, never duplicates
them. Page ids are the page's breadth-first order, assigned when its level is queued, so two
crawls of one site number their pages alike whatever the completion order of fetches was.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairfetch.errors import AuditError

__all__ = ["LINKS_TO_COLUMNS", "SCHEMA", "SCHEMA_VERSION", "CrawlFile"]

SCHEMA_VERSION = "1"
#: The columns of the ``links_to`` index a finished crawl builds. Files finished before
#: 2026-11-30 have it on ``to_url`` alone; readers check (``PRAGMA index_info``).
LINKS_TO_COLUMNS = "to_url, internal, location"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY,            -- breadth-first order
    url TEXT NOT NULL,
    level INTEGER NOT NULL,            -- crawl round (0 = start URL)
    depth INTEGER,                     -- clicks from the start URL; NULL: reached only via sitemap
    source TEXT NOT NULL,              -- start | link | redirect | sitemap
    state TEXT NOT NULL,               -- queued | done
    status INTEGER, error TEXT, content_type TEXT, size INTEGER, response_ms REAL,
    title TEXT, title_count INTEGER, title_outside_head INTEGER,
    meta_description TEXT, description_count INTEGER, description_outside_head INTEGER,
    h1 TEXT, h1_count INTEGER, heading_levels TEXT,
    canonical TEXT, canonical_count INTEGER,
    meta_robots TEXT, x_robots_tag TEXT, hreflang TEXT, lang TEXT, word_count INTEGER,
    indexable INTEGER, indexability TEXT, redirect_to TEXT,
    content_hash TEXT, sketch TEXT, og_title TEXT, og_image TEXT,
    jsonld_total INTEGER, jsonld_invalid INTEGER,
    hsts INTEGER, csp INTEGER, x_content_type_options INTEGER, mixed_content INTEGER,
    in_sitemap INTEGER NOT NULL DEFAULT 0, crawled_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS pages_url ON pages(url);
CREATE INDEX IF NOT EXISTS pages_level ON pages(level, state);
CREATE TABLE IF NOT EXISTS links (
    from_id INTEGER NOT NULL, seq INTEGER NOT NULL, to_url TEXT NOT NULL,
    anchor TEXT, rel TEXT, internal INTEGER NOT NULL, location TEXT,
    PRIMARY KEY (from_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS images (
    id INTEGER PRIMARY KEY, url TEXT NOT NULL, internal INTEGER NOT NULL,
    status INTEGER, content_type TEXT, size INTEGER, error TEXT, checked_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS images_url ON images(url);
CREATE TABLE IF NOT EXISTS page_images (
    page_id INTEGER NOT NULL, image_id INTEGER NOT NULL, alt TEXT, width TEXT, height TEXT,
    PRIMARY KEY (page_id, image_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS resources (
    id INTEGER PRIMARY KEY, url TEXT NOT NULL, type TEXT NOT NULL, internal INTEGER NOT NULL,
    status INTEGER, content_type TEXT, size INTEGER, error TEXT, checked_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS resources_url ON resources(url);
CREATE TABLE IF NOT EXISTS page_resources (
    page_id INTEGER NOT NULL, resource_id INTEGER NOT NULL,
    PRIMARY KEY (page_id, resource_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS redirects (
    from_url TEXT NOT NULL, status INTEGER NOT NULL, to_url TEXT NOT NULL,
    to_internal INTEGER NOT NULL, to_status INTEGER, final_url TEXT, final_status INTEGER,
    chain TEXT, loop INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS redirects_from ON redirects(from_url);
CREATE TABLE IF NOT EXISTS externals (
    url TEXT NOT NULL, via TEXT NOT NULL,  -- link|redirect|image|resource|canonical|hreflang
    status INTEGER, final_url TEXT, hops TEXT, error TEXT, method TEXT,
    checked_at TEXT, not_checked TEXT                -- reason when it was not checked
);
CREATE UNIQUE INDEX IF NOT EXISTS externals_url ON externals(url);
CREATE TABLE IF NOT EXISTS robots (
    url TEXT NOT NULL, status INTEGER, body TEXT, error TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS robots_url ON robots(url);
CREATE TABLE IF NOT EXISTS sitemaps (
    url TEXT NOT NULL, status INTEGER, kind TEXT, url_count INTEGER, error TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS sitemaps_url ON sitemaps(url);
CREATE TABLE IF NOT EXISTS sitemap_urls (url TEXT NOT NULL, sitemap TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS sitemap_urls_url ON sitemap_urls(url);
"""

#: Columns of ``pages`` written when a page is done (in this order in ``page_done`` rows).
PAGE_DONE_COLUMNS = (
    "status", "error", "content_type", "size", "response_ms",
    "title", "title_count", "title_outside_head",
    "meta_description", "description_count", "description_outside_head",
    "h1", "h1_count", "heading_levels", "canonical", "canonical_count",
    "meta_robots", "x_robots_tag", "hreflang", "lang", "word_count",
    "indexable", "indexability", "redirect_to", "content_hash", "sketch", "og_title", "og_image",
    "jsonld_total", "jsonld_invalid", "hsts", "csp", "x_content_type_options", "mixed_content",
    "crawled_at",
)  # fmt: skip

_PAGE_DONE_SQL = (
    # in_sitemap as known when the page is written (one probe of the sitemap_urls index):
    # finalize then rewrites only the rows of pages written before their sitemap was read.
    "UPDATE pages SET state='done', "
    "in_sitemap=EXISTS (SELECT 1 FROM sitemap_urls s WHERE s.url = pages.url), "
    + ", ".join(f"{c}=?" for c in PAGE_DONE_COLUMNS)
    + " WHERE id=?"
)
_LINK_SQL = (
    "INSERT INTO links(from_id, seq, to_url, anchor, rel, internal, location) "
    "VALUES (?,?,?,?,?,?,?) ON CONFLICT(from_id, seq) DO UPDATE SET to_url=excluded.to_url, "
    "anchor=excluded.anchor, rel=excluded.rel, internal=excluded.internal, "
    "location=excluded.location"
)
_IMAGE_SQL = (
    "INSERT INTO images(id, url, internal) VALUES (?,?,?) ON CONFLICT(url) DO NOTHING"
)
_PAGE_IMAGE_SQL = (
    "INSERT INTO page_images(page_id, image_id, alt, width, height) VALUES (?,?,?,?,?) "
    "ON CONFLICT(page_id, image_id) DO UPDATE SET alt=excluded.alt, width=excluded.width, "
    "height=excluded.height"
)
_RESOURCE_SQL = (
    "INSERT INTO resources(id, url, type, internal) VALUES (?,?,?,?) ON CONFLICT(url) DO NOTHING"
)
_PAGE_RESOURCE_SQL = (
    "INSERT INTO page_resources(page_id, resource_id) VALUES (?,?) "
    "ON CONFLICT(page_id, resource_id) DO NOTHING"
)
_QUEUE_SQL = (
    "INSERT INTO pages(id, url, level, depth, source, state) VALUES (?,?,?,?,?,'queued') "
    "ON CONFLICT(url) DO NOTHING"
)
_REDIRECT_SQL = (
    "INSERT INTO redirects(from_url, status, to_url, to_internal) VALUES (?,?,?,?) "
    "ON CONFLICT(from_url) DO UPDATE SET status=excluded.status, to_url=excluded.to_url, "
    "to_internal=excluded.to_internal"
)
_EXTERNAL_REGISTER_SQL = (
    "INSERT INTO externals(url, via) VALUES (?,?) ON CONFLICT(url) DO NOTHING"
)
_EXTERNAL_RESULT_SQL = (
    "INSERT INTO externals(url, via, status, final_url, hops, error, method, checked_at, "
    "not_checked) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(url) DO UPDATE SET "
    "status=excluded.status, final_url=excluded.final_url, hops=excluded.hops, "
    "error=excluded.error, method=excluded.method, checked_at=excluded.checked_at, "
    "not_checked=excluded.not_checked"
)
_ASSET_RESULT_SQL = (
    "UPDATE {table} SET status=?, content_type=?, size=?, error=?, checked_at=? WHERE url=?"
)


#: The ``error`` prefixes of a status check that was not made (the crawler's ``_record_probe``).
_NOT_A_CHECK = ("perimeter", "robots", "robots_unreachable", "throttled")


class CrawlFile:
    """An open crawl file. Writes come in batches (``executemany`` in one transaction)."""

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        """``create``: an empty or missing file becomes a crawl file. ``read_only``: the file is
        only read (``audit report``, ``audit export``): its journal mode is left as it is, so a
        copy kept in rollback-journal mode (``.backup``, ``VACUUM INTO``) stays byte for byte,
        and SQLite refuses any write (``query_only``). Not ``mode=ro``: a read-only connection
        cannot tidy a WAL file's ``-wal`` and ``-shm`` away when it closes."""
        self.path = Path(path)
        if (not create or read_only) and not self.path.exists():
            raise AuditError(f"crawl file {str(self.path)!r} does not exist")
        if self.path.is_dir():
            # SQLite says "unable to open database file", which names no cause.
            raise AuditError(f"crawl file {str(self.path)!r} is a directory, not a crawl file")
        try:
            self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            if read_only:
                self.conn.execute("PRAGMA query_only=1")
            # Before anything writes (WAL mode, the schema): another database given by mistake
            # (the directory's fairfetch.db, say) is refused and left exactly as it was.
            self._check_crawl_file(empty_ok=create and not read_only)
            self.conn.execute("PRAGMA busy_timeout=30000")
            if not read_only:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=NORMAL")
            # 512 KiB of page cache, not SQLite's 2 MiB: writes are appends in key order and
            # one pass per query, so the larger cache bought no time (10k-page replay of the
            # writer: 0.50-0.55 s of writes either way) and cost 1.5 MiB of peak RSS.
            self.conn.execute("PRAGMA cache_size=-512")
            if create and not read_only:
                self.conn.executescript(SCHEMA)
                self.conn.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (SCHEMA_VERSION,),
                )
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            raise AuditError(f"crawl file {str(self.path)!r}: {exc}") from None
        except AuditError:
            self._close_quietly()
            raise

    def _close_quietly(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()

    def _check_crawl_file(self, *, empty_ok: bool) -> None:
        """A crawl file has ``meta.schema_version``; an empty database may become one."""
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master")}
        if not tables and empty_ok:
            return
        row = (
            self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if "meta" in tables
            else None
        )
        if row is None:
            raise AuditError(f"{str(self.path)!r} is not a fairfetch crawl file")
        if row[0] != SCHEMA_VERSION:
            # Its columns may mean other things: read as ours, its report would be wrong
            # without a word, and a resumed crawl would write our rows into it.
            raise AuditError(
                f"{str(self.path)!r} is a crawl file of schema version {row[0]}; this "
                f"fairfetch reads version {SCHEMA_VERSION} (the file is left as it is)"
            )

    def close(self) -> None:
        self.conn.close()

    # --- meta --------------------------------------------------------------------------------
    def get_meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, **values: Any) -> None:
        self.conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?,?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in values.items()],
        )

    def clear_meta(self, *keys: str) -> None:
        self.conn.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k in keys])

    # --- batched writes ----------------------------------------------------------------------
    def write_batch(self, ops: Sequence[tuple[str, Any]]) -> None:
        """Apply a batch of ``(kind, payload)`` operations in one transaction.

        Kinds: ``queue`` (rows for _QUEUE_SQL), ``page`` (a PageWrite tuple), ``redirect``,
        ``external`` (register), ``external_result``, ``image_result``, ``resource_result``,
        ``robots``, ``sitemap``, ``sitemap_urls``, ``meta`` (key, value), ``count`` (a meta
        key holding a JSON object of counts, and counts to add to it: ``links_skipped``,
        ``not_checked``), ``ops`` (a list of operations that must land in one transaction: a
        status check's row and the count of its reason). Grouping by statement lets
        executemany do the work; the order of kinds inside a batch does not matter because
        every statement is an upsert on its own unique index.

        Counts travel with what they count, in its transaction: a crawl killed and resumed
        counts everything once (counts kept in the crawl's memory lost what came before the
        kill, and the Overview showed the resumed part alone).
        """
        grouped: dict[str, list[Any]] = {}
        for kind, payload in _flatten(ops):
            if kind == "page":
                page_row, links, images, page_images, resources, page_resources = payload
                grouped.setdefault("page", []).append(page_row)
                grouped.setdefault("links", []).extend(links)
                grouped.setdefault("images", []).extend(images)
                grouped.setdefault("page_images", []).extend(page_images)
                grouped.setdefault("resources", []).extend(resources)
                grouped.setdefault("page_resources", []).extend(page_resources)
            elif kind.endswith("_many"):
                grouped.setdefault(kind[: -len("_many")], []).extend(payload)
            else:
                grouped.setdefault(kind, []).append(payload)
        sql = {
            "queue": _QUEUE_SQL,
            "images": _IMAGE_SQL,
            "resources": _RESOURCE_SQL,
            "page": _PAGE_DONE_SQL,
            "links": _LINK_SQL,
            "page_images": _PAGE_IMAGE_SQL,
            "page_resources": _PAGE_RESOURCE_SQL,
            "redirect": _REDIRECT_SQL,
            "external": _EXTERNAL_REGISTER_SQL,
            "external_result": _EXTERNAL_RESULT_SQL,
            "image_result": _ASSET_RESULT_SQL.format(table="images"),
            "resource_result": _ASSET_RESULT_SQL.format(table="resources"),
            "robots": "INSERT INTO robots(url, status, body, error) VALUES (?,?,?,?) "
            "ON CONFLICT(url) DO UPDATE SET status=excluded.status, body=excluded.body, "
            "error=excluded.error",
            "sitemap": "INSERT INTO sitemaps(url, status, kind, url_count, error) "
            "VALUES (?,?,?,?,?) ON CONFLICT(url) DO UPDATE SET status=excluded.status, "
            "kind=excluded.kind, url_count=excluded.url_count, error=excluded.error",
            "sitemap_urls": "INSERT INTO sitemap_urls(url, sitemap) VALUES (?,?) "
            "ON CONFLICT(url) DO NOTHING",
            "meta": "INSERT INTO meta(key, value) VALUES (?,?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        }
        # Statement order: parents before children (queue before page updates, assets before
        # the pairs that name them) so one batch is self-consistent.
        order = [
            "queue", "images", "resources", "page", "links", "page_images", "page_resources",
            "redirect", "external", "external_result", "image_result", "resource_result",
            "robots", "sitemap", "sitemap_urls", "meta",
        ]  # fmt: skip
        conn = self.conn
        conn.execute("BEGIN")
        try:
            for kind in order:
                rows = grouped.get(kind)
                if rows:
                    conn.executemany(sql[kind], rows)
            if "count" in grouped:
                self._add_counts(grouped["count"])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _add_counts(self, counts: Sequence[tuple[str, Mapping[str, int]]]) -> None:
        totals: dict[str, dict[str, int]] = {}
        for key, add in counts:
            into = totals.setdefault(key, {})
            for reason, n in add.items():
                into[reason] = into.get(reason, 0) + n
        for key, add in totals.items():
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            held: dict[str, int] = json.loads(row[0]) if row and row[0] else {}
            for reason, n in add.items():
                held[reason] = held.get(reason, 0) + n
            self.set_meta(**{key: held})

    # --- reading for resume ------------------------------------------------------------------
    def has_pages(self) -> bool:
        return self.conn.execute("SELECT 1 FROM pages LIMIT 1").fetchone() is not None

    def pages_index(self) -> list[tuple[int, str, int, int | None, str]]:
        """(id, url, level, depth, state) of every page, in id order."""
        return self.conn.execute(
            "SELECT id, url, level, depth, state FROM pages ORDER BY id"
        ).fetchall()

    def page_urls(self) -> set[str]:
        """The URL of every page, queued or done."""
        return {r[0] for r in self.conn.execute("SELECT url FROM pages")}

    def next_level_candidates(self, lo: int, hi: int) -> list[tuple[str, str, int]]:
        """(url, source) of URLs the pages with ids lo..hi point at that are not pages yet,
        ordered by (parent id, position; a redirect before the parent's links).

        Relies on SQLite's documented rule that bare columns of a MIN() aggregate come from
        the row holding the minimum.
        """
        return self.conn.execute(
            "SELECT url, src, MIN(k) FROM ("
            " SELECT to_url AS url, from_id * 1048576 + seq + 1 AS k, 'link' AS src FROM links"
            " WHERE internal = 1 AND from_id BETWEEN ?1 AND ?2"
            " UNION ALL"
            " SELECT redirect_to, id * 1048576, 'redirect' FROM pages"
            " WHERE id BETWEEN ?1 AND ?2 AND redirect_to IS NOT NULL"
            ") c WHERE NOT EXISTS (SELECT 1 FROM pages p WHERE p.url = c.url) "
            "GROUP BY url ORDER BY MIN(k)",
            (lo, hi),
        ).fetchall()

    def targets_not_crawled(self) -> Iterator[str]:
        """Each internal link target and redirect destination that is no page: what the
        crawl found and did not follow (the candidates of next_level_candidates, every
        level at once)."""
        for (url,) in self.conn.execute(
            "SELECT url FROM (SELECT to_url AS url FROM links WHERE internal = 1"
            " UNION SELECT redirect_to FROM pages WHERE redirect_to IS NOT NULL) c"
            " WHERE NOT EXISTS (SELECT 1 FROM pages p WHERE p.url = c.url)"
        ):
            yield url

    def asset_ids(self, table: str) -> dict[str, int]:
        if table not in ("images", "resources"):
            raise AuditError(f"no asset table {table!r}")
        return dict(self.conn.execute(f"SELECT url, id FROM {table}").fetchall())

    def unchecked_assets(self, table: str) -> list[str]:
        if table not in ("images", "resources"):
            raise AuditError(f"no asset table {table!r}")
        return [
            r[0]
            for r in self.conn.execute(
                f"SELECT url FROM {table} WHERE checked_at IS NULL ORDER BY id"
            )
        ]

    def checked_count(self) -> int:
        """URLs the crawl status-checked, each once (an external image is a row of both
        ``externals`` and ``images``), as the crawl counts them live: a check refused by the
        perimeter or robots.txt, or throttled, is not one. An asset keeps that reason in its
        ``error`` (``robots: …``); an external in ``not_checked``."""
        not_a_check = " AND ".join(f"error NOT LIKE '{kind}:%'" for kind in _NOT_A_CHECK)
        assets = f"checked_at IS NOT NULL AND (error IS NULL OR ({not_a_check}))"
        return int(self.conn.execute(
            "SELECT COUNT(*) FROM (SELECT url FROM externals WHERE checked_at IS NOT NULL "
            f"AND not_checked IS NULL UNION SELECT url FROM images WHERE {assets} "
            f"UNION SELECT url FROM resources WHERE {assets})"
        ).fetchone()[0])

    def externals_state(self) -> list[tuple[str, str, str | None, str | None]]:
        """(url, via, checked_at, not_checked) of every registered external."""
        return self.conn.execute(
            "SELECT url, via, checked_at, not_checked FROM externals ORDER BY rowid"
        ).fetchall()

    def out_of_reach(self) -> tuple[str, str] | None:
        """(url, error) of the first page when no page got an HTTP response at all (robots.txt
        refusals aside: those are an answer of the site): there is nothing to audit."""
        if self.conn.execute(
            "SELECT 1 FROM pages WHERE status IS NOT NULL OR error LIKE 'robots%' LIMIT 1"
        ).fetchone():
            return None
        row = self.conn.execute(
            "SELECT url, error FROM pages WHERE state = 'done' ORDER BY id LIMIT 1"
        ).fetchone()
        return (row[0], row[1] or "no response") if row else None

    def lone_redirect(self) -> tuple[str, int, str] | None:
        """(url, status, redirect_to) when the only page that answered is a redirect."""
        rows = self.conn.execute(
            "SELECT url, status, redirect_to FROM pages WHERE state = 'done' "
            "AND status IS NOT NULL ORDER BY id LIMIT 2"
        ).fetchall()
        if len(rows) == 1 and rows[0][2] is not None:
            return rows[0][0], rows[0][1], rows[0][2]
        return None

    def sitemap_urls_not_queued(self) -> Iterator[str]:
        """Sitemap URLs that no page row holds, in the order they were found: a cursor, so
        only these come into memory, as they are read."""
        return (
            r[0]
            for r in self.conn.execute(
                "SELECT s.url FROM sitemap_urls s WHERE NOT EXISTS "
                "(SELECT 1 FROM pages p WHERE p.url = s.url) ORDER BY s.rowid"
            )
        )

    # --- finishing ---------------------------------------------------------------------------
    def finalize(self) -> None:
        """Derived columns that need the whole crawl: sitemap membership, redirect far ends."""
        c = self.conn
        # Built once at the end rather than maintained on every link insert during the crawl.
        # ``internal`` and ``location`` ride along (the key adds ``from_id, seq``): the inlink
        # counts of ``audit report`` then read the index alone, in to_url order, without a
        # lookup into links per row or a sort (10k pages: 135 -> 40 ms, for +18 ms here).
        c.execute(f"CREATE INDEX IF NOT EXISTS links_to ON links({LINKS_TO_COLUMNS})")
        c.execute("BEGIN")
        try:
            # Rows already right are not rewritten: setting every page's flag rewrote all of
            # them into the WAL (10,000 pages: ~0.1 s of the crawl's last, one-core phase).
            # A sitemap only grows, so a flag set stays right.
            c.execute(
                "UPDATE pages SET in_sitemap = 1 WHERE in_sitemap = 0 "
                "AND url IN (SELECT url FROM sitemap_urls)"
            )
            # A crawl cut short status-checks the internal redirect destinations it did not
            # reach; resumed, it crawls them as pages. The check is then the page's own row
            # (as in a crawl of one run), not an external: the External Links sheet listed the
            # site's own pages. One not made (robots, perimeter) stays, as its count does.
            c.execute(
                "DELETE FROM externals WHERE via = 'redirect' AND not_checked IS NULL "
                "AND url IN (SELECT url FROM pages WHERE state = 'done')"
            )
            redirects = c.execute("SELECT from_url, status, to_url FROM redirects").fetchall()
            page_status, page_next = self._chain_pages([r[2] for r in redirects])
            ext = {
                r[0]: (r[1], r[2], r[3])
                # A destination that was not checked (perimeter, throttled) has no status.
                for r in c.execute(
                    "SELECT url, status, final_url, hops FROM externals WHERE not_checked IS NULL"
                )
            }
            updates = []
            for from_url, status, to_url in redirects:
                updates.append(
                    (*_resolve_chain(from_url, status, to_url, page_status, page_next, ext),
                     from_url)
                )
            c.executemany(
                "UPDATE redirects SET to_status=?, final_url=?, final_status=?, chain=?, loop=? "
                "WHERE from_url=?",
                updates,
            )
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def _chain_pages(self, starts: list[str]) -> tuple[dict[str, int | None], dict[str, str]]:
        """(status of done pages, redirect_to of redirecting pages) for the pages the chains
        from ``starts`` pass through: what ``_resolve_chain`` reads, found hop by hop.

        Not the whole site's: a dict of every page's URL was 2 MiB of peak RSS at 10k pages,
        for the few dozen pages redirects reach.
        """
        page_status: dict[str, int | None] = {}
        page_next: dict[str, str] = {}
        seen: set[str] = set()
        todo = list(starts)
        while todo:
            url = todo.pop()
            if url in seen:
                continue
            seen.add(url)
            row = self.conn.execute(
                "SELECT state, status, redirect_to FROM pages WHERE url = ?", (url,)
            ).fetchone()
            if row is None:
                continue
            state, status, redirect_to = row
            if state == "done":
                page_status[url] = status
            if redirect_to is not None:
                page_next[url] = redirect_to
                todo.append(redirect_to)
        return page_status, page_next


def _flatten(ops: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    for kind, payload in ops:
        if kind == "ops":
            yield from _flatten(payload)
        else:
            yield kind, payload


def _resolve_chain(
    from_url: str,
    status: int,
    to_url: str,
    page_status: dict[str, int | None],
    page_next: dict[str, str],
    ext: dict[str, tuple[int | None, str | None, str | None]],
) -> tuple[int | None, str, int | None, str, int]:
    """(to_status, final_url, final_status, chain JSON, loop) of one redirect.

    Internal hops come from the crawled pages, foreign ones from the probe's recorded hops; the
    destination's own status is ``to_status`` (a destination that itself redirects shows 3xx).
    """
    chain: list[dict[str, Any]] = [{"url": from_url, "status": status}]
    seen = {from_url}
    url = to_url
    to_status: int | None = None
    first = True
    while True:
        if url in seen:
            chain.append({"url": url, "status": None, "loop": True})
            return to_status, url, None, json.dumps(chain), 1
        seen.add(url)
        if url in page_status:
            st = page_status[url]
            if first:
                to_status, first = st, False
            if url in page_next:
                chain.append({"url": url, "status": st})
                url = page_next[url]
                continue
            chain.append({"url": url, "status": st})
            return to_status, url, st, json.dumps(chain), 0
        if url in ext:
            final_status, final_url, hops_json = ext[url]
            hops = json.loads(hops_json) if hops_json else []
            if first:
                to_status = hops[0]["status"] if hops else final_status
            for hop in hops:
                chain.append({"url": hop["url"], "status": hop["status"]})
            end = final_url or url
            chain.append({"url": end, "status": final_status})
            return to_status, end, final_status, json.dumps(chain), 0
        chain.append({"url": url, "status": None})
        return to_status, url, None, json.dumps(chain), 0
