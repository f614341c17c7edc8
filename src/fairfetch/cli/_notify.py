"""``fairfetch notify …``: subscribe, confirm, list, unsubscribe, send-due, outbox, grant, sink.

Thin: parses arguments, calls fairfetch.notify and the notify repository, prints.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from fairfetch.cli._app import (
    app,
    console,
    err_console,
    plain,
    print_json,
    settings_of,
    store_of,
    utc_text,
)
from fairfetch.errors import InputError

notify_app = typer.Typer(
    name="notify",
    help="Email notifications: subscriptions, digests, the outbox and publisher credits.",
    no_args_is_help=True,
)
app.add_typer(notify_app, name="notify")


def _now() -> datetime:
    return datetime.now(UTC)


def _feed_arg(store: Any, raw: str) -> str | int:
    """A feed named on the command line, read as the ``feeds`` commands read it: a feed of the
    directory by id or by any spelling of its URL, else the URL in its normal spelling (so a
    feed added here is the one ``feeds add`` would add, not a second copy spelled as typed),
    and a URL ``feeds add`` refuses is refused here too, naming it."""
    from fairfetch.cli._feeds import find_feed
    from fairfetch.crawl.urls import normalize_feed_url
    from fairfetch.store import feed_key

    found = find_feed(store, raw)
    if found is not None:
        return found.id
    if isinstance(feed_key(raw), int):
        return raw  # an unknown id: notify says so
    return normalize_feed_url(raw)


@notify_app.command("subscribe")
def subscribe(
    ctx: typer.Context,
    email: Annotated[str, typer.Argument(help="The reader's email address")],
    feed_url: Annotated[str, typer.Argument(help="The feed (URL, or id in the directory)")],
    mode: Annotated[str, typer.Option(help="realtime | daily | weekly")] = "realtime",
    # No defaults here: given with a mode that has no digest they would be dropped silently
    # (a daily reader re-subscribing with only --hour 9 became realtime), so they are refused.
    hour: Annotated[
        int | None,
        typer.Option(help="Digest hour, reader's local time (0-23; daily/weekly, default 8)"),
    ] = None,
    weekday: Annotated[
        str | None,
        typer.Option(help="Weekly digest day: mon … sun (or 0 = Monday … 6; default mon)"),
    ] = None,
    tz: Annotated[str | None, typer.Option(help="Reader's time zone (IANA name)")] = None,
    only: Annotated[
        str | None, typer.Option("--only", help="Only these categories (comma-separated)")
    ] = None,
    except_: Annotated[
        str | None, typer.Option("--except", help="All but these categories (comma-separated)")
    ] = None,
) -> None:
    """Subscribe (double opt-in): queue and send the confirmation mail; nothing else is sent to
    the reader until the link in it is followed."""
    from fairfetch.notify.options import NotifyOptions
    from fairfetch.notify.service import send_due as _send_due
    from fairfetch.notify.subscriptions import SubscriptionRequest, request_subscription

    if hour is not None and mode == "realtime":
        raise InputError("--hour", "only with --mode daily or weekly (realtime mails each item)")
    if weekday is not None and mode in ("realtime", "daily"):
        raise InputError("--weekday", f"only with --mode weekly (not {mode})")
    from fairfetch.notify.smtp import SmtpConfig

    settings = settings_of(ctx)
    # Before anything is written: refused after, it left a subscription and a queued mail behind.
    SmtpConfig.parse(settings.smtp_url)
    store = store_of(ctx)
    req = SubscriptionRequest.build(
        email, mode=mode, hour=hour, weekday=weekday, tz=tz, only=only, exclude=except_
    )
    result = request_subscription(store, req, _feed_arg(store, feed_url))
    sub = result.subscription
    if result.throttled:
        console.print(
            # Queued, maybe not sent yet (the mail server may be away): never say it went.
            f"a confirmation mail to {req.email} was queued less than an hour ago (notify "
            f"outbox says if it is sent): follow its link (settings updated; no new mail)",
            highlight=False,
            markup=False,
        )
        return
    if result.confirm_outbox_id is None:
        console.print(f"{req.email} is already subscribed to {feed_url} (settings updated)",
                      highlight=False, markup=False)
        return
    report = asyncio.run(_send_due(
        store, settings, only_ids={result.confirm_outbox_id},
        options=NotifyOptions.from_settings(settings),
    ))
    if report.failed:
        # Refused for good: nothing will retry it, so "queued" would be a promise we cannot keep.
        reason = report.errors[0].split(": ", 1)[-1] if report.errors else "refused"
        err_console.print(
            f"error: confirmation mail to {req.email} failed: {reason}; subscription "
            f"{sub['id']} stays pending",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(1)
    console.print(
        f"confirmation mail to {req.email} {_sent_or_why(report)}; subscription {sub['id']} is "
        f"pending until confirmed",
        highlight=False,
        markup=False,
    )


def _sent_or_why(report: Any) -> str:
    """Why a confirmation mail is only queued: "did not take it yet" alone left a newcomer who
    had not started the mail sink (or mistyped its port) with nothing to go on."""
    if report.sent:
        return "sent"
    if report.errors:
        reason = report.errors[0].split(": ", 1)[-1]
        return f"queued, not sent ({reason}); `notify send-due` or `run` retries it"
    return ("queued behind earlier mail waiting for the mail server (`notify outbox` says why); "
            "`notify send-due` or `run` sends it once the server takes mail")


# Tokens minted before they were kept dash-free may start with "-": such an argument is taken as
# the token, not refused as an unknown option (``notify confirm -- TOKEN`` is never needed).
@notify_app.command("confirm", context_settings={"ignore_unknown_options": True})
def confirm(
    ctx: typer.Context, token: Annotated[str, typer.Argument(help="Token from the mail's link")]
) -> None:
    """Confirm a subscription (what the link in the confirmation mail does)."""
    from fairfetch.store import notify_repo as repo

    sub = repo.confirm(store_of(ctx), token, _now())
    console.print(f"subscription {sub['id']} confirmed")


def _sub_json(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": s["id"],
        "email": s["email"],
        "feed_url": s["feed_url"],
        "feed_title": s["feed_title"],
        "mode": s["mode"],
        "hour": s["hour"] if s["mode"] != "realtime" else None,
        "weekday": s["weekday"] if s["mode"] == "weekly" else None,
        "tz": s["tz"],
        "only": s["only_categories"],
        "except": s["except_categories"],
        "status": s["status"],
        "created_at": s["created_at"],
        "confirmed_at": s["confirmed_at"],
        "unsubscribed_at": s["unsubscribed_at"],
        "address_flagged_at": s["flagged_at"],
    }


@notify_app.command("list")
def list_(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Every subscription with its reader, feed, mode, filter and status."""
    from fairfetch.notify.schedule import WEEKDAYS
    from fairfetch.store import notify_repo as repo

    rows = [_sub_json(s) for s in repo.list_subscriptions(store_of(ctx))]
    if as_json:
        print_json(rows)
        return
    table = Table("id", "email", "feed", "mode", "filter", "status")
    table.columns[1].overflow = "fold"  # an address is folded, never cut
    table.columns[2].overflow = "fold"  # an address is folded, never cut
    table.columns[3].overflow = "fold"  # a mode's time zone too
    table.columns[4].overflow = "fold"  # and a filter: which items a reader gets
    # A status is one word, never cut ('unsubscrib…' at 80 columns): the others give way.
    table.columns[5].no_wrap = True
    table.columns[5].min_width = max((len(r["status"]) for r in rows), default=0)
    for r in rows:
        flt = "; ".join(
            label + ",".join(r[key])
            for label, key in (("only ", "only"), ("all but ", "except"))
            if r[key]
        )
        mode = r["mode"] if r["mode"] == "realtime" else f"{r['mode']} {r['hour']:02d}h {r['tz']}"
        if r["mode"] == "weekly":  # the day too: a Monday and a Tuesday digest are not the same
            mode = f"weekly {WEEKDAYS[r['weekday']]} {r['hour']:02d}h {r['tz']}"
        table.add_row(str(r["id"]), plain(r["email"]), plain(r["feed_url"]), plain(mode),
                      plain(flt or "-"), r["status"])
    console.print(table)


