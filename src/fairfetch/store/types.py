"""Column types that behave the same on SQLite and PostgreSQL.

SQLite has no time zone type and hands back naive datetimes; PostgreSQL's timestamptz hands back
aware ones in the session's zone. ``UTCDateTime`` makes both give aware UTC datetimes and refuse
naive ones at the bind site, so a local-time value can never be stored by mistake.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

#: What no driver will send as text: NUL (PostgreSQL refuses it in text) and lone surrogates
#: (no UTF-8 encoder takes them; aiohttp hands over a header byte that is not UTF-8 as one).
_UNBINDABLE = re.compile("[\x00\ud800-\udfff]")


def bindable_text(value: str) -> str:
    """``value`` with every character no database will bind as text replaced by U+FFFD.

    One such character in one publisher's ETag or reason phrase used to fail the whole batch's
    transaction, so every feed in it stayed unwritten and due (seeds/000's failure through
    another door). Replaced, not dropped: the stored text still shows something was there."""
    if _UNBINDABLE.search(value) is None:
        return value
    return _UNBINDABLE.sub("\ufffd", value)


class BindableText(sa.types.TypeDecorator[str]):
    """Text that always binds, on SQLite and on PostgreSQL (see :func:`bindable_text`)."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if isinstance(value, str):
            return bindable_text(value)
        return value


#: PostgreSQL refuses a btree index row over 2,704 bytes (a third of a page), and compresses
#: it first only when it compresses at all. The text columns inside an index are what
#: publishers write (titles, guids, author names, contact URLs), so each gets a budget of
#: UTF-8 bytes that its whole index row keeps under that, with room for the other columns.
INDEX_TEXT_BYTES = 2000
#: ``lower(title)`` beside ``kind``: lowering may turn a 2-byte character into a 3-byte one.
TITLE_KEY_BYTES = 1200
#: An author's name, email and URL make one unique key together.
AUTHOR_KEY_BYTES = 800

#: Bytes of the digest that marks a shortened value (see :func:`index_safe`).
_MARK = "\u2026#"


def index_safe(value: str, limit: int = INDEX_TEXT_BYTES) -> str:
    """``value`` (already :func:`bindable_text`), or, over ``limit`` UTF-8 bytes, its head
    followed by ``…#`` and a digest of the whole: it fits the index on every backend, two
    values that differ anywhere stay two, and the same value is always shortened the same
    way, so looking it up finds what was stored. A shortened value is short enough to be
    left as it is when shortened again.

    One such value (a 5,000-character guid) failed the whole batch's transaction on
    PostgreSQL, every feed's result in it lost, on every pass; SQLite took it."""
    if len(value) * 4 <= limit:  # no character takes more than 4 bytes: the common case
        return value
    data = value.encode("utf-8")
    if len(data) <= limit:
        return value
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    head = data[: limit - 64].decode("utf-8", "ignore")
    return head + _MARK + digest


def shortened_head(stored: str) -> str | None:
    """The head of a value :func:`index_safe` shortened, or None for a value stored whole:
    what is left of the original to compare with (its digest is of the whole)."""
    head, mark, digest = stored.rpartition(_MARK)
    if mark and len(digest) == 32 and all(c in "0123456789abcdef" for c in digest):
        return head
    return None


def key_text(value: str, limit: int = INDEX_TEXT_BYTES) -> str:
    """``value`` as a :class:`KeyText` column stores it: what a look-up in Python compares
    with the stored value (an entry's id, a contact's URL)."""
    return index_safe(bindable_text(value), limit)


class KeyText(BindableText):
    """:class:`BindableText` for a column inside an index: shortened to fit it (see
    :func:`index_safe`), the same way in a row written and in a value compared with it."""

    cache_ok = True

    def __init__(self, limit: int = INDEX_TEXT_BYTES) -> None:
        super().__init__()
        self.limit = limit

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if isinstance(value, str):
            return key_text(value, self.limit)
        return value


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r} bound to a UTC column")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
