"""Fixtures for the acceptance checks of issues 2, 3 and 7: a fresh SQLite store and a settable
clock, so a test can say exactly when each crawl happened and read schedules to the second."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from fairfetch.config import Settings
from fairfetch.crawl import utcnow
from fairfetch.store import SqlStore, open_store


class StepClock:
    """A clock the test moves by hand (the crawler reads it for every health write)."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    s = open_store(f"sqlite:///{tmp_path}/acceptance.db")
    yield s
    s.close()


@pytest.fixture
def clock() -> StepClock:
    return StepClock(utcnow().replace(microsecond=0))


def loopback_settings(db: str, **overrides: object) -> Settings:
    """Hosts named ``*.test`` on 127.0.0.1, loose caps so a loaded machine fails nothing."""
    base: dict[str, object] = {
        "db": db,
        "allow_networks": ("127.0.0.1/32",),
        "resolve": ("*.test:127.0.0.1",),
        "connect_timeout": 5.0,
        "first_byte_timeout": 5.0,
        "total_timeout": 10.0,
    }
    base.update(overrides)
    return Settings(**base)  # type: ignore[arg-type]
