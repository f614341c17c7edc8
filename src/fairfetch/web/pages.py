"""The directory's HTML pages. Thin: parse and check parameters, call the store, render.

Query parameters come from people and from links; a bad one is a 4xx page that says which and
why. HTML forms send empty strings for "any", so the filters here accept "" as "not set".
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from markupsafe import Markup

from fairfetch.store import directory_repo as repo
from fairfetch.web import actions, auth
from fairfetch.web.app import ctx_of
from fairfetch.web.chart import crawl_chart_svg
from fairfetch.web.opml import opml_lines
from fairfetch.web.stats import crawlstats
from fairfetch.web.views import (
    KIND_PAGES,
    KINDS,
    QUERY_MAX,
    STATUSES,
    URL_QUERY_MAX,
    feed_by_url,
    query_too_long,
    websub_of,
)

router = APIRouter()

FeedId = Annotated[int, Path(ge=1, le=2**63 - 1, description="Feed id")]
PAGE_MAX = 100_000
PER_PAGE_MAX = 200
PER_PAGE_DEFAULT = 50

#: Messages a redirect may ask a page to show (by code, so no text travels in a URL).
NOTICES = {
    "added": "Feed added and crawled.",
    "added_failed": "Feed added, but its first crawl failed: see Last error below.",
    "added_pending": "Feed added, not crawled yet: the publisher asked us to wait (or its "
    "politeness key is paused); it is crawled when due.",
    "exists": "That feed was already in the directory.",
    "refreshed": "Feed refreshed.",
    "refresh_throttled": "Not refreshed: the publisher asked us to wait (throttled); "
    "the next crawl is when it asked.",
    "refresh_failed": "The refresh failed: see Last error below.",
    "refresh_not_done": "Not refreshed now: its politeness key is paused or the network is "
    "out; the feed stays due.",
    "deleted": "Feed deleted.",
}


def _choice(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    if value is None or value == "":
        return None
    if value not in allowed:
        raise HTTPException(
            status_code=400, detail=f"{name} must be one of {', '.join(allowed)} (got {value!r})"
        )
    return value


def _now() -> datetime:
    return datetime.now(UTC)


def _is_admin(request: Request) -> bool:
    ctx = ctx_of(request)
    return auth.token_ok(ctx.settings, auth.token_of_cookie(request.cookies.get(auth.COOKIE)))


def _render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    ctx = ctx_of(request)
    base = {
        "now": _now(),
        "is_admin": _is_admin(request),
        "writing_enabled": bool(ctx.settings.admin_token),
        "notice": NOTICES.get(request.query_params.get("notice", "")),
    }
    return ctx.templates.TemplateResponse(request, name, {**base, **context}, status_code=status)


Page = Annotated[int, Query(ge=1, le=PAGE_MAX, description="Page number, from 1")]
PerPage = Annotated[int, Query(ge=1, le=PER_PAGE_MAX, description="Rows per page")]
Text = Annotated[str | None, Query(max_length=200)]
#: Words up to QUERY_MAX characters, or a feed's URL up to URL_QUERY_MAX (checked once the URL
#: lookup has had its say).
SearchText = Annotated[str | None, Query(max_length=URL_QUERY_MAX)]


@router.get("/", response_class=HTMLResponse, summary="Home: search box and directory overview")
def home(request: Request) -> Response:
    ctx = ctx_of(request)
    latest = repo.list_entries(ctx.store, limit=10)
    return _render(
        request,
        "home.html",
        {
            "kinds": repo.kind_counts(ctx.store),
            "statuses": repo.status_counts(ctx.store),
            "latest": latest.rows,
        },
    )


def _listing(
    request: Request,
    *,
    kind: str | None,
    title: str,
    sort: str | None,
    order: str | None,
    status: str | None,
    page: int,
    per_page: int,
) -> Response:
    ctx = ctx_of(request)
    sort_key = _choice("sort", sort, repo.SORT_KEYS) or "title"
    order_v = _choice("order", order, ("asc", "desc"))
    status_v = _choice("status", status, STATUSES)
    descending = None if order_v is None else order_v == "desc"
    result = repo.list_feeds(
        ctx.store,
        kind=kind,
        status=status_v,
        sort=sort_key,
        descending=descending,
        limit=per_page,
        offset=(page - 1) * per_page,
    )
    params = {"sort": sort, "order": order, "status": status_v, "per_page": per_page}
    return _render(
        request,
        "list.html",
        {
            "title": title,
            "kind": kind,
            "rows": result.rows,
            "total": result.total,
            "page": page,
            "per_page": per_page,
            "per_page_default": PER_PAGE_DEFAULT,
            "pages": max(1, -(-result.total // per_page)),
            "sort": sort_key,
            "descending": repo.DEFAULT_DESCENDING[sort_key] if descending is None else descending,
            "status": status_v,
            "params": params,
            "statuses": STATUSES,
            "sorts": repo.SORT_KEYS,
        },
    )


@router.get("/feeds", response_class=HTMLResponse, summary="All feeds, paginated and sortable")
def all_feeds(
    request: Request,
    sort: Text = None,
    order: Text = None,
    status: Text = None,
    page: Page = 1,
    per_page: PerPage = PER_PAGE_DEFAULT,
) -> Response:
    return _listing(
        request,
        kind=None,
        title="All feeds",
        sort=sort,
        order=order,
        status=status,
        page=page,
        per_page=per_page,
    )


def _kind_route(path: str, kind: str) -> None:
    def listing(
        request: Request,
        sort: Text = None,
        order: Text = None,
        status: Text = None,
        page: Page = 1,
        per_page: PerPage = PER_PAGE_DEFAULT,
    ) -> Response:
        return _listing(
            request,
            kind=kind,
            title=path.capitalize(),
            sort=sort,
            order=order,
            status=status,
            page=page,
            per_page=per_page,
        )

    router.add_api_route(
        f"/{path}",
        listing,
        methods=["GET"],
        response_class=HTMLResponse,
        summary=f"{path.capitalize()}, paginated and sortable",
        name=f"list_{path}",
    )


for _path, _kind in KIND_PAGES.items():
    _kind_route(_path, _kind)


@router.get("/search", response_class=HTMLResponse, summary="Search titles, URLs and authors")
def search(
    request: Request,
    q: SearchText = None,
    kind: Text = None,
    status: Text = None,
    page: Page = 1,
    per_page: PerPage = PER_PAGE_DEFAULT,
) -> Response:
    ctx = ctx_of(request)
    kind_v = _choice("kind", kind, KINDS)
    status_v = _choice("status", status, STATUSES)
    words = repo.query_words(q or "")
    offset = (page - 1) * per_page
    by_url = feed_by_url(ctx.store, q, kind=kind_v, status=status_v, offset=offset) if q else None
    if q and by_url is None and len(q) > QUERY_MAX:
        raise RequestValidationError([query_too_long(q)])
    # Too many words: the search page again, with the query to shorten, not an error page.
    problem = repo.query_problem(q) if q and words and by_url is None else None
    result = (
        by_url
        if by_url is not None
        else repo.Page([], 0)
        if problem
        else repo.search_feeds(
            ctx.store,
            q or "",
            kind=kind_v,
            status=status_v,
            limit=per_page,
            offset=offset,
        )
    )
    return _render(
        request,
        "search.html",
        {
            "q": q or "",
            "words": words,
            "problem": problem,
            "rows": result.rows,
            "total": result.total,
            "ranked": result.ranked,
            "page": page,
            "per_page": per_page,
            "per_page_default": PER_PAGE_DEFAULT,
            "pages": max(1, -(-result.total // per_page)),
            "params": {"q": q, "kind": kind_v, "status": status_v, "per_page": per_page},
        },
        status=422 if problem else 200,
    )


@router.get("/feeds.opml", summary="OPML export of the directory")
def export_opml(request: Request, kind: Text = None) -> Response:
    ctx = ctx_of(request)
    kind_v = _choice("kind", kind, KINDS)
    feeds = (f for f in ctx.store.iter_feeds() if kind_v is None or f.kind == kind_v)
    return StreamingResponse(
        opml_lines(feeds, now=_now()),
        media_type="text/x-opml; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="fairfetch.opml"'},
    )


@router.get("/feeds/{feed_id}", response_class=HTMLResponse, summary="One feed: health, history")
def feed_page(request: Request, feed_id: FeedId) -> Response:
    ctx = ctx_of(request)
    feed = ctx.store.get_feed(feed_id)
    details = ctx.store.feed_details(feed.id, crawl_limit=20)
    latest = repo.list_entries(ctx.store, feed_id=feed.id, limit=20)
    return _render(
        request,
        "feed.html",
        {
            "feed": feed,
            "details": details,
            "entries": latest.rows,
            "entry_total": latest.total,
            "websub": websub_of(ctx.store, feed.id),
        },
    )


#: Sec-Fetch-Site values of a post made by the directory's own pages (``none``: the person
#: typed or bookmarked it).
_OWN_FETCH_SITES = ("same-origin", "none")


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _require_own_page(request: Request) -> None:
    """Writing forms are taken from the directory's own pages only.

    The admin cookie is SameSite=Strict, yet a browser sends it with a form that another page
    of the same *site* posts, and a site ignores the port and the sibling hosts of one
    registrable domain: any page served on another port of the directory's host could delete
    feeds with the admin's cookie. Browsers say where a post comes from (Sec-Fetch-Site; Origin
    in older ones). A post that says neither is no browser carrying someone's cookie unawares
    (curl, a script), and the token rules alone stand for it.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        if site.strip().lower() in _OWN_FETCH_SITES:
            return
        came_from = f"Sec-Fetch-Site: {site}"
    else:
        origin = request.headers.get("origin")
        if origin is None:
            return
        own = {_origin_of(f"{request.url.scheme}://{request.headers.get('host', '')}")}
        public = ctx_of(request).settings.public_url
        if public:
            own.add(_origin_of(public))
        if origin.strip().lower() in own:
            return
        came_from = f"Origin: {origin}"
    raise HTTPException(
        status_code=403,
        detail=f"this form was posted from another site's page ({came_from}): writing actions "
        "are taken only from the directory's own pages",
    )


