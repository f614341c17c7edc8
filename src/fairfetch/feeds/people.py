"""People and contacts: who wrote a feed, and how to reach its publisher.

A feed names people in many places (``managingEditor``, ``webMaster``, ``author``,
``dc:creator``, ``itunes:author``, ``itunes:owner``, ``atom:author``, ``podcast:person``, JSON
Feed ``authors``) and most of those names are not people: platform names ("Substack"), role names
("Editor", "Webmaster"), a bare mailbox, the feed's own title. Contacts are kept whatever the name
says, each with its ``source``, because provenance is what makes one worth more than another: a
mailbox in ``itunes:owner`` was typed by the owner for podcast directories; one in ``webMaster``
is often the hosting company's. ``SOURCE_ORDER`` ranks them, strongest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

from fairfetch.feeds.model import Contact, Person

__all__ = [
    "SOURCE_ORDER",
    "collect",
    "is_person_name",
    "mailbox_of",
    "network_of",
    "parse_person",
    "source_strength",
]

#: Strongest first. Unknown sources rank last.
SOURCE_ORDER: tuple[str, ...] = (
    "itunes:owner",
    "podcast:person",
    "atom:author",
    "json:author",
    "managingEditor",
    "author",
    "dc:creator",
    "itunes:author",
    "googleplay:owner",
    "googleplay:author",
    "dc:publisher",
    "atom:contributor",
    "webMaster",
    "unknown",
)
_RANK = {s: i for i, s in enumerate(SOURCE_ORDER)}

# Internationalised mailboxes too (RFC 6531: "émilie@exämple.de"): read in ASCII only, the
# address "émilie@…" was found as "milie@…", someone else's.
_EMAIL = re.compile(r"[\w.%+\-']+@[\w.\-]+\.[^\W\d_]{2,}")
_NAME_ANGLE = re.compile(r"^\s*(?P<name>[^<]*?)\s*<(?:mailto:)?(?P<email>[^>]+)>\s*$")
_NAME_PAREN_EMAIL = re.compile(
    r"^\s*(?P<name>[^(]*?)\s*\(\s*(?:mailto:)?(?P<email>[^()\s@]+@[^()\s]+)\s*\)\s*$")
_EMAIL_PAREN = re.compile(r"^\s*(?:mailto:)?(?P<email>\S+@\S+?)\s*\((?P<name>[^)]*)\)\s*$")

# A mailto: link's scheme and query around an address ("mailto:jane@x.org?subject=Hi"): the
# mailbox is the address alone, and neither piece is anybody's name.
_MAILTO = re.compile(r"mailto:\s*(?=[^\s@<>()]+@)", re.IGNORECASE)
_ADDRESS_QUERY = re.compile(r"(@[A-Za-z0-9.\-]+\.[A-Za-z]{2,})\?[^\s()<>]*")
# An address obfuscated against harvesters: "jane [at] x [dot] org", "jane(at)x.org",
# "jane at x dot org". A bare " at " counts only beside a spelled-out dot, so that
# "Jane Doe at Example.com" (where she works) stays a name.
_BRACKET_AT = r"\s*[\[({<]\s*at\s*[\])}>]\s*"
_DOT = r"(?:\s*[\[({<]\s*dot\s*[\])}>]\s*|\s+dot\s+|\.)"
_OBFUSCATED = re.compile(
    rf"(?<![\w.%+\-])(?P<local>[A-Za-z0-9._%+\-]+)(?P<at>{_BRACKET_AT}|\s+at\s+)"
    rf"(?P<domain>[A-Za-z0-9\-]+(?:{_DOT}[A-Za-z0-9\-]+)*{_DOT}[A-Za-z]{{2,}})(?![\w\-])",
    re.IGNORECASE)
_SPELLED_DOT = re.compile(_DOT.replace(r"|\.)", ")"), re.IGNORECASE)


def _deobfuscate(m: re.Match[str]) -> str:
    domain = m.group("domain")
    if m.group("at").strip().lower() == "at" and not _SPELLED_DOT.search(domain):
        return m.group(0)  # "Jane Doe at Example.com": a name, not an address
    return m.group("local") + "@" + re.sub(_DOT, ".", domain, flags=re.IGNORECASE)


_ROLE_NAMES = frozenset({
    "editor", "editors", "the editors", "editorial", "editorial team", "editorial staff",
    "editor in chief", "editor-in-chief", "webmaster", "web master", "admin", "administrator",
    "staff", "team", "the team", "author", "authors", "publisher", "owner", "contributor",
    "contributors", "guest", "guest author", "unknown", "anonymous", "anon", "moderator",
    "newsroom", "news desk", "newsdesk", "desk", "support", "info", "information", "contact",
    "marketing", "sales", "press", "hello", "noreply", "no-reply", "no reply", "donotreply",
    "user", "root", "host", "hosts", "customer service", "feed", "rss", "blog", "podcast",
    "office", "redaktion", "rédaction", "redacción", "webmestre", "n/a", "none", "null",
    "newsletter", "subscriptions", "help", "team member", "site admin", "wordpress admin",
})

# The one-word roles, and the words that join them: a byline made only of these ("Podcast Host",
# "Editor & Publisher", "Editors of the Blog") is a role however many words it has.
_ROLE_WORDS = frozenset(r for r in _ROLE_NAMES if " " not in r and "-" not in r)
_JOINERS = frozenset({"the", "of", "and", "a", "an", "in", "for", "at"})

_PLATFORM_NAMES = frozenset({
    "substack", "ghost", "beehiiv", "buttondown", "mailchimp", "letterbox", "wordpress",
    "wordpress.com", "blogger", "medium", "tumblr", "squarespace", "wix", "libsyn", "anchor",
    "anchor.fm", "spotify", "spotify for podcasters", "spotify for creators", "buzzsprout",
    "podbean", "simplecast", "megaphone", "transistor", "captivate", "acast", "soundcloud",
    "youtube", "vimeo", "feedburner", "convertkit", "kit", "revue", "patreon", "itunes",
    "apple podcasts", "google", "hubspot", "tinyletter", "emailoctopus", "blogspot", "typepad",
    "livejournal", "hashnode", "dev.to", "write.as", "micro.blog", "bear blog", "jekyll", "hugo",
    "podcastindex", "omny studio", "art19", "iheartradio", "audioboom", "redcircle", "riverside",
})

_PLATFORM_TEAMS = frozenset({p + s for p in _PLATFORM_NAMES for s in (" team", " staff")})

# Words that end the name of a group or a company ("Support Team", "Substack Inc."). Such a
# name is a role or a platform when what comes before them is one; "Tim Team" stays a person.
_ORG_SUFFIXES = frozenset({
    "team", "staff", "crew", "department", "dept", "inc", "incorporated", "llc", "ltd",
    "limited", "gmbh", "corp", "corporation", "co", "company", "plc", "sa", "sas", "bv",
})
_PUNCT = re.compile(r"[^\w\s']|_")

_NETWORKS: tuple[tuple[str, str], ...] = (
    ("twitter.com", "x"), ("x.com", "x"), ("bsky.app", "bluesky"), ("github.com", "github"),
    ("gitlab.com", "gitlab"), ("linkedin.com", "linkedin"), ("facebook.com", "facebook"),
    ("fb.com", "facebook"), ("instagram.com", "instagram"), ("youtube.com", "youtube"),
    ("youtu.be", "youtube"), ("tiktok.com", "tiktok"), ("threads.net", "threads"),
    ("threads.com", "threads"), ("reddit.com", "reddit"), ("medium.com", "medium"),
    ("patreon.com", "patreon"), ("twitch.tv", "twitch"), ("keybase.io", "keybase"),
    ("mastodon.social", "mastodon"), ("mstdn.social", "mastodon"), ("fosstodon.org", "mastodon"),
    ("hachyderm.io", "mastodon"), ("infosec.exchange", "mastodon"), ("soundcloud.com",
    "soundcloud"), ("ko-fi.com", "ko-fi"), ("buymeacoffee.com", "buymeacoffee"),
    ("telegram.me", "telegram"), ("t.me", "telegram"), ("substack.com", "substack"),
    ("pinterest.com", "pinterest"), ("flickr.com", "flickr"), ("vimeo.com", "vimeo"),
)
_MASTODON_PATH = re.compile(r"^/@[A-Za-z0-9_]+/?$")


def source_strength(source: str) -> int:
    """Rank of a contact's source; lower is stronger."""
    return _RANK.get(source, len(SOURCE_ORDER))


