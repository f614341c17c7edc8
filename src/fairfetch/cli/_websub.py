"""``fairfetch websub …``: list subscriptions, show ping figures, renew, run one upkeep pass.

Hubs verify intent by calling back ``FAIRFETCH_PUBLIC_URL``: ``renew`` and ``sync`` are useful
while ``serve`` or ``run`` is answering there.
"""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from fairfetch.cli._app import (
    _utc,
    app,
    console,
    err_console,
    plain,
    print_json,
    settings_of,
    store_of,
)
from fairfetch.cli._feeds import get_feed
from fairfetch.errors import InputError
from fairfetch.store import websub_repo as repo
from fairfetch.websub.state import STATES

websub_app = typer.Typer(help="WebSub subscriptions (push updates from hubs).",
                         no_args_is_help=True)
app.add_typer(websub_app, name="websub")


def _row(sub: repo.SubscriptionRecord, url: str | None) -> dict[str, Any]:
    return {
        "id": sub.id,
        "feed": url,
        "hub": sub.hub_url,
        "topic": sub.topic_url,
        "state": sub.state,
        "lease_seconds": sub.lease_seconds,
        "lease_expires_at": sub.lease_expires_at,
        "next_action_at": sub.next_action_at,
        "denied_reason": sub.denied_reason,
        "last_error": sub.last_error,
    }


@websub_app.command("list")
def websub_list(
    ctx: typer.Context,
    state: Annotated[str | None, typer.Option(help="pending|active|denied|expired|…")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output")] = False,
) -> None:
    """List subscriptions with their hub, state and lease expiry."""
    # A state the store never holds would list nothing, read as "no subscriptions".
    if state is not None and state not in STATES:
        raise InputError(state, "unknown state (" + ", ".join(STATES) + ")")
    store = store_of(ctx)
    try:
        rows = []
        for sub in repo.list_subscriptions(store, state=state):
            feed = store.find_feed(sub.feed_id) if sub.feed_id is not None else None
            rows.append(_row(sub, feed.url if feed else None))
    finally:
        store.close()
    if as_json:
        print_json(rows)
        return
    table = Table("id", "feed", "hub", "state", "lease expires", "note")
    table.columns[1].overflow = "fold"  # an address is folded, never cut
    table.columns[2].overflow = "fold"  # an address is folded, never cut
    table.columns[4].overflow = "fold"  # a time is folded, never cut to its day
    table.columns[5].overflow = "fold"  # so is a hub's reason or our error
    for r in rows:
        # UTC, spelled as --json spells it (SQLite hands back naive UTC), to the second.
        lease = _utc(r["lease_expires_at"])
        expires = lease.strftime("%Y-%m-%dT%H:%M:%SZ") if lease else "-"
        note = r["denied_reason"] or r["last_error"] or ""
        table.add_row(str(r["id"]), plain(r["feed"] or "(removed)"), plain(r["hub"]), r["state"],
                      expires, plain(note))
    console.print(table)


@websub_app.command("stats")
def websub_stats_cmd(
    ctx: typer.Context,
    hours: Annotated[float, typer.Option(help="Window, in hours back from now (> 0)")] = 24.0,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output")] = False,
) -> None:
    """Pings received, accepted, rejected (bad signature), ignored (too old), retried."""
    from fairfetch.websub.status import websub_stats

    # A window of 0 or less (a 'since' in the future) counts nothing and reads as "no pings".
    if not (math.isfinite(hours) and hours > 0):
        raise InputError("--hours", f"{hours!r}: must be a positive number of hours")
    try:
        since = datetime.now(UTC) - timedelta(hours=hours)
    except OverflowError:
        raise InputError("--hours", f"{hours!r}: reaches back before the year 1") from None
    store = store_of(ctx)
    try:
        stats = websub_stats(store, since)
    finally:
        store.close()
    if as_json:
        print_json(stats)
        return
    # What --json says, in words: counts by name, never a Python dict, and nothing left out (a
    # bucket this code does not know, "other", is there to be seen).
    def counts(by_name: dict[str, int], empty: str) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(by_name.items())) or empty

    lines = [(key, str(stats[key])) for key in
             ("received", "accepted", "rejected", "ignored", "retried", "gone", "unknown")]
    if stats["rejected_by_reason"]:
        lines[2] = ("rejected", f"{stats['rejected']} ({counts(stats['rejected_by_reason'], '')})")
    if stats.get("other"):
        lines.append(("other", counts(stats["other"], "")))
    lines.append(("queue", counts(stats["queue"], "empty")))
    lines.append(("subscriptions", counts(stats["subscriptions"], "none")))
    for key, value in lines:
        console.print(f"{key:>13}: {value}", highlight=False, markup=False)


def _service_run(ctx: typer.Context, work: Any) -> Any:
    from fairfetch.crawl import Crawler
    from fairfetch.websub.service import WebSubService

    settings = settings_of(ctx)
    store = store_of(ctx)

    async def go() -> Any:
        async with Crawler(store, settings) as crawler:
            service = WebSubService(store, settings, crawler=crawler)
            try:
                return await work(service)
            finally:
                await service.aclose()

    try:
        return asyncio.run(go())
    finally:
        store.close()


@websub_app.command("renew")
def websub_renew(
    ctx: typer.Context,
    feeds: Annotated[
        list[str] | None, typer.Argument(help="Feed URLs or ids (default: every subscribed feed)")
    ] = None,
) -> None:
    """Re-subscribe now (a renewal for live subscriptions; a new one for feeds without)."""

    async def work(service: Any) -> int:
        store = service.store
        failures = 0
        # Found as every command finds a feed (id, current or given URL, any spelling), and each
        # feed once: naming it twice must not make two subscriptions (the hub would push twice).
        targets = list(dict.fromkeys(get_feed(store, u).id for u in feeds)) if feeds else None
        subs = [s for s in repo.list_subscriptions(store)
                if s.feed_id is not None and s.state not in ("unsubscribing", "unsubscribed")
                and (targets is None or s.feed_id in targets)]
        latest: dict[int, repo.SubscriptionRecord] = {}
        for s in subs:
            if s.feed_id is not None:
                latest[s.feed_id] = s
        for fid in targets or []:
            if fid not in latest:
                outcome = await service.subscribe_feed(fid)
                ok = outcome.subscription is not None and not outcome.detail
                failures += not ok
                console.print(f"{'subscribed' if ok else 'not subscribed'} feed {fid}: "
                              f"{outcome.detail or outcome.topic}", highlight=False, markup=False)
        if not targets and not latest:
            console.print("no WebSub subscription to renew (feeds that advertise a hub are "
                          "subscribed by run, or by websub sync)", highlight=False)
        for fid, sub in latest.items():
            rec = await service.request(sub, "subscribe")
            if rec.last_error:
                failures += 1
                err_console.print(f"[red]failed[/red] feed {fid}: {escape(rec.last_error)}",
                                  highlight=False)
            else:
                console.print(f"requested feed {fid} ({rec.state})", highlight=False)
        return failures

    raise typer.Exit(1 if _service_run(ctx, work) else 0)


@websub_app.command("sync")
def websub_sync(ctx: typer.Context) -> None:
    """One upkeep pass: lapses, due renewals, unsubscribes, new subscriptions, queued pings."""

    async def work(service: Any) -> dict[str, int]:
        return dict(await service.tick())

    counts = _service_run(ctx, work)
    console.print(" ".join(f"{k}={v}" for k, v in counts.items()), highlight=False)
