"""Workbook (XLSX) and CSV export of a crawl file, and the findings the report prints.

The workbook is written with XlsxWriter in constant-memory mode (rows stream to disk, so a
million-link site does not need a million rows in RAM). Excel's limits are respected: a sheet
holds 1,048,575 data rows under its header — past that the sheet continues on "Name (2)" — and a
cell holds 32,767 characters — longer text is cut and says so in the cell. CSV cells that begin
with ``=``, ``+``, ``-``, ``@`` (or their full-width forms, a tab, carriage return, line feed or
NUL) are prefixed with a quote so a spreadsheet does not run them as formulas (CSV injection).
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xlsxwriter

from fairfetch.audit.rules import CATALOGUE, SEVERITIES, RuleRun, Thresholds, run_rules
from fairfetch.audit.view import SiteView, load_view
from fairfetch.errors import AuditError

__all__ = [
    "EXCEL_MAX_CELL",
    "EXCEL_MAX_ROWS",
    "SHEETS",
    "WORKBOOK_OPTIONS",
    "csv_safe",
    "export_crawl",
    "findings_summary",
]

EXCEL_MAX_ROWS = 1_048_575  # data rows under the header row (1,048,576 rows in all)
EXCEL_MAX_CELL = 32_767
_TRUNCATED = " … [truncated: {n} characters in all]"
#: OWASP's CSV Injection list (line feed since 2025), ASVS 1.2.10's NUL, and the full-width
#: forms of the four signs that OWASP's testing guide lists (a spreadsheet in an East Asian
#: locale may read them as the ASCII ones).
_FORMULA_START = (
    "=", "+", "-", "@", "\t", "\r", "\n", "\x00", "\uff1d", "\uff0b", "\uff0d", "\uff20",
)  # fmt: skip
#: Every cell is written as the text it is. XlsxWriter's defaults read a string beginning with
#: "=" as a formula (page titles and anchors are written by strangers: formula injection) and one
#: beginning with "http://", "mailto:", "file://" or "external:" as a hyperlink; past Excel's
#: 65,530 hyperlinks a sheet, or over 2,079 characters, such a cell was left empty (with a
#: warning per cell), so the Links sheet of a large site lost most of its URLs.
WORKBOOK_OPTIONS: dict[str, Any] = {
    "constant_memory": True,
    "strings_to_formulas": False,
    "strings_to_urls": False,
}


def csv_safe(value: Any) -> Any:
    """Neutralise a cell a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _cell(value: Any) -> Any:
    """Excel's 32,767 a cell are UTF-16 units (a character outside the BMP, an emoji, is two):
    cut on a character boundary, and say so (XlsxWriter would cut silently)."""
    if not isinstance(value, str) or len(value) <= EXCEL_MAX_CELL // 2:
        return value
    if _utf16_len(value) <= EXCEL_MAX_CELL:
        return value
    note = _TRUNCATED.format(n=len(value))
    room = EXCEL_MAX_CELL - _utf16_len(note)
    head = value[:room]  # at most `room` characters, so at least that many units
    while _utf16_len(head) > room:
        excess = _utf16_len(head) - room
        head = head[: len(head) - max(1, excess // 2)]
    return head + note


@dataclass(frozen=True)
class Sheet:
    name: str
    headers: tuple[str, ...]
    rows: Callable[[sqlite3.Connection, SiteView, RuleRun], Iterable[tuple[Any, ...]]]


def _severity_rank(sev: str) -> int:
    return SEVERITIES.index(sev)


def findings_summary(run: RuleRun) -> list[dict[str, Any]]:
    """Rules with findings, worst first: severity, then number of findings."""
    out: list[dict[str, Any]] = []
    for rule_id, findings in run.by_rule().items():
        r = CATALOGUE[rule_id]
        out.append(
            {
                "id": r.id, "family": r.family, "severity": r.severity, "title": r.title,
                "count": len(findings), "explanation": r.explanation, "fix": r.fix,
                "findings": [{"url": f.url, "detail": f.detail} for f in findings],
            }
        )  # fmt: skip
    out.sort(key=lambda d: (_severity_rank(d["severity"]), -d["count"], d["id"]))
    return out


#: A page's status class on the Overview and the Response Codes sheet. A URL robots.txt
#: disallows was never requested: counted as "no response" it read as a server that failed
#: (as the blocked-by-robots rule, robots.txt unreachable is a refusal too).
_STATUS_CLASS = (
    "CASE WHEN status IS NOT NULL THEN CAST(status / 100 AS TEXT) || 'xx' "
    "WHEN error LIKE 'robots%' THEN 'blocked by robots.txt' ELSE 'no response' END"
)


def _overview(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    yield ("Start URL", meta.get("start_url"))
    yield ("Started at", meta.get("started_at"))
    yield ("Finished at", meta.get("finished_at") or "not finished (resume with --resume)")
    if not site.finished:
        # Neither "no (the whole site was crawled)" next to the URLs not crawled yet, nor the
        # limit of an earlier run that this one, resumed, was going past.
        yield ("Cut short by", "not known: the crawl did not finish")
    else:
        yield ("Cut short by", meta.get("cut_short") or "no (the whole site was crawled)")
    pages_done = conn.execute("SELECT COUNT(*) FROM pages WHERE state='done'").fetchone()[0]
    queued = conn.execute("SELECT COUNT(*) FROM pages WHERE state='queued'").fetchone()[0]
    yield ("Pages crawled", pages_done)
    yield ("URLs discovered, not crawled", queued)
    for klass, n in conn.execute(
        f"SELECT {_STATUS_CLASS}, COUNT(*) FROM pages WHERE state='done' GROUP BY 1 ORDER BY 1"
    ):
        yield (f"Pages {klass}", n)
    if site.throttled_pages:
        yield ("Pages throttled by the site, not judged", site.throttled_pages)
    yield ("Indexable pages", sum(1 for p in site.pages if p.indexable))
    yield ("Links", conn.execute("SELECT COUNT(*) FROM links").fetchone()[0])
    yield ("Images", conn.execute("SELECT COUNT(*) FROM images").fetchone()[0])
    yield ("Resources", conn.execute("SELECT COUNT(*) FROM resources").fetchone()[0])
    ext = conn.execute(
        "SELECT COUNT(*), SUM(checked_at IS NOT NULL AND not_checked IS NULL) FROM externals"
    ).fetchone()
    yield ("Externals registered", ext[0])
    yield ("Externals checked", ext[1] or 0)
    for reason, n in conn.execute(
        "SELECT not_checked, COUNT(*) FROM externals WHERE not_checked IS NOT NULL GROUP BY 1"
    ):
        yield (f"Externals not checked: {reason}", n)
    not_checked = json.loads(meta.get("not_checked") or "{}")
    for reason, n in sorted(not_checked.items()):
        yield (f"URLs not checked (all kinds): {reason}", n)
    for reason, n in sorted(json.loads(meta.get("links_skipped") or "{}").items()):
        yield (f"Links not followed: {reason}", n)
    for sev in SEVERITIES:
        yield (f"Findings: {sev}", sum(1 for f in run.findings if CATALOGUE[f.rule_id].severity
                                       == sev))
    for rule_id, why in run.silenced.items():
        yield (f"Rule {rule_id} silent", why)


def _issues_by_rule(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    for d in findings_summary(run):
        yield (d["severity"], d["id"], d["family"], d["title"], d["count"], d["explanation"],
               d["fix"])
    for rule_id, why in run.silenced.items():
        r = CATALOGUE[rule_id]
        yield (r.severity, r.id, r.family, r.title, None, why, r.fix)


def _issues(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    for d in findings_summary(run):
        for f in d["findings"]:
            yield (d["severity"], d["id"], d["title"], f["url"], f["detail"])


def _query(sql: str) -> Callable[[sqlite3.Connection, SiteView, RuleRun], Iterable[tuple]]:
    def rows(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterable[tuple]:
        return conn.execute(sql)

    return rows


def _pages(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    for r in conn.execute(
        "SELECT url, status, content_type, size, response_ms, depth, title, LENGTH(title), "
        "meta_description, LENGTH(meta_description), h1, canonical, meta_robots, x_robots_tag, "
        "hreflang, lang, word_count, indexable, indexability, in_sitemap FROM pages "
        "WHERE state='done' ORDER BY id"
    ):
        h1 = ", ".join(json.loads(r[10])) if r[10] else None
        # Until a crawl finishes, in_sitemap is not set in the file (finalize does it).
        in_sitemap = r[19] if site.finished else int(r[0] in site.sitemap_urls)
        yield (*r[:10], h1, *r[11:19], in_sitemap, site.inlinks.get(r[0], 0))


def _redirects(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    for from_url, status, to_url, *far in conn.execute(
        "SELECT from_url, status, to_url, to_status, final_url, final_status, loop, chain "
        "FROM redirects ORDER BY rowid"
    ):
        if not site.finished and from_url in site.chains:
            # The far ends of an unfinished crawl, derived as finalize would (see the view).
            to_status, final_url, final_status, chain, loop = site.chains[from_url]
            far = [to_status, final_url, final_status, loop, chain]
        yield (from_url, status, to_url, *far)


def _orphans(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    # Silenced: a crawl cut short (the link graph is incomplete), or no sitemap read.
    if not site.complete or "orphan-in-sitemap" in run.silenced:
        why = run.silenced.get("orphan-in-sitemap", "the link graph is incomplete")
        yield ("(not computed)", why)
        return
    for f in run.by_rule().get("orphan-in-sitemap", []):
        yield (f.url, "in sitemap, linked from no crawled page")


def _robots(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    for url, status, body, error in conn.execute("SELECT url, status, body, error FROM robots"):
        lines = (body or "").splitlines() or [""]
        for i, line in enumerate(lines, 1):
            yield (url, status, error, i, line)


def _broken(conn: sqlite3.Connection, site: SiteView, run: RuleRun) -> Iterator[tuple]:
    yield from conn.execute(
        "SELECT f.url, l.to_url, 'internal', p.status, NULL, l.anchor, l.location FROM links l "
        "JOIN pages f ON f.id = l.from_id JOIN pages p ON p.url = l.to_url "
        # What broken-internal-link counts: canonical and hreflang <link>s to error pages
        # are their own rules' findings (Issues sheet), not broken links.
        "WHERE l.internal = 1 AND l.location != 'head' AND p.status >= 400 "
        "AND (p.error IS NULL OR p.error NOT LIKE 'throttled:%') ORDER BY f.id, l.seq"
    )
    yield from conn.execute(
        "SELECT f.url, l.to_url, 'external', e.status, e.error, l.anchor, l.location FROM links l "
        "JOIN pages f ON f.id = l.from_id JOIN externals e ON e.url = l.to_url "
        # Likewise a foreign canonical, alternate or meta refresh (location 'head').
        "WHERE l.internal = 0 AND l.location != 'head' AND e.not_checked IS NULL AND "
        "(e.status >= 400 OR e.error IS NOT NULL) ORDER BY f.id, l.seq"
    )


SHEETS: tuple[Sheet, ...] = (
    Sheet("Overview", ("Item", "Value"), _overview),
    Sheet("Issues by rule", ("Severity", "Rule", "Family", "Issue", "Count", "Why it matters",
                             "How to fix"), _issues_by_rule),
    Sheet("Issues", ("Severity", "Rule", "Issue", "URL", "Detail"), _issues),
    Sheet("Pages", ("URL", "Status", "Content type", "Size", "Response ms", "Depth", "Title",
                    "Title length", "Meta description", "Description length", "H1", "Canonical",
                    "Meta robots", "X-Robots-Tag", "Hreflang", "Lang", "Words", "Indexable",
                    "Indexability", "In sitemap", "Inlinks"), _pages),
    Sheet("URLs", ("URL", "State", "Source", "Depth", "Status", "Indexability"),
          _query("SELECT url, state, source, depth, status, indexability FROM pages ORDER BY id")),
    Sheet("Response Codes", ("URL", "Status", "Class", "Content type", "Redirects to", "Error"),
          _query(f"SELECT url, status, {_STATUS_CLASS}, content_type, redirect_to, error "
                 "FROM pages WHERE state='done' ORDER BY status DESC NULLS LAST, id")),
    Sheet("Broken Links", ("From", "To", "Kind", "Status", "Error", "Anchor", "Where"), _broken),
    Sheet("Redirects", ("From", "Status", "To", "to_status", "Final URL", "Final status",
                        "Loop", "Chain"),
          _redirects),
    Sheet("Non-indexable", ("URL", "Status", "Reason"),
          _query("SELECT url, status, indexability FROM pages WHERE state='done' AND "
                 "indexable = 0 ORDER BY id")),
    Sheet("Orphans", ("URL", "Why"), _orphans),
    Sheet("Links", ("From", "To", "Anchor", "Rel", "Internal", "Where"),
          _query("SELECT f.url, l.to_url, l.anchor, l.rel, l.internal, l.location FROM links l "
                 "JOIN pages f ON f.id = l.from_id ORDER BY l.from_id, l.seq")),
    Sheet("External Links", ("URL", "Via", "Status", "Final URL", "Error", "Method",
                             "Checked at", "Not checked because", "Linked from (pages)"),
          # Linking pages counted in one pass over the links: a subquery per external scans
          # every link when the crawl was interrupted before its links_to index was built
          # (3,009 externals, 200,505 links: 60 s -> 0.09 s; 0.014 -> 0.02 s with the index).
          _query("SELECT e.url, e.via, e.status, e.final_url, e.error, e.method, e.checked_at, "
                 "e.not_checked, COALESCE(c.n, 0) FROM externals e LEFT JOIN (SELECT to_url, "
                 "COUNT(DISTINCT from_id) AS n FROM links WHERE to_url IN (SELECT url FROM "
                 "externals) GROUP BY to_url) c ON c.to_url = e.url ORDER BY e.rowid")),
    Sheet("Images", ("URL", "Status", "Size", "Content type", "Pages", "Uses without alt",
                     "Error"),
          _query("SELECT i.url, i.status, i.size, i.content_type, COUNT(pi.page_id), "
                 "SUM(pi.alt IS NULL), i.error FROM images i LEFT JOIN page_images pi "
                 "ON pi.image_id = i.id GROUP BY i.id ORDER BY i.size DESC NULLS LAST, i.url")),
    Sheet("Resources", ("URL", "Type", "Status", "Size", "Pages", "Content type", "Internal",
                        "Error"),
          _query("SELECT r.url, r.type, r.status, r.size, COUNT(pr.page_id), r.content_type, "
                 "r.internal, r.error FROM resources r LEFT JOIN page_resources pr "
                 "ON pr.resource_id = r.id GROUP BY r.id "
                 "ORDER BY r.size DESC NULLS LAST, r.url")),
    Sheet("Robots", ("URL", "Status", "Error", "Line", "Text"), _robots),
    Sheet("Sitemaps", ("Sitemap", "Status", "Kind", "URLs listed", "Error"),
          _query("SELECT url, status, kind, url_count, error FROM sitemaps ORDER BY rowid")),
)  # fmt: skip


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class _XlsxSheetWriter:
    """Writes rows of one logical sheet, continuing on "Name (2)" past Excel's row limit."""

    def __init__(self, book: Any, sheet: Sheet, max_rows: int) -> None:
        self.book = book
        self.sheet = sheet
        self.max_rows = max_rows
        self.header_fmt = book.add_format({"bold": True, "bg_color": "#DDEBF7"})
        self.part = 0
        self.ws: Any = None
        self.row = 0
        self.widths = [len(h) + 2 for h in sheet.headers]
        self.names: list[str] = []

    def _new_part(self) -> None:
        self._finish_part()
        self.part += 1
        name = self.sheet.name if self.part == 1 else f"{self.sheet.name} ({self.part})"
        self.names.append(name)
        self.ws = self.book.add_worksheet(name)
        self.ws.freeze_panes(1, 0)
        self.ws.write_row(0, 0, self.sheet.headers, self.header_fmt)
        self.row = 0

    def _finish_part(self) -> None:
        if self.ws is None:
            return
        last_col = len(self.sheet.headers) - 1
        self.ws.autofilter(0, 0, max(self.row, 1), last_col)

    def write_all(self, rows: Iterable[tuple[Any, ...]]) -> int:
        pending: list[tuple[Any, ...]] = []
        total = 0
        it = iter(rows)
        # Widths from the first rows (constant-memory mode writes rows as they come).
        for row in it:
            pending.append(row)
            if len(pending) >= 200:
                break
        for row in pending:
            for i, v in enumerate(row):
                if v is not None and i < len(self.widths):
                    self.widths[i] = max(self.widths[i], min(len(str(v)) + 2, 80))
        self._new_part()
        self._set_widths()
        for row in _chain(pending, it):
            if self.row >= self.max_rows:
                self._new_part()
                self._set_widths()
            self.row += 1
            self.ws.write_row(self.row, 0, [_cell(v) for v in row])
            total += 1
        self._finish_part()
        return total

    def _set_widths(self) -> None:
        for i, w in enumerate(self.widths):
            self.ws.set_column(i, i, w)


def _chain(first: list[tuple[Any, ...]], rest: Iterator[tuple[Any, ...]]) -> Iterator[tuple]:
    yield from first
    yield from rest


def export_crawl(
    crawl_file: str | Path,
    *,
    xlsx: str | Path | None = None,
    csv_dir: str | Path | None = None,
    thresholds: Thresholds | None = None,
    max_rows: int = EXCEL_MAX_ROWS,
) -> dict[str, int]:
    """Write the workbook and/or the CSVs; returns rows written per sheet."""
    from fairfetch.audit.crawlfile import CrawlFile

    targets = [Path(xlsx)] if xlsx is not None else []
    if csv_dir is not None:
        targets += [Path(csv_dir) / f"{_slug(sheet.name)}.csv" for sheet in SHEETS]
    _refuse_to_overwrite(Path(crawl_file), targets)
    cf = CrawlFile(crawl_file, create=False, read_only=True)
    try:
        conn = cf.conn
        site = load_view(conn)
        run = run_rules(site, thresholds)
        counts: dict[str, int] = {}
        if xlsx is not None:
            book = xlsxwriter.Workbook(str(xlsx), WORKBOOK_OPTIONS)
            try:
                for sheet in SHEETS:
                    counts[sheet.name] = _XlsxSheetWriter(book, sheet, max_rows).write_all(
                        sheet.rows(conn, site, run)
                    )
            finally:
                book.close()
        if csv_dir is not None:
            out = Path(csv_dir)
            out.mkdir(parents=True, exist_ok=True)
            for sheet in SHEETS:
                n = 0
                target = out / f"{_slug(sheet.name)}.csv"
                with target.open("w", newline="", encoding="utf-8") as fh:
                    w = csv.writer(fh)
                    w.writerow([csv_safe(h) for h in sheet.headers])
                    for row in sheet.rows(conn, site, run):
                        w.writerow([csv_safe(v) for v in row])
                        n += 1
                counts.setdefault(sheet.name, n)
        return counts
    finally:
        cf.close()


def _refuse_to_overwrite(crawl_file: Path, targets: list[Path]) -> None:
    """An output that is the crawl file (or its WAL) would replace the crawl with the export."""
    own = crawl_file.resolve()
    guarded = {own, own.with_name(own.name + "-wal"), own.with_name(own.name + "-shm")}
    for target in targets:
        if target.resolve() in guarded:
            raise AuditError(
                f"{str(target)!r} is the crawl file {str(crawl_file)!r} (or its journal): "
                "writing the export there would destroy the crawl; choose another name"
            )


def report_data(crawl_file: str | Path, thresholds: Thresholds | None = None) -> dict[str, Any]:
    """The findings as plain data (for ``audit report --json`` and the terminal table)."""
    from fairfetch.audit.crawlfile import CrawlFile

    cf = CrawlFile(crawl_file, create=False, read_only=True)
    try:
        site = load_view(cf.conn)
        run = run_rules(site, thresholds)
        meta = cf.get_meta()
    finally:
        cf.close()
    return {
        "start_url": meta.get("start_url"),
        "finished": site.finished,
        "cut_short": site.cut_short or None,
        "pages": len(site.pages),
        "rules": findings_summary(run),
        "silenced": run.silenced,
    }
