"""The rules catalogue: every check, by family, and the function that runs them.

Families: indexability, http, titles, headings, canonicals, content, assets, hreflang,
structured. Rules that need the whole link graph (orphans, depth) stay silent on a crawl cut
short by a cap, and the result says so (``RuleRun.silenced``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fairfetch.audit.rules import (  # noqa: F401  (importing registers the rules)
    assets,
    canonicals,
    content,
    crawltraps,
    headings,
    hreflang,
    http,
    indexability,
    structured,
    titles,
)
from fairfetch.audit.rules.base import CATALOGUE, SEVERITIES, Finding, Rule, Thresholds, rule
from fairfetch.audit.view import SiteView

__all__ = ["CATALOGUE", "SEVERITIES", "Finding", "Rule", "RuleRun", "Thresholds", "rule",
           "run_rules"]


@dataclass
class RuleRun:
    findings: list[Finding] = field(default_factory=list)
    #: rule id -> why it did not run (a crawl cut short leaves the link graph incomplete)
    silenced: dict[str, str] = field(default_factory=dict)

    def by_rule(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        for f in self.findings:
            out.setdefault(f.rule_id, []).append(f)
        return out


def run_rules(site: SiteView, thresholds: Thresholds | None = None) -> RuleRun:
    t = thresholds or Thresholds()
    run = RuleRun()
    for r in CATALOGUE.values():
        if r.id in site.not_applicable:
            run.silenced[r.id] = site.not_applicable[r.id]
            continue
        if r.needs_full_graph and not site.complete:
            if site.cut_short:
                reason = site.cut_short
            elif not site.finished:
                reason = "crawl did not finish"
            else:
                reason = f"{site.throttled_pages} page(s) throttled by the site, not read"
            run.silenced[r.id] = f"link graph incomplete ({reason}): rule not applied"
            continue
        run.findings.extend(r.check(site, t))
    return run
