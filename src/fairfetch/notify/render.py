"""Mails as the reader receives them: multipart/alternative (plain text first, HTML last),
rendered with Jinja2, feed HTML sanitised with nh3 and every link absolute.

Each notification mail carries RFC 8058 one-click unsubscribe (``List-Unsubscribe`` with an HTTPS
URL — built on ``public_url``, which must be HTTPS in production — and
``List-Unsubscribe-Post: List-Unsubscribe=One-Click``), a visible unsubscribe link and a
``List-Id``. The Message-ID is fixed when the outbox row is written, so a resend after a crash
carries the same one and the receiving side can deduplicate.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from email.generator import BytesGenerator
from email.header import Header
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.policy import Compat32
from email.utils import format_datetime, formataddr, parseaddr, quote
from functools import lru_cache
from io import BytesIO
from typing import Any
from urllib.parse import urljoin, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import nh3
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from selectolax.lexbor import LexborHTMLParser as HTMLParser

from fairfetch.net.idn import idna2008
from fairfetch.notify.schedule import describe

__all__ = [
    "Links", "Rendered", "as_bytes", "html_to_text", "local_time", "message_id", "sanitise",
    "to_email", "wire_address",
]

class _Wire(str):
    """A header value already in its form on the wire: RFC 2047 encoded-words folded with
    CRLF + space, or an RFC 6532 UTF-8 address (sent with SMTPUTF8). Written as it is."""


#: Plain ASCII headers are not folded (some receivers read List-Unsubscribe unfolded only); every
#: one we write is short (subjects and list names are cut at _MAX_SUBJECT), well under RFC 5322's
#: 998 octets. Non-ASCII text is encoded and folded by _encoded (RFC 2047: encoded-words of at
#: most 75 characters): compat32 with no line length wrote it as one encoded-word on one line,
#: past 998 octets for a long title, which servers refuse ("500 Line too long").
class _Unfolded(Compat32):
    """compat32 that writes plain ASCII headers as they are (its folding machinery cost a
    millisecond a message for headers that never need folding)."""

    def fold_binary(self, name: str, value: Any) -> bytes:
        if isinstance(value, _Wire):
            return f"{name}: {value}{self.linesep}".encode()
        if isinstance(value, str) and value.isascii() and "\n" not in value:
            return f"{name}: {value}{self.linesep}".encode("ascii")
        return super().fold_binary(name, value)


_POLICY = _Unfolded(linesep="\r\n", max_line_length=None)
#: longest subject we write (titles can be anything a feed says)
_MAX_SUBJECT = 200

_URL_ATTRS = {("a", "href"), ("img", "src"), ("source", "src"), ("video", "src"),
              ("audio", "src"), ("video", "poster")}


@lru_cache(maxsize=1)
def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("fairfetch.notify", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["date"] = local_time
    return env


def _zone(name: str | None) -> tzinfo:
    try:
        return ZoneInfo(name) if name else UTC
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return UTC


def local_time(when: datetime | None, tz: str | None = None) -> str:
    """A date as the reader reads their clock: in the time zone they gave (their digest hour is
    in it too), named, so a Paris reader is not left adding an hour to every item's date."""
    if when is None:
        return ""
    if when.tzinfo is None:  # stored times are UTC
        when = when.replace(tzinfo=UTC)
    return when.astimezone(_zone(tz)).strftime("%Y-%m-%d %H:%M %Z")


