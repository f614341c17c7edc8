"""A feed's own text on its page carries the language the feed declares (WCAG 3.1.2, language
of parts): a screen reader reads a Russian title with a Russian voice, not as English, the
page's language. Our own labels stay English; a declared value that is no language tag is
ignored, never written into the page."""

from __future__ import annotations

from typing import Any

import pytest
from lxml import html as lxml_html

from fairfetch.feeds.model import Entry

from .conftest import add_crawled


def _langs(client: Any, fid: int) -> dict[str, str | None]:
    doc = lxml_html.fromstring(client.get(f"/feeds/{fid}").text)
    return {
        "html": doc.get("lang"),
        "title": doc.get_element_by_id("feed-title").get("lang"),
        "description": doc.find_class("description")[0].get("lang"),
        "entry": doc.find_class("entry")[0].get("lang"),
        "health": doc.find_class("health")[0].get("lang"),
    }


@pytest.mark.parametrize(
    ("declared", "lang"),
    [
        ("ru", "ru"),
        ("en-us", "en-us"),
        ("pt_BR", "pt-BR"),
        (" de ", "de"),
        ("zh-Hant-TW", "zh-Hant-TW"),
    ],
)
def test_web_feed_text_carries_the_declared_language(
    client: Any, store: Any, declared: str, lang: str
) -> None:
    fid = add_crawled(
        store,
        "https://ru.example/feed.xml",
        title="Подкаст про всё",
        description="<p>Описание</p>",
        language=declared,
        entries=[Entry(id="1", title="Выпуск 1", summary="<p>Текст</p>")],
    )
    assert _langs(client, fid) == {
        "html": "en",
        "title": lang,
        "description": lang,
        "entry": lang,
        "health": None,  # our labels are in the page's language
    }


@pytest.mark.parametrize(
    "declared", [None, "", "english", '"><script>x</script>', "x" * 50, "e", "en-", "12"]
)
def test_web_feed_language_that_is_no_tag_is_left_out(
    client: Any, store: Any, declared: str | None
) -> None:
    fid = add_crawled(
        store,
        "https://odd.example/feed.xml",
        title="Odd",
        description="<p>d</p>",
        language=declared,
        entries=[Entry(id="1", title="e", summary="<p>s</p>")],
    )
    langs = _langs(client, fid)
    assert langs.pop("html") == "en"
    assert set(langs.values()) == {None}
