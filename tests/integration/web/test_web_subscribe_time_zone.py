"""The public subscribe form, as the directory app serves it, with time zones a stranger types.

``notify.schedule.zone`` turns ZoneInfo's ZoneInfoNotFoundError and ValueError into an
InputError (a 422 naming the zone), but ZoneInfo reads the name as a path under tzdata: a
region alone ("America", a directory) raises IsADirectoryError, a name over 255 bytes
"File name too long" — both OSError, which nobody catches: the public form answered 500.
``zone`` now catches OSError too.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairfetch.config import Settings
from fairfetch.store import SqlStore, open_store
from fairfetch.store import notify_repo as repo
from fairfetch.web.app import create_app

from .conftest import add_crawled

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

NOT_ZONES = ["America", "Europe/" + "x" * 300]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, SqlStore, int]]:
    store = open_store(f"sqlite:///{tmp_path}/tz.db")
    fid = add_crawled(store, "http://a.test/feed")
    # the SMTP URL points nowhere: a confirmation mail stays in the outbox, nothing is sent
    settings = Settings(admin_token="t", smtp_url="smtp://127.0.0.2:9")
    with TestClient(create_app(settings, store), raise_server_exceptions=False) as client:
        yield client, store, fid
    store.engine.dispose()


def test_web_subscribe_form_takes_a_real_zone(site: tuple[TestClient, SqlStore, int]) -> None:
    """The other direction: a real zone is taken (the form works in this app at all)."""
    client, store, fid = site
    r = client.post("/subscribe", data={"feed": str(fid), "email": "ana@example.test",
                                        "mode": "daily", "tz": "America/New_York"})
    assert r.status_code == 200
    [sub] = repo.list_subscriptions(store)
    assert sub["tz"] == "America/New_York"


@pytest.mark.parametrize("tz", NOT_ZONES, ids=["region-only", "300-characters"])
def test_web_subscribe_form_refuses_a_zone_that_is_no_file_with_a_422(
    site: tuple[TestClient, SqlStore, int], tz: str
) -> None:
    client, store, fid = site
    r = client.post("/subscribe", data={"feed": str(fid), "email": "ana@example.test",
                                        "mode": "daily", "tz": tz})
    assert r.status_code == 422, r.text[:300]
    assert "time zone" in r.text
    assert repo.list_subscriptions(store) == []
