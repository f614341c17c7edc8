"""Per-key overrides are written by operators for publishers who asked for a spacing; they name
a site as the publisher did ("Blog.Example.com", "bücher.de"), not as the dispatcher spells its
keys (the registrable domain, lower-cased, in its ASCII form). An override that names no key
the dispatcher will ever use is spent on nothing, without a word: the publisher is read at the
default pace it asked us not to use."""

from __future__ import annotations

import pytest

from fairfetch.errors import ConfigError
from fairfetch.net.politeness import PolitenessState, politeness_key


@pytest.mark.parametrize(
    ("written", "url"),
    [
        ("blog.example.com", "https://blog.example.com/feed"),  # a host, not its key
        ("Example.COM", "https://www.example.com/feed"),
        ("example.com.", "https://example.com/feed"),
        ("bücher.de", "https://www.bücher.de/feed"),  # keys are the ASCII (IDNA) form
        ("alice.github.io", "https://alice.github.io/feed"),  # under a private-section suffix
        ("https://news.example.org/rss", "https://news.example.org/rss"),  # a URL pasted in
    ],
)
def test_an_override_applies_to_the_key_of_the_site_it_names(written: str, url: str) -> None:
    s: PolitenessState[int] = PolitenessState(
        per_key_in_flight=2, overrides={written: {"in_flight": 1, "gap": 10.0}}
    )
    key = politeness_key(url)
    assert (s.cap(key), s.gap(key)) == (1, 10.0)
    assert (s.cap("other.test"), s.gap("other.test")) == (2, 0.0)  # and nothing else


def test_backend_and_exact_keys_are_kept_as_written_but_case() -> None:
    s: PolitenessState[int] = PolitenessState(
        overrides={
            "Backend:Substack": {"gap": 2.0},
            "backend:addr:127.0.0.1": {"in_flight": 1},
            "example.com": {"gap": 3.0},
        }
    )
    assert s.gap("backend:substack") == 2.0
    assert s.cap("backend:addr:127.0.0.1") == 1
    assert s.gap("example.com") == 3.0


def test_two_overrides_on_one_key_keep_the_stricter_of_each() -> None:
    s: PolitenessState[int] = PolitenessState(
        per_key_in_flight=3,
        overrides={
            "a.example.com": {"in_flight": 2, "gap": 30.0},
            "b.example.com": {"in_flight": 1, "gap": 5.0},
        },
    )
    assert (s.cap("example.com"), s.gap("example.com")) == (1, 30.0)


def test_an_override_naming_no_site_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"key_overrides\['exa mple\.com'\]"):
        PolitenessState(overrides={"exa mple.com": {"gap": 1.0}})
