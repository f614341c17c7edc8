"""``fairfetch feeds …``: add, import, export, list, show, refresh, remove."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from fairfetch.cli._app import (
    app,
    console,
    err_console,
    plain,
    print_json,
    settings_of,
    store_of,
)
from fairfetch.cli._crawl import print_summary
from fairfetch.crawl import AddReport, Crawler, CrawlSummary
from fairfetch.crawl.unread import declared_unread
from fairfetch.crawl.urls import normalize_feed_url
from fairfetch.errors import InputError, InvalidURLError, NotFoundError
from fairfetch.opml import build_opml, read_opml
from fairfetch.store import FeedRecord, SqlStore, dumps, feed_key
from fairfetch.store.notify_subscriptions import feed_duplicate_of
from fairfetch.views import feed_details, feed_summary

feeds_app = typer.Typer(help="Manage the feeds of the directory.", no_args_is_help=True)
app.add_typer(feeds_app, name="feeds")

KINDS = ("podcast", "video", "newsletter", "blog")
STATUSES = ("new", "ok", "error", "dead")
#: Exit status when some of the input was bad (the good part was still done): the same code
#: as a command rejected as a whole, so scripts have one thing to test.
BAD_INPUT = 2


def _check_kind(kind: str | None) -> None:
    if kind and kind not in KINDS:
        raise InputError(kind, "unknown kind (" + ", ".join(KINDS) + ")")


def find_feed(store: SqlStore, raw: str) -> FeedRecord | None:
    """A feed by id, its current URL or the URL it was given as; a URL spelled differently
    (host case, default port, fragment) is looked up as it would have been stored."""
    key = feed_key(raw)
    feed = store.find_feed(key)
    if feed is None and isinstance(key, str):
        try:
            normal = normalize_feed_url(raw)
        except InvalidURLError:
            return None
        if normal != raw:
            feed = store.find_feed(normal)
    return feed


def get_feed(store: SqlStore, raw: str) -> FeedRecord:
    feed = find_feed(store, raw)
    if feed is None:
        raise NotFoundError(f"feed {raw!r}")
    return feed


def _failed_first_crawls(store: SqlStore, added: list[str]) -> list[FeedRecord]:
    """The added feeds whose first crawl (the add's own GET) failed: added all the same, since
    failed feeds are data and are tried again, but a mistyped URL must not look healthy."""
    found = (store.find_feed(url) for url in added)
    return [f for f in found if f is not None and f.status in ("error", "dead")]


def _print_add_report(report: AddReport, failed_first: Sequence[FeedRecord] = ()) -> int:
    for url in report.added:
        console.print(f"[green]added[/green] {escape(url)}", highlight=False)
    for feed in failed_first:
        err_console.print(
            f"[yellow]first crawl failed[/yellow] {escape(feed.url)}: "
            f"{escape(feed.last_error or feed.status)} (added, status {feed.status})",
            highlight=False,
        )
    for url in report.existing:
        console.print(f"[dim]exists[/dim] {escape(url)}", highlight=False)
    for site, links in report.discovered.items():
        if links:
            console.print(
                f"[cyan]discovered[/cyan] {len(links)} feed(s) on {escape(site)}", highlight=False
            )
    for label, bad in (("invalid", report.invalid), ("failed", report.failed)):
        for raw, reason in bad:
            err_console.print(
                f"[red]{label}[/red] {escape(repr(raw))}: {escape(reason)}", highlight=False
            )
    return BAD_INPUT if (report.invalid or report.failed) else 0


def _add(ctx: typer.Context, urls: list[str]) -> int:
    settings = settings_of(ctx)
    store = store_of(ctx)

    async def go() -> AddReport:
        async with Crawler(store, settings) as crawler:
            report = await crawler.add(urls)
            unread = await asyncio.to_thread(declared_unread, store, report)
            if unread:
                await crawler.refresh(unread, trigger="add")
            return report

    try:
        report = asyncio.run(go())
        return _print_add_report(report, _failed_first_crawls(store, report.added))
    finally:
        store.close()


@feeds_app.command("add")
def feeds_add(
    ctx: typer.Context,
    urls: Annotated[list[str], typer.Argument(help="Feed URLs, or site URLs to discover feeds on")],
) -> None:
    """Add feeds: a feed's one GET is its first crawl; a site's page is read for the feeds it
    declares, each then crawled."""
    raise typer.Exit(_add(ctx, urls))


@feeds_app.command("import")
def feeds_import(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="OPML file", metavar="FILE.opml")],
) -> None:
    """Add every feed of an OPML file; bad entries are reported, the good ones still added."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InputError(str(file), f"cannot read ({exc.strerror})") from None
    outlines, problems = read_opml(data, name=str(file))
    # Markup the parser had to skip may have held an outline: said, or its feed is lost unseen.
    for problem in problems:
        err_console.print(
            f"[red]invalid[/red] {escape(str(file))} {escape(problem)}", highlight=False
        )
    if not outlines:
        raise InputError(str(file), "no outline with an xmlUrl")
    empty = [o for o in outlines if not o.url]
    for o in empty:
        err_console.print(
            f"[red]invalid[/red] outline {escape(repr(o.title or ''))} in {escape(str(file))}: "
            "empty xmlUrl",
            highlight=False,
        )
    urls = [o.url for o in outlines if o.url]
    status = _add(ctx, urls) if urls else 0
    raise typer.Exit(BAD_INPUT if empty or problems else status)


@feeds_app.command("export")
def feeds_export(
    ctx: typer.Context,
    opml: Annotated[bool, typer.Option("--opml", help="OPML 2.0 (the only format)")] = True,
) -> None:
    """Write every feed as OPML to standard output."""
    store = store_of(ctx)
    try:
        doc = build_opml((f.url, f.title, f.link) for f in store.iter_feeds())
    finally:
        store.close()
    sys.stdout.buffer.write(doc)


@feeds_app.command("list")
def feeds_list(
    ctx: typer.Context,
    kind: Annotated[str | None, typer.Option(help="podcast, video, newsletter or blog")] = None,
    status: Annotated[str | None, typer.Option(help="new, ok, error or dead")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output")] = False,
) -> None:
    """List feeds."""
    _check_kind(kind)
    if status and status not in STATUSES:
        raise InputError(status, "unknown status (" + ", ".join(STATUSES) + ")")
    store = store_of(ctx)
    try:
        rows = store.list_feeds(kind=kind, status=status)
    finally:
        store.close()
    if as_json:
        print_json([feed_summary(f) for f in rows])
        return
    table = Table("status", "kind", "errors", "entries", "url", "title")
    # A URL is folded, never cut: two feeds of one site often differ only at its end.
    table.columns[4].overflow = "fold"
    for f in rows:
        table.add_row(
            f.status, f.kind or "", str(f.error_count), str(f.entry_count), plain(f.url),
            plain(f.title),
        )
    console.print(table)


@feeds_app.command("show")
def feeds_show(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The feed's URL (current or as given) or id")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON output")] = False,
) -> None:
    """Show one feed: health, schedule, redirects, kind and evidence, contacts, WebSub."""
    store = store_of(ctx)
    try:
        feed = get_feed(store, url)
        view = feed_details(store, feed)
        # the feed this one duplicates (a confirmed move onto its URL); its readers moved there
        view["duplicate_of"] = feed_duplicate_of(store, feed.id)
    finally:
        store.close()
    if as_json:
        print_json(view)
        return
    table = Table(show_header=False, box=None)
    table.add_column(no_wrap=True)
    # A value (the feed's URL first) is folded, never cut: in a pipe the URL was '…?channel_…'.
    table.add_column(overflow="fold")
    for k, v in view.items():
        if k in ("crawls", "recent_entries"):
            continue  # lists of records: --json has them whole
        table.add_row(f"[bold]{k}[/bold]", plain(_text(v)))
    console.print(table)


def _text(value: object) -> str:
    """A value for the text view: times as in --json (ISO 8601 UTC), None as nothing."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, list | dict):
        return dumps(value)
    return str(value)


@feeds_app.command("refresh")
def feeds_refresh(
    ctx: typer.Context,
    urls: Annotated[list[str] | None, typer.Argument(help="Feed URLs or ids")] = None,
    all_feeds: Annotated[
        bool, typer.Option("--all", help="Every feed (after an incident)")
    ] = False,
    kind: Annotated[str | None, typer.Option(help="With --all: only this kind")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output")] = False,
) -> None:
    """Crawl these feeds now, whatever their schedule (revives dead feeds that answer).

    Unknown feeds are named on stderr and the exit status is 2; the known ones are still
    crawled. Exit status 1: some feeds were not crawled (deferred: their key paused by a
    Retry-After, or not to start for 10 s or more), as the summary's skipped reasons say."""
    _check_kind(kind)
    if all_feeds and urls:
        raise InputError("feeds refresh", "give feed URLs or --all, not both")
    if kind and not all_feeds:
        raise InputError("--kind", "only with --all")
    if not all_feeds and not urls:
        raise InputError("feeds refresh", "give feed URLs, or --all")
    settings = settings_of(ctx)
    store = store_of(ctx)
    unknown: list[str] = []
    keys: list[str | int] = []
    try:
        if all_feeds:
            keys = [f.id for f in store.iter_feeds() if kind is None or f.kind == kind]
        else:
            for raw in urls or []:
                found = find_feed(store, raw)
                if found is None:
                    unknown.append(raw)
                elif found.id not in keys:
                    keys.append(found.id)
    except BaseException:
        store.close()
        raise
    for raw in unknown:
        err_console.print(f"[red]not found[/red] {escape(repr(raw))}", highlight=False)

    async def go() -> CrawlSummary:
        async with Crawler(store, settings) as crawler:
            return await crawler.refresh(keys)

    try:
        summary = asyncio.run(go())
    finally:
        store.close()
    if as_json:
        print_json(summary.as_dict())
    else:
        print_summary(summary)
    if unknown:
        raise typer.Exit(BAD_INPUT)
    if summary.skipped:
        raise typer.Exit(1)


@feeds_app.command("remove")
def feeds_remove(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The feed's URL or id")],
) -> None:
    """Remove a feed and everything stored about it."""
    store = store_of(ctx)
    try:
        feed = store.delete_feed(get_feed(store, url).id)
    finally:
        store.close()
    console.print(f"removed {feed.url}", highlight=False, markup=False)
