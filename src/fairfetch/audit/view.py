"""A read-only, in-memory view of a crawl file: what the rules judge.

The rules are pure functions of this view, so they are tested by building a view by hand. Link
aggregates (inlink counts, broken links, links to redirects) are computed by SQL here rather than
by loading every link row into Python: a 10,000-page site has 200,000 of them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from fairfetch.audit.indexability import is_html
from fairfetch.audit.traps import TrapLimits, trap_reason

__all__ = [
    "SITEMAP_RULES",
    "ExternalRow",
    "ImageUse",
    "PageRow",
    "RedirectRow",
    "ResourceRow",
    "SiteView",
    "load_view",
    "unfinished_chains",
]


@dataclass(slots=True)
class PageRow:
    url: str
    status: int | None = 200
    depth: int | None = 0
    error: str | None = None
    content_type: str | None = "text/html"
    size: int | None = 1000
    response_ms: float | None = 10.0
    title: str | None = None
    title_count: int | None = 0
    title_outside_head: int | None = 0
    meta_description: str | None = None
    description_count: int | None = 0
    description_outside_head: int | None = 0
    h1: list[str] = field(default_factory=list)
    heading_levels: str = ""
    canonical: str | None = None
    canonical_count: int | None = 0
    meta_robots: str | None = None
    x_robots_tag: str | None = None
    hreflang: list[tuple[str, str]] = field(default_factory=list)
    lang: str | None = "en"
    word_count: int | None = 500
    indexable: bool = True
    indexability: str = "indexable"
    redirect_to: str | None = None
    content_hash: str | None = None
    sketch: str | None = None
    og_title: str | None = None
    og_image: str | None = None
    jsonld_total: int | None = 0
    jsonld_invalid: int | None = 0
    hsts: bool = False
    csp: bool = False
    x_content_type_options: bool = False
    mixed_content: int = 0
    in_sitemap: bool = False
    source: str = "link"

    @property
    def is_html(self) -> bool:
        """An HTML page we could read (a 200 whose body failed to decode is no such page)."""
        return self.status == 200 and not self.body_unreadable and is_html(self.content_type)

    @property
    def body_unreadable(self) -> bool:
        """It answered 2xx, but its body could not be read: the only error a 2xx status is
        stored with (robots.txt refusals have no status, throttles are 429/503, redirects
        that lead nowhere 3xx)."""
        return self.status is not None and 200 <= self.status < 300 and bool(self.error)


@dataclass(slots=True)
class RedirectRow:
    from_url: str
    status: int
    to_url: str
    to_internal: bool = True
    to_status: int | None = None
    final_url: str | None = None
    final_status: int | None = None
    hops: int = 1
    loop: bool = False
    #: Why the status check of ``to_url`` got no page (a loop on the far side, no answer).
    far_error: str | None = None


@dataclass(slots=True)
class ExternalRow:
    url: str
    via: str = "link"
    status: int | None = 200
    error: str | None = None
    not_checked: str | None = None
    sources: list[str] = field(default_factory=list)  # pages linking to it (first few)
    source_count: int = 0
    final_url: str | None = None  # where its redirects ended, when they did

    def far_end(self) -> str | None:
        """What makes this URL no 200 page, or None: an error, a 4xx/5xx, or a redirect (the
        status of a checked external is the one after its redirects)."""
        if self.not_checked:
            return None
        if self.status is None:
            return self.error or "no response"
        if self.status >= 400:
            return str(self.status)
        if self.error:  # a chain that never reached a page (a loop, a bad Location)
            return self.error
        if self.status != 200:
            return str(self.status)
        if self.final_url and self.final_url != self.url:
            return f"redirects to {self.final_url}"
        return None


@dataclass(slots=True)
class ResourceRow:
    url: str
    type: str
    status: int | None = 200
    size: int | None = None
    internal: bool = True
    pages: int = 0
    error: str | None = None


@dataclass(slots=True)
class ImageUse:
    page_url: str
    image_url: str
    alt: str | None = None
    width: str | None = None
    height: str | None = None


@dataclass
class SiteView:
    start_url: str = "http://example.test/"
    cut_short: str = ""
    finished: bool = True
    pages: list[PageRow] = field(default_factory=list)
    #: internal URL -> number of distinct pages linking to it (self-links excluded)
    inlinks: dict[str, int] = field(default_factory=dict)
    #: (from_url, to_url, to_status) for internal body links to 4xx/5xx pages (not head links)
    broken_internal: list[tuple[str, str, int]] = field(default_factory=list)
    #: (from_url, to_url, status) for internal body links to pages that redirect
    links_to_redirects: list[tuple[str, str, int]] = field(default_factory=list)
    #: (from_url, to_url) internal links with rel=nofollow
    nofollow_internal: list[tuple[str, str]] = field(default_factory=list)
    #: (from_url, to_url, "after N s") for each page's <meta http-equiv="refresh">
    meta_refreshes: list[tuple[str, str, str]] = field(default_factory=list)
    redirects: list[RedirectRow] = field(default_factory=list)
    externals: list[ExternalRow] = field(default_factory=list)
    images: list[ResourceRow] = field(default_factory=list)
    #: page-image pairs missing alt or declared dimensions (the rest is in the crawl file)
    image_uses: list[ImageUse] = field(default_factory=list)
    resources: list[ResourceRow] = field(default_factory=list)
    sitemap_urls: set[str] = field(default_factory=set)
    sitemaps_ok: int = 0
    #: Pages the site kept throttling (429, 503 + Retry-After): not in ``pages``, not judged.
    throttled_pages: int = 0
    #: rule id -> why the crawl cannot answer it (e.g. sitemaps not read: --no-sitemaps)
    not_applicable: dict[str, str] = field(default_factory=dict)
    robots_status: int | None = 200
    #: page url -> resource urls (only what hreflang / canonical checks need is in pages)
    skipped_links: dict[str, int] = field(default_factory=dict)
    #: (from_url, to_url, reason) for each page linking (or redirecting) to an internal URL
    #: the crawl did not follow as a crawler trap (audit/traps.py), in page order.
    trap_links: list[tuple[str, str, str]] = field(default_factory=list)
    #: The limits the crawl skipped trap URLs by (``meta.trap_limits``).
    trap_limits: TrapLimits = field(default_factory=TrapLimits)
    #: from_url -> (to_status, final_url, final_status, chain JSON, loop): a crawl file that did
    #: not finish has no far ends in its redirects table yet (finalize derives them); the view
    #: derives them as finalize would, without writing, for the rules and the Redirects sheet.
    chains: dict[str, tuple[int | None, str, int | None, str, int]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        self.by_url = {p.url: p for p in self.pages}
        self.external_by_url = {e.url: e for e in self.externals}
        self._html: list[PageRow] = []
        self._html_key: tuple[int, int] = (0, -1)

    @property
    def html_pages(self) -> list[PageRow]:
        # Some forty rules ask for it: computed once per (pages list, length), not per rule.
        key = (id(self.pages), len(self.pages))
        if key != self._html_key:
            self._html = [p for p in self.pages if p.is_html]
            self._html_key = key
        return self._html

    @property
    def complete(self) -> bool:
        """The whole link graph is known: no cap cut the crawl short, no page was withheld."""
        return self.finished and not self.cut_short and not self.throttled_pages


#: Rules about what the sitemaps list: a crawl that read none (--no-sitemaps) cannot answer
#: them, and "no orphans", "nothing non-indexable in the sitemap" would be false statements.
SITEMAP_RULES = (
    "no-sitemap", "orphan-in-sitemap", "non-indexable-in-sitemap", "sitemap-url-not-crawled",
)  # fmt: skip


def _loads_list(text: str | None) -> list:
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


#: A page the site kept throttling was not judged: it is no 4xx/5xx page and no broken link
#: target (the error is pagerows.THROTTLED's; spelled here so the view needs no parser).
_JUDGED = "(error IS NULL OR error NOT LIKE 'throttled:%')"
_JUDGED_P = "(p.error IS NULL OR p.error NOT LIKE 'throttled:%')"


#: Page columns with few distinct values across a site.
_REPEATED = (
    "error", "content_type", "heading_levels", "meta_robots", "x_robots_tag", "lang",
    "indexability", "og_image", "source",
)  # fmt: skip


def _links_to_columns(conn: sqlite3.Connection) -> tuple[str, ...]:
    """The columns of the crawl file's ``links_to`` index; () before the crawl finished."""
    return tuple(r[2] for r in conn.execute("PRAGMA index_info('links_to')"))