def _admin_from_form(request: Request, token: str | None) -> str | None:
    """The token to check: the form's field, else the cookie a previous form set."""
    ctx = ctx_of(request)
    _require_own_page(request)
    presented = token or auth.token_of_cookie(request.cookies.get(auth.COOKIE))
    auth.require_admin(ctx.settings, presented)
    return token if token else None


def _over_https(request: Request) -> bool:
    """Whether people reach the directory over HTTPS: this request came so, or public_url (the
    address behind a TLS-terminating proxy, where the app itself sees plain HTTP) says so."""
    public = ctx_of(request).settings.public_url or ""
    return request.url.scheme == "https" or public.strip().lower().startswith("https:")


def _with_cookie(request: Request, response: Response, token: str | None) -> Response:
    """The admin cookie carries the token itself: over HTTPS it is Secure, never sent in
    clear text by a plain-HTTP request to the same host."""
    if token:
        response.set_cookie(
            auth.COOKIE,
            auth.cookie_value(token),
            httponly=True,
            samesite="strict",
            secure=_over_https(request),
            path="/",
            max_age=30 * 86400,
        )
    return response


@router.get("/add", response_class=HTMLResponse, summary="Form to add a feed or a site")
def add_form(request: Request) -> Response:
    return _render(request, "add.html", {"url": "", "problem": None, "discovered": []})


