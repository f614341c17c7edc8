"""``fairfetch crawl``, ``fairfetch stats`` and ``fairfetch demo``."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from fairfetch.cli._app import (
    _shown_url,
    app,
    console,
    err_console,
    globals_of,
    open_store_at,
    print_json,
    say_stopping,
    second_ctrl_c_exits,
    settings_of,
    store_of,
    utc_text,
)
from fairfetch.crawl import Crawler, CrawlSummary, FeedResult, utcnow
from fairfetch.errors import InputError
from fairfetch.gctune import tune_for_crawling


def crawl_with_progress(
    crawler: Crawler, *, max_feeds: int | None, quiet: bool = False
) -> CrawlSummary:
    """One pass over the due feeds with a rich progress bar (done/total, by outcome)."""
    counts = {"ok": 0, "not_modified": 0, "throttled": 0, "error": 0}
    progress = Progress(
        TextColumn("[bold]crawl[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )
    task = progress.add_task("crawl", total=None, detail="")

    def on_total(n: int) -> None:
        progress.update(task, total=n)

    def on_result(r: FeedResult) -> None:
        if r.outcome in counts:
            counts[r.outcome] += 1
        progress.update(
            task,
            advance=1,
            detail=(
                f"[green]ok {counts['ok']}[/green] · not modified {counts['not_modified']} · "
                f"[yellow]throttled {counts['throttled']}[/yellow] · "
                f"[red]failed {counts['error']}[/red]"
            ),
        )

    async def go() -> CrawlSummary:
        try:
            summary = await crawler.crawl_due(
                max_feeds=max_feeds, on_total=on_total, on_result=on_result
            )
        except BaseException:
            # Ctrl-C (the pass cancelled) or an error: fetches in flight are dropped and their
            # feeds stay due, as after a kill. Closed as on a normal end, one Ctrl-C waited for
            # each fetch in flight to finish or time out (total_timeout), saying nothing.
            await crawler.aclose(abort=True)
            raise
        await crawler.aclose()
        return summary

    with progress:
        return asyncio.run(go())


@app.command("crawl")
def crawl(
    ctx: typer.Context,
    once: Annotated[
        bool, typer.Option("--once", help="Crawl what is due now, then exit 0")
    ] = False,
    max_feeds: Annotated[
        int | None, typer.Option("--max", help="With --once: at most N feeds", min=1)
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --once: print the summary as JSON")
    ] = False,
) -> None:
    """Crawl due feeds. Failed feeds are data, not an exit code."""
    # Both describe one pass: without --once they would be ignored while the crawl runs for ever.
    for given, name in ((max_feeds is not None, "--max"), (as_json, "--json")):
        if given and not once:
            raise InputError(name, "only with --once (one pass); without it crawl runs for ever")
    settings = settings_of(ctx)
    store = store_of(ctx)
    crawler = Crawler(store, settings)
    tune_for_crawling()
    try:
        if once:
            summary = crawl_with_progress(crawler, max_feeds=max_feeds, quiet=as_json)
            if as_json:
                print_json(summary.as_dict())
            else:
                print_summary(summary)
            return

        async def forever() -> None:
            from fairfetch.stop_signals import install_stop_signals

            stop = asyncio.Event()
            install_stop_signals(stop, say_stopping)
            await crawler.run_forever(stop)

        with second_ctrl_c_exits():
            asyncio.run(forever())
    finally:
        store.close()


def print_summary(summary: CrawlSummary) -> None:
    """One line a pass: what was due and how it ended (crawl --once, feeds refresh)."""
    d = summary.as_dict()
    console.print(
        f"due {d['due']}: [green]ok {d['ok']}[/green], not modified {d['not_modified']}, "
        f"[yellow]throttled {d['throttled']}[/yellow], [red]failed {d['failed']}[/red]"
        + (f", outage {d['outage']}" if d["outage"] else "")
        + (f", skipped {sum(d['skipped'].values())}" if d["skipped"] else "")
        + f"; {d['new_entries']} new entries in {d['elapsed_seconds']} s",
        highlight=False,
    )
    if d["errors"]:
        console.print("errors by kind: " + ", ".join(f"{k} {v}" for k, v in d["errors"].items()))
    if d["skipped"]:
        # Reasons are words ("deferred (key paused)"): printed as such, never as a Python dict.
        console.print(
            "skipped by reason: " + ", ".join(f"{k} {v}" for k, v in d["skipped"].items()),
            highlight=False,
            markup=False,
        )


@app.command("stats")
def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output")] = False,
) -> None:
    """The crawlstats: outcomes in the last hour and day, throttles by key, the queue."""
    settings = settings_of(ctx)
    store = store_of(ctx)
    try:
        data = store.stats(utcnow(), dead_probe_interval=settings.dead_probe_interval)
    finally:
        store.close()
    if as_json:
        print_json(data)
        return
    print_stats(data)


@app.command("prune")
def prune(
    ctx: typer.Context,
    days: Annotated[
        float | None,
        typer.Option(
            "--days", min=0.001,
            help="Keep this many days of logs (default: the log_retention_days setting, 90)",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output")] = False,
) -> None:
    """Delete crawl and WebSub ping logs older than the retention (run does it daily)."""
    from datetime import timedelta

    from fairfetch.store.retention import prune_logs

    keep = days if days is not None else settings_of(ctx).log_retention_days
    if not keep:
        raise InputError(
            "prune", "log_retention_days is empty (logs kept for ever): give --days N"
        )
    store = store_of(ctx)
    try:
        before = utcnow() - timedelta(days=keep)
        gone = prune_logs(store, before)
    finally:
        store.close()
    if as_json:
        print_json({"older_than": before, "deleted": gone})
        return
    console.print(
        f"deleted log rows older than {utc_text(before)}: "
        + ", ".join(f"{n} from {table}" for table, n in gone.items()),
        highlight=False,
    )


def print_stats(data: dict[str, Any]) -> None:
    t = Table(title="feeds", show_header=False)
    t.add_row("total", str(data["feeds"]["total"]))
    for k, v in sorted(data["feeds"]["by_status"].items()):
        t.add_row(f"status {k}", str(v))
    for k, v in sorted(data["feeds"]["by_kind"].items()):
        t.add_row(f"kind {k}", str(v))
    t.add_row("entries", str(data["entries"]))
    console.print(t)
    c = Table("outcome", "last hour", "last day", title="crawls")
    keys = sorted(set(data["crawls"]["last_hour"]) | set(data["crawls"]["last_day"]))
    for k in keys:
        c.add_row(
            k, str(data["crawls"]["last_hour"].get(k, 0)), str(data["crawls"]["last_day"].get(k, 0))
        )
    console.print(c)
    fetched = data["bytes"]
    console.print(
        f"bytes fetched: {fetched['last_hour']} in the last hour, {fetched['last_day']} in the "
        "last day",
        highlight=False,
    )
    if data["throttles_by_key"]:
        th = Table("politeness key", "throttles (24 h)", title="who is pushing back")
        for row in data["throttles_by_key"]:
            th.add_row(row["key"], str(row["throttles"]))
        console.print(th)
    q = data["queue"]
    oldest = f", oldest due {utc_text(q['oldest_due_at'])}" if q["oldest_due_at"] else ""
    console.print(f"queue: {q['due']} due{oldest}, {q['next_hour']} in the next hour")


async def _refresh(env: Any, urls: list[str]) -> CrawlSummary:
    async with Crawler(env.store, env.settings) as crawler:
        return await crawler.refresh(urls)


def _refuse_a_used_database(db: str) -> None:
    """The demo adds testbed feeds and subscribes its demo readers to every feed in its
    database: given one that holds a directory, it would mix into it (and a later ``run`` with
    a real mail server would mail the demo readers about the user's feeds)."""
    store = open_store_at(db)
    try:
        used = next(iter(store.iter_feeds()), None) is not None
    finally:
        store.close()
    if used:
        raise InputError(
            _shown_url(db),
            "the demo needs a fresh database and this one holds feeds (name a new file, or "
            "omit --db: fairfetch-demo.db is made afresh)",
        )


def _refuse_a_taken_port(port: int) -> None:
    """The demo serves on --port after making a database and crawling: a port another process
    holds (8080 often is) would fail only then, so it is tried first, bound as uvicorn binds it
    (SO_REUSEADDR: a port left in TIME_WAIT by a previous demo is not taken)."""
    import socket

    from fairfetch.errors import ConfigError

    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ConfigError(
                f"demo: cannot serve on 127.0.0.1:{port} ({exc.strerror or exc}); choose "
                "another port with --port (fairfetch demo --port 8081), or --no-serve"
            ) from None


@app.command("demo")
def demo(
    ctx: typer.Context,
    port: Annotated[int, typer.Option(help="Port for the web directory", min=1, max=65535)] = 8080,
    feeds: Annotated[int, typer.Option(help="How many testbed feeds to add", min=1)] = 400,
    serve: Annotated[bool, typer.Option("--serve/--no-serve", help="Serve after the crawl")] = True,
) -> None:
    """Crawl the simulated web into a fresh fairfetch-demo.db (or empty --db), then serve it."""
    from fairfetch.demo import demo_environment

    if serve:
        _refuse_a_taken_port(port)
    if globals_of(ctx).config is not None:
        # Its settings are the demo's own (the simulated web on loopback, a local mail
        # catcher): a config file given here was silently not read.
        err_console.print(
            f"note: demo does not read --config {escape(repr(globals_of(ctx).config))}: it "
            "runs on its own settings (the simulated web, a fresh database, a local mail "
            "catcher); use the file with crawl, serve or run",
            highlight=False,
        )
    db = globals_of(ctx).db
    if db is not None:
        _refuse_a_used_database(db)
    with demo_environment(db, feeds=feeds, port=port) as env:
        console.print(
            f"[bold]fairfetch demo[/bold]: simulated web on 127.0.0.1:{env.testbed.base_port}, "
            f"{len(env.feeds)} feeds added to {_shown_url(env.settings.db)}",
            highlight=False,
        )
        # A local mail catcher and two demo readers, so notifications flow to /outbox.
        from fairfetch.notify.demo import demo_mail

        sink, env.settings = demo_mail(
            env.store, env.settings, [f.id for f in env.store.iter_feeds()]
        )
        summary = crawl_with_progress(Crawler(env.store, env.settings), max_feeds=None)
        print_summary(summary)
        # An hour passes on the simulated web: the growing feeds publish, and since their
        # backlog was recorded on the first crawl, what they publish now is news for readers.
        env.testbed.clock.advance(3600)
        growing = [f.url for f in env.feeds if f.behaviour == "growing"]
        if growing:
            fresh = asyncio.run(_refresh(env, growing))
            console.print(
                f"an hour later: {fresh.new_entries} new entries on {len(growing)} growing feeds "
                "→ notifications queued for the demo readers",
                highlight=False,
            )
        print_stats(env.store.stats(utcnow(), dead_probe_interval=env.settings.dead_probe_interval))
        if not serve:
            sink.stop()
            return
        try:
            from fairfetch.cli._web import _startup_failure_is_an_error
            from fairfetch.web.serve import run_service
        except ImportError:
            console.print("(the web directory is not available in this build)")
            return
        token = env.settings.admin_token

        def announce(url: str) -> None:
            # Printed once the server listens, so the URL works the moment it is shown.
            console.print(
                f"\n[bold green]Open {url}/[/bold green]  (crawlstats: {url}/crawlstats, "
                f"mails sent: {url}/outbox, admin token: {token!r}). Ctrl-C to stop.",
                highlight=False,
            )

        try:
            with second_ctrl_c_exits(), _startup_failure_is_an_error("127.0.0.1", port):
                run_service(
                    env.settings, env.store, host="127.0.0.1", port=port, on_started=announce,
                    on_stopping=say_stopping,
                )
        finally:
            sink.stop()
