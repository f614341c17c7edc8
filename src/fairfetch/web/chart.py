"""The crawls-per-minute chart as inline SVG: rendered on the server, no script, no assets.

A pure function from counts to markup, so it can be tested without a server and the page works
with JavaScript off. Every piece of text in it is escaped, although none comes from feeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape

#: Chart series, bottom to top, with their colours; other outcomes fall into "other".
SERIES: tuple[tuple[str, str, str], ...] = (
    ("ok", "OK", "#2e7d32"),
    ("not_modified", "Not modified", "#81c784"),
    ("throttled", "Throttled", "#f9a825"),
    ("error", "Error", "#c62828"),
    ("other", "Other (outage, skipped)", "#757575"),
)


def series_of(label: str) -> str:
    """Map an outcome label (``ok``, ``error:dns``, ``outage``…) to its chart series."""
    base = label.split(":", 1)[0]
    return base if base in {"ok", "not_modified", "throttled", "error"} else "other"


def crawl_chart_svg(
    minutes: Sequence[tuple[datetime, Mapping[str, int]]],
    *,
    width: int = 720,
    height: int = 220,
) -> str:
    """A stacked bar per minute (oldest left), y axis scaled to the busiest minute."""
    left, right, top, bottom = 44, 8, 12, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(c.get(s, 0) for s, _l, _c in SERIES) for _m, c in minutes]
    peak = max(totals, default=0)
    scale_max = _nice_ceiling(peak)
    n = max(len(minutes), 1)
    bar_w = plot_w / n
    out: list[str] = [
        f'<svg id="crawl-chart" class="chart" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="crawl-chart-title">',
        '<title id="crawl-chart-title">Crawls per minute by outcome, last '
        f"{len(minutes)} minutes (peak {peak})</title>",
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
        'stroke="#ddd"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        y = top + plot_h - frac * plot_h
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e0e0e0"/>'
            f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="11" '
            f'fill="#555">{round(scale_max * frac)}</text>'
        )
    for i, (minute, counts) in enumerate(minutes):
        x = left + i * bar_w
        y = top + plot_h
        parts = []
        for key, label, colour in SERIES:
            value = counts.get(key, 0)
            if value <= 0 or scale_max == 0:
                continue
            h = value / scale_max * plot_h
            y -= h
            parts.append(f"{label} {value}")
            out.append(
                f'<rect class="bar bar-{key}" x="{x + 0.5:.1f}" y="{y:.1f}" '
                f'width="{max(bar_w - 1, 0.5):.1f}" height="{h:.1f}" fill="{colour}">'
                f"<title>{escape(minute.strftime('%H:%M'))} UTC: {escape(', '.join(parts[-1:]))}"
                "</title></rect>"
            )
        if i % 10 == 0 or i == len(minutes) - 1:
            out.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle" '
                f'font-size="10" fill="#555">{escape(minute.strftime("%H:%M"))}</text>'
            )
    lx = left
    ly = height - 10
    for _key, label, colour in SERIES:
        out.append(
            f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{lx + 14}" y="{ly}" font-size="11" fill="#333">{escape(label)}</text>'
        )
        lx += 28 + 7 * len(label)
    out.append("</svg>")
    return "".join(out)


def _nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5 × 10^k that is ≥ value (0 stays 0)."""
    if value <= 0:
        return 0
    magnitude = 1
    while True:
        for step in (1, 2, 5):
            if step * magnitude >= value:
                return step * magnitude
        magnitude *= 10