@router.post("/add", response_class=HTMLResponse, summary="Add a feed (admin token)")
async def add_submit(
    request: Request,
    url: Annotated[str, Form(max_length=2048)],
    token: Annotated[str | None, Form(max_length=512)] = None,
) -> Response:
    ctx = ctx_of(request)
    fresh_token = _admin_from_form(request, token)
    outcome = await actions.add_feed(
        ctx.store, ctx.settings, ctx.crawler, url, turns=ctx.crawl_turns
    )
    if outcome.feed is None:
        response = _render(
            request,
            "add.html",
            {"url": url, "problem": outcome.problem, "discovered": outcome.discovered},
            status=422,
        )
        return _with_cookie(request, response, fresh_token)
    if not outcome.created:
        notice = "exists"
    elif outcome.feed.status in ("error", "dead"):
        notice = "added_failed"  # never "crawled" over a failure; the page shows why
    elif outcome.feed.status == "new":
        notice = "added_pending"  # throttled or deferred: nothing was fetched
    else:
        notice = "added"
    redirect = RedirectResponse(f"/feeds/{outcome.feed.id}?notice={notice}", status_code=303)
    return _with_cookie(request, redirect, fresh_token)


def _refresh_notice(summary: Any) -> str:
    """What the refresh did, for the page it lands on: a throttle, a failure or a refresh
    deferred (a paused key, an outage) fetched nothing new, and must not read as done."""
    results = getattr(summary, "results", None) or []
    outcome = results[0].outcome if results else None
    if outcome in ("ok", "not_modified"):
        return "refreshed"
    if outcome == "throttled":
        return "refresh_throttled"
    if outcome == "error":
        return "refresh_failed"
    return "refresh_not_done"