def network_of(url: str) -> str:
    """The network a contact URL belongs to: ``email``, ``x``, ``mastodon``, …, else ``web``."""
    low = url.strip().lower()
    if low.startswith("mailto:") or ("@" in low and "/" not in low and _EMAIL.fullmatch(low)):
        return "email"
    if low.startswith("acct:") or re.fullmatch(r"@[\w.]+@[\w.\-]+\.[a-z]{2,}", low):
        return "fediverse"
    try:
        parts = urlsplit(low)
    except ValueError:
        return "web"
    host = (parts.hostname or "").removeprefix("www.").removeprefix("m.")
    for domain, network in _NETWORKS:
        if host == domain or host.endswith("." + domain):
            return network
    if _MASTODON_PATH.match(parts.path or ""):
        return "mastodon"
    return "web"


def _clean(name: str | None) -> str | None:
    if name is None:
        return None
    name = " ".join(name.split()).strip(" ,;\"'")
    return name or None


@lru_cache(maxsize=8192)  # the same byline on every entry; Person is frozen, so shareable
def parse_person(text: str | None) -> Person | None:
    """``jane@x.org (Jane Doe)``, ``Jane Doe <jane@x.org>``, a bare mailbox, or a bare name."""
    if not text:
        return None
    text = text.strip()
    if not text:
        return None
    if "@" not in text and _OBFUSCATED.search(text):
        text = _OBFUSCATED.sub(_deobfuscate, text)
    if "@" in text:
        if ":" in text:
            text = _MAILTO.sub("", text)
        if "?" in text:
            text = _ADDRESS_QUERY.sub(r"\1", text)
    m = _NAME_PAREN_EMAIL.match(text)
    if m and "@" not in m.group("name"):
        return Person(name=_clean(m.group("name")), email=m.group("email").strip())
    m = _EMAIL_PAREN.match(text)
    if m:
        email = m.group("email").strip()
        return Person(name=_clean(m.group("name")), email=email if "@" in email else None)
    m = _NAME_ANGLE.match(text)
    if m and "@" in m.group("email"):
        return Person(name=_clean(m.group("name")), email=m.group("email").strip())
    stripped = text.removeprefix("mailto:")
    if _EMAIL.fullmatch(stripped):
        return Person(email=stripped)
    m2 = _EMAIL.search(text)
    if m2 and len(text) < 200:
        rest = _clean((text[: m2.start()] + text[m2.end():]).replace("()", " "))
        return Person(name=rest, email=m2.group(0))
    return Person(name=_clean(text))


