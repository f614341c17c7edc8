"""Host names in their ASCII form, spelt as the fetcher sends them."""

from __future__ import annotations

import re

import idna

__all__ = ["idna2008", "idna_host", "is_host_name"]

_HOST_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def is_host_name(ascii_host: str) -> bool:
    """RFC 1035's host names, in ASCII lower case: letters, digits and inner hyphens, labels of
    1 to 63 characters (a mail domain or a sender's; one label, ``localhost``, is one too)."""
    return all(_HOST_LABEL.fullmatch(label) for label in ascii_host.split("."))


def idna2008(domain: str) -> str:
    """A domain's ASCII form by IDNA 2008 (UTS 46 mapping, non-transitional), as mail and web
    software use today. Raises UnicodeError (``idna.IDNAError`` is one) when it has none: for
    a mail domain there is no other form to fall back on."""
    return idna.encode(domain, uts46=True).decode("ascii")


def idna_host(host: str) -> str:
    """A host name's ASCII form as the fetcher sends it: IDNA 2008 (UTS 46), as yarl encodes
    the URL aiohttp connects to. Python's "idna" codec is IDNA 2003, which maps "straße.de" to
    "strasse.de", another domain; it is the fallback only for names IDNA 2008 refuses (as in
    yarl). Raises UnicodeError when neither has an ASCII form."""
    try:
        return idna2008(host)
    except UnicodeError:
        return host.encode("idna").decode("ascii")
