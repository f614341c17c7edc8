"""A cheap test that rules a hostname out as an IP literal before the costly parsers run."""

from __future__ import annotations

__all__ = ["never_ip_literal"]

#: Every character an IPv4 literal can hold in any form the OS accepts (dotted, one number,
#: octal, hex: 127.0.0.1, 2130706433, 0177.1, 0x7f.1).
_IPV4_LITERAL_CHARS = frozenset("0123456789abcdefABCDEFxX.")


def never_ip_literal(host: str) -> bool:
    """True when ``host`` cannot be an IP literal of any form, so the exception-driven parsers
    (``ipaddress.ip_address``, ``inet_aton``: tens of µs a hostname, on every fetch) can be
    skipped. Anything with a colon (IPv6, scope ids like ``%eth0``) takes the full check."""
    return ":" not in host and not _IPV4_LITERAL_CHARS.issuperset(host)
