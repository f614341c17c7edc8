"""The JSON API under /api/v1 (OpenAPI document at /api/v1/openapi.json).

Reads are public; add, refresh and delete need ``Authorization: Bearer <admin token>``. Every
parameter is typed and bounded here, so a bad one is a 422 that names it, never a 500.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from fairfetch.store import directory_repo as repo
from fairfetch.store.notify_subscriptions import feed_duplicate_of
from fairfetch.views import websub as shared_websub
from fairfetch.web import actions, auth
from fairfetch.web.app import ctx_of
from fairfetch.web.stats import crawlstats
from fairfetch.web.views import (
    QUERY_MAX,
    URL_QUERY_MAX,
    entry_document,
    feed_by_url,
    feed_document,
    feed_summary,
    jsonable,
    query_too_long,
)

router = APIRouter(tags=["directory"])

_bearer = HTTPBearer(auto_error=False, description="The admin token (FAIRFETCH_ADMIN_TOKEN)")

FeedId = Annotated[int, Path(ge=1, le=2**63 - 1, description="Feed id")]
Page = Annotated[int, Query(ge=1, le=100_000, description="Page number, from 1")]
PerPage = Annotated[int, Query(ge=1, le=200, description="Rows per page")]
Kind = Literal["podcast", "newsletter", "video", "blog"]
Status = Literal["new", "ok", "error", "dead"]
Sort = Literal["title", "newest", "added", "entries", "errors"]


class Problem(BaseModel):
    detail: str


class FeedList(BaseModel):
    items: list[dict[str, Any]]
    total: int
    page: int
    per_page: int
    ranked: bool | None = Field(
        None,
        description="A search: true when best match first, false when it matched too many "
        "to rank and lists newest first (as the search page says). Null for a listing.",
    )


class EntryList(BaseModel):
    items: list[dict[str, Any]]
    total: int
    page: int
    per_page: int


class AddFeed(BaseModel):
    url: str = Field(min_length=1, max_length=2048, description="A feed URL or a site URL")


class AddResult(BaseModel):
    created: bool
    feed: dict[str, Any]
    discovered: list[str] = []
    problem: str | None = None


class RefreshResult(BaseModel):
    feed: dict[str, Any]
    summary: dict[str, Any]


class Deleted(BaseModel):
    deleted: int
    url: str


_READ_ERRORS: dict[int | str, dict[str, Any]] = {422: {"model": Problem}}
_FEED_ERRORS: dict[int | str, dict[str, Any]] = {404: {"model": Problem}, 422: {"model": Problem}}
_WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": Problem, "description": "No admin token given"},
    403: {"model": Problem, "description": "Wrong token, or writing disabled"},
    404: {"model": Problem},
    422: {"model": Problem},
}


def _admin(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    ctx = ctx_of(request)
    presented = auth.header_text(credentials.credentials) if credentials else None
    auth.require_admin(ctx.settings, presented)


def _bad_parameter(name: str, message: str, value: Any) -> dict[str, Any]:
    """One problem shaped as FastAPI's own, for a parameter its type could not check."""
    return {"type": "value_error", "loc": ("query", name), "msg": message, "input": value}


_RELEVANCE = "not with q: search results are ordered by relevance (list without q to sort)"


@router.get("/feeds", response_model=FeedList, responses=_READ_ERRORS, summary="List or search")
def list_feeds(
    request: Request,
    q: Annotated[
        str | None,
        Query(
            max_length=URL_QUERY_MAX,
            description=f"Search words, at most {repo.MAX_QUERY_WORDS} distinct ones in "
            f"{QUERY_MAX} characters (more is a 422, never a search of the first few); or a "
            "feed's URL, now or as it was added, which finds that feed",
        ),
    ] = None,
    kind: Kind | None = None,
    status: Status | None = None,
    sort: Annotated[
        Sort | None, Query(description="Listing order (default title); not with q")
    ] = None,
    order: Annotated[
        Literal["asc", "desc"] | None,
        Query(description="Listing direction (default: the sort's natural one); not with q"),
    ] = None,
    page: Page = 1,
    per_page: PerPage = 50,
) -> Any:
    ctx = ctx_of(request)
    offset = (page - 1) * per_page
    if q:
        problems = [
            _bad_parameter(name, _RELEVANCE, value)
            for name, value in (("sort", sort), ("order", order))
            if value is not None
        ]
        by_url = feed_by_url(ctx.store, q, kind=kind, status=status, offset=offset)
        if by_url is None and len(q) > QUERY_MAX:
            problems.insert(0, query_too_long(q))
        elif by_url is None and (problem := repo.query_problem(q)):
            problems.insert(0, _bad_parameter("q", problem, q))
        if problems:
            raise RequestValidationError(problems)
        result = (
            by_url
            if by_url is not None
            else repo.search_feeds(
                ctx.store, q, kind=kind, status=status, limit=per_page, offset=offset
            )
        )
    else:
        result = repo.list_feeds(
            ctx.store,
            kind=kind,
            status=status,
            sort=sort or "title",
            descending=None if order is None else order == "desc",
            limit=per_page,
            offset=offset,
        )
    return {
        "items": [feed_summary(r) for r in result.rows],
        "total": result.total,
        "page": page,
        "per_page": per_page,
        "ranked": result.ranked if q else None,
    }


