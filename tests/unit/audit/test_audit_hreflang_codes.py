"""hreflang values a search engine can read (ISO 639-1 language, optional ISO 15924 script,
optional ISO 3166-1 region or UN M.49 area, or x-default), and the common mistakes named with
their fix; and canonicals to a page that is not indexable itself."""

from __future__ import annotations

import pytest

from fairfetch.audit.rules import run_rules

from .conftest import BASE, good_page, site

VALID = ["en", "en-gb", "en-us", "de-at", "zh-hant", "zh-hant-tw", "sr-latn-rs", "es-419",
         "x-default", "pt-br"]


@pytest.mark.parametrize("code", VALID)
def test_audit_hreflang_valid_codes_are_quiet(code: str) -> None:
    page = good_page("/a", hreflang=[(code, BASE + "/a")])
    assert "hreflang-invalid-code" not in run_rules(site(page)).by_rule()


@pytest.mark.parametrize(("code", "detail"), [
    ("en-uk", "'en-uk': UK is no ISO 3166-1 region (the United Kingdom is GB)"),
    ("jp", "'jp': no ISO 639-1 language (Japanese is ja)"),
    ("en_us", "'en_us': subtags are joined by '-', not '_' (en-us)"),
    ("eng", "'eng': no ISO 639-1 language (use the two-letter code)"),
    ("english", "'english': no ISO 639-1 language (use the two-letter code)"),
    ("en-zz", "'en-zz': ZZ is no ISO 3166-1 region"),
    ("zh-hant-tw-x", "'zh-hant-tw-x': not language[-script][-region]"),
    ("", "'': empty"),
])
def test_audit_hreflang_invalid_codes_are_named_with_their_fix(code: str, detail: str) -> None:
    page = good_page("/a", hreflang=[(code, BASE + "/a"), ("x-default", BASE + "/a")])
    found = run_rules(site(page)).by_rule()["hreflang-invalid-code"]
    assert [(f.url, f.detail) for f in found] == [(BASE + "/a", detail)]


def test_audit_canonical_to_a_canonicalised_page_is_a_chain() -> None:
    a = good_page("/a", canonical=BASE + "/b")
    b = good_page("/b", canonical=BASE + "/c", indexable=False,
                  indexability="canonicalised elsewhere")
    c = good_page("/c")
    found = run_rules(site(a, b, c)).by_rule()["canonical-to-non-indexable"]
    assert [(f.url, f.detail) for f in found] == [
        (BASE + "/a", f"{BASE}/b (canonicalised elsewhere: to {BASE}/c)")
    ]
