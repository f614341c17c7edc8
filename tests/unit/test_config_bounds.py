"""A number past what the program can use is refused when read, naming its variable or file,
as a negative one is: past a database INTEGER, or a duration no date can be moved by, it was
taken, and the command died later with a traceback (``OverflowError: Python int too large to
convert to SQLite INTEGER`` from ``notify send-due``, ``... to C int`` from ``stats``). Text
that goes into a header or a comparison with one (the User-Agent, the sender, the admin token)
holds no control character: a CR LF in the User-Agent made every fetch an ``internal`` error."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.config import load_settings
from fairfetch.errors import ConfigError


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("FAIRFETCH_NOTIFY_BATCH", "99999999999999999999"),
        ("FAIRFETCH_BATCH_SIZE", str(2**31)),
        ("FAIRFETCH_WEBSUB_LEASE_SECONDS", str(2**31)),
        ("FAIRFETCH_DEAD_AFTER", str(2**63)),
        ("FAIRFETCH_DEAD_PROBE_INTERVAL", "1e300"),
        ("FAIRFETCH_MAX_INTERVAL", "1e12"),
        ("FAIRFETCH_TOTAL_TIMEOUT", "1e300"),
        ("FAIRFETCH_NOTIFY_POLICY_GIVE_UP_DAYS", "1e300"),
        ("FAIRFETCH_NOTIFY_MAX_AGE_DAYS", "1e9"),
        ("FAIRFETCH_USER_AGENT", "fairfetch\r\nX-Injected: 1"),
        ("FAIRFETCH_MAIL_FROM", "fairfetch <f@x.test>\nBcc: a@b.test"),
        ("FAIRFETCH_ADMIN_TOKEN", "token\n"),
    ],
)
def test_config_a_value_the_program_cannot_use_is_refused_naming_it(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={var: value})
    assert var in str(caught.value)


@pytest.mark.parametrize(
    ("var", "value", "name", "expected"),
    [
        ("FAIRFETCH_NOTIFY_BATCH", str(2**31 - 1), "notify_batch", 2**31 - 1),
        ("FAIRFETCH_DEAD_PROBE_INTERVAL", "3e9", "dead_probe_interval", 3e9),  # 95 years
        ("FAIRFETCH_NOTIFY_POLICY_GIVE_UP_DAYS", "36500", "notify_policy_give_up_days", 36500),
        ("FAIRFETCH_USER_AGENT", "fairfetch/1 (+https://x.test/\u00e9)", "user_agent",
         "fairfetch/1 (+https://x.test/\u00e9)"),
    ],
)
def test_config_large_but_usable_values_are_kept(
    var: str, value: str, name: str, expected: object
) -> None:
    assert getattr(load_settings(environ={var: value}), name) == expected


@pytest.mark.parametrize(
    ("var", "args"),
    [
        ("FAIRFETCH_NOTIFY_BATCH", ["notify", "send-due"]),
        ("FAIRFETCH_DEAD_PROBE_INTERVAL", ["stats"]),
        ("FAIRFETCH_NOTIFY_POLICY_GIVE_UP_DAYS", ["notify", "send-due"]),
    ],
)
def test_config_an_unusable_number_is_one_line_not_a_traceback(
    var: str, args: list[str], tmp_path: Path
) -> None:
    r = CliRunner().invoke(
        app, ["--db", f"sqlite:///{tmp_path}/b.db", *args], env={var: "1" + "0" * 30}
    )
    assert r.exit_code == 2, r.output
    assert var in r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.output


@pytest.mark.parametrize(
    ("var", "value"),
    [("FAIRFETCH_ADMIN_TOKEN", "s3cret-token\n"),
     ("FAIRFETCH_DB", "postgresql+psycopg://u:s3cret-token@127.0.0.1/x\n"),
     ("FAIRFETCH_SMTP_URL", "smtp://u:s3cret-token@127.0.0.1:25\r\n")],
)
def test_config_a_refused_secret_is_not_shown(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={var: value})
    assert var in str(caught.value)
    assert "s3cret" not in str(caught.value)
