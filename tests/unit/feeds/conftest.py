"""Shared helpers for the feeds tests: the golden-case corpus and the model's JSON form."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from fairfetch.feeds.model import Feed

DATA = Path(__file__).resolve().parents[2] / "data" / "feeds"
CASES = DATA / "cases"


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def feed_json(feed: Feed) -> dict[str, Any]:
    return to_jsonable(feed)  # type: ignore[no-any-return]


def case_inputs() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if ".feed." in p.name)


def case_request(path: Path) -> tuple[str | None, dict[str, str]]:
    name = path.name.split(".feed.")[0]
    req = CASES / f"{name}.request.json"
    if req.exists():
        spec = json.loads(req.read_text())
        return spec.get("url"), spec.get("headers") or {}
    return f"https://feeds.example.com/{path.name}", {}
