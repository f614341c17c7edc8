"""HTTP: broken links, errors, redirects, speed, weight and transport security."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]


@rule("broken-internal-link", "http", "error", "Broken internal link",
      explanation="A link on your site points to one of your pages that answers 4xx or 5xx.",
      fix="Fix the link target or redirect the dead URL to its replacement.")
def broken_internal(site: SiteView, t: Thresholds) -> Out:
    for src, dst, status in site.broken_internal:
        yield src, f"{dst} ({status})"


@rule("broken-external-link", "http", "error", "Broken external link",
      explanation="A link to another site answers 4xx/5xx or does not answer at all.",
      fix="Update or remove the link.")
def broken_external(site: SiteView, t: Thresholds) -> Out:
    for e in site.externals:
        if e.via != "link" or e.not_checked:
            continue
        # An error with a 3xx status is a chain that never reached a page (a loop, too many
        # hops, a bad Location): as dead as a 404.
        if e.status is None or e.status >= 400 or e.error:
            if e.status is not None and e.status >= 400:
                what = str(e.status)
            else:
                what = e.error or "no response"
            for src in e.sources or [e.url]:
                yield src, f"{e.url} ({what})"


@rule("server-error", "http", "error", "Page answers 5xx",
      explanation="The server failed to produce the page.",
      fix="Check the server logs for this URL.")
def server_error(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.status is not None and p.status >= 500:
            yield p.url, str(p.status)


@rule("client-error", "http", "error", "Page answers 4xx",
      explanation="An internal URL that was linked or listed does not exist (or is forbidden).",
      fix="Restore the page, redirect it, or remove the links to it.")
def client_error(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.status is not None and 400 <= p.status < 500:
            yield p.url, str(p.status)


@rule("fetch-failed", "http", "error", "Page could not be fetched",
      explanation="No HTTP response (DNS, connection, timeout), or a response whose body "
      "could not be read (over the size cap, an encoding browsers may not all read, a "
      "compressed stream cut short).",
      fix="Check that the server answers for this URL, with a body in gzip or no encoding.")
def fetch_failed(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if (p.status is None and p.error and not p.error.startswith("robots")) or (
            p.body_unreadable
        ):
            yield p.url, p.error or ""


def _inside_chains(site: SiteView) -> set[str]:
    """Redirecting URLs reached only through another redirect of the site: the rest of a chain
    someone enters elsewhere, not a chain of their own (A -> B -> C is one chain, not A's and
    B's; the loop A -> B -> A is one loop). A URL that is linked, listed in a sitemap or the
    start URL is entered directly, and stays. A chain's first URL was found some other way
    (a link, the sitemap, the start), so every chain keeps one entry."""
    targets = {r.to_url for r in site.redirects}
    inside: set[str] = set()
    for r in site.redirects:
        url = r.from_url
        if url not in targets or url == site.start_url:
            continue
        page = site.by_url.get(url)
        if (
            page is not None and page.source == "redirect" and not page.in_sitemap
            and not site.inlinks.get(url)
        ):  # fmt: skip
            inside.add(url)
    return inside


@rule("redirect-chain", "http", "warning", "Redirect chain",
      explanation="The URL redirects more than once before reaching a page; each hop costs "
      "time and link equity.",
      fix="Redirect straight to the final URL.")
def redirect_chain(site: SiteView, t: Thresholds) -> Out:
    inside = _inside_chains(site)
    for r in site.redirects:
        if not r.loop and r.hops >= t.redirect_chain_hops and r.from_url not in inside:
            yield r.from_url, f"{r.hops} hops to {r.final_url}"


@rule("redirect-loop", "http", "error", "Redirect loop",
      explanation="Following the redirects comes back to a URL already seen: no page is "
      "ever served.",
      fix="Break the loop by redirecting to a URL that answers 200.")
def redirect_loop(site: SiteView, t: Thresholds) -> Out:
    inside = _inside_chains(site)
    for r in site.redirects:
        if r.loop and r.from_url not in inside:
            yield r.from_url


@rule("redirect-to-error", "http", "error", "Redirect to a 4xx/5xx destination",
      explanation="The redirect lands on a page that does not exist (an affiliate product "
      "pulled, a moved page deleted), or on nothing at all (the far end does not answer, or "
      "redirects in a loop): the link on your site is dead.",
      fix="Point the redirect at a live page, or remove it and the links to it.")
def redirect_to_error(site: SiteView, t: Thresholds) -> Out:
    inside = _inside_chains(site)  # one finding a chain, as redirect-chain
    for r in site.redirects:
        if r.from_url in inside:
            continue
        end = r.final_status if r.final_status is not None else r.to_status
        if end is not None and end >= 400:
            yield r.from_url, f"{r.final_url or r.to_url} ({end})"
        elif r.far_error and not r.loop:
            yield r.from_url, f"{r.to_url} ({r.far_error})"
        elif r.final_status is not None and 300 <= r.final_status < 400 and not r.loop:
            # The chain stops on a crawled page that answers 3xx with nowhere to go (a page
            # with a usable Location would have been followed): no page is ever served.
            yield r.from_url, f"{r.final_url} ({r.final_status} without a usable Location)"


@rule("meta-refresh", "http", "warning", "Meta refresh redirect",
      explanation="The page sends browsers elsewhere with <meta http-equiv=\"refresh\">: a "
      "redirect made after the page has loaded, which visitors see happen (and which breaks "
      "their back button), and which search engines may treat as temporary or not follow.",
      fix="Redirect on the server instead (301 or 308 for a page that moved for good).")
def meta_refresh(site: SiteView, t: Thresholds) -> Out:
    for from_url, to_url, when in site.meta_refreshes:
        detail = f"refreshes to {to_url} {when}".rstrip()
        page = site.by_url.get(to_url)
        if page is not None:
            why = (
                page.error or "no response" if page.status is None
                else str(page.status) if page.status >= 300 else None
            )  # fmt: skip
        else:
            far = site.external_by_url.get(to_url)
            why = far.far_end() if far is not None else None
        if why is None:
            yield from_url, detail
        elif why.isdigit():
            yield from_url, f"{detail}, which answers {why}"
        elif why.startswith("redirects to"):
            yield from_url, f"{detail}, which {why}"
        else:
            yield from_url, f"{detail}, which fails ({why})"


@rule("redirect-without-location", "http", "error", "Redirect without a usable Location",
      explanation="The URL answers 3xx but names no place to go (no Location header, an empty "
      "one, or one no browser can follow): visitors and search engines get no page at all.",
      fix="Send a Location header with the destination's absolute http(s) URL, or serve the "
      "page (200).")
def redirect_without_location(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.status is not None and 300 <= p.status < 400 and p.redirect_to is None:
            yield p.url, p.error or f"{p.status} without a Location header"


@rule("redirect-temporary", "http", "notice", "Temporary redirect",
      explanation="302/303/307 tell search engines the move is temporary; the old URL stays "
      "indexed.",
      fix="Use 301 or 308 for moves that are permanent.")
def redirect_temporary(site: SiteView, t: Thresholds) -> Out:
    for r in site.redirects:
        if r.status in (302, 303, 307):
            yield r.from_url, str(r.status)


@rule("internal-link-to-redirect", "http", "warning", "Internal link to a redirect",
      explanation="Your own page links to a URL that redirects; every visit pays the detour.",
      fix="Link to the final URL directly.")
def link_to_redirect(site: SiteView, t: Thresholds) -> Out:
    for src, dst, status in site.links_to_redirects:
        yield src, f"{dst} ({status})"


@rule("slow-response", "http", "warning", "Slow response",
      explanation="The server took long to answer this page.",
      fix="Cache the page or speed up its generation.")
def slow_response(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.response_ms is not None and p.response_ms > t.slow_ms:
            yield p.url, f"{p.response_ms:.0f} ms"


@rule("heavy-page", "http", "warning", "Heavy HTML page",
      explanation="The HTML document alone is large, before any asset.",
      fix="Trim inline scripts, styles and markup; paginate long lists.")
def heavy_page(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.size is not None and p.size > t.heavy_page_bytes:
            yield p.url, f"{p.size} bytes"


@rule("mixed-content", "http", "error", "Mixed content",
      explanation="An HTTPS page loads assets over plain HTTP; browsers block or warn.",
      fix="Load every asset over HTTPS.")
def mixed_content(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.url.startswith("https:") and p.mixed_content:
            yield p.url, f"{p.mixed_content} http:// assets"


@rule("no-https", "http", "warning", "Page served without HTTPS",
      explanation="Plain HTTP pages are marked not secure and rank below HTTPS ones.",
      fix="Serve the site over HTTPS and redirect HTTP to it.")
def no_https(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.url.startswith("http:"):
            yield p.url


@rule("missing-hsts", "http", "notice", "HTTPS page without HSTS",
      explanation="Without Strict-Transport-Security a first visit can be downgraded to HTTP.",
      fix="Send Strict-Transport-Security: max-age=31536000 on HTTPS responses.")
def missing_hsts(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.url.startswith("https:") and not p.hsts:
            yield p.url


@rule("missing-csp", "http", "notice", "No Content-Security-Policy",
      explanation="A CSP limits what injected scripts can do.",
      fix="Send a Content-Security-Policy header.")
def missing_csp(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not p.csp:
            yield p.url


@rule("missing-x-content-type-options", "http", "notice", "No X-Content-Type-Options: nosniff",
      explanation="Without nosniff browsers may guess content types, which enables attacks.",
      fix="Send X-Content-Type-Options: nosniff.")
def missing_xcto(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not p.x_content_type_options:
            yield p.url


@rule("external-not-checked", "http", "notice", "External URL not checked",
      explanation="A link or redirect destination was not status-checked; the reason is "
      "recorded so the count is never silently short.",
      fix="Raise the cap on externals or allow the destination, then crawl again.")
def external_not_checked(site: SiteView, t: Thresholds) -> Out:
    for e in site.externals:
        if e.not_checked:
            yield e.url, e.not_checked
