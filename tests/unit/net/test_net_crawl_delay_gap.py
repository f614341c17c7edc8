"""A robots.txt Crawl-delay belongs to one host; the gap it sets is its key's, shared by every
host of that registrable domain (www.example.com, feeds.example.com). The crawler hands each
fetched host's delay to the key as it learns it: when the last host to answer asked for less,
the key's gap fell to that, and the next request to the host that asked for 60 s started a
second after its last one."""

from __future__ import annotations

from fairfetch.net.politeness import Feedback, PolitenessState


def test_a_shorter_crawl_delay_of_a_sibling_host_does_not_shorten_the_keys_gap() -> None:
    s: PolitenessState[str] = PolitenessState(per_key_in_flight=2)
    s.set_gap("example.com", 60.0)  # www.example.com's Crawl-delay, learnt first
    s.set_gap("example.com", 1.0)  # feeds.example.com's, learnt next
    assert s.gap("example.com") == 60.0


def test_the_slow_host_is_not_asked_again_before_its_delay() -> None:
    s: PolitenessState[str] = PolitenessState(per_key_in_flight=2)
    for item, host in (("w1", "www.example.com"), ("f1", "feeds.example.com")):
        s.push("example.com", host, item)
    s.push("example.com", "www.example.com", "w2")
    first = s.pop_ready(0.0)
    second = s.pop_ready(0.0)
    assert first is not None
    assert second is not None
    s.set_gap("example.com", 60.0)  # as the crawler hands it on, after each fetch
    s.finish(first, Feedback(), 0.5)
    s.set_gap("example.com", 1.0)
    s.finish(second, Feedback(), 0.5)
    assert s.pop_ready(1.0) is None  # www asked for 60 s between requests
    assert s.pop_ready(59.0) is None
    started = s.pop_ready(60.0)
    assert started is not None
    assert started.item == "w2"


def test_a_host_may_lower_its_own_crawl_delay_and_none_clears_every_delay() -> None:
    s: PolitenessState[str] = PolitenessState()
    s.set_gap("example.com", 60.0, host="www.example.com")
    s.set_gap("example.com", 5.0, host="www.example.com")  # its robots.txt, a day later
    assert s.gap("example.com") == 5.0
    s.set_gap("example.com", 2.0, host="feeds.example.com")
    assert s.gap("example.com") == 5.0
    s.set_gap("example.com", None, host="www.example.com")
    assert s.gap("example.com") == 2.0
    s.set_gap("example.com", 7.0)
    s.set_gap("example.com", None)
    assert s.gap("example.com") == 0.0
