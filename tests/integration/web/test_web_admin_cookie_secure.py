"""The admin cookie carries the admin token itself, so it must never travel in clear text when
the directory is served over HTTPS: it is marked ``Secure`` when the form came over HTTPS, or
when ``public_url`` (the address people reach, behind a TLS-terminating proxy) is HTTPS.
Without the flag, one plain-HTTP request to the host (a typed address, a link an attacker on
the network plants) hands the token to whoever watches the wire."""

from __future__ import annotations

import warnings

from fairfetch.config import Settings
from fairfetch.store import SqlStore
from fairfetch.web.app import create_app

from .conftest import TOKEN, add_crawled

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


def _set_cookie(settings: Settings, store: SqlStore, base_url: str) -> str:
    fid = add_crawled(store, "http://a.test/feed")
    with TestClient(create_app(settings, store), base_url=base_url) as client:
        r = client.post(f"/feeds/{fid}/delete", data={"token": TOKEN}, follow_redirects=False)
    assert r.status_code == 303, r.text[:300]
    assert store.find_feed(fid) is None
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("fairfetch_admin=")
    return cookie.lower()


def test_web_admin_cookie_is_secure_over_https(store: SqlStore) -> None:
    cookie = _set_cookie(Settings(admin_token=TOKEN), store, "https://dir.example.test")
    assert "; secure" in cookie
    assert "httponly" in cookie
    assert "samesite=strict" in cookie


def test_web_admin_cookie_is_secure_behind_an_https_public_url(store: SqlStore) -> None:
    settings = Settings(admin_token=TOKEN, public_url="https://dir.example.test")
    cookie = _set_cookie(settings, store, "http://127.0.0.1:8080")
    assert "; secure" in cookie


def test_web_admin_cookie_over_plain_http_stays_usable(store: SqlStore) -> None:
    """The other direction: on a plain-HTTP directory (the default, on loopback) a Secure
    cookie would never come back, and every form would ask for the token again."""
    settings = Settings(admin_token=TOKEN, public_url="http://127.0.0.1:8080")
    cookie = _set_cookie(settings, store, "http://127.0.0.1:8080")
    assert "secure" not in cookie
    assert "httponly" in cookie