def mailbox_of(text: str | None) -> str | None:
    """The address in an element meant to hold only a mailbox (``itunes:email``, Atom's
    ``email``), which publishers fill like a byline: "Jane <jane@x.org>", "mailto:…",
    "jane [at] x [dot] org". None when it holds none."""
    person = parse_person(text)
    return None if person is None else person.email


def _norm(text: str) -> str:
    return " ".join(text.casefold().replace("\u2019", "'").split())


def _words(normed: str) -> list[str]:
    """The words of a ``_norm``ed name, punctuation aside: "Morning Brew!", "morning-brew" and
    "« Morning Brew »" are the same words; an apostrophe joins ("Jane's" is "janes")."""
    return _PUNCT.sub(" ", normed).replace("'", "").split()


def _is_org_of_role(words: list[str]) -> bool:
    """"Admin Team", "The Support Team", "Substack, Inc.": role or platform words (or none)
    followed by the words that end a group's or a company's name."""
    end = len(words)
    while end and words[end - 1] in _ORG_SUFFIXES:
        end -= 1
    if end == len(words):
        return False
    start = 1 if words and words[0] == "the" else 0
    core = " ".join(words[start:end])
    return not core or core in _ROLE_NAMES or core in _PLATFORM_NAMES


@lru_cache(maxsize=8192)  # bylines repeat on every entry of a feed
def is_person_name(
    name: str | None, feed_title: str | None = None, email: str | None = None
) -> bool:
    """Whether ``name`` plausibly names a person (or a named group of people).

    Rejects platform names, role names, a role's or a platform's team or company ("Admin Team",
    "Substack Inc."), bare mailboxes and mailbox-like handles (a name that is the local part of
    its own ``email``), URLs and domain names, and the feed's own title whatever its punctuation
    or case: all of them appear in author fields in the wild.
    """
    if not name:
        return False
    n = _norm(name).strip(" .:-")
    if not n or len(n) > 100:
        return False
    if "@" in n and _EMAIL.search(n):
        return False
    if "://" in n or n.startswith("www.") or re.fullmatch(r"[\w\-]+(\.[\w\-]+)+", n):
        return False
    bare = n.removeprefix("the ")
    if n in _ROLE_NAMES or bare in _ROLE_NAMES or n in _PLATFORM_NAMES:
        return False
    if n in _PLATFORM_TEAMS:
        return False
    words = _words(n)
    if _is_org_of_role(words):
        return False
    if len(words) > 1 and all(w in _ROLE_WORDS or w in _JOINERS for w in words) and not all(
            w in _JOINERS for w in words):
        return False
    if feed_title and (n == _norm(feed_title).strip(" .:-")
                       or words == (_words(_norm(feed_title)) or None)):
        return False
    if email and "@" in email and n == _norm(email.split("@", 1)[0]):
        return False
    return any(c.isalpha() for c in n)


