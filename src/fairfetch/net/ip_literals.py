"""IP literals in hostnames: a cheap character test first, the costly parsers only when needed.

Every place that asks "is this host an address?" (the perimeter's literal check, the resolver,
politeness keys) asks here, on every fetch.
"""

from __future__ import annotations

import ipaddress

__all__ = ["ip_literal", "never_ip_literal"]

#: Every character an IPv4 literal can hold in any form the OS accepts (dotted, one number,
#: octal, hex: 127.0.0.1, 2130706433, 0177.1, 0x7f.1).
_IPV4_LITERAL_CHARS = frozenset("0123456789abcdefABCDEFxX.")


def never_ip_literal(host: str) -> bool:
    """True when ``host`` cannot be an IP literal of any form, so the exception-driven parsers
    (``ipaddress.ip_address``, ``inet_aton``: tens of µs a hostname, on every fetch) can be
    skipped. Anything with a colon (IPv6, scope ids like ``%eth0``) or a bracket (``[0]``, a
    bracketed IPv4 form a careless caller might pass) takes the full check."""
    return ":" not in host and "[" not in host and not _IPV4_LITERAL_CHARS.issuperset(host)


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` is in the canonical forms ``ipaddress`` reads (dotted IPv4, IPv6
    without brackets), or None. The legacy numeric IPv4 forms are the perimeter's business."""
    if never_ip_literal(host):
        return None
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None
