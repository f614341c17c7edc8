"""Ranges assigned after the Python we run knew them: ``ipaddress`` in Python 3.11 calls
3fff::/20 (IPv6 documentation, RFC 9637, 2024) global, so an answer there passed the
perimeter. They are named in the refused table instead of trusted to ``is_global``."""

from __future__ import annotations

import pytest

from fairfetch.net.perimeter import check_address


@pytest.mark.parametrize("address", ["3fff::1", "3fff:fff:ffff:ffff::1"])
def test_the_ipv6_documentation_range_of_rfc_9637_is_refused(address: str) -> None:
    assert check_address(address) is not None


def test_the_address_past_3fff_20_stays_public() -> None:
    assert check_address("3fff:1000::1") is None


def test_an_allowed_network_still_opens_it() -> None:
    assert check_address("3fff::1", ["3fff::/20"]) is None
