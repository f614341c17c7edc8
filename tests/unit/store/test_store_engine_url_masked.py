"""A database URL the store refuses is named with its password masked, for every caller (the
CLI masks on its side; a script or the web app embedding the store must be safe too)."""

from __future__ import annotations

import pytest

from fairfetch.errors import ConfigError
from fairfetch.store.engine import create_engine


@pytest.mark.parametrize(
    "url", ["mysql://u:s3cret@127.0.0.1:1/x", "oracle+cx://u:s3cret@db.example.test/x"]
)
def test_store_unsupported_database_url_is_named_without_its_password(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        create_engine(url)
    message = str(caught.value)
    assert "s3cret" not in message, message
    assert "u:***@" in message, message
    assert "only sqlite:// and postgresql+psycopg://" in message