def _inlink_counts(
    conn: sqlite3.Connection, indexed: tuple[str, ...]
) -> Iterable[tuple[str, int]]:
    """(URL, pages linking to it from their body), a page's links to itself not counted."""
    if indexed[:3] != ("to_url", "internal", "location"):
        # "+l.to_url" keeps SQLite off a links_to index on to_url alone: walking it means a
        # random lookup into links per row (200,000 at 10k pages, through a 512 KiB cache:
        # 400 ms); one pass over links in key order and a sort is 135 ms.
        return conn.execute(
            "SELECT l.to_url, COUNT(DISTINCT l.from_id) FROM links l CROSS JOIN pages f "
            "ON f.id = l.from_id WHERE l.internal = 1 AND f.url != l.to_url "
            "AND l.location != 'head' GROUP BY +l.to_url"
        ).fetchall()
    # The index holds every column asked for: one pass over it in to_url order (38 ms at 10k
    # pages), then a lookup per page for the few that link to themselves (15 ms).
    counts = dict(
        conn.execute(
            "SELECT to_url, COUNT(DISTINCT from_id) FROM links "
            "WHERE internal = 1 AND location != 'head' GROUP BY to_url"
        ).fetchall()
    )
    for (url,) in conn.execute(
        "SELECT p.url FROM pages p WHERE EXISTS (SELECT 1 FROM links l WHERE l.to_url = p.url "
        "AND l.internal = 1 AND l.location != 'head' AND l.from_id = p.id)"
    ):
        counts[url] -= 1
        if not counts[url]:
            del counts[url]
    return counts.items()


