"""Host names in their ASCII form, spelt as the fetcher sends them."""

from __future__ import annotations

import idna

__all__ = ["idna_host"]


def idna_host(host: str) -> str:
    """A host name's ASCII form as the fetcher sends it: IDNA 2008 (UTS 46), as yarl encodes
    the URL aiohttp connects to. Python's "idna" codec is IDNA 2003, which maps "straße.de" to
    "strasse.de", another domain; it is the fallback only for names IDNA 2008 refuses (as in
    yarl). Raises UnicodeError when neither has an ASCII form."""
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except UnicodeError:
        return host.encode("idna").decode("ascii")
