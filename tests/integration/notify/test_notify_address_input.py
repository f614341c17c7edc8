"""An address typed into the subscribe form is refused, naming it, when it is not one mailbox.

A NUL byte in the address reached the database: PostgreSQL cannot store it, and the form
answered 500 with a traceback (SQLite stored it, and every mail to it was refused). Other control
characters were stored as part of the address, and "ana@…, bob@…" subscribed ana alone while the
page said the address given was subscribed."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from fairfetch.errors import InputError
from fairfetch.notify.routes import router
from fairfetch.notify.subscriptions import check_email
from fairfetch.store import notify_repo as repo

BAD = [
    "ana@example.test\x00",
    "a\x00na@example.test",
    "a\x01na@example.test",
    "ana@exam\x7fple.test",
    "ana\u200b@example.test",  # zero-width space: an address nobody can type back
    "ana@example.test, bob@example.test",
    "ana@example.test bob@example.test",
    "ana@example.test\r\nBcc: bob@example.test",
    # addresses no mail server can deliver to (RFC 5321 §4.5.3.1, RFC 1035 labels): each made a
    # reader and queued a confirmation mail that could only bounce
    "a" * 65 + "@example.test",  # local part over 64 octets
    "ana@" + "a" * 64 + ".test",  # a label over 63
    "ana@" + ("a" * 60 + ".") * 5 + "test",  # a domain over 255
    "ana@y..test",  # an empty label
    "ana@.example.test",
    "ana@example.test.",
    "ana@-y.test",  # a label that starts or ends with a hyphen
    "ana@y-.test",
    "ana@exa_mple.test",  # not a host name character
    ".ana@example.test",  # a dot-atom neither starts nor ends with a dot, nor doubles one
    "ana.@example.test",
    "an..a@example.test",
]


@pytest.fixture
def client(any_world) -> Iterator[SimpleNamespace]:
    app = FastAPI()
    app.state.fairfetch = SimpleNamespace(settings=any_world.settings, store=any_world.store)
    app.include_router(router)
    with TestClient(app) as c:
        yield SimpleNamespace(http=c, world=any_world)


@pytest.mark.parametrize("typed", BAD)
def test_notify_subscribe_form_refuses_what_is_not_one_mailbox(client, typed: str) -> None:
    fid = client.world.add_feed("https://a.example.test/feed")
    r = client.http.post("/subscribe", data={"feed": str(fid), "email": typed})
    assert r.status_code == 422
    assert "not an email address" in r.text
    assert repo.list_subscriptions(client.world.store) == []
    assert client.world.outbox() == []


@pytest.mark.parametrize("typed", BAD)
def test_notify_check_email_names_the_input_it_refuses(typed: str) -> None:
    with pytest.raises(InputError) as err:
        check_email(typed)
    assert repr(typed) in str(err.value) or typed in str(err.value)


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("ana@example.test", "ana@example.test"),
        ("  Ana@Example.test ", "ana@example.test"),
        ("Ana Smith <ana@example.test>", "ana@example.test"),
        ("José@Example.test", "josé@example.test"),
        # one spelling of a character however it was composed (NFC)
        ("Jose\u0301@Example.test", "jos\u00e9@example.test"),
        ("ana@bu\u0308cher.test", "ana@b\u00fccher.test"),
        # at the limits, and the forms real addresses take
        ("a" * 64 + "@example.test", "a" * 64 + "@example.test"),
        ("first.last+tag@mail-1.example.test", "first.last+tag@mail-1.example.test"),
        ("o'brien@xn--bcher-kva.test", "o'brien@xn--bcher-kva.test"),
    ],
)
def test_notify_check_email_keeps_one_mailbox(typed: str, kept: str) -> None:
    assert check_email(typed) == kept


def test_notify_one_mailbox_typed_composed_and_decomposed_is_one_reader(client) -> None:
    """"josé" typed on one keyboard (é, U+00E9) and pasted from another source (e + U+0301)
    is one mailbox: it became two readers, each subscribed to the feed, and every item was
    mailed to that mailbox twice."""
    w = client.world
    fid = w.add_feed("https://a.example.test/feed")
    for typed in ("jos\u00e9@example.test", "jose\u0301@example.test"):
        r = client.http.post("/subscribe", data={"feed": str(fid), "email": typed})
        assert r.status_code == 200, r.text
    subs = repo.list_subscriptions(w.store)
    assert [s["email"] for s in subs] == ["jos\u00e9@example.test"]


@pytest.mark.parametrize("token", ["%00", "abc%00def", "x%01y"])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/confirm/{t}"),
        ("POST", "/confirm/{t}"),
        ("GET", "/manage/{t}"),
        ("POST", "/manage/{t}"),
        ("GET", "/unsubscribe/{t}"),
        ("POST", "/unsubscribe/{t}"),
        ("POST", "/unsubscribe/digest/{t}/daily@08"),
    ],
)
def test_notify_link_pages_answer_404_to_a_token_no_link_can_hold(
    any_world, method: str, path: str, token: str
) -> None:
    """A token with a control character (a NUL on PostgreSQL: 500 and a traceback) is no
    token we ever made: not found, like any unknown token."""
    app = FastAPI()
    app.state.fairfetch = SimpleNamespace(settings=any_world.settings, store=any_world.store)
    app.include_router(router)
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.request(method, path.format(t=token))
    assert r.status_code == 404, r.text
    assert "not found" in r.text