@lru_cache(maxsize=4096)
def sanitise(html: str | None, base: str | None) -> str:
    """Feed-supplied HTML made safe for a mail: no script, no handlers, no javascript: links,
    relative links resolved against the entry's own URL. Cached: a digest run renders the same
    entries for thousands of readers."""
    if not html:
        return ""

    def _absolute(element: str, attribute: str, value: str) -> str | None:
        if (element, attribute) in _URL_ATTRS and base:
            return urljoin(base, value.strip())
        return value

    return nh3.clean(
        html,
        attribute_filter=_absolute,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


#: Marks put into the tree before its text is read: a paragraph break, a line break.
_PARA, _LINE = "\ue000", "\ue001"
_BLOCKS = ("p,div,h1,h2,h3,h4,h5,h6,blockquote,pre,ul,ol,dl,table,tr,hr,figure,section,"
           "article,header,footer,aside,details")
_LINES = "li,dt,dd,br,td,th,figcaption"


@lru_cache(maxsize=4096)
def html_to_text(html: str | None, links: bool = True) -> str:
    """The plain-text part's body: paragraphs and list items on lines of their own, and each
    link's address after its words. Read as one run of words, a post's text lost its
    paragraphs and every link in it (a link post said "see this" and nothing more)."""
    if not html:
        return ""
    tree = HTMLParser(html)
    root = tree.body if tree.body is not None else tree.root
    if root is None:
        return ""
    for node in root.css(_BLOCKS):
        node.insert_before(_PARA)
        node.insert_after(_PARA)
    for node in root.css(_LINES):
        node.insert_before(_LINE + ("- " if node.tag == "li" else ""))
    if links:
        for node in root.css("a[href]"):
            href = (node.attributes.get("href") or "").strip()
            words = " ".join(node.text(separator=" ").split())
            if href.startswith(("http://", "https://")) and href.rstrip("/") not in (
                words.rstrip("/"), "http://" + words.rstrip("/"), "https://" + words.rstrip("/")
            ):
                node.insert_after(f" <{href}>")
    paragraphs = []
    for block in root.text(separator="").split(_PARA):
        lines = [" ".join(line.split()) for line in block.split(_LINE)]
        text = "\n".join(_fill(line) for line in lines if line)
        if text:
            paragraphs.append(text)
    return "\n\n".join(paragraphs)


def _fill(line: str) -> str:
    return textwrap.fill(line, width=76, break_long_words=False, break_on_hyphens=False,
                         subsequent_indent="  " if line.startswith("- ") else "")


@dataclass(frozen=True)
class Links:
    """Absolute URLs on ``public_url`` (the address readers reach the web app at)."""

    base: str

    def url(self, path: str) -> str:
        """On the public URL with its host in IDNA form: a List-Unsubscribe header on an IDN
        host was written as an encoded-word, which no mail provider reads as a URL."""
        base = self.base.rstrip("/")
        parts = urlsplit(base)
        if not parts.netloc.isascii() and parts.hostname:
            netloc = self.host + (f":{parts.port}" if parts.port else "")
            base = parts._replace(netloc=netloc).geturl()
        return base + path

    @property
    def host(self) -> str:
        """In ASCII (IDNA): it names the List-Id, which is no place for UTF-8."""
        host = (urlsplit(self.base).hostname or "localhost").lower()
        try:
            return host if host.isascii() else idna2008(host)
        except UnicodeError:
            return "localhost"


def message_id(local: str, mail_from: str) -> str:
    """On the sender's domain, in ASCII (IDNA): a Message-ID is no place for UTF-8 or an
    encoded-word (a non-ASCII domain was written as one, which no client reads as an id)."""
    domain = parseaddr(mail_from)[1].rpartition("@")[2] or "fairfetch.localhost"
    if not domain.isascii():
        try:
            domain = idna2008(domain)
        except UnicodeError:
            domain = "fairfetch.localhost"
    return f"<{local}@{domain}>"


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str
    list_id: str | None = None
    unsubscribe_url: str | None = None


def render(template: str, **context: Any) -> tuple[str, str]:
    env = _env()
    text = env.get_template(f"{template}.txt").render(**context)
    html = env.get_template(f"{template}.html").render(**context)
    return text, html


def to_email(
    r: Rendered,
    *,
    to: str,
    mail_from: str,
    msg_id: str,
    date: datetime,
    extra_headers: Mapping[str, str] | None = None,
) -> Message:
    """The MIME message: multipart/alternative, plain text first, HTML last.

    Built with the compat32 MIME classes: the modern header registry re-parses every header and
    cost more than rendering the templates did, for the same bytes on the wire. Non-ASCII
    subjects and names are RFC 2047-encoded.
    """
    msg = MIMEMultipart("alternative")
    msg["From"] = _address(mail_from)
    msg["To"] = _address(to)
    msg["Subject"] = _encoded("Subject", _cut(r.subject))
    msg["Date"] = format_datetime(date)
    msg["Message-ID"] = msg_id
    # RFC 3834: no human wrote this. Vacation responders and auto-repliers that honour it
    # stay silent, instead of answering every notification to our sender address.
    msg["Auto-Submitted"] = "auto-generated"
    if r.list_id:
        msg["List-Id"] = r.list_id
    if r.unsubscribe_url:
        msg["List-Unsubscribe"] = f"<{r.unsubscribe_url}>"
        msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    for k, v in (extra_headers or {}).items():
        msg[k] = _encoded(k, v)
    msg.attach(_text(r.text, "plain"))
    msg.attach(_text(r.html, "html"))
    return msg


def _text(body: str, subtype: str) -> MIMEText:
    """ASCII bodies go as 7bit (nothing to encode); others as base64 UTF-8 (C-speed, and safe
    for any server, with or without 8BITMIME)."""
    plain = body.isascii() and all(len(line) <= 990 for line in body.splitlines())
    return MIMEText(body, subtype, "us-ascii" if plain else "utf-8")


def as_bytes(msg: Message) -> bytes:
    """CRLF line ends, no folding inside long URLs (RFC 5322's 998-octet line limit)."""
    buf = BytesIO()
    BytesGenerator(buf, policy=_POLICY).flatten(msg)
    return buf.getvalue()


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_SUBJECT else text[: _MAX_SUBJECT - 1] + "…"


def _encoded(name: str, value: str) -> str:
    """ASCII as it is; other text as RFC 2047 encoded-words, folded (at most 75 characters a
    word, 78 a line)."""
    if value.isascii():
        return value
    header = Header(value, "utf-8", maxlinelen=76, header_name=name)
    return _Wire(header.encode(linesep="\r\n"))


def wire_address(addr: str) -> str:
    """An address as it travels: a non-ASCII domain in its IDNA form when the mailbox is ASCII
    (``ana@bücher.test`` -> ``ana@xn--bcher-kva.test``), which every server takes; only a
    non-ASCII mailbox needs SMTPUTF8 (sent with it, a server without it failed the mail)."""
    if addr.isascii():
        return addr
    local, at, domain = addr.rpartition("@")
    if not at or not local.isascii():
        return addr
    try:
        return f"{local}@{idna2008(domain)}"
    except UnicodeError:
        return addr


def _address(value: str) -> str:
    """An address header: a display name is RFC 2047-encoded; a non-ASCII address is written
    in UTF-8 (RFC 6532; such mail goes only with SMTPUTF8, see smtp.py). Encoded as a whole,
    it was an encoded-word where RFC 2047 forbids one: a local part with no domain."""
    name, addr = parseaddr(value)
    if not addr:
        return value
    addr = wire_address(addr)
    if not addr.isascii():
        if not name:
            return _Wire(addr)
        phrase = formataddr((name, "x@x"))[: -len(" <x@x>")] if name.isascii() else (
            _encoded("From", name))
        return _Wire(f"{phrase} <{addr}>")
    return formataddr((name, addr), charset="utf-8") if name else addr


def _web_link(base: str, value: str | None) -> str | None:
    """A feed-supplied link made absolute, or None unless it is http(s): the entry's and the
    feed's own links come from the feed like its HTML, and a ``javascript:`` or ``data:`` one
    must not become a link in the mail (nor the base its body's relative links resolve on)."""
    if not value or not value.strip():
        return None
    try:
        url = urljoin(base, value.strip())
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    return url if scheme in ("http", "https") else None


def _title(s: str | None, fallback: str) -> str:
    s = " ".join((s or "").split())
    return s or fallback


def _enclosures(base: str, value: Any) -> list[dict[str, str]]:
    """An episode's audio or video, each with its type and size: a podcast's new episode was
    mailed with its show notes and no way to play it (many episodes have no page of their
    own). Only http(s) links, like the entry's own."""
    out = []
    for enc in value if isinstance(value, list) else []:
        url = _web_link(base, enc.get("url")) if isinstance(enc, dict) else None
        if url is None:
            continue
        about = [str(enc["type"])] if enc.get("type") else []
        length = enc.get("length")
        if isinstance(length, int) and length > 0:
            about.append(f"{length / 1_000_000:.1f} MB")
        out.append({"url": url, "about": ", ".join(about)})
    return out


#: How much of an untitled entry's text names it (rss2email takes 70 characters too).
_UNTITLED_NAME = 70


def _entry_title(title: str | None, body: str) -> str:
    """An entry without a title (every post of a Mastodon or micro.blog feed) is named by its
    first words, cut at a word: "(untitled)" as every such mail's subject and heading told the
    reader nothing. ``body`` is the sanitised HTML."""
    named = _title(title, "")
    if named:
        return named
    text = " ".join(html_to_text(body).split())
    if len(text) <= _UNTITLED_NAME:
        return text or "(untitled)"
    cut = text[:_UNTITLED_NAME].rsplit(" ", 1)[0] or text[:_UNTITLED_NAME]
    return cut.rstrip(" ,;:.-—") + "…"


def _list_id(label: str, key: str, host: str) -> str:
    """RFC 2919 ``phrase <list-id>``: the identifier stays in the clear (filters match on it),
    only the phrase is encoded when it is not ASCII, and a backslash or quote in a title is
    escaped (one at the end escaped the closing quote). The phrase is cut like a subject."""
    safe = "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in key)
    name = _cut(label)
    phrase = f'"{quote(name)}"' if name.isascii() else _encoded("List-Id", name)
    return _Wire(f"{phrase} <{safe}.{host}>")


def confirmation(sub: Mapping[str, Any], feed: Mapping[str, Any], links: Links) -> Rendered:
    feed_title = _title(feed.get("title"), feed["url"])
    ctx = {
        "feed_title": feed_title,
        "feed_url": feed["url"],
        "confirm_url": links.url(f"/confirm/{sub['confirm_token']}"),
        "what": describe(sub["mode"], sub.get("hour", 8), sub.get("weekday", 0), sub.get("tz")),
        "email": sub["email"],
    }
    text, html = render("confirm", **ctx)
    return Rendered(f"Confirm your subscription to {feed_title}", text, html)


def item(
    sub: Mapping[str, Any],
    feed: Mapping[str, Any],
    entry: Mapping[str, Any],
    links: Links,
    *,
    sponsor_exhausted: bool = False,
) -> Rendered:
    feed_title = _title(feed.get("title"), feed["url"])
    site = _web_link(feed["url"], feed.get("link")) or feed["url"]
    entry_link = _web_link(site, entry.get("link"))
    base = entry_link or site
    body = sanitise(entry.get("content") or entry.get("summary"), base)
    entry_title = _entry_title(entry.get("title"), body)
    unsubscribe = links.url(f"/unsubscribe/{sub['manage_token']}")
    ctx = {
        "feed_title": feed_title,
        "entry_title": entry_title,
        "entry_link": entry_link,
        "published": entry.get("published"),
        "tz": sub.get("tz"),
        "categories": entry.get("categories") or [],
        "enclosures": _enclosures(base, entry.get("enclosures")),
        "body_html": Markup(body),  # noqa: S704 - sanitised by nh3 above
        "body_text": html_to_text(body),
        "unsubscribe_url": unsubscribe,
        "manage_url": links.url(f"/manage/{sub['manage_token']}"),
        "sponsor_exhausted": sponsor_exhausted,
    }
    text, html = render("item", **ctx)
    return Rendered(
        f"[{feed_title}] {entry_title}",
        text,
        html,
        list_id=_list_id(feed_title, f"feed-{feed['id']}", links.host),
        unsubscribe_url=unsubscribe,
    )


#: A digest shows each entry's HTML up to this length, else its text excerpt (as the plain-text
#: part does), and entries' bodies up to _DIGEST_BODIES characters in all, then titles and links
#: only: it carried every item's whole content, and 300 items of full-text feeds made a 12 MB
#: mail, which servers refuse for its size (10 MB is Postfix's default) — the digest lost whole.
_DIGEST_ENTRY_HTML = 2_000
_DIGEST_EXCERPT = 500
_DIGEST_BODIES = 1_000_000


def digest(
    reader: Mapping[str, Any],
    schedule: str,
    items: Sequence[Mapping[str, Any]],
    links: Links,
    *,
    exhausted_feeds: Sequence[str] = (),
) -> Rendered:
    groups: dict[int, dict[str, Any]] = {}
    budget = _DIGEST_BODIES
    for it in items:
        g = groups.setdefault(
            it["feed_id"],
            {
                "title": _title(it.get("feed_title"), it["feed_url"]),
                "unsubscribe_url": links.url(f"/unsubscribe/{it['manage_token']}"),
                "entries": [],
            },
        )
        site = _web_link(it["feed_url"], it.get("feed_link")) or it["feed_url"]
        link = _web_link(site, it.get("link"))
        body = sanitise(it.get("summary") or it.get("content"), link or site)
        excerpt = html_to_text(body)[:_DIGEST_EXCERPT]
        body_html = (
            Markup(body)  # noqa: S704 - sanitised by nh3 above
            if len(body) <= _DIGEST_ENTRY_HTML
            # its links are the entry's own (its title links to it): words only
            else Markup("<p>{}…</p>").format(html_to_text(body, links=False)[:_DIGEST_EXCERPT])
        )
        if budget < len(body_html) + len(excerpt):  # spent: the rest by title and link
            body_html, excerpt = Markup(""), ""
        budget -= len(body_html) + len(excerpt)
        g["entries"].append(
            {
                "title": _entry_title(it.get("title"), body),
                "link": link,
                "published": it.get("published"),
                "body_html": body_html,
                "body_text": excerpt,
            }
        )
    kind = "Weekly" if schedule.startswith("weekly") else "Daily"
    names = [g["title"] for g in groups.values()]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    n = len(items)
    subject = f"{kind} digest: {n} new item{'s' if n != 1 else ''} from {shown}"
    unsubscribe = links.url(f"/unsubscribe/digest/{reader['token']}/{schedule}")
    text, html = render(
        "digest",
        kind=kind,
        groups=list(groups.values()),
        count=n,
        tz=reader.get("tz"),
        unsubscribe_url=unsubscribe,
        exhausted_feeds=list(exhausted_feeds),
    )
    return Rendered(
        subject,
        text,
        html,
        list_id=_list_id(f"{kind} digest", f"digest-{schedule}", links.host),
        unsubscribe_url=unsubscribe,
    )