@router.post(
    "/feeds/{feed_id}/refresh", response_class=HTMLResponse, summary="Crawl now (admin token)"
)
async def refresh_submit(
    request: Request,
    feed_id: FeedId,
    token: Annotated[str | None, Form(max_length=512)] = None,
) -> Response:
    ctx = ctx_of(request)
    fresh_token = _admin_from_form(request, token)
    feed = await asyncio.to_thread(ctx.store.get_feed, feed_id)
    summary = await actions.refresh_feed(
        ctx.store, ctx.settings, ctx.crawler, feed.id, turns=ctx.crawl_turns
    )
    notice = _refresh_notice(summary)
    redirect = RedirectResponse(f"/feeds/{feed.id}?notice={notice}", status_code=303)
    return _with_cookie(request, redirect, fresh_token)


@router.post(
    "/feeds/{feed_id}/delete", response_class=HTMLResponse, summary="Delete a feed (admin token)"
)
async def delete_submit(
    request: Request,
    feed_id: FeedId,
    token: Annotated[str | None, Form(max_length=512)] = None,
) -> Response:
    ctx = ctx_of(request)
    fresh_token = _admin_from_form(request, token)
    await asyncio.to_thread(ctx.store.delete_feed, feed_id)
    return _with_cookie(
        request, RedirectResponse("/feeds?notice=deleted", status_code=303), fresh_token
    )


@router.get("/crawlstats", response_class=HTMLResponse, summary="Crawl statistics and chart")
def crawlstats_page(request: Request) -> Response:
    ctx = ctx_of(request)
    now = _now()
    stats = crawlstats(ctx.store, ctx.settings, ctx.minutes, now)
    chart = [(m["minute"], m["counts"]) for m in stats["per_minute"]]
    svg = Markup(crawl_chart_svg(chart))  # noqa: S704 - built by our code, every text escaped
    return _render(request, "crawlstats.html", {"stats": stats, "chart": svg})


@router.get("/metrics", summary="Prometheus metrics")
def metrics(request: Request) -> Response:
    ctx = ctx_of(request)
    body = ctx.metrics.collect(_now(), ctx.crawler)
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")


__all__ = ["router"]