@router.get("/feeds/{feed_id}", responses=_FEED_ERRORS, summary="One feed, with its health")
def show_feed(request: Request, feed_id: FeedId) -> dict[str, Any]:
    ctx = ctx_of(request)
    feed = ctx.store.get_feed(feed_id)
    details = ctx.store.feed_details(feed.id, crawl_limit=20)
    duplicate_of = feed_duplicate_of(ctx.store, feed.id)
    return feed_document(feed, details, shared_websub(ctx.store, feed), duplicate_of)


@router.get(
    "/feeds/{feed_id}/entries",
    response_model=EntryList,
    responses=_FEED_ERRORS,
    summary="A feed's entries, newest first",
)
def feed_entries(request: Request, feed_id: FeedId, page: Page = 1, per_page: PerPage = 50) -> Any:
    ctx = ctx_of(request)
    feed = ctx.store.get_feed(feed_id)
    result = repo.list_entries(
        ctx.store, feed_id=feed.id, limit=per_page, offset=(page - 1) * per_page
    )
    return {
        "items": [entry_document(r) for r in result.rows],
        "total": result.total,
        "page": page,
        "per_page": per_page,
    }


@router.get("/entries", response_model=EntryList, responses=_FEED_ERRORS, summary="Entries")
def entries(
    request: Request,
    feed_id: Annotated[int | None, Query(ge=1, le=2**63 - 1)] = None,
    page: Page = 1,
    per_page: PerPage = 50,
) -> Any:
    ctx = ctx_of(request)
    if feed_id is not None:
        ctx.store.get_feed(feed_id)  # an unknown feed is a 404, not "no entries"
    result = repo.list_entries(
        ctx.store, feed_id=feed_id, limit=per_page, offset=(page - 1) * per_page
    )
    return {
        "items": [entry_document(r) for r in result.rows],
        "total": result.total,
        "page": page,
        "per_page": per_page,
    }


@router.get("/stats", summary="The crawlstats (last hour and day, queue, troubled feeds)")
def stats(request: Request) -> dict[str, Any]:
    ctx = ctx_of(request)
    data = crawlstats(ctx.store, ctx.settings, ctx.minutes, datetime.now(UTC))
    return jsonable(data)


@router.post(
    "/feeds",
    response_model=AddResult,
    status_code=201,
    responses={**_WRITE_ERRORS, 200: {"model": AddResult, "description": "Already there"}},
    dependencies=[Depends(_admin)],
    summary="Add a feed (discovery from a site URL, then the first crawl)",
)
async def add(request: Request, body: AddFeed) -> Any:
    ctx = ctx_of(request)
    outcome = await actions.add_feed(
        ctx.store, ctx.settings, ctx.crawler, body.url, turns=ctx.crawl_turns
    )
    if outcome.feed is None:
        return JSONResponse(
            {"detail": f"{body.url!r}: {outcome.problem}", "discovered": outcome.discovered},
            status_code=422,
        )
    feed = outcome.feed
    details = await asyncio.to_thread(ctx.store.feed_details, feed.id)
    state = await asyncio.to_thread(shared_websub, ctx.store, feed)
    duplicate_of = await asyncio.to_thread(feed_duplicate_of, ctx.store, feed.id)
    content = {
        "created": outcome.created,
        "feed": feed_document(feed, details, state, duplicate_of),
        "discovered": outcome.discovered,
        "problem": outcome.problem,
    }
    return JSONResponse(content, status_code=201 if outcome.created else 200)


@router.post(
    "/feeds/{feed_id}/refresh",
    response_model=RefreshResult,
    responses=_WRITE_ERRORS,
    dependencies=[Depends(_admin)],
    summary="Crawl a feed now",
)
async def refresh(request: Request, feed_id: FeedId) -> Any:
    ctx = ctx_of(request)
    feed = await asyncio.to_thread(ctx.store.get_feed, feed_id)
    summary = await actions.refresh_feed(
        ctx.store, ctx.settings, ctx.crawler, feed.id, turns=ctx.crawl_turns
    )
    feed = await asyncio.to_thread(ctx.store.get_feed, feed.id)
    details = await asyncio.to_thread(ctx.store.feed_details, feed.id)
    state = await asyncio.to_thread(shared_websub, ctx.store, feed)
    duplicate_of = await asyncio.to_thread(feed_duplicate_of, ctx.store, feed.id)
    as_dict = summary.as_dict() if hasattr(summary, "as_dict") else {}
    return {
        "feed": feed_document(feed, details, state, duplicate_of),
        "summary": jsonable(as_dict),
    }


@router.delete(
    "/feeds/{feed_id}",
    response_model=Deleted,
    responses=_WRITE_ERRORS,
    dependencies=[Depends(_admin)],
    summary="Delete a feed and its entries",
)
def delete(request: Request, feed_id: FeedId) -> Any:
    ctx = ctx_of(request)
    feed = ctx.store.delete_feed(feed_id)
    return {"deleted": feed.id, "url": feed.url}
