"""Notification pages: subscribe (``/subscribe?feed=<id>``), confirm, manage, unsubscribe (RFC 8058
one-click POST, no login: the token in the URL is the authority) and ``/outbox``.

The web app puts its settings and store on ``request.app.state.fairfetch`` (``.settings``,
``.store``). Endpoints are plain ``def``: FastAPI runs them in its thread pool, so the event loop
never waits on a query. The confirmation mail is sent after the response, in the background; if
the mail server is away it stays in the outbox for the notifier.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from fairfetch.config import Settings
from fairfetch.errors import InputError, NotFoundError
from fairfetch.notify.schedule import WEEKDAYS, describe
from fairfetch.store import feed_key
from fairfetch.store import notify_repo as repo
from fairfetch.store.sql import SqlStore
from fairfetch.web.auth import request_is_admin

router = APIRouter()


@lru_cache(maxsize=1)
def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("fairfetch.notify", "templates/web"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = lambda d: d.strftime("%Y-%m-%d %H:%M UTC") if d else "—"
    env.globals["weekdays"] = WEEKDAYS
    env.globals["describe"] = describe
    return env


def _page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    return HTMLResponse(_env().get_template(name).render(**ctx), status_code=status)


def _ctx(request: Request) -> tuple[Settings, SqlStore]:
    ctx = request.app.state.fairfetch
    return ctx.settings, ctx.store


def _now() -> datetime:
    return datetime.now(UTC)


#: What a link token can be (``secrets.token_urlsafe``): anything else is no link of ours.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,200}")


def _token(token: str) -> str:
    """A token no link can hold (a NUL: PostgreSQL cannot even compare it, and the page answered
    500) is not found, like any unknown token."""
    if _TOKEN.fullmatch(token) is None:
        raise HTTPException(status_code=404, detail="not found: link token")
    return token


def _send_confirmation(store: SqlStore, settings: Settings, outbox_id: int) -> None:
    """Runs after the response, in the thread pool (its own event loop)."""
    from fairfetch.notify.service import send_one

    asyncio.run(send_one(store, settings, outbox_id))


@router.get("/subscribe", response_class=HTMLResponse)
def subscribe_form(request: Request, feed: Annotated[str, Query()]) -> HTMLResponse:
    _settings, store = _ctx(request)
    record = _feed(store, feed)
    return _page("subscribe.html", feed=record, error=None, values={})


@router.post("/subscribe", response_class=HTMLResponse)
def subscribe_post(
    request: Request,
    background: BackgroundTasks,
    feed: Annotated[str, Form()],
    email: Annotated[str, Form()],
    mode: Annotated[str, Form()] = "realtime",
    hour: Annotated[int, Form()] = 8,
    weekday: Annotated[str, Form()] = "mon",
    tz: Annotated[str, Form()] = "UTC",
    only: Annotated[str, Form()] = "",
    exclude: Annotated[str, Form()] = "",
) -> HTMLResponse:
    from fairfetch.notify.subscriptions import SubscriptionRequest, request_subscription

    settings, store = _ctx(request)
    record = _feed(store, feed)
    values = {"email": email, "mode": mode, "hour": hour, "weekday": weekday, "tz": tz,
              "only": only, "exclude": exclude}
    try:
        req = SubscriptionRequest.build(
            email, mode=mode, hour=hour, weekday=weekday, tz=tz or None, only=only,
            exclude=exclude,
        )
    except InputError as exc:
        return _page("subscribe.html", 422, feed=record, error=str(exc), values=values)
    # the public form never changes an active subscription (that needs the manage link)
    result = request_subscription(store, req, record.id, update_active=False,
                                  confirms_per_day=repo.CONFIRMS_PER_ADDRESS_PER_DAY)
    if result.confirm_outbox_id is not None:
        background.add_task(_send_confirmation, store, settings, result.confirm_outbox_id)
    state = "sent" if result.confirm_outbox_id is not None else (
        "recent" if result.throttled else "daily" if result.address_throttled else "active")
    return _page("subscribed.html", feed=record, email=req.email, state=state)


@router.get("/confirm/{token}", response_class=HTMLResponse)
def confirm_page(request: Request, token: str) -> HTMLResponse:
    """A button, not an action: link scanners in mailboxes follow GETs."""
    _settings, store = _ctx(request)
    try:
        status = repo.confirmation_status(store, _token(token))
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return _page("confirm.html", token=token, done=status == "active")


@router.post("/confirm/{token}", response_class=HTMLResponse)
def confirm_post(request: Request, token: str) -> HTMLResponse:
    _settings, store = _ctx(request)
    try:
        sub = repo.confirm(store, _token(token), _now())
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    full = repo.subscription_by_token(store, sub["manage_token"])
    return _page("confirmed.html", sub=full)


def _manage(store: SqlStore, token: str) -> dict[str, Any]:
    try:
        return repo.subscription_by_token(store, _token(token))
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


def _feed(store: SqlStore, key: str) -> Any:
    try:
        return store.get_feed(feed_key(key))
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


@router.get("/manage/{token}", response_class=HTMLResponse)
def manage_page(request: Request, token: str) -> HTMLResponse:
    _settings, store = _ctx(request)
    return _page("manage.html", sub=_manage(store, token), saved=False, error=None)


@router.post("/manage/{token}", response_class=HTMLResponse)
def manage_post(
    request: Request,
    token: str,
    mode: Annotated[str, Form()] = "realtime",
    hour: Annotated[int, Form()] = 8,
    weekday: Annotated[str, Form()] = "mon",
    tz: Annotated[str, Form()] = "UTC",
    only: Annotated[str, Form()] = "",
    exclude: Annotated[str, Form()] = "",
) -> HTMLResponse:
    from fairfetch.notify.subscriptions import SubscriptionRequest

    _settings, store = _ctx(request)
    sub = _manage(store, token)
    try:
        req = SubscriptionRequest.build(
            sub["email"], mode=mode, hour=hour, weekday=weekday, tz=tz or None, only=only,
            exclude=exclude,
        )
    except InputError as exc:
        return _page("manage.html", 422, sub=sub, saved=False, error=str(exc))
    repo.update_subscription(
        store, token, mode=req.mode, hour=req.hour, weekday=req.weekday, tz=req.tz,
        only=req.only, exclude=req.exclude,
    )
    return _page("manage.html", sub=_manage(store, token), saved=True, error=None)


@router.get("/unsubscribe/{token}", response_class=HTMLResponse)
def unsubscribe_page(request: Request, token: str) -> HTMLResponse:
    _settings, store = _ctx(request)
    sub = _manage(store, token)
    return _page("unsubscribe.html", what=sub["feed_title"] or sub["feed_url"],
                 done=sub["status"] == "unsubscribed", action=f"/unsubscribe/{token}")


@router.post("/unsubscribe/{token}")
def unsubscribe_post(request: Request, token: str) -> Response:
    """RFC 8058 one-click: a POST with ``List-Unsubscribe=One-Click`` (or the page's button)
    ends the subscription, no login needed. Idempotent."""
    _settings, store = _ctx(request)
    sub = _manage(store, token)
    repo.unsubscribe(store, _now(), manage_token=token)
    return _page("unsubscribe.html", what=sub["feed_title"] or sub["feed_url"], done=True,
                 action=f"/unsubscribe/{token}")


@router.get("/unsubscribe/digest/{reader_token}/{schedule}", response_class=HTMLResponse)
def unsubscribe_digest_page(request: Request, reader_token: str, schedule: str) -> HTMLResponse:
    return _page("unsubscribe.html", what=f"your {schedule.split('@')[0]} digest", done=False,
                 action=f"/unsubscribe/digest/{reader_token}/{schedule}")


@router.post("/unsubscribe/digest/{reader_token}/{schedule}")
def unsubscribe_digest_post(request: Request, reader_token: str, schedule: str) -> Response:
    _settings, store = _ctx(request)
    n = repo.unsubscribe(store, _now(), reader_token=_token(reader_token), schedule=schedule)
    if n == 0 and not repo.reader_exists(store, reader_token):
        raise HTTPException(status_code=404, detail="not found: subscription")
    return _page("unsubscribe.html", what=f"your {schedule.split('@')[0]} digest", done=True,
                 action=f"/unsubscribe/digest/{reader_token}/{schedule}")


@router.get("/outbox", response_class=HTMLResponse)
def outbox_page(request: Request, mail: Annotated[int | None, Query()] = None) -> HTMLResponse:
    """Like a development mail catcher: the outbox rows and the mails the local sink captured.

    Only on a server whose mail goes to loopback, and only while that is a development sink
    running in this process (the demo's), once a sink (``fairfetch notify sink``) has captured
    mail into this store, or to the admin: loopback alone also means a production server
    relaying through a local MTA (Postfix on 127.0.0.1:25), where the page listed every
    reader's address to anyone.
    """
    settings, store = _ctx(request)
    if not _local_mail(settings):
        raise HTTPException(status_code=404, detail="the outbox page is for local mail sinks only")
    mails = repo.list_sink(store)
    if not (mails or _our_sink(settings) or request_is_admin(settings, request)):
        raise HTTPException(
            status_code=404,
            detail="the outbox page shows once the development mail sink has captured mail "
            "(or with the admin token)",
        )
    shown = None
    if mail is not None:
        shown = next((m for m in mails if m["id"] == mail), None)
    return _page("outbox.html", rows=repo.list_outbox(store), mails=mails, shown=shown,
                 counts=repo.count_pending(store))


def _our_sink(settings: Settings) -> bool:
    """Mail goes to a development sink running in this process (the demo's)."""
    from urllib.parse import urlsplit

    from fairfetch.notify.sink import RUNNING

    wanted = urlsplit(settings.smtp_url)
    return any(
        (u.hostname, u.port) == (wanted.hostname, wanted.port)
        for u in map(urlsplit, RUNNING)
    )


def _local_mail(settings: Settings) -> bool:
    from urllib.parse import urlsplit

    host = urlsplit(settings.smtp_url).hostname or ""
    return host == "localhost" or host.startswith("127.")
