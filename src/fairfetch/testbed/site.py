"""The audit website: a generated site with every defect the audit rules look for.

Hosts (any port; absolute URLs are built on the port the request came in on):

- ``www.acme-audit.test`` — the default site, 2,000 generated pages;
  ``s<N>.acme-audit.test`` — the same site with N generated pages (``s120`` for tests,
  ``s10000`` for the benchmark).
- ``shop-elsewhere.test`` — a foreign shop (another registrable domain): ``/product/alive`` is
  200, ``/product/pulled`` is 404. The site's ``/go/alive`` and ``/go/pulled`` redirect there,
  linked from pages far apart so the two destinations are discovered at separate moments.
- ``links-elsewhere.test`` — targets of outbound links: ``/ok`` 200, ``/gone`` 404, ``/broken``
  500, ``/nohead`` 405 to HEAD and 200 to GET, ``/moved`` 301 to ``/ok``.

Generated page ``/page/i`` links to its two children ``2i+1``, ``2i+2`` (so every page is
reachable and depth grows like log2 N), ten seeded random pages, the navigation and a few special
pages — about twenty links — and carries the template: a 900 KB ``/static/bundle.js`` (with
Content-Length), ``/static/site.css``, ``/static/font.woff2`` (chunked: no Content-Length) and a
logo. Special pages (``SPECIALS``) each carry one defect; ``/features`` links them all.

Pure functions of (host, path, port), cached as ready response bytes: the site is deterministic,
so a page is rendered once per port and then costs the server only the HTTP exchange. The
benchmark's server pre-renders every page before it starts (``prerender``), so the CPU a
rendering would take is not stolen from the crawlers measured on the same cores (each crawler,
fairfetch and Scrapy alike, gets the same cached bytes).
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from html import escape

from aiohttp import web

from fairfetch.testbed.registry import register

__all__ = ["DEFAULT_PAGES", "FOREIGN_LINKS", "SHOP_HOST", "SITE_DOMAIN", "SiteFamily", "make_app"]

SITE_DOMAIN = "acme-audit.test"
SHOP_HOST = "shop-elsewhere.test"
LINKS_HOST = "links-elsewhere.test"
#: Linked from /outbound; a test resolves it to an address the perimeter refuses.
PRIVATE_HOST = "intranet-elsewhere.test"
DEFAULT_PAGES = 2000
BUNDLE = b"/* acme bundle */\n" + b"var x=0;\n" * (900 * 1024 // 9)
CSS = b"body{font-family:sans-serif}\n" * 40
FONT = b"\x00wOF2" + b"\x01" * 30_000
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 2_000
HERO = b"\xff\xd8\xff" + b"\x00" * 600_000
FOREIGN_LINKS = ("/ok", "/gone", "/broken", "/nohead", "/moved")

_SIZE_HOST = re.compile(r"^s(\d{1,6})\." + re.escape(SITE_DOMAIN) + "$")
_PROSE = (
    "audit crawler site page link index search engine title heading content image bundle "
    "resource redirect canonical sitemap robots policy owner review server status health "
    "garden river mountain coffee bicycle library market window theatre orchard harbour"
)
_WORDS = _PROSE.split()


def site_pages(host: str) -> int | None:
    """Number of generated pages of a site host; None when the host is not a site host."""
    if host == f"www.{SITE_DOMAIN}" or host == SITE_DOMAIN:
        return DEFAULT_PAGES
    m = _SIZE_HOST.match(host)
    return int(m.group(1)) if m else None


def _prose(seed: str, words: int) -> str:
    r = random.Random(seed)
    return " ".join(r.choice(_WORDS) for _ in range(words))


def _template(
    title: str | None,
    body: str,
    *,
    description: str | None = "A page of the Acme audit test site.",
    head_extra: str = "",
    lang: str | None = "en",
    h1: str | None = "",
    og: bool = True,
) -> str:
    head = ['<meta charset="utf-8">']
    if title is not None:
        head.append(f"<title>{escape(title)}</title>")
    if description is not None:
        head.append(f'<meta name="description" content="{escape(description)}">')
    if og and title:
        head.append(f'<meta property="og:title" content="{escape(title)}">')
        head.append('<meta property="og:image" content="/img/logo.png">')
    head.append('<link rel="stylesheet" href="/static/site.css">')
    head.append('<link rel="preload" as="font" href="/static/font.woff2" crossorigin>')
    head.append('<script src="/static/bundle.js" defer></script>')
    head.append(head_extra)
    nav = (
        '<header><a href="/"><img src="/img/logo.png" alt="Acme" width="120" height="40"></a>'
        '</header><nav><a href="/">Home</a> <a href="/about">About</a> '
        '<a href="/features">Features</a> <a href="/page/1">Start</a></nav>'
    )
    heading = f"<h1>{escape(h1 or title or '')}</h1>" if h1 is not None else ""
    html_attr = f' lang="{lang}"' if lang else ""
    return (
        f"<!doctype html><html{html_attr}><head>{''.join(head)}</head><body>{nav}"
        f"<main>{heading}{body}</main><footer><a href=\"/about\">About us</a></footer>"
        "</body></html>"
    )


def render_generated(n: int, i: int, port: int) -> str:
    r = random.Random(f"acme-{n}-{i}")
    targets = [2 * i + 1, 2 * i + 2] + [r.randrange(n) for _ in range(10)]
    links = "".join(
        f'<li><a href="/page/{t}">{escape(_prose(f"a{i}-{t}", 3))}</a></li>'
        for t in targets
        if t < n and t != i
    )
    extras = []
    if i == 2:
        extras.append('<a href="/go/alive">Buy the widget</a>')
    if i == n - 3 or (n <= 4 and i == 0):
        extras.append('<a href="/go/pulled">Buy the gadget</a>')
    if i == 3:
        extras.append('<a href="/private/secret">Staff</a>')
    if i == 4:
        extras.append('<a href="/page/missing">Old link</a>')
        extras.append(f'<a href="http://{LINKS_HOST}:{port}/gone">Gone partner</a>')
    if i % 50 == 7:
        extras.append(f'<a href="http://{LINKS_HOST}:{port}/ok" rel="nofollow">Partner</a>')
    img_alt = "" if i % 10 == 0 else f' alt="{escape(_prose(f"i{i}", 2))}"'
    body = (
        f"<p>{_prose(f'p{i}', 220)}</p>"
        f'<img src="/img/photo-{i % 40}.jpg"{img_alt} width="400" height="300">'
        f"<h2>More</h2><ul>{links}</ul><p>{' '.join(extras)}</p>"
    )
    return _template(
        f"Acme guide {i}: {_prose(f't{i}', 3)}",
        body,
        h1=f"Page {i}",
        description=f"Guide {i} of the Acme site, about {_prose(f'd{i}', 8)}.",
    )


#: Bounded: ``s<N>`` hosts go up to a million pages (~5 KB each).
@lru_cache(maxsize=32_768)
def generated_body(n: int, i: int, port: int) -> bytes:
    """The generated page ``/page/i`` of an N-page site, encoded once."""
    return render_generated(n, i, port).encode()


def prerender(n: int, port: int) -> None:
    """Render every generated page of an N-page site into the cache (benchmark server)."""
    for i in range(min(n, generated_body.cache_info().maxsize or n)):
        generated_body(n, i, port)


def _specials(port: int) -> dict[str, tuple[int, dict[str, str], str]]:
    """path -> (status, headers, html). Each special page carries one defect (or none)."""
    shop = f"http://{SHOP_HOST}:{port}"
    ext = f"http://{LINKS_HOST}:{port}"
    ok_body = f"<p>{_prose('ok', 150)}</p>"
    pages: dict[str, tuple[int, dict[str, str], str]] = {
        "/about": (200, {}, _template("About Acme", f"<p>{_prose('about', 200)}</p>")),
        "/noindex-page": (
            200,
            {},
            _template(
                "Hidden page",
                ok_body,
                head_extra='<meta name="robots" content="noindex, follow">',
            ),
        ),
        "/xrobots": (
            200,
            {"X-Robots-Tag": "noindex"},
            _template("Header hidden page", f"<p>{_prose('xr', 150)}</p>"),
        ),
        "/new-page": (200, {}, _template("The new page", f"<p>{_prose('new', 150)}</p>")),
        "/canon-src": (
            200,
            {},
            _template(
                "Canonical to a redirect",
                f"<p>{_prose('canon', 150)}</p>",
                head_extra='<link rel="canonical" href="/old-page">',
            ),
        ),
        "/canon-multi": (
            200,
            {},
            _template(
                "Two canonicals",
                f"<p>{_prose('cm', 150)}</p>",
                head_extra='<link rel="canonical" href="/canon-multi">'
                '<link rel="canonical" href="/about">',
            ),
        ),
        "/no-title": (200, {}, _template(None, f"<p>{_prose('nt', 150)}</p>", h1="No title")),
        "/long-title": (
            200,
            {},
            _template(
                "An extraordinarily long page title that keeps going well past what any "
                "search engine will show in its results page",
                f"<p>{_prose('lt', 150)}</p>",
            ),
        ),
        "/no-description": (
            200,
            {},
            _template("No description here", f"<p>{_prose('nd', 150)}</p>", description=None),
        ),
        "/no-h1": (200, {}, _template("Without a heading", f"<p>{_prose('nh', 150)}</p>",
                                      h1=None)),
        "/two-h1": (
            200,
            {},
            _template("Two headings", f"<h1>Another</h1><p>{_prose('th', 150)}</p>"),
        ),
        "/skip-levels": (
            200,
            {},
            _template("Skipped levels", f"<h4>Deep</h4><p>{_prose('sk', 150)}</p>"),
        ),
        "/thin": (200, {}, _template("Thin page", "<p>Too little here.</p>")),
        "/dup-a": (200, {}, _template("Duplicate A", f"<p>{_prose('dup', 150)}</p>",
                                      h1="Same")),
        "/dup-b": (200, {}, _template("Duplicate B", f"<p>{_prose('dup', 150)}</p>",
                                      h1="Same")),
        "/near-a": (
            200,
            {},
            _template("Near A", f"<p>{_prose('near', 300)} alpha</p>", h1="Near"),
        ),
        "/near-b": (
            200,
            {},
            _template("Near B", f"<p>{_prose('near', 300)} beta</p>", h1="Near"),
        ),
        "/no-lang": (200, {}, _template("No language", f"<p>{_prose('nl', 150)}</p>",
                                        lang=None)),
        "/bad-jsonld": (
            200,
            {},
            _template(
                "Broken structured data",
                f"<p>{_prose('jl', 150)}</p>",
                head_extra='<script type="application/ld+json">{"@type": "Thing",</script>',
            ),
        ),
        "/no-og": (200, {}, _template("No social tags", f"<p>{_prose('og', 150)}</p>",
                                      og=False)),
        "/en/": (
            200,
            {},
            _template(
                "English",
                f"<p>{_prose('en', 150)}</p>",
                head_extra='<link rel="alternate" hreflang="en" href="/en/">'
                '<link rel="alternate" hreflang="fr" href="/fr/">'
                '<link rel="alternate" hreflang="de" href="/de/">',
            ),
        ),
        "/fr/": (
            200,
            {},
            _template(
                "Français",
                f"<p>{_prose('fr', 150)}</p>",
                lang="fr",
                head_extra='<link rel="alternate" hreflang="fr" href="/fr/">',
            ),
        ),
        "/title-in-body": (
            200,
            {},
            _template(None, f"<title>Lost title</title><p>{_prose('tb', 150)}</p>",
                      h1="Body title"),
        ),
        "/heavy": (
            200,
            {},
            _template(
                "Heavy page",
                f'<p>{_prose("hv", 150)}</p><img src="/img/hero-big.jpg" alt="Hero">'
                '<img src="/img/missing.png" alt="Missing">'
                '<link rel="stylesheet" href="/static/missing.css">'
                f"<!-- {'x' * 300_000} -->",
            ),
        ),
        "/mixed": (
            200,
            {},
            _template(
                "Absolute http assets",
                f'<p>{_prose("mx", 150)}</p>'
                f'<img src="http://{SITE_DOMAIN}:{port}/img/logo.png" alt="">',
            ),
        ),
        "/outbound": (
            200,
            {},
            _template(
                "Partners",
                f"<p>{_prose('ob', 150)}</p>"
                + "".join(f'<a href="{ext}{p}">partner {p}</a> ' for p in FOREIGN_LINKS)
                + f'<a href="http://{PRIVATE_HOST}:{port}/">intranet</a>'
                + '<a href="mailto:owner@acme-audit.test">mail</a>'
                + "<a href=\"/about\">=HYPERLINK(\"http://evil.test\",\"x\")</a>",
            ),
        ),
        "/meta-refresh": (
            200,
            {},
            _template(
                "Moved by a meta refresh",
                f"<p>{_prose('mr', 150)}</p>",
                head_extra='<meta http-equiv="refresh" content="0; url=/new-page">',
            ),
        ),
        "/bad-hreflang": (
            200,
            {},
            _template(
                "British English",
                f"<p>{_prose('bh', 150)}</p>",
                head_extra='<link rel="alternate" hreflang="en-UK" href="/bad-hreflang">'
                '<link rel="alternate" hreflang="x-default" href="/bad-hreflang">',
            ),
        ),
        "/error500": (500, {}, "<h1>Internal error</h1>"),
        "/orphan/1": (200, {}, _template("Orphan one", f"<p>{_prose('o1', 150)}</p>")),
        "/orphan/2": (200, {}, _template("Orphan two", f"<p>{_prose('o2', 150)}</p>")),
        "/private/secret": (200, {}, _template("Staff only", f"<p>{_prose('ps', 150)}</p>")),
    }
    pages["/go/alive"] = (301, {"Location": f"{shop}/product/alive"}, "")
    pages["/go/pulled"] = (301, {"Location": f"{shop}/product/pulled"}, "")
    pages["/old-page"] = (301, {"Location": "/new-page"}, "")
    pages["/chain1"] = (301, {"Location": "/chain2"}, "")
    pages["/chain2"] = (302, {"Location": "/chain3"}, "")
    pages["/chain3"] = (301, {"Location": "/new-page"}, "")
    pages["/loop-a"] = (301, {"Location": "/loop-b"}, "")
    pages["/loop-b"] = (301, {"Location": "/loop-a"}, "")
    pages["/to-gone"] = (302, {"Location": "/page/missing"}, "")
    return pages


#: Special pages linked from /features (the orphans and the robots-blocked page are not).
FEATURE_LINKS = (
    "/noindex-page", "/xrobots", "/old-page", "/canon-src", "/canon-multi", "/no-title",
    "/long-title", "/no-description", "/no-h1", "/two-h1", "/skip-levels", "/thin", "/dup-a",
    "/dup-b", "/near-a", "/near-b", "/no-lang", "/bad-jsonld", "/no-og", "/en/", "/fr/",
    "/title-in-body", "/heavy", "/mixed", "/outbound", "/error500", "/chain1", "/loop-a",
    "/to-gone", "/meta-refresh", "/bad-hreflang",
)  # fmt: skip


@lru_cache(maxsize=64)
def _specials_cached(port: int) -> dict[str, tuple[int, dict[str, str], str]]:
    return _specials(port)


def render_home(n: int) -> str:
    firsts = "".join(f'<li><a href="/page/{i}">Page {i}</a></li>' for i in range(min(n, 3)))
    return _template(
        "Acme — home",
        f"<p>{_prose('home', 150)}</p><ul>{firsts}</ul>",
        h1="Welcome to Acme",
    )


def render_features() -> str:
    items = "".join(f'<li><a href="{p}">{p}</a></li>' for p in FEATURE_LINKS)
    return _template("Features of the Acme site", f"<ul>{items}</ul>", h1="Features")


def render_sitemap(n: int, base: str) -> str:
    paths = ["/", "/about", "/features"] + [f"/page/{i}" for i in range(n)]
    paths += ["/orphan/1", "/orphan/2", "/noindex-page", "/old-page"]
    locs = "".join(f"<url><loc>{base}{p}</loc></url>" for p in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    )


ROBOTS = "User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap.xml\n"


def _port_of(request: web.Request) -> int:
    host = request.headers.get("Host", "")
    if ":" in host:
        try:
            return int(host.rsplit(":", 1)[1])
        except ValueError:
            pass
    return request.url.port or 80


_HTML_TYPE = "text/html; charset=utf-8"


def _html(status: int, text: str | bytes, headers: dict[str, str] | None = None) -> web.Response:
    body = text if isinstance(text, bytes) else text.encode()
    return web.Response(
        status=status, body=body, headers={"Content-Type": _HTML_TYPE, **(headers or {})}
    )


async def _chunked(request: web.Request, data: bytes, content_type: str) -> web.StreamResponse:
    """A response without Content-Length (chunked), as some servers send assets."""
    resp = web.StreamResponse(headers={"Content-Type": content_type})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    if request.method != "HEAD":
        await resp.write(data)
    await resp.write_eof()
    return resp


class SiteFamily:
    """The audit website and its foreign neighbours, as one testbed host family."""

    name = "audit-site"
    platform = None

    def matches(self, host: str) -> bool:
        return site_pages(host) is not None or host in (SHOP_HOST, LINKS_HOST)

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        path = request.path
        if host == SHOP_HOST:
            if path == "/product/alive":
                return _html(200, _template("Widget", "<p>On sale.</p>"))
            return _html(404, "<h1>Product not found</h1>")
        if host == LINKS_HOST:
            return await self._links(request, path)
        n = site_pages(host) or DEFAULT_PAGES
        port = _port_of(request)
        base = f"http://{host}:{port}"
        if path == "/":
            return _html(200, render_home(n))
        if path == "/features":
            return _html(200, render_features())
        if path == "/robots.txt":
            return web.Response(text=ROBOTS.format(base=base), content_type="text/plain")
        if path == "/sitemap.xml":
            return web.Response(text=render_sitemap(n, base), content_type="application/xml")
        if path == "/static/bundle.js":
            return web.Response(body=BUNDLE, content_type="application/javascript")
        if path == "/static/site.css":
            return web.Response(body=CSS, content_type="text/css")
        if path == "/static/font.woff2":
            return await _chunked(request, FONT, "font/woff2")
        if path == "/img/hero-big.jpg":
            return web.Response(body=HERO, content_type="image/jpeg")
        if path == "/img/logo.png" or path.startswith("/img/photo-"):
            if path.startswith("/img/photo-") and path.endswith("-39.jpg"):
                return await _chunked(request, PNG, "image/jpeg")
            return web.Response(body=PNG, content_type="image/png")
        if path.startswith("/page/"):
            tail = path[len("/page/") :]
            if tail.isdigit() and int(tail) < n:
                return _html(200, generated_body(n, int(tail), port))
            return _html(404, "<h1>Not found</h1>")
        special = _specials_cached(port).get(path)
        if special is not None:
            status, headers, text = special
            return _html(status, text, headers)
        return _html(404, "<h1>Not found</h1>")

    async def _links(self, request: web.Request, path: str) -> web.StreamResponse:
        if path == "/ok":
            return _html(200, "<p>ok</p>")
        if path == "/gone":
            return _html(404, "<p>gone</p>")
        if path == "/broken":
            return _html(500, "<p>broken</p>")
        if path == "/nohead":
            if request.method == "HEAD":
                return web.Response(status=405, headers={"Allow": "GET"})
            return _html(200, "<p>get only</p>")
        if path == "/moved":
            return web.Response(status=301, headers={"Location": "/ok"})
        return _html(404, "<p>no</p>")


FAMILY = register(SiteFamily())


def make_app() -> web.Application:
    """A standalone aiohttp app serving only this family (the benchmark runs it on its own)."""

    async def handler(request: web.Request) -> web.StreamResponse:
        host = request.headers.get("Host", "").rsplit(":", 1)[0].lower()
        if not FAMILY.matches(host):
            return web.Response(status=421, text="misdirected")
        return await FAMILY.handle(request, host)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    return app