def _mailbox(text: str) -> str | None:
    """The address of ``jane@x.org``, ``mailto:Jane@X.org``, ``MAILTO: jane@x.org?subject=…``,
    lower-cased: one mailbox, one contact, however the feed spelled it."""
    address = text.strip()
    if address[:7].lower() == "mailto:":
        address = address[7:].strip()
    address = address.split("?", 1)[0]
    return address.lower() if _EMAIL.fullmatch(address) else None


# A profile URI in these schemes (or none: a relative one, a fediverse handle) can be followed;
# javascript:, data:, file: and the like reach nobody.
_PROFILE_SCHEMES = frozenset({"", "http", "https", "acct"})


def _contacts_of(person: Person, source: str) -> list[Contact]:
    out: list[Contact] = []
    if person.email:
        mailbox = _mailbox(person.email)
        if mailbox:
            out.append(Contact(url="mailto:" + mailbox, network="email", source=source))
    url = (person.url or "").strip()
    if url[:7].lower() == "mailto:":
        mailbox = _mailbox(url)
        if mailbox:
            out.append(Contact(url="mailto:" + mailbox, network="email", source=source))
    elif url:
        try:
            scheme = urlsplit(url).scheme.lower()
        except ValueError:
            scheme = "?"
        if scheme in _PROFILE_SCHEMES:
            out.append(Contact(url=url, network=network_of(url), source=source))
    return out


def collect(
    declared: Iterable[tuple[str, Person]], feed_title: str | None
) -> tuple[list[Person], list[Contact]]:
    """Authors (people who pass the person test) and contacts (every mailbox and profile, each
    with the strongest source it appeared in), from ``(source, person)`` pairs in feed order."""
    authors: list[Person] = []
    seen_people: dict[str, int] = {}
    best: dict[str, Contact] = {}
    order: list[str] = []
    for source, person in declared:
        for contact in _contacts_of(person, source):
            key = contact.url.lower()
            old = best.get(key)
            if old is None:
                order.append(key)
                best[key] = contact
            elif source_strength(source) < source_strength(old.source):
                best[key] = contact
        if is_person_name(person.name, feed_title, person.email):
            assert person.name is not None
            key = _norm(person.name)
            idx = seen_people.get(key)
            if idx is None:
                seen_people[key] = len(authors)
                authors.append(person)
            else:  # same person named twice: merge what each place knew
                old_p = authors[idx]
                authors[idx] = Person(
                    name=old_p.name, email=old_p.email or person.email, url=old_p.url or person.url
                )
    contacts = sorted(
        (best[k] for k in order), key=lambda c: source_strength(c.source)
    )  # stable: feed order within one source
    return authors, contacts


def entry_people(declared: Iterable[Person], feed_title: str | None) -> list[Person]:
    """An entry's authors: named people kept, and mailboxes kept even when the name is a role
    (an entry's byline is less often a platform name, and the mailbox is still the author's)."""
    out: list[Person] = []
    seen: set[tuple[str | None, str | None, str | None]] = set()
    for p in declared:
        if not is_person_name(p.name, feed_title, p.email):
            if not p.email and not p.url:
                continue
            p = Person(name=None, email=p.email, url=p.url)
        k = (p.name, p.email, p.url)
        if k not in seen:
            seen.add(k)
            out.append(p)
    return out