def load_view(conn: sqlite3.Connection, *, sample_sources: int = 3) -> SiteView:
    """Read a crawl file into a SiteView (read-only queries)."""
    cache = int(conn.execute("PRAGMA cache_size").fetchone()[0])
    # Each query is about one pass over a table: SQLite's default 2 MiB page cache buys no
    # time here and adds its size to the peak RSS of `audit report` (restored afterwards).
    conn.execute("PRAGMA cache_size=-512")
    try:
        return _load_view(conn, sample_sources)
    finally:
        conn.execute(f"PRAGMA cache_size={cache}")


def _load_view(conn: sqlite3.Connection, sample_sources: int) -> SiteView:
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    cols = [
        "url", "status", "depth", "error", "content_type", "size", "response_ms", "title",
        "title_count", "title_outside_head", "meta_description", "description_count",
        "description_outside_head", "h1", "heading_levels", "canonical", "canonical_count",
        "meta_robots", "x_robots_tag", "hreflang", "lang", "word_count", "indexable",
        "indexability", "redirect_to", "content_hash", "sketch", "og_title", "og_image",
        "jsonld_total", "jsonld_invalid", "hsts", "csp", "x_content_type_options",
        "mixed_content", "in_sitemap", "source",
    ]  # fmt: skip
    # Positional: the columns are PageRow's fields in order (checked), and a row is a list
    # patched in place (dict(zip()) and PageRow(**d) per row were half the load time).
    if [f.name for f in fields(PageRow)] != cols:
        raise AssertionError("PageRow fields and page columns differ")
    ix = {c: i for i, c in enumerate(cols)}
    i_h1, i_hreflang, i_levels = ix["h1"], ix["hreflang"], ix["heading_levels"]
    i_flags = [ix[c] for c in ("hsts", "csp", "x_content_type_options", "indexable", "in_sitemap")]
    i_mixed, i_verdict = ix["mixed_content"], ix["indexability"]
    finished = "finished_at" in meta
    # finalize sets in_sitemap; until a crawl finishes, membership is read from sitemap_urls.
    listed = (
        set() if finished else {r[0] for r in conn.execute("SELECT url FROM sitemap_urls")}
    )
    i_url, i_in_sitemap = ix["url"], ix["in_sitemap"]
    i_repeated = [ix[c] for c in _REPEATED]
    pages = []
    shared: dict[str, str] = {}
    for row in conn.execute(
        f"SELECT {', '.join(cols)} FROM pages WHERE state='done' AND {_JUDGED} ORDER BY id"
    ):
        d = list(row)
        d[i_h1] = _loads_list(d[i_h1])
        d[i_hreflang] = [tuple(x) for x in _loads_list(d[i_hreflang])]
        d[i_levels] = d[i_levels] or ""
        for i in i_flags:
            d[i] = bool(d[i])
        d[i_mixed] = d[i_mixed] or 0
        if not finished:
            d[i_in_sitemap] = d[i_url] in listed
        d[i_verdict] = d[i_verdict] or ""
        # SQLite hands back a new string per row: one copy of each repeated value instead
        # (a 10,000-page site has a handful of content types, languages, verdicts...).
        for i in i_repeated:
            value = d[i]
            if value is not None:
                d[i] = shared.setdefault(value, value)
        pages.append(PageRow(*d))
    # Keys that are page URLs reuse the pages' string objects (10,000 fewer copies each).
    url_of = {p.url: p.url for p in pages}
    indexed = _links_to_columns(conn)
    inlinks = {url_of.get(url, url): n for url, n in _inlink_counts(conn, indexed)}
    # With the links_to index (a finished crawl file has it), CROSS JOIN fixes the order: the
    # few error and redirect pages first, then their inlinks through the index; SQLite would
    # otherwise scan every link (100x slower at 10k pages). Without it, let SQLite choose.
    join = "CROSS JOIN" if indexed else "JOIN"
    # Body links only: a canonical or hreflang <link> (location 'head') to an error page or a
    # redirect is canonical-to-non-200 / canonical-to-redirect / hreflang-non-200's finding,
    # not a second one here (Screaming Frog and Sitebulb keep them in their own families).
    broken = conn.execute(
        f"SELECT DISTINCT f.url, l.to_url, p.status FROM pages p {join} links l "
        "ON l.to_url = p.url JOIN pages f ON f.id = l.from_id "
        f"WHERE l.internal = 1 AND l.location != 'head' AND p.status >= 400 AND {_JUDGED_P} "
        "ORDER BY f.id, l.seq"
    ).fetchall()
    to_redirects = conn.execute(
        f"SELECT DISTINCT f.url, l.to_url, p.status FROM pages p {join} links l "
        "ON l.to_url = p.url JOIN pages f ON f.id = l.from_id "
        "WHERE l.internal = 1 AND l.location != 'head' AND p.status BETWEEN 300 AND 399 "
        "ORDER BY f.id, l.seq"
    ).fetchall()
    # One pass over the links with a rel for two lists: nofollow links, meta refreshes.
    nofollow: list[tuple[str, str]] = []
    refreshes: list[tuple[str, str, str]] = []
    seen_nofollow: set[tuple[str, str]] = set()
    for from_url, to_url, rel, anchor in conn.execute(
        "SELECT f.url, l.to_url, l.rel, l.anchor FROM links l JOIN pages f ON f.id = l.from_id "
        "WHERE l.rel != '' AND ((l.rel = 'refresh' AND l.location = 'head') OR (l.internal = 1 "
        "AND (' ' || l.rel || ' ') LIKE '% nofollow %')) ORDER BY f.id, l.seq"
    ):
        if rel == "refresh":
            refreshes.append((from_url, to_url, anchor or ""))
        elif (from_url, to_url) not in seen_nofollow:
            seen_nofollow.add((from_url, to_url))
            nofollow.append((from_url, to_url))
    chains = {} if finished else unfinished_chains(conn)
    redirects = []
    for r in conn.execute(
        "SELECT r.from_url, r.status, r.to_url, r.to_internal, r.to_status, r.final_url, "
        "r.final_status, r.chain, r.loop, e.error, "
        f"(SELECT NOT {_JUDGED} FROM pages WHERE url = r.final_url) "
        "FROM redirects r LEFT JOIN externals e "
        "ON e.url = r.to_url AND e.not_checked IS NULL ORDER BY r.rowid"
    ):
        if not finished:
            to_status, final_url, final_status, chain_json, loop = chains[r[0]]
            throttled = conn.execute(
                f"SELECT NOT {_JUDGED} FROM pages WHERE url = ?", (final_url,)
            ).fetchone()
            r = (*r[:4], to_status, final_url, final_status, chain_json, loop, r[9],
                 throttled[0] if throttled else None)  # fmt: skip
        chain = _loads_list(r[7])
        hops = max(1, len([c for c in chain if c.get("status") and 300 <= c["status"] < 400]))
        to_status, final_status = r[4], r[6]
        if r[10]:
            # The chain ends on a page the site kept throttling: its 429/503 is no verdict
            # (a throttled page answers no redirect, so it can only be the last hop).
            final_status = None
            if r[2] == r[5]:
                to_status = None
        redirects.append(
            RedirectRow(
                r[0], r[1], r[2], bool(r[3]), to_status, r[5], final_status, hops, bool(r[8]),
                r[9],
            )
        )
    ext_rows = conn.execute(
        "SELECT url, via, status, error, not_checked, final_url FROM externals ORDER BY rowid"
    ).fetchall()
    # A URL that failed its check keeps every page linking to it from its body (each is a
    # broken-external-link finding, as each page linking to an internal 404 is one); any other
    # keeps a sample. The rows come in page order: a page's links to a URL are consecutive.
    failed = {
        url for url, _via, status, error, not_checked, _f in ext_rows
        if not not_checked and (status is None or status >= 400 or error)
    }  # fmt: skip
    sources: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    for to_url, from_url, location in conn.execute(
        "SELECT l.to_url, f.url, l.location FROM links l JOIN pages f ON f.id = l.from_id "
        "WHERE l.internal = 0 ORDER BY f.id, l.seq"
    ):
        counts[to_url] = counts.get(to_url, 0) + 1
        lst = sources.setdefault(to_url, [])
        if location == "head" and to_url in failed:
            continue  # a canonical or alternate: its own rule's finding, not a broken link
        if (not lst or lst[-1] != from_url) and (len(lst) < sample_sources or to_url in failed):
            lst.append(from_url)
    externals = [
        ExternalRow(url, via, status, error, not_checked, sources.get(url, []), counts.get(url, 0),
                    final_url)
        for url, via, status, error, not_checked, final_url in ext_rows
    ]
    images = [
        ResourceRow(url, "image", status, size, bool(internal), n, error)
        for url, status, size, internal, n, error in conn.execute(
            # Counted in one pass over the pairs (their key starts with page_id: a join per
            # image would scan them all once per image).
            "SELECT i.url, i.status, i.size, i.internal, COALESCE(c.n, 0), i.error FROM images i "
            "LEFT JOIN (SELECT image_id, COUNT(*) AS n FROM page_images GROUP BY image_id) c "
            "ON c.image_id = i.id ORDER BY i.id"
        )
    ]
    uses = [
        ImageUse(*r)
        for r in conn.execute(
            "SELECT p.url, i.url, pi.alt, pi.width, pi.height FROM page_images pi "
            "JOIN pages p ON p.id = pi.page_id JOIN images i ON i.id = pi.image_id "
            # Only the uses a rule can flag: a large site has far more pairs than defects.
            "WHERE pi.alt IS NULL OR COALESCE(pi.width, '') = '' OR COALESCE(pi.height, '') = '' "
            "ORDER BY p.id, i.id"
        )
    ]
    resources = [
        ResourceRow(url, typ, status, size, bool(internal), n, error)
        for url, typ, status, size, internal, n, error in conn.execute(
            "SELECT r.url, r.type, r.status, r.size, r.internal, COALESCE(c.n, 0), r.error "
            "FROM resources r LEFT JOIN (SELECT resource_id, COUNT(*) AS n FROM page_resources "
            "GROUP BY resource_id) c ON c.resource_id = r.id ORDER BY r.id"
        )
    ]
    robots = conn.execute("SELECT status FROM robots LIMIT 1").fetchone()
    sitemaps_ok = conn.execute(
        "SELECT COUNT(*) FROM sitemaps WHERE status = 200 AND error IS NULL"
    ).fetchone()[0]
    skipped = json.loads(meta.get("links_skipped") or "{}")
    trap_limits = TrapLimits.from_json(meta.get("trap_limits"))
    trap_links = _trap_links(conn, trap_limits, pages, inlinks, redirects, refreshes)
    throttled = conn.execute(
        f"SELECT COUNT(*) FROM pages WHERE state='done' AND NOT {_JUDGED}"
    ).fetchone()[0]
    return SiteView(
        start_url=meta.get("start_url", ""),
        cut_short=meta.get("cut_short", ""),
        finished=finished,
        pages=pages,
        inlinks=inlinks,
        broken_internal=[tuple(r) for r in broken],
        links_to_redirects=[tuple(r) for r in to_redirects],
        nofollow_internal=nofollow,
        meta_refreshes=refreshes,
        redirects=redirects,
        externals=externals,
        images=images,
        image_uses=uses,
        resources=resources,
        sitemap_urls={
            url_of.get(r[0], r[0]) for r in conn.execute("SELECT url FROM sitemap_urls")
        },
        sitemaps_ok=sitemaps_ok,
        robots_status=robots[0] if robots else None,
        skipped_links=skipped if isinstance(skipped, dict) else {},
        throttled_pages=throttled,
        not_applicable=(
            dict.fromkeys(SITEMAP_RULES, "sitemaps not read (--no-sitemaps): rule not applied")
            if meta.get("sitemaps") == "skipped" and not sitemaps_ok
            else {}
        ),
        chains=chains,
        trap_links=trap_links,
        trap_limits=trap_limits,
    )


