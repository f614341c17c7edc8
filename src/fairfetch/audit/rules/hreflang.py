"""hreflang: codes a search engine cannot read, alternates that do not answer 200, missing
return links, missing x-default."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.rules.isocodes import LANGUAGES, REGIONS, SCRIPTS
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]

#: The mistakes met most, with what was meant: country codes written as languages, and the
#: United Kingdom's everyday abbreviation written as its region.
_LANGUAGE_MEANT: dict[str, str] = {
    "jp": "Japanese is ja", "cn": "Chinese is zh", "kr": "Korean is ko", "gr": "Greek is el",
    "cz": "Czech is cs", "dk": "Danish is da", "ua": "Ukrainian is uk", "rs": "Serbian is sr",
    "vn": "Vietnamese is vi",
}
_REGION_MEANT = {"uk": "the United Kingdom is GB"}


def hreflang_problem(code: str) -> str | None:
    """Why a search engine cannot read this hreflang value, or None when it can."""
    if code == "x-default":
        return None
    if not code:
        return "empty"
    if "_" in code:
        return f"subtags are joined by '-', not '_' ({code.replace('_', '-')})"
    parts = code.split("-")
    lang, rest = parts[0], parts[1:]
    if lang not in LANGUAGES:
        hint = _LANGUAGE_MEANT.get(lang) or "use the two-letter code"
        return f"no ISO 639-1 language ({hint})"
    if rest and len(rest[0]) == 4 and rest[0].isalpha():
        if rest[0] not in SCRIPTS:
            return f"{rest[0].title()} is no ISO 15924 script"
        rest = rest[1:]
    if rest:
        region = rest[0]
        if region.isdigit() and len(region) == 3:
            pass  # a UN M.49 area: es-419, Latin America
        elif len(region) != 2 or region not in REGIONS:
            if len(region) != 2:
                return "not language[-script][-region]"
            meant = _REGION_MEANT.get(region)
            return f"{region.upper()} is no ISO 3166-1 region" + (f" ({meant})" if meant else "")
        rest = rest[1:]
    if rest:
        return "not language[-script][-region]"
    return None


@rule("hreflang-invalid-code", "hreflang", "error", "hreflang code a search engine cannot read",
      explanation="An hreflang value must be an ISO 639-1 language, optionally with an ISO "
      "15924 script and an ISO 3166-1 region (en, en-GB, zh-Hant-TW), or x-default; search "
      "engines ignore any other annotation (en-UK, jp, en_US).",
      fix="Write the language (and region) codes the standards define: en-GB, ja, en-US.")
def hreflang_invalid_code(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        for lang, _href in p.hreflang:
            why = hreflang_problem(lang)
            if why is not None:
                yield p.url, f"{lang!r}: {why}"


@rule("hreflang-non-200", "hreflang", "error", "hreflang alternate is not a 200 page",
      explanation="An alternate language version points at a missing or redirecting URL.",
      fix="Point every hreflang at a live, canonical page.")
def hreflang_non200(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        for lang, href in p.hreflang:
            target = site.by_url.get(href)
            if target is not None and target.status != 200:
                why = target.status if target.status is not None else target.error
                yield p.url, f"{lang}: {href} ({why or 'no response'})"
            far = site.external_by_url.get(href) if target is None else None
            why = far.far_end() if far is not None else None
            if why is not None:
                yield p.url, f"{lang}: {href} ({why})"


@rule("hreflang-missing-return", "hreflang", "warning", "hreflang without return link",
      explanation="Alternates must point back at each other, or search engines ignore them.",
      fix="Add the reciprocal hreflang on the alternate page.")
def hreflang_missing_return(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        for lang, href in p.hreflang:
            if href == p.url:
                continue
            target = site.by_url.get(href)
            if target is None or target.status != 200:
                continue
            if not any(back == p.url for _, back in target.hreflang):
                yield p.url, f"{lang}: {href} does not link back"


@rule("hreflang-missing-x-default", "hreflang", "notice", "hreflang without x-default",
      explanation="x-default names the page for users whose language is not listed.",
      fix='Add <link rel="alternate" hreflang="x-default" href="...">.')
def hreflang_missing_x_default(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.hreflang and not any(lang == "x-default" for lang, _ in p.hreflang):
            yield p.url
