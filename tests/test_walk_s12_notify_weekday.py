"""``notify subscribe --weekday``: a word that is no day is refused, naming it.

Only its first three letters were read, so ``--weekday monkey`` subscribed to a Monday digest
and ``--weekday sunset`` to a Sunday one, without a word; a typo chose a day.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.errors import InputError
from fairfetch.notify.schedule import parse_weekday

FEED = "https://blog.example.test/feed.xml"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for f in dataclasses.fields(Settings):
        monkeypatch.delenv("FAIRFETCH_" + f.name.upper(), raising=False)


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Callable[..., Result]]:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # no mail server: the confirmation mail stays queued
        env = {"FAIRFETCH_DB": f"sqlite:///{tmp_path}/wd.db",
               "FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{closed.getsockname()[1]}"}

        def run(*args: str) -> Result:
            return CliRunner().invoke(app, list(args), env=env)

        yield run


@pytest.mark.parametrize("word", ["monkey", "sunset", "satan", "mo", "fri day"])
def test_walk_weekday_that_is_no_day_is_refused(cli: Callable[..., Result], word: str) -> None:
    r = cli("notify", "subscribe", "ana@example.test", FEED, "--mode", "weekly",
            "--weekday", word)
    assert r.exit_code == 2, r.output
    assert f"'{word}': not a weekday" in r.output
    assert "Traceback" not in r.output
    listed = cli("notify", "list", "--json")
    assert json.loads(listed.stdout) == []  # nothing subscribed


@pytest.mark.parametrize(("word", "day"), [
    ("mon", 0), ("Tuesday", 1), ("wednes", 2), ("thurs", 3), ("FRI", 4), (" sat ", 5),
    ("sunday", 6), ("6", 6),
])
def test_walk_weekday_names_and_their_starts_are_days(
    cli: Callable[..., Result], word: str, day: int
) -> None:
    r = cli("notify", "subscribe", "ana@example.test", FEED, "--mode", "weekly",
            "--weekday", word)
    assert r.exit_code == 0, r.output
    [sub] = json.loads(cli("notify", "list", "--json").stdout)
    assert sub["weekday"] == day


def test_walk_parse_weekday_refuses_what_is_no_day() -> None:
    for word in ("monkey", "sunset", "", "mo", "tu esday"):
        with pytest.raises(InputError):
            parse_weekday(word)
    assert parse_weekday("thurs") == 3
