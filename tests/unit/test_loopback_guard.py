"""The suite's own guard (tests/conftest.py): a test that looks a name up in the machine's DNS
or connects past loopback is refused before any packet leaves, and fails."""

from __future__ import annotations

import socket

import pytest


def test_a_name_lookup_is_refused_before_it_is_sent(loopback_guard) -> None:
    with pytest.raises(socket.gaierror, match="test guard"):
        socket.getaddrinfo("example.com", 80)
    assert loopback_guard.take() == ["DNS lookup of 'example.com'"]


def test_a_connection_past_loopback_is_refused_before_it_is_made(loopback_guard) -> None:
    with socket.socket() as s, pytest.raises(ConnectionRefusedError, match="test guard"):
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: never reached
    with socket.socket(socket.AF_INET6) as s, pytest.raises(ConnectionRefusedError):
        s.connect_ex(("2001:db8::1", 9))
    assert len(loopback_guard.take()) == 2


def test_loopback_names_and_addresses_pass(loopback_guard) -> None:
    assert socket.getaddrinfo("127.0.0.2", 80)
    assert socket.getaddrinfo("localhost", 80)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.socket() as client:
            client.connect(server.getsockname())
    assert loopback_guard.take() == []
