"""The crawls-per-minute SVG: pure function, checked as XML."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree

from fairfetch.web.chart import _nice_ceiling, crawl_chart_svg, series_of

SVG = "{http://www.w3.org/2000/svg}"
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _bars(svg: str) -> list[ElementTree.Element]:
    root = ElementTree.fromstring(svg)
    return [r for r in root.iter(SVG + "rect") if "bar" in (r.get("class") or "")]


def test_web_chart_stacks_one_bar_segment_per_nonzero_series() -> None:
    minutes = [
        (T0, {"ok": 10, "throttled": 5}),
        (T0 + timedelta(minutes=1), {}),
        (T0 + timedelta(minutes=2), {"error": 20}),
    ]
    bars = _bars(crawl_chart_svg(minutes))
    assert [b.get("class") for b in bars] == ["bar bar-ok", "bar bar-throttled", "bar bar-error"]
    heights = [float(b.get("height")) for b in bars]
    # scale tops at 20: the error bar fills the plot, ok is half of it, throttled a quarter
    assert heights[2] == 2 * heights[0] == 4 * heights[1]
    # stacked: throttled sits on top of ok
    ok, thr = bars[0], bars[1]
    assert abs(float(thr.get("y")) + float(thr.get("height")) - float(ok.get("y"))) < 0.2


def test_web_chart_of_an_idle_hour_is_valid_and_empty() -> None:
    svg = crawl_chart_svg([(T0 + timedelta(minutes=i), {}) for i in range(60)])
    assert _bars(svg) == []
    assert ElementTree.fromstring(svg).get("id") == "crawl-chart"


def test_web_chart_series_mapping() -> None:
    assert series_of("ok") == "ok"
    assert series_of("error:dns") == "error"
    assert series_of("throttled") == "throttled"
    assert series_of("not_modified") == "not_modified"
    assert series_of("outage") == "other"
    assert series_of("skipped") == "other"


def test_web_chart_scale() -> None:
    assert [_nice_ceiling(v) for v in (0, 1, 3, 7, 10, 11, 99, 101)] == [
        0,
        1,
        5,
        10,
        10,
        20,
        100,
        200,
    ]
