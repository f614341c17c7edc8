"""What a rule is, what it finds, and the thresholds rules read.

A rule is a small pure function ``(SiteView, Thresholds) -> Iterable[Finding]`` registered with
its id, family, severity, explanation and fix. No I/O: the rules are tested by building a view
by hand, in both directions (fires where it must, stays quiet where it must not).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

from fairfetch.audit.view import SiteView

__all__ = ["CATALOGUE", "SEVERITIES", "Finding", "Rule", "Thresholds", "rule"]

SEVERITIES = ("error", "warning", "notice")


@dataclass(frozen=True)
class Thresholds:
    """Every limit a rule applies, configurable (``--threshold name=value`` on the CLI)."""

    title_min_chars: int = 30
    title_max_chars: int = 60
    title_max_px: int = 580
    description_min_chars: int = 70
    description_max_chars: int = 155
    description_max_px: int = 990
    slow_ms: float = 1000.0
    heavy_page_bytes: int = 250_000
    thin_words: int = 200
    max_depth: int = 4
    heavy_image_bytes: int = 300_000
    heavy_resource_bytes: int = 500_000
    near_duplicate_similarity: float = 0.8
    redirect_chain_hops: int = 2

    @classmethod
    def from_pairs(cls, pairs: Iterable[str]) -> Thresholds:
        """``["thin_words=150", ...]`` -> Thresholds.

        Unknown names and values no rule can use raise ValueError naming the threshold: a
        negative limit, NaN, or a similarity of 80 (it is a fraction) would flood or silence
        a rule without a word.
        """
        types = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        for pair in pairs:
            name, eq, raw = pair.partition("=")
            name = name.strip().replace("-", "_")
            if not eq:
                raise ValueError(f"{pair!r}: expected name=value")
            if name not in types:
                raise ValueError(f"unknown threshold {name!r}")
            raw = raw.strip()
            try:
                value: float = float(raw) if types[name] in ("float", float) else int(raw)
            except ValueError:
                kind = "a number" if types[name] in ("float", float) else "a whole number"
                raise ValueError(f"{name}={raw!r}: not {kind}") from None
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name}={raw}: must be a finite number >= 0")
            if name == "near_duplicate_similarity" and value > 1:
                raise ValueError(f"{name}={raw}: a fraction between 0 and 1 (80 % is 0.8)")
            values[name] = value
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Finding:
    rule_id: str
    url: str
    detail: str = ""


Check = Callable[[SiteView, Thresholds], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    family: str
    severity: str
    title: str
    explanation: str
    fix: str
    check: Check
    #: Needs the whole link graph (orphans, depth): silent on a crawl cut short by a cap.
    needs_full_graph: bool = False


CATALOGUE: dict[str, Rule] = {}


def rule(
    id: str,
    family: str,
    severity: str,
    title: str,
    *,
    explanation: str,
    fix: str,
    needs_full_graph: bool = False,
) -> Callable[[Callable[[SiteView, Thresholds], Iterable[tuple[str, str] | str]]], Rule]:
    """Register a check. The function yields ``url`` or ``(url, detail)``."""
    if severity not in SEVERITIES:
        raise ValueError(f"severity {severity!r}")

    def wrap(fn: Callable[[SiteView, Thresholds], Iterable[tuple[str, str] | str]]) -> Rule:
        def check(site: SiteView, t: Thresholds) -> Iterable[Finding]:
            for item in fn(site, t):
                if isinstance(item, tuple):
                    yield Finding(id, item[0], item[1])
                else:
                    yield Finding(id, item)

        if id in CATALOGUE:
            raise ValueError(f"rule {id!r} registered twice")
        r = Rule(id, family, severity, title, explanation, fix, check, needs_full_graph)
        CATALOGUE[id] = r
        return r

    return wrap