@notify_app.command("unsubscribe")
def unsubscribe(
    ctx: typer.Context,
    email: Annotated[str, typer.Argument(help="The reader's email address")],
    feed_url: Annotated[str, typer.Argument(help="The feed (URL, or id in the directory)")],
) -> None:
    """End a reader's subscription to a feed (pending mails for it are cancelled, not sent)."""
    from fairfetch.cli._feeds import get_feed
    from fairfetch.notify.subscriptions import unsubscribe_email

    store = store_of(ctx)
    try:
        n = unsubscribe_email(store, email, get_feed(store, feed_url).url, now=_now())
    finally:
        store.close()
    console.print(f"{n} subscription(s) ended" if n else "no active subscription matched")


#: Reasons ``send-due`` prints one by one; past it, how many more there are.
SHOWN_ERRORS = 20


@notify_app.command("send-due")
def send_due(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
) -> None:
    """Deliver every notification and digest due now, then exit 0 (a throttling or unreachable
    mail server leaves them pending, retried later with backoff)."""
    from fairfetch.notify.options import NotifyOptions
    from fairfetch.notify.service import send_due as _send_due
    from fairfetch.store import notify_repo as repo

    settings = settings_of(ctx)
    store = store_of(ctx)
    report = asyncio.run(
        _send_due(store, settings, options=NotifyOptions.from_settings(settings))
    )
    if as_json:
        print_json(report.as_dict())
        return
    # What is left is said: "sent 0, retry later 0" read as "nothing to send" while a mail
    # waited for its retry after the server was away, or a digest for its hour.
    left = repo.count_pending(store).get("pending", 0)
    console.print(
        f"sent {report.sent}, retry later {report.retried}, failed {report.failed}, "
        f"cancelled {report.cancelled}" + (" (server deferred us)" if report.deferred else "")
        + (f"; {left} still pending (notify outbox says when each is due)" if left else ""),
        highlight=False,
    )
    for err in report.errors[:SHOWN_ERRORS]:
        console.print(f"  {err}", highlight=False, markup=False)
    if len(report.errors) > SHOWN_ERRORS:
        # Every failure counted is findable: the rest are said, not dropped.
        console.print(
            f"  … and {len(report.errors) - SHOWN_ERRORS} more (every reason: notify outbox, or "
            "send-due --json)",
            highlight=False,
            markup=False,
        )


