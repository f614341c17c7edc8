"""Column types that behave the same on SQLite and PostgreSQL.

SQLite has no time zone type and hands back naive datetimes; PostgreSQL's timestamptz hands back
aware ones in the session's zone. ``UTCDateTime`` makes both give aware UTC datetimes and refuse
naive ones at the bind site, so a local-time value can never be stored by mistake.
"""

from __future__ import annotations

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
