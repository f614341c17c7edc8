"""One fetched page → the rows it adds to the crawl file and the URLs it asks to status-check.

Pure except for the asset id maps it owns (URL → id, assigned at first sight): the in-memory
map that saves a lookup per row. It runs in the crawl process, or in the writer process when
parsing moves there (``CrawlOptions.parse_process``); either way one builder owns the maps.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from json.encoder import encode_basestring_ascii
from typing import Any, NamedTuple

from fairfetch.audit.indexability import indexability, is_html
from fairfetch.audit.urls import Scope, resolve_link
from fairfetch.net.link_header import parse_link_header

__all__ = ["THROTTLED", "Built", "Fetched", "PageRowBuilder"]

#: How the error of a page still throttled after the crawl's retries begins.
THROTTLED = "throttled:"


class Fetched(NamedTuple):
    """The part of a FetchResult the rows need (plain, picklable).

    A named tuple, not a frozen dataclass: it crosses the pipe to the writer process once per
    page, and a slotted dataclass pickles through a Python-level __getstate__ (fields() per
    page on both sides)."""

    url: str
    status: int | None
    error_kind: str | None
    error_detail: str
    headers: dict[str, str]
    body: bytes
    bytes_read: int
    duration: float


@dataclass(slots=True)
class Built:
    ops: list[tuple[str, Any]] = field(default_factory=list)
    probes: list[tuple[str, str]] = field(default_factory=list)  # (url, link|image|resource|…)
    rows: int = 0  # pages + links + page_images + page_resources
    skipped: dict[str, int] = field(default_factory=dict)
    #: (url, source) of the page's internal targets that are not queued pages (yet): its share
    #: of the next level, in the order of CrawlFile.next_level_candidates (its redirect, then
    #: its links by position), each once.
    found: list[tuple[str, str]] = field(default_factory=list)
    page_id: int = 0


_clock: list[Any] = [None, ""]


def _now() -> str:
    """The time a page is written, to the second: formatted once a second, not once a page
    (2.7 µs a page)."""
    second = int(time.time())
    if second != _clock[0]:
        _clock[0] = second
        _clock[1] = datetime.fromtimestamp(second, UTC).isoformat(timespec="seconds")
    return str(_clock[1])


def _json_strings(values: list[str]) -> str:
    """``json.dumps(values)`` for a list of strings, without the encoder's set-up per call
    (2-4 -> 0.5-0.7 µs: a page's h1s)."""
    return "[" + ", ".join(map(encode_basestring_ascii, values)) + "]"


class PageRowBuilder:
    def __init__(
        self,
        scope: Scope,
        image_ids: dict[str, int],
        resource_ids: dict[str, int],
        queued: set[str] | None = None,
    ) -> None:
        self.scope = scope
        #: URLs of every queued page (the crawl's ``queue_many`` rows pass through the writer):
        #: links to them are no news for the next level, so they never travel back.
        self.queued = queued if queued is not None else set()
        self.image_ids = image_ids
        self.resource_ids = resource_ids
        self.next_image_id = max(image_ids.values(), default=0) + 1
        self.next_resource_id = max(resource_ids.values(), default=0) + 1
        # Imported here, not at module level: with the writer process, the crawl process only
        # needs Fetched and Built, and the HTML parser (lexbor) then loads in the writer alone.
        from fairfetch.audit.extract import extract_page

        self.extract = extract_page

    def note_queued(self, rows: list[tuple[Any, ...]]) -> None:
        """``queue_many`` rows (id, url, ...) the crawl file is about to hold."""
        self.queued.update(row[1] for row in rows)

    def build(self, page_id: int, f: Fetched) -> Built:
        out = Built(page_id=page_id)
        url = f.url
        headers = f.headers
        ctype = headers.get("content-type")
        size_header = headers.get("content-length")
        size: int | None = f.bytes_read or len(f.body) or None
        if size is None and size_header and size_header.isdigit():
            size = int(size_header)
        redirect_to = None
        nowhere = None  # why a 3xx leads nowhere (rule redirect-without-location)
        status = None if f.error_kind == "robots" else f.status
        if status is not None and 300 <= status < 400:
            location = headers.get("location") or ""
            if location.strip():
                redirect_to = resolve_link(url, location)
                if redirect_to is None:
                    nowhere = f"{status} Location {location!r} cannot be followed"
            else:
                nowhere = f"{status} without a Location header"
        facts = None
        if status == 200 and is_html(ctype) and f.body:
            facts = self.extract(f.body, url, ctype)
            link_header = headers.get("link")
            if link_header:
                _add_link_header(facts, url, link_header)
        x_robots = headers.get("x-robots-tag")
        canonical = facts.canonicals[0] if facts and facts.canonicals else None
        ok, why = indexability(
            url=url, status=status, error=f.error_kind, content_type=ctype,
            meta_robots=facts.meta_robots if facts else None, x_robots_tag=x_robots,
            canonical=canonical, error_detail=f.error_detail,
        )  # fmt: skip
        error = f"{f.error_kind}: {f.error_detail}" if f.error_kind else None
        if error is None and nowhere is not None:
            error = f"redirect: {nowhere}"  # the fetch engine's wording when it follows one
        if error is None and (f.status == 429 or (f.status == 503 and "retry-after" in headers)):
            # Still throttled after the crawl's retries: the site said "later", not "broken".
            # The view leaves such pages unjudged (see THROTTLED).
            after = headers.get("retry-after")
            error = f"{THROTTLED} {f.status}" + (f" (Retry-After {after})" if after else "")
        links: list[tuple[Any, ...]] = []
        images: list[tuple[Any, ...]] = []
        page_images: list[tuple[Any, ...]] = []
        resources: list[tuple[Any, ...]] = []
        page_resources: list[tuple[Any, ...]] = []
        probes = out.probes
        mixed = 0
        if facts is not None:
            contains = self.scope.contains
            seen_targets: set[str] = set()
            for seq, link in enumerate(facts.links):
                internal = contains(link.url)
                links.append(
                    (page_id, seq, link.url, link.anchor, link.rel, int(internal), link.where)
                )
                if not internal and link.url not in seen_targets:
                    seen_targets.add(link.url)
                    probes.append((link.url, "link"))
            out.skipped = {f"not http(s): {k}": n for k, n in facts.skipped.items()}
            seq = len(facts.links)
            head_links = [(u, "canonical") for u in facts.canonicals] + [
                (u, f"alternate hreflang={lang}") for lang, u in facts.hreflang
            ]
            for target, rel in head_links:
                internal = contains(target)
                links.append((page_id, seq, target, "", rel, int(internal), "head"))
                seq += 1
                if not internal and target not in seen_targets:
                    # A foreign canonical or alternate is judged by its own rule, which needs
                    # the far end's status: checked like a link, under its own name.
                    seen_targets.add(target)
                    probes.append((target, "canonical" if rel == "canonical" else "hreflang"))
            if facts.refresh is not None:
                # A redirect the browser makes: followed like a link (a page reachable only
                # this way is still found), checked when foreign. No anchor text: the row
                # says when the browser goes.
                target = facts.refresh
                internal = contains(target)
                anchor = f"after {facts.refresh_delay} s"
                links.append((page_id, seq, target, anchor, "refresh", int(internal), "head"))
                if not internal and target not in seen_targets:
                    seen_targets.add(target)
                    probes.append((target, "refresh"))
            https = url.startswith("https:")
            seen_assets: set[str] = set()
            for asset in facts.assets:
                if asset.url in seen_assets:
                    continue
                seen_assets.add(asset.url)
                if https and asset.url.startswith("http:"):
                    mixed += 1
                if asset.kind == "image":
                    image_id = self.image_ids.get(asset.url)
                    if image_id is None:
                        image_id = self.image_ids[asset.url] = self.next_image_id
                        self.next_image_id += 1
                        images.append((image_id, asset.url, int(contains(asset.url))))
                        probes.append((asset.url, "image"))
                    page_images.append((page_id, image_id, asset.alt, asset.width, asset.height))
                else:
                    res_id = self.resource_ids.get(asset.url)
                    if res_id is None:
                        res_id = self.resource_ids[asset.url] = self.next_resource_id
                        self.next_resource_id += 1
                        resources.append(
                            (res_id, asset.url, asset.kind, int(contains(asset.url)))
                        )
                        probes.append((asset.url, "resource"))
                    page_resources.append((page_id, res_id))
        page_row = (
            status, error, ctype, size, round(f.duration * 1000, 1),
            facts.titles[0] if facts and facts.titles else None,
            len(facts.titles) if facts else None,
            int(facts.title_outside_head) if facts else None,
            facts.descriptions[0] if facts and facts.descriptions else None,
            len(facts.descriptions) if facts else None,
            int(facts.description_outside_head) if facts else None,
            _json_strings(facts.h1s) if facts else None,
            len(facts.h1s) if facts else None,
            "".join(map(str, facts.heading_levels)) if facts else None,
            canonical,
            len(facts.canonicals) if facts else None,
            facts.meta_robots if facts else None,
            x_robots,
            json.dumps(facts.hreflang) if facts and facts.hreflang else None,
            facts.lang if facts else None,
            facts.word_count if facts else None,
            int(ok), why, redirect_to,
            facts.content_hash if facts else None,
            facts.sketch if facts else None,
            facts.og_title if facts else None,
            facts.og_image if facts else None,
            facts.jsonld_total if facts else None,
            facts.jsonld_invalid if facts else None,
            int("strict-transport-security" in headers),
            int("content-security-policy" in headers or bool(facts and facts.csp_meta)),
            # The first value counts, as browsers read it ("nosniff, nosniff" sent twice).
            int(headers.get("x-content-type-options", "").split(",")[0].strip().lower()
                == "nosniff"),
            mixed,
            _now(),
            page_id,
        )  # fmt: skip
        out.ops.append(("page", (page_row, links, images, page_images, resources, page_resources)))
        # Read off the rows as written, as the query it stands in for reads them.
        queued = self.queued
        found = out.found
        if redirect_to is not None and redirect_to not in queued:
            found.append((redirect_to, "redirect"))
        if links:
            news = {row[2] for row in links if row[5] and row[2] not in queued}
            if redirect_to is not None:
                news.discard(redirect_to)
            if news:
                for row in links:
                    target = row[2]
                    if target in news:
                        news.discard(target)
                        found.append((target, "link"))
        if redirect_to is not None and status is not None:
            internal = self.scope.contains(redirect_to)
            out.ops.append(("redirect", (url, status, redirect_to, int(internal))))
            if not internal:
                probes.append((redirect_to, "redirect"))
        out.rows = 1 + len(links) + len(page_images) + len(page_resources)
        return out


def _add_link_header(facts: Any, url: str, value: str) -> None:
    """A canonical and hreflang alternates given in the HTTP ``Link`` header are the page's, as
    the same ``<link>`` in its head would be (search engines read both): after the head's own,
    so a page that gives two canonicals is seen to."""
    for link in parse_link_header(value):
        target = resolve_link(url, link.target)
        if target is None:
            continue
        if "canonical" in link.rels:
            facts.canonicals.append(target)
        elif "alternate" in link.rels and link.params.get("hreflang"):
            facts.hreflang.append((link.params["hreflang"].strip().lower(), target))
