"""Platform fingerprints: which hosting backend serves a feed, whatever its hostname.

Politeness capped per hostname is no cap: every newsletter of one platform is its own (custom)
hostname on one backend. When a response or a feed tells us the platform, the feed's politeness
key becomes ``backend:<platform>`` so all of that platform's publications share one budget.

Only multi-tenant platforms are fingerprinted. Self-hosted software says nothing about shared
servers, so a ``WordPress 6.4`` generator (WordPress.org) is deliberately not a backend, while
``http://wordpress.com/`` is. Ghost is the one exception: its generator does not tell Ghost(Pro)
from a self-hosted install, and one shared key for both is the cautious side.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

__all__ = ["BACKENDS", "backend_from_cname", "detect_backend", "platform_of_host"]

Headers = Mapping[str, str]


def _header_has(name: str, needle: str) -> Callable[[Headers], bool]:
    return lambda h: needle in h.get(name, "").lower()


def _header_present(*names: str) -> Callable[[Headers], bool]:
    return lambda h: any(n in h for n in names)


def _header_prefix(prefix: str) -> Callable[[Headers], bool]:
    return lambda h: any(k.startswith(prefix) for k in h)


def _gen(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# (platform, header tests, generator pattern). Order: most specific first.
_FINGERPRINTS: tuple[tuple[str, tuple[Callable[[Headers], bool], ...], re.Pattern[str]], ...] = (
    (
        "letterbox",
        (_header_has("x-platform", "letterbox"),),
        _gen(r"^\s*letterbox\b"),
    ),
    (
        "substack",
        (_header_has("x-served-by", "substack"), _header_prefix("x-substack")),
        _gen(r"^\s*substack\b"),
    ),
    (
        # Ghost ships its generator on self-hosted installs too; Ghost(Pro) is where the
        # throttles come from, but one Ghost key for both is the cautious choice.
        "ghost",
        (_header_prefix("x-ghost-"), _header_prefix("ghost-")),
        _gen(r"^\s*ghost\b"),
    ),
    (
        "beehiiv",
        (_header_prefix("x-beehiiv"), _header_has("x-powered-by", "beehiiv")),
        _gen(r"\bbeehiiv\b"),
    ),
    (
        "buttondown",
        (_header_prefix("x-buttondown"), _header_has("x-powered-by", "buttondown")),
        _gen(r"^\s*buttondown\b"),
    ),
    (
        # WordPress.com / WordPress VIP send "x-hacker" (a recruiting note) and "host-header";
        # its feeds' generator is "http://wordpress.com/". Self-hosted WordPress says
        # "https://wordpress.org/?v=…" and is not a shared backend.
        "wordpress.com",
        (_header_present("x-hacker"), _header_has("x-powered-by", "wordpress.com")),
        _gen(r"^\s*(https?://)?(www\.)?wordpress\.com\b"),
    ),
    (
        "blogger",
        (_header_has("server", "blogger"),),
        _gen(r"^\s*blogger\b|blogger\.com"),
    ),
    (
        "medium",
        (_header_prefix("medium-"), _header_has("x-powered-by", "medium")),
        _gen(r"^\s*medium\b|\bmedium\.com\b"),
    ),
    (
        "tumblr",
        (_header_present("x-tumblr-user", "x-tumblr-pixel"),),
        _gen(r"^\s*tumblr\b"),
    ),
)

#: Every backend key detect_backend can return.
BACKENDS = tuple(f"backend:{name}" for name, _, _ in _FINGERPRINTS)

#: The platforms' own hostnames (``<publication>.substack.com``), by platform: a response from
#: one of them is the platform's whatever it claims (net/platform_trust.py).
_OWN_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("letterbox.test", "letterbox"),
    ("substack.com", "substack"),
    ("ghost.io", "ghost"),
    ("beehiiv.com", "beehiiv"),
    ("buttondown.email", "buttondown"),
    ("buttondown.com", "buttondown"),
    ("wordpress.com", "wordpress.com"),
    ("blogspot.com", "blogger"),
    ("blogger.com", "blogger"),
    ("medium.com", "medium"),
    ("tumblr.com", "tumblr"),
)

#: CNAME targets of custom domains, by platform (a suffix match on the canonical name): the
#: platforms' own hostnames, and the names that exist only as such targets.
_CNAME_SUFFIXES: tuple[tuple[str, str], ...] = (
    *_OWN_SUFFIXES,
    ("substack-custom-domains.com", "substack"),
    ("wp.com", "wordpress.com"),
    ("ghs.google.com", "blogger"),
    ("ghs.googlehosted.com", "blogger"),
)


def _suffix_match(name: str, table: tuple[tuple[str, str], ...]) -> str | None:
    name = name.rstrip(".").lower()
    for suffix, platform in table:
        if name == suffix or name.endswith("." + suffix):
            return f"backend:{platform}"
    return None


def platform_of_host(host: str) -> str | None:
    """``backend:<platform>`` when ``host`` is one of the platform's own hostnames."""
    return _suffix_match(host, _OWN_SUFFIXES)


def backend_from_cname(cname: str | None) -> str | None:
    """``backend:<platform>`` when a host's CNAME target belongs to a known platform."""
    if not cname:
        return None
    return _suffix_match(cname, _CNAME_SUFFIXES)


def detect_backend(
    headers: Mapping[str, str] | None, generator: str | None, cname: str | None = None
) -> str | None:
    """``backend:<platform>`` when the response headers, the feed's generator or the host's
    CNAME target (``Resolver.canonical_name``) name a multi-tenant platform, else None.
    Header names are matched case-insensitively."""
    lowered = {k.lower(): v for k, v in headers.items()} if headers else {}
    for name, tests, gen in _FINGERPRINTS:
        if lowered and any(test(lowered) for test in tests):
            return f"backend:{name}"
        if generator and gen.search(generator):
            return f"backend:{name}"
    return backend_from_cname(cname)
