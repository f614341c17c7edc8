"""The page row's hand-rolled formats are the library's, byte for byte (the crawl file's h1
column is read back with json.loads; crawled_at is compared as text)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.audit.pagerows import _json_strings, _now


@given(st.lists(st.text(), max_size=5))
def test_audit_h1_column_is_json_dumps(values: list[str]) -> None:
    assert _json_strings(values) == json.dumps(values)
    assert json.loads(_json_strings(values)) == values


def test_audit_crawled_at_is_now_to_the_second() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = _now()
    after = datetime.now(UTC)
    assert before <= datetime.fromisoformat(stamp) <= after
    assert stamp == datetime.fromisoformat(stamp).isoformat(timespec="seconds")
