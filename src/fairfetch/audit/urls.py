"""URL normalisation and the audit's scope (which URLs belong to the site being audited).

One canonical spelling per URL is what makes "unique index per URL" mean something: two
spellings of one page would otherwise be two rows, two fetches and a false duplicate-content
finding.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urljoin, urlsplit

from yarl import URL

from fairfetch.net.politeness import registrable_domain as _registrable_domain

__all__ = ["Scope", "host_of", "normalize", "registrable", "resolve_link"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize(url: str) -> str | None:
    """Canonical form: the request the fetch engine makes, spelled one way.

    yarl (what the fetch engine sends) decides the escaping: percent-escapes of unreserved
    characters decoded, hex in upper case, non-ASCII and unsafe characters escaped, IDN hosts
    in punycode; on top of it: no default port, no fragment, no empty query, no userinfo, path
    "/" at least, an IPv6 host in brackets. Returns None for what a crawler cannot fetch
    (mailto:, javascript:, data:, no host, a bad port).
    """
    try:
        u = URL(url.strip())
        scheme = u.scheme
        if scheme not in _DEFAULT_PORTS:
            return None
        host = (u.raw_host or "").rstrip(".")
        port = u.explicit_port
        path = u.raw_path or "/"
        query = u.raw_query_string
    except (ValueError, TypeError, UnicodeError):
        return None
    if not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    return f"{scheme}://{netloc}{path}?{query}" if query else f"{scheme}://{netloc}{path}"


#: An absolute path made only of these takes the fast path: yarl sends such a path and query
#: as written (RFC 3986's unreserved and sub-delims, ":", "@", "/", "?"; the fragment is cut).
#: Anything else goes to the general resolver: "%", non-ASCII, whitespace (to strip), quotes
#: and brackets (yarl escapes them), ";" (urljoin drops an empty ";params"), backslashes
#: (browsers read them as slashes). The two paths must spell every URL alike.
_SLOW_PATH_RE = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,=:@/?#]")  # and "/." (a substring test)


def origin_of(url: str) -> str:
    """``scheme://netloc`` of a normalised URL."""
    end = url.find("/", url.find("//") + 2)
    return url if end < 0 else url[:end]


def resolve_link(base: str, href: str, base_origin: str | None = None) -> str | None:
    """An href as found in a page, resolved against its base and normalised.

    Most links on a site are absolute paths ("/page/7"); those are joined to the page's origin
    directly (the general resolver costs ~25 µs a link, and a site has millions of links). The
    fast path needs no strip: leading whitespace fails its first test, any other sends the
    href to the general path.
    """
    if (
        href[:1] == "/"
        and href[1:2] != "/"
        and _SLOW_PATH_RE.search(href) is None
        and "/." not in href
    ):
        cut = href.find("#")
        if cut >= 0:
            href = href[:cut]
        if href[-1] == "?" and href.find("?") == len(href) - 1:
            href = href[:-1]  # an empty query is no query (as urlunsplit spells it)
        return (base_origin or origin_of(base)) + href
    href = href.strip()
    if not href or href[0] == "#":
        return None
    try:
        return normalize(urljoin(base, href))
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def registrable(host: str) -> str:
    """Registrable domain (Public Suffix List, offline); the host itself when the PSL has none
    or when it is an IP address.

    The fetch engine's (one PSL in the process, loaded when first asked, cached). A PSL of
    our own cost ~1.5 MiB and 35 ms of start-up in every process importing this module, and
    read an IP address as a domain name (``127.0.0.1`` -> ``0.1``, so ``--domain`` took
    ``10.0.0.1`` for the same site).
    """
    return _registrable_domain(host)


class Scope:
    """Which URLs are the site: the start URL's host, or its whole registrable domain."""

    def __init__(self, start_url: str, *, registrable_domain: bool = False) -> None:
        self.start_host = host_of(start_url)
        self.by_domain = registrable_domain
        # Only a --domain scope needs the PSL.
        self.domain = registrable(self.start_host) if registrable_domain else self.start_host
        h = self.start_host
        #: Normalised URLs of the start host begin with one of these (fast path).
        self._prefixes = (f"http://{h}/", f"https://{h}/", f"http://{h}:", f"https://{h}:")

    def contains(self, url: str) -> bool:
        if url.startswith(self._prefixes):
            return True
        host = host_of(url)
        if self.by_domain:
            return host == self.domain or host.endswith("." + self.domain)
        return host == self.start_host