@notify_app.command("outbox")
def outbox(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    # A count the store can be asked for: a negative LIMIT is an error on PostgreSQL (all rows
    # on SQLite), 0 shows an empty outbox, past 64 bits the driver cannot bind it.
    limit: Annotated[
        int, typer.Option(min=1, max=2**31 - 1, help="Newest N rows (1 to 2147483647)")
    ] = 200,
) -> None:
    """The outbox: every notification with its status (pending, sent, failed, cancelled)."""
    from fairfetch.store import notify_repo as repo

    rows = repo.list_outbox(store_of(ctx), limit=limit)
    if as_json:
        print_json(rows)
        return
    table = Table("id", "kind", "to", "status", "due", "attempts", "subject / error")
    table.columns[2].overflow = "fold"  # an address is folded, never cut
    table.columns[4].overflow = "fold"  # a time too
    table.columns[6].overflow = "fold"  # so is the server's reason for a failure
    for r in rows:
        table.add_row(
            str(r["id"]),
            r["kind"],
            plain(r["email"]),
            r["status"],
            utc_text(r["due_at"], to="minutes"),
            str(r["attempts"]),
            plain(r["subject"] or r["last_error"] or ""),
        )
    console.print(table)


def _check_publisher_name(name: str) -> None:
    """A publisher is found by its exact name and a grant creates the one it does not find, so
    a name that differs from the intended one only by what nobody sees (a pasted trailing
    space, a control character) or that is blank would open another account: refused."""
    if not name.strip():
        raise InputError(name, "a publisher needs a name")
    if name != name.strip():
        raise InputError(
            name,
            f"publisher name with leading or trailing spaces (another account than "
            f"{name.strip()!r}); give the name without them",
        )
    if any(unicodedata.category(c) == "Cc" for c in name):
        raise InputError(name, "publisher name with a control character")


@notify_app.command("grant")
def grant(
    ctx: typer.Context,
    publisher: Annotated[str, typer.Argument(help="Publisher account name")],
    credits: Annotated[
        int,
        typer.Argument(
            help="Credits to add (one credit = one email)",
            # the ledger's amount is an INTEGER: 32 bits on PostgreSQL
            min=0,
            max=2**31 - 1,
        ),
    ],
    feed: Annotated[
        list[str] | None,
        typer.Option("--feed", help="A feed this publisher pays for (repeatable)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Add credits to a publisher and make it pay for its feeds' readers (owner-paid)."""
    from fairfetch.cli._feeds import get_feed
    from fairfetch.store import notify_repo as repo

    _check_publisher_name(publisher)
    store = store_of(ctx)
    ids = [get_feed(store, f).id for f in feed or []]
    result = repo.grant(store, publisher, credits, _now(), feed_ids=ids, note="cli grant")
    if as_json:
        print_json(result)
        return
    console.print(f"{publisher}: balance {result['balance']} credits", highlight=False,
                  markup=False)


@notify_app.command("sink")
def sink(
    ctx: typer.Context,
    port: Annotated[
        int, typer.Option(help="Port on 127.0.0.1 (0: any free port)", min=0, max=65535)
    ] = 8025,
) -> None:
    """A local SMTP sink for development: accepts every mail and shows it on /outbox."""
    from fairfetch.errors import ConfigError
    from fairfetch.notify.sink import MailSink

    store = store_of(ctx)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    s = MailSink(store, port=port)
    try:
        s.start()
    except OSError as exc:  # a port in use (a second sink, say) is the user's input
        store.close()
        raise ConfigError(
            f"mail sink: cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})"
        ) from None
    try:
        console.print(f"mail sink on {s.smtp_url} (Ctrl-C to stop)", highlight=False)
        try:
            done.wait()
        except KeyboardInterrupt:
            pass
    finally:
        s.stop()
