"""An admin token is whatever the operator typed: accents, Cyrillic, an emoji. Writing with it
works on the forms (and the cookie they set) and on the API, where a client sends it as UTF-8."""

from __future__ import annotations

from fairfetch.config import Settings
from fairfetch.store import SqlStore

from .conftest import add_crawled, make_client

TOKENS = ("секрет-🔑", "été-secret")


def test_web_form_with_a_non_ascii_admin_token_answers_and_sets_a_working_cookie(
    store: SqlStore,
) -> None:
    for i, token in enumerate(TOKENS):
        a = add_crawled(store, f"http://a{i}.test/feed")
        b = add_crawled(store, f"http://b{i}.test/feed")
        with make_client(Settings(db=store.url, admin_token=token), store) as c:
            r = c.post(f"/feeds/{a}/delete", data={"token": token}, follow_redirects=False)
            assert r.status_code == 303, (token, r.status_code, r.text[:300])
            assert r.headers["location"] == "/feeds?notice=deleted"
            assert store.find_feed(a) is None
            assert 'name="token"' not in c.get(f"/feeds/{b}").text  # the cookie stands in
            r = c.post(f"/feeds/{b}/delete", follow_redirects=False)  # cookie alone
            assert r.status_code == 303, (token, r.status_code)
            assert store.find_feed(b) is None
            # a cookie made from another token is no key
            c.cookies.clear()
            other = add_crawled(store, f"http://c{i}.test/feed")
            c.post(f"/feeds/{other}/delete", data={"token": token + "x"})
            assert c.post(f"/feeds/{other}/delete").status_code == 401
            assert store.find_feed(other) is not None


def test_web_api_accepts_a_non_ascii_admin_token_sent_as_utf8(store: SqlStore) -> None:
    for i, token in enumerate(TOKENS):
        fid = add_crawled(store, f"http://a{i}.test/feed")
        with make_client(Settings(db=store.url, admin_token=token), store) as c:
            wrong = {"Authorization": ("Bearer " + token + "x").encode()}
            assert c.delete(f"/api/v1/feeds/{fid}", headers=wrong).status_code == 403
            assert store.find_feed(fid) is not None
            right = {"Authorization": ("Bearer " + token).encode()}
            r = c.delete(f"/api/v1/feeds/{fid}", headers=right)
            assert r.status_code == 200, (token, r.status_code, r.text)
            assert store.find_feed(fid) is None
