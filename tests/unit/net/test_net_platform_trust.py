"""Which member of a platform's key may pause it (net/platform_trust.py): pure, no traffic.
The addresses here are documentation and example ranges; nothing connects to them."""

from __future__ import annotations

from fairfetch.net.backends import platform_of_host
from fairfetch.net.platform_trust import PlatformTrust

SUB = "backend:substack"


def test_keys_no_claim_made_always_bind() -> None:
    trust = PlatformTrust()
    assert trust.binds_key("example.com", "blog.example.com", None)
    assert trust.binds_key("backend:addr:192.0.2.7", "a.example", "192.0.2.7")


def test_the_platforms_own_hosts_bind_its_key_with_nothing_seen() -> None:
    trust = PlatformTrust()
    assert trust.binds_key(SUB, "someone.substack.com", "198.51.100.1")
    assert trust.binds_key(SUB, "SUBSTACK.COM.", None)
    assert not trust.binds_key(SUB, "notsubstack.com", "198.51.100.1")
    assert not trust.binds_key(SUB, "substack.com.evil.example", "198.51.100.1")


def test_a_claimant_binds_only_from_a_network_the_platform_answered_from() -> None:
    trust = PlatformTrust()
    assert not trust.binds_key(SUB, "news.example", "203.0.113.9")  # nothing seen yet
    trust.observe("alice.substack.com", "203.0.113.1")
    assert trust.binds_key(SUB, "news.example", "203.0.113.9")  # same /24
    assert not trust.binds_key(SUB, "news.example", "203.0.114.9")
    assert not trust.binds_key(SUB, "news.example", None)
    assert not trust.binds_key("backend:ghost", "news.example", "203.0.113.9")


def test_ipv6_networks_are_48_bits() -> None:
    trust = PlatformTrust()
    trust.observe("alice.substack.com", "2001:db8:1:2::1")
    assert trust.binds_key(SUB, "news.example", "2001:db8:1:ffff::9")
    assert not trust.binds_key(SUB, "news.example", "2001:db8:2::1")


def test_a_claimant_cannot_vouch_for_itself() -> None:
    trust = PlatformTrust()
    trust.observe("news.example", "203.0.113.9")  # not one of the platform's own hosts
    trust.observe("alice.substack.com", "not an address")
    assert not trust.binds_key(SUB, "news.example", "203.0.113.9")


def test_networks_remembered_are_bounded_oldest_first() -> None:
    trust = PlatformTrust()
    for i in range(257):
        trust.observe("alice.substack.com", f"10.{i // 256}.{i % 256}.1")
    assert not trust.binds_key(SUB, "news.example", "10.0.0.5")  # the first, forgotten
    assert trust.binds_key(SUB, "news.example", "10.0.1.5")
    assert trust.binds_key(SUB, "news.example", "10.1.0.5")


def test_platform_of_host() -> None:
    assert platform_of_host("x.letterbox.test") == "backend:letterbox"
    assert platform_of_host("a.blogspot.com") == "backend:blogger"
    assert platform_of_host("example.com") is None
