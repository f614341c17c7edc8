"""WebSub discovery (§4): which hub(s) and which topic URL a fetched document advertises.

Pure: takes the final response's headers and body and the URL that produced them. The order is
the spec's: HTTP ``Link`` headers first — used only when they name at least one hub *and* exactly
one ``self`` — and only then the document (Atom ``<link>``, RSS ``<atom:link>``, HTML ``<link>``
inside ``<head>``). The body is sniffed, never judged by Content-Type, because hubs and feeds
are served as ``text/xml``, ``text/plain`` or worse. The topic to subscribe to is the ``self``
URL, not the URL fetched (redirects, tracking parameters and aliases all differ from it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

from lxml import etree
from selectolax.lexbor import LexborHTMLParser

from fairfetch.net.link_header import parse_link_header as _parse_link_header

__all__ = ["Discovery", "discover", "parse_link_header"]

_ATOM = "http://www.w3.org/2005/Atom"
_FEED_ROOTS = {f"{{{_ATOM}}}feed", "rss", "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}RDF"}
_XML_PARSER_KW = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "recover": True,
    "huge_tree": False,
}


@dataclass(frozen=True)
class Discovery:
    hubs: tuple[str, ...]
    self_url: str | None
    #: "headers" or "document": where the hub/self pair came from; None when nothing was found.
    source: str | None

    @property
    def found(self) -> bool:
        return bool(self.hubs) and self.self_url is not None


NOTHING = Discovery((), None, None)

def parse_link_header(values: str | Iterable[str]) -> list[tuple[str, frozenset[str]]]:
    """``Link`` header value(s) -> [(uri, rel tokens)], rel tokens lower-cased (RFC 8288)."""
    if isinstance(values, str):
        values = [values]
    return [(link.target, link.rels) for value in values for link in _parse_link_header(value)]


def _pick(links: Iterable[tuple[str, frozenset[str]]], base: str) -> tuple[list[str], list[str]]:
    hubs: list[str] = []
    selves: list[str] = []
    for href, rels in links:
        if not href:
            continue
        try:
            url = urljoin(base, href)
        except ValueError:  # "http://[oops": no hub, no topic (and never an exception upkeep
            continue  # dies on, pass after pass, before reaching the other feeds)
        if "hub" in rels and url not in hubs:
            hubs.append(url)
        if "self" in rels and url not in selves:
            selves.append(url)
    return hubs, selves


def _header_values(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[str]:
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [v for k, v in items if k.lower() == "link"]


def _xml_links(body: bytes) -> list[tuple[str, frozenset[str]]] | None:
    """Links of a feed document; None when the body is not a feed (then try HTML)."""
    stripped = body.lstrip()
    if not stripped.startswith(b"<"):
        return None
    try:
        root = etree.fromstring(stripped, etree.XMLParser(**_XML_PARSER_KW))
    except etree.XMLSyntaxError:
        return None
    if root is None or root.tag not in _FEED_ROOTS:
        return None
    if root.tag == "rss":
        containers = root.findall("channel")
    elif root.tag.endswith("RDF"):
        containers = [c for c in root if isinstance(c.tag, str) and c.tag.endswith("channel")]
    else:
        containers = [root]
    links: list[tuple[str, frozenset[str]]] = []
    for container in containers:
        for el in container.findall(f"{{{_ATOM}}}link"):
            rels = frozenset((el.get("rel") or "alternate").lower().split())
            links.append(((el.get("href") or "").strip(), rels))
    return links


def _html_links(body: bytes) -> list[tuple[str, frozenset[str]]]:
    """``<link>`` elements inside ``<head>`` only: a link in the body is user content."""
    tree = LexborHTMLParser(body.decode("utf-8", "replace"))
    head = tree.head
    if head is None:
        return []
    links: list[tuple[str, frozenset[str]]] = []
    for node in head.css("link"):
        rel = node.attributes.get("rel") or ""
        href = node.attributes.get("href") or ""
        links.append((href.strip(), frozenset(rel.lower().split())))
    return links


def discover(
    headers: Mapping[str, str] | Iterable[tuple[str, str]], body: bytes, url: str
) -> Discovery:
    """Hubs and self URL advertised by the response of ``url`` (the *final* URL after redirects)."""
    hubs, selves = _pick(parse_link_header(_header_values(headers)), url)
    if hubs and len(selves) == 1:
        return Discovery(tuple(hubs), selves[0], "headers")
    links = _xml_links(body)
    if links is None:
        links = _html_links(body)
    hubs, selves = _pick(links, url)
    if hubs and selves:
        return Discovery(tuple(hubs), selves[0], "document")
    return NOTHING
