"""Which member of a platform's politeness key may pause the whole key.

A feed joins ``backend:<platform>`` on what its response says (a header, the generator): a
claim anyone can make. A hostile feed claiming to be on Substack, answering 429 with
``Retry-After: 86400``, would otherwise stop every Substack feed for a day, in every process
(the pause is stored). A genuine custom domain is served by the platform's own servers, so its
address is near the addresses the platform's own hostnames answered from; a claimant's is not.

So a Retry-After binds the platform's key when it comes from the platform's own hostname
(``*.substack.com``), or from an address in the same network (/24 for IPv4, /48 for IPv6) as
one the platform's own hostnames answered from in this process. Any other member's throttle
still halves the key's rate (AIMD: the cautious side when a genuine custom domain's network is
not known yet) and reschedules its own feed by the Retry-After; it does not pause the key.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict

from fairfetch.net.backends import BACKENDS, platform_of_host

__all__ = ["PlatformTrust"]

#: Networks remembered per platform (the oldest forgotten first): enough for a platform's
#: edge, bounded against a flood of addresses.
_MAX_NETWORKS = 256


def _network(address: str) -> str | None:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    prefix = 24 if ip.version == 4 else 48
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


class PlatformTrust:
    """The networks each platform's own hostnames answered from (in this process)."""

    def __init__(self) -> None:
        self._networks: dict[str, OrderedDict[str, None]] = {}

    def observe(self, host: str, address: str | None) -> None:
        """``host`` answered from ``address``: remembered if it is a platform's own."""
        key = platform_of_host(host)
        if key is None or not address:
            return  # most answers: no address parsed (this runs for every fetch)
        net = _network(address)
        if net is None:
            return
        seen = self._networks.setdefault(key, OrderedDict())
        seen[net] = None
        seen.move_to_end(net)
        if len(seen) > _MAX_NETWORKS:
            seen.popitem(last=False)

    def binds_key(self, key: str, host: str, address: str | None) -> bool:
        """May a throttle from ``host`` (answering from ``address``) pause ``key``?"""
        if key not in BACKENDS:
            return True  # a domain's key, or one grouped by address: no claim made it
        if platform_of_host(host) == key:
            return True
        net = _network(address) if address else None
        return net is not None and net in self._networks.get(key, ())
