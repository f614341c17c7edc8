"""SmtpConfig.parse refuses a bad smtp_url without printing its password: code that builds
Settings directly (not through load_settings, which checks it first) reached this refusal, and
it printed the URL whole."""

from __future__ import annotations

import pytest

from fairfetch.errors import ConfigError
from fairfetch.notify.smtp import SmtpConfig


@pytest.mark.parametrize("url", ["smtp://mailer:s3cret@mail.test:99999", "https://mailer:s3cret@x"])
def test_notify_smtp_refusal_masks_the_password(url: str) -> None:
    with pytest.raises(ConfigError) as err:
        SmtpConfig.parse(url)
    assert "s3cret" not in str(err.value)
    assert "mailer:***@" in str(err.value)
