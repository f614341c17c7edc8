"""Pixel width of titles and descriptions beyond ASCII: CJK, emoji, combining marks.

A CJK character is set a full em wide (a search result shows about 29 of them in a 580 px title
line); an emoji sequence joined by ZWJ or with a skin tone is one glyph; a combining accent
adds no width (NFC and NFD spellings of one title measure alike).
"""

from __future__ import annotations

import unicodedata

from fairfetch.audit.rules import run_rules
from fairfetch.audit.rules.pixels import text_width_px
from fairfetch.audit.rules.titles import TITLE_PX

from .conftest import good_page, site

# 40 characters: short by the character rule (60), 800 px at 20 px a character.
JAPANESE = "東京の天気予報と週間天気、気温、降水確率の最新情報をお届けします。今日も良い一日"


def test_audit_cjk_title_is_a_full_em_a_character() -> None:
    assert len(JAPANESE) == 40
    assert text_width_px(JAPANESE, TITLE_PX) == 800
    assert text_width_px("漢" * 29, TITLE_PX) == 580  # what fits the line...
    assert text_width_px("漢" * 30, TITLE_PX) == 600  # ...and one more does not
    assert text_width_px("ＡＢＣ", 10) == 30  # full-width Latin too


def test_audit_cjk_title_too_wide_fires_though_short_in_characters() -> None:
    page = good_page("/jp", title=JAPANESE, h1=["天気"])
    fired = {(f.rule_id, f.detail) for f in run_rules(site(page)).findings}
    assert ("title-too-wide", "800 px") in fired
    assert not any(rule == "title-too-long" for rule, _ in fired)
    fits = good_page("/jp2", title="漢" * 29, h1=["天気"])
    assert not any(f.rule_id == "title-too-wide" for f in run_rules(site(fits)).findings)


def test_audit_emoji_sequence_is_one_glyph_and_accents_add_no_width() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # one glyph, 7 points
    thumbs = "\U0001f44d\U0001f3fd"  # thumbs up, medium skin tone
    heart = "\u2764\ufe0f"  # heart + emoji presentation selector
    one = "\U0001f468"
    for glyph in (family, thumbs):
        assert text_width_px(f"Day out {glyph} at the park", TITLE_PX) == text_width_px(
            f"Day out {one} at the park", TITLE_PX
        )
    assert text_width_px(heart, 100) == text_width_px("\u2764", 100)
    assert text_width_px("\U0001f600", 20) == 20  # an emoji is about an em
    title = "Crème brûlée à la façon de grand-mère, recette facile et rapide"
    nfc, nfd = unicodedata.normalize("NFC", title), unicodedata.normalize("NFD", title)
    assert nfc != nfd
    assert text_width_px(nfd, TITLE_PX) == text_width_px(nfc, TITLE_PX)
    # An accented letter is as wide as its letter.
    assert text_width_px("é", 1000) == text_width_px("e", 1000)


def test_audit_no_break_space_is_as_wide_as_a_space() -> None:
    """``&nbsp;`` stays in a title as written (browsers show it); it is a space's width, not an
    average letter's."""
    assert text_width_px("Home\xa0page", 20) == text_width_px("Home page", 20)
    assert text_width_px("a\u3000b", 20) == text_width_px("ab", 20) + 20  # a full em
