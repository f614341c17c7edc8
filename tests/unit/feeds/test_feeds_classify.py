"""Classification is a pure function of the signals; each rule tested in both directions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.feeds.classify import Signals, classify, detect_platform


def kind(**kw: object) -> str:
    return classify(Signals(**kw))[0]  # type: ignore[arg-type]


def test_feeds_classify_itunes_owner_alone_is_a_blog() -> None:
    k, evidence = classify(Signals(itunes_owner=True, itunes_author=True, entries=3))
    assert k == "blog"
    assert any("itunes:owner" in e for e in evidence)


def test_feeds_classify_newsletter_platform_with_itunes_owner_and_images() -> None:
    k, evidence = classify(Signals(generator="Substack", itunes_owner=True, entries=2,
                                   image_entries=2))
    assert k == "newsletter"
    assert evidence[0].startswith("newsletter platform substack")


@pytest.mark.parametrize("signals", [
    Signals(generator="Ghost 5.82"), Signals(generator="beehiiv"),
    Signals(generator="Buttondown"), Signals(urls=("https://x.substack.com/feed",)),
    Signals(urls=("https://us5.campaign-archive.com/feed?u=1",)),
    Signals(headers={"X-Platform": "Letterbox"}), Signals(generator="Letterbox"),
    Signals(enclosure_hosts=("substack-post-media.s3.amazonaws.com",)),
])
def test_feeds_classify_newsletter_fingerprints(signals: Signals) -> None:
    assert classify(signals)[0] == "newsletter"


@pytest.mark.parametrize("signals", [
    Signals(generator="WordPress 6.4"), Signals(generator="Hugo"),
    Signals(urls=("https://ghostly.example/feed",)), Signals(headers={"X-Platform": "other"}),
    Signals(generator="Letterboxd"),
])
def test_feeds_classify_not_newsletters(signals: Signals) -> None:
    assert classify(signals)[0] == "blog"


def test_feeds_classify_declared_show_without_episodes_is_a_podcast() -> None:
    assert kind(itunes_type="episodic", entries=0) == "podcast"
    assert kind(podcast_tags=("guid",), entries=0) == "podcast"
    assert kind(itunes_category=True, entries=0) == "blog"  # a category is not a declared show


def test_feeds_classify_audio_enclosures_make_a_podcast_even_on_a_newsletter_platform() -> None:
    k, evidence = classify(Signals(generator="Substack", entries=4, audio_entries=4))
    assert k == "podcast"
    assert any("substack" in e for e in evidence)


def test_feeds_classify_video() -> None:
    assert kind(entries=2, video_entries=1) == "video"
    assert kind(entries=2, media_video_entries=2) == "video"
    assert kind(urls=("https://www.youtube.com/feeds/videos.xml?channel_id=x",)) == "video"
    assert kind(entries=2, image_entries=2) == "blog"


@pytest.mark.parametrize(("medium", "expected"), [
    ("podcast", "podcast"), ("music", "podcast"), ("video", "video"), ("film", "video"),
    ("newsletter", "newsletter"), ("blog", "blog"), ("podcastL", "podcast"),
])
def test_feeds_classify_podcast_medium_is_explicit(medium: str, expected: str) -> None:
    assert kind(podcast_medium=medium, entries=1, audio_entries=1 if expected != "podcast"
                else 0) == expected


# detect_platform starts its ordered scan at the first platform a cached lookup points at; the
# plain ordered scan over every platform is the reference it must equal.
def _reference_platform(signals: Signals) -> tuple[str, str] | None:
    from fairfetch.feeds.classify import NEWSLETTER_PLATFORMS, _host, _under

    headers = {k.lower(): v.lower() for k, v in signals.headers.items()}
    hosts = list(dict.fromkeys(h for h in map(_host, signals.urls) if h))
    for name, gen, suffixes, cdn_hosts, header_marks in NEWSLETTER_PLATFORMS:
        if gen is not None and signals.generator and gen.search(signals.generator):
            return name, f"generator {signals.generator!r}"
        for hname, hvalue in header_marks:
            if hname in headers and (not hvalue or hvalue in headers[hname]):
                return name, f"header {hname}: {headers[hname]}"
        for h in hosts:
            if any(_under(h, s) for s in suffixes):
                return name, f"host {h}"
        for h in signals.enclosure_hosts:
            if any(c in h for c in cdn_hosts):
                return name, f"enclosures hosted on {h}"
    return None


_GENERATORS = ["WordPress 6.4", "Substack", "Ghost 5.2", "beehiiv", "Letterbox", "kit.com",
               "paragraph.xyz", "Revue", "Hugo", None]
_URLS = ["https://x.substack.com/feed", "https://a.ghost.io/rss", "https://ck.page/x",
         "https://news.letterbox.test/feed", "https://blog.example.org/feed", "mailto:a@b",
         "https://www.youtube.com/feeds", "http://[::1]:8080/feed"]
_HEADERS = [{}, {"X-Served-By": "Substack"}, {"x-served-by": "fastly"},
            {"X-Platform": "letterbox"}, {"x-platform": "other"}, {"X-Beehiiv": "1"},
            {"Content-Type": "application/rss+xml"}]
_CDN = ["substackcdn.com", "mcusercontent.com", "cdn.example.com", "beehiiv-images-production.s3"]


@given(st.sampled_from(_GENERATORS), st.lists(st.sampled_from(_URLS), max_size=3),
       st.sampled_from(_HEADERS), st.lists(st.sampled_from(_CDN), max_size=2))
def test_feeds_classify_platform_matches_the_ordered_scan(
        generator: str | None, urls: list[str], headers: dict[str, str], cdn: list[str]) -> None:
    signals = Signals(generator=generator, urls=tuple(urls), headers=headers,
                      enclosure_hosts=tuple(cdn))
    assert detect_platform(signals) == _reference_platform(signals)