def _trap_links(
    conn: sqlite3.Connection,
    limits: TrapLimits,
    pages: list[PageRow],
    inlinks: dict[str, int],
    redirects: list[RedirectRow],
    refreshes: list[tuple[str, str, str]],
) -> list[tuple[str, str, str]]:
    """(from_url, to_url, reason) of the links and redirects to trap URLs the crawl skipped.

    The crawl file does not list the skipped URLs: the decision reads the URL alone, so the
    internal targets that are no page are asked again with the crawl's limits. Only when
    some are traps are the links read (one pass): a site without traps costs no query.
    """
    crawled = {p.url for p in pages}
    targets = set(inlinks)
    targets.update(r.to_url for r in redirects if r.to_internal)
    targets.update(to_url for _f, to_url, _a in refreshes)
    for p in pages:
        if p.canonical:
            targets.add(p.canonical)
        targets.update(u for _lang, u in p.hreflang)
    traps: dict[str, str] = {}
    for url in targets - crawled:
        reason = trap_reason(url, limits)
        if reason is not None:
            traps[url] = reason
    if not traps:
        return []
    out: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for from_url, to_url in conn.execute(
        "SELECT f.url, l.to_url FROM links l JOIN pages f ON f.id = l.from_id "
        "WHERE l.internal = 1 ORDER BY f.id, l.seq"
    ):
        reason = traps.get(to_url)
        if reason is not None and (from_url, to_url) not in seen:
            seen.add((from_url, to_url))
            out.append((from_url, to_url, reason))
    for r in redirects:
        reason = traps.get(r.to_url)
        if reason is not None and (r.from_url, r.to_url) not in seen:
            seen.add((r.from_url, r.to_url))
            out.append((r.from_url, r.to_url, reason))
    return out


def unfinished_chains(
    conn: sqlite3.Connection,
) -> dict[str, tuple[int | None, str, int | None, str, int]]:
    """from_url -> (to_status, final_url, final_status, chain JSON, loop) of every redirect, as
    ``CrawlFile.finalize`` would derive them, read-only: for a crawl file that did not finish.

    Only the pages the chains pass through are read (one indexed lookup a hop).
    """
    from fairfetch.audit.crawlfile import CrawlFile, _resolve_chain

    rows = conn.execute("SELECT from_url, status, to_url FROM redirects").fetchall()
    # finalize's own walk (its reads only, on this connection), so both derive chains alike.
    reader = CrawlFile.__new__(CrawlFile)
    reader.conn = conn
    page_status, page_next = reader._chain_pages([r[2] for r in rows])
    ext = {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT url, status, final_url, hops FROM externals WHERE not_checked IS NULL"
        )
    }
    return {
        from_url: _resolve_chain(from_url, status, to_url, page_status, page_next, ext)
        for from_url, status, to_url in rows
    }
