"""Golden cases: one input per file in tests/data/feeds/cases/, the expected Feed beside it as
JSON (like lemon24/reader's test data). Regenerate after a deliberate change with
``FAIRFETCH_REGEN_GOLDEN=1`` and review the diff: a golden that changed is a behaviour that did.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fairfetch.feeds import parse_feed

from .conftest import CASES, case_inputs, case_request, feed_json

INPUTS = case_inputs()


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_feeds_golden_case(path: Path) -> None:
    url, headers = case_request(path)
    got = feed_json(parse_feed(path.read_bytes(), url, headers))
    golden = CASES / (path.name.split(".feed.")[0] + ".expected.json")
    if os.environ.get("FAIRFETCH_REGEN_GOLDEN"):
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    assert golden.exists(), f"no golden for {path.name}"
    assert got == json.loads(golden.read_text())


def test_feeds_golden_every_case_has_a_golden() -> None:
    goldens = {p.name.removesuffix(".expected.json") for p in CASES.glob("*.expected.json")}
    inputs = {p.name.split(".feed.")[0] for p in INPUTS}
    assert goldens == inputs
