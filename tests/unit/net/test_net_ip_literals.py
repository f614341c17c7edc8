"""The IP-literal pre-check may only ever skip hosts that no parser would read as an address."""

from __future__ import annotations

import ipaddress
import socket

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.net.ip_literals import ip_literal, never_ip_literal

_ALPHABET = st.sampled_from("0123456789abcdefxXABCDEF.:%[]gz-lo")


def _is_literal(host: str) -> bool:
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(bare.split("%", 1)[0])
        return True
    except ValueError:
        pass
    try:
        socket.inet_aton(bare)  # pure parsing: no lookup, no connection
        return True
    except (OSError, ValueError):
        return False


@given(st.text(_ALPHABET, max_size=24))
def test_a_skipped_host_is_never_a_literal(host: str) -> None:
    if never_ip_literal(host):
        assert not _is_literal(host)


def test_every_form_of_literal_takes_the_full_check() -> None:
    for host in ["127.0.0.1", "2130706433", "0177.1", "0x7f.1", "0X7F.0.0.1", "::1",
                 "[::1]", "fe80::1%eth0", "::ffff:127.0.0.1", "cafe.1", "[0]", "[127.0.0.1]",
                 "[00"]:  # fmt: skip
        assert not never_ip_literal(host), host


def test_ordinary_hostnames_are_skipped() -> None:
    for host in ["blog1.test", "www.example.com", "xn--caf-dma.example", "localhost"]:
        assert never_ip_literal(host), host


@given(st.text(_ALPHABET, max_size=24))
def test_ip_literal_reads_what_ipaddress_reads(host: str) -> None:
    try:
        expected: object = ipaddress.ip_address(host)
    except ValueError:
        expected = None
    assert ip_literal(host) == expected
