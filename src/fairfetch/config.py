"""Settings, with documented defaults.

Precedence, lowest first: the defaults below < a TOML config file (``--config FILE``, keys are the
field names, optionally grouped under ``[fairfetch]``) < environment variables
(``FAIRFETCH_`` + the field name in upper case) < explicit overrides (command-line flags).

Like Scrapy's settings, every knob is here with its default and the reason for it, so an operator
can read one file to know what fairfetch will do. Every field has both a config-file key and an
environment variable (``key_overrides``, a table, is config-file only). Lists are TOML arrays or
comma-separated text; an empty value turns off a setting that may be off (``None`` below). A value
that cannot be used is a :class:`~fairfetch.errors.ConfigError` naming the setting and where the
value came from (file, variable or option).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fairfetch.errors import ConfigError

__all__ = ["Settings", "env_name", "load_settings", "masked_url", "unknown_environment"]


@dataclass(frozen=True)
class Settings:
    # --- store -------------------------------------------------------------------------------
    #: Database URL. SQLite (WAL) for one process; ``postgresql+psycopg://`` for scale-out.
    db: str = "sqlite:///fairfetch.db"

    # --- network perimeter -------------------------------------------------------------------
    #: CIDRs that may be reached although private/loopback/reserved. Default: none.
    allow_networks: tuple[str, ...] = ()
    #: ``HOST:IP`` overrides, ``*.domain:IP`` wildcards allowed (curl's --resolve).
    resolve: tuple[str, ...] = ()
    #: The User-Agent names us and a contact URL so a publisher can reach the operator.
    user_agent: str = "fairfetch/0.1 (+https://github.com/fairfetch/fairfetch)"
    #: Body cap after decompression; a gzip bomb is cut here, not inflated.
    max_body_bytes: int = 10 * 1024 * 1024
    connect_timeout: float = 10.0
    first_byte_timeout: float = 20.0
    total_timeout: float = 60.0
    max_redirects: int = 10

    # --- politeness --------------------------------------------------------------------------
    #: Requests in flight per politeness key (backend or registrable domain).
    per_key_in_flight: int = 2
    #: Minimum seconds between request starts on one key.
    per_key_gap: float = 0.0
    #: Requests in flight per host (hostname). One: a host is one server.
    per_host_in_flight: int = 1
    #: Total requests in flight across all keys. Politeness is per key; this bounds sockets and
    #: buffered bodies. Throughput is in_flight / latency: at 64, answers of 50 ms (robots.txt
    #: then the feed) held a 2-core crawl at 350 feeds/s while its CPU allowed 550; 128 reaches
    #: it (bench/crawl.py). Raise it when answers are slow and the CPU is idle.
    global_in_flight: int = 128
    #: Per-key overrides: ``{"substack.com": {"in_flight": 1, "gap": 2.0}}`` (config file only).
    key_overrides: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: Honour robots.txt (and its crawl-delay).
    obey_robots: bool = True

    # --- crawl schedule ----------------------------------------------------------------------
    min_interval: float = 15 * 60.0
    max_interval: float = 24 * 3600.0
    default_interval: float = 3600.0
    #: Consecutive failures after which a feed is dead.
    dead_after: int = 10
    #: How often a dead feed is probed (one request).
    dead_probe_interval: float = 30 * 24 * 3600.0
    #: Failures on this many distinct politeness keys at the network level within a minute mean
    #: the fault is ours (an outage), not theirs.
    outage_keys: int = 20
    #: Entries written per transaction.
    batch_size: int = 200
    #: Days the logs of attempts are kept (rows of ``crawls`` and ``websub_pings``); ``run``
    #: deletes older ones once a day, ``fairfetch prune`` on demand. Empty: kept for ever.
    #: /crawlstats reads the last day; a feed's story (``feeds show``) its recent crawls.
    log_retention_days: float | None = 90.0
    #: Worker processes that parse feeds during large crawls, beside one that writes (0: parse
    #: and write in this process). Off by default: on two cores, 1,200 feeds, a pass in process
    #: took 0.55-0.65 of the time and CPU of one with workers (spawning, pickling every result
    #: twice) and ~40 % less memory. Worth measuring where cores are spare and passes large.
    parse_processes: int = 0
    #: A crawl pass with at least this many due feeds starts the worker processes.
    parse_pool_threshold: int = 200

    # --- web ---------------------------------------------------------------------------------
    #: Base URL at which serve/run is reachable (WebSub callbacks and links in emails).
    public_url: str = "http://127.0.0.1:8080"
    #: Bearer token for writing actions on the web and API. Empty: writing is disabled.
    admin_token: str = ""
    host: str = "127.0.0.1"
    port: int = 8080

    # --- notify ------------------------------------------------------------------------------
    smtp_url: str = "smtp://127.0.0.1:8025"
    mail_from: str = "fairfetch <fairfetch@localhost>"
    #: Messages per second to the SMTP server (0: no limit). Providers throttle; after an outage
    #: the backlog drains at this pace, oldest first.
    notify_rate: float = 20.0
    #: Outbox rows claimed per delivery pass.
    notify_batch: int = 200
    #: Seconds per SMTP command: a stuck server must not hold the notifier forever.
    notify_smtp_timeout: float = 30.0
    #: Seconds between the delivery passes of ``run``.
    notify_poll: float = 15.0
    #: Republish guard: an entry published more than this many days before the feed's newest is
    #: an old item re-emitted, not news. Empty: off.
    notify_behind_newest_days: float | None = 7.0
    #: An entry published more than this many days before it was first seen is not news (a feed
    #: that republishes its whole archive moves its newest too). Empty: off.
    notify_max_age_days: float | None = 14.0
    #: A mail the mail system refuses for a policy reason of ours (5.7.x, "Relaying denied") is
    #: retried this many days from the first refusal in a row, then fails for good and its
    #: publisher's credit hold is released (a 5xx is a definite no; 3 days cover a weekend and
    #: a block-list delisting or a DNS fix of ours).
    notify_policy_give_up_days: float = 3.0

    # --- websub ------------------------------------------------------------------------------
    websub_lease_seconds: int = 7 * 24 * 3600
    #: A ping naming an entry published longer ago than this is acknowledged and ignored.
    websub_ignore_older_than: float = 14 * 24 * 3600.0
    #: A ping naming an entry missing from the re-fetched feed is acknowledged anyway when the
    #: entry was last updated longer ago than this (bounds the hub's retries).
    websub_give_up_after: float = 4 * 3600.0

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
#: Each field's default value, read off a default instance (factories included).
_DEFAULTS: dict[str, Any] = dataclasses.asdict(Settings())
#: Fields that may be turned off: an empty value (``""`` in the file or the environment) is None.
_OPTIONAL = {
    f.name for f in dataclasses.fields(Settings) if "None" in str(f.type)
}


def env_name(name: str) -> str:
    """The environment variable of a setting: ``FAIRFETCH_`` + its name in upper case."""
    return "FAIRFETCH_" + name.upper()


#: Lower (and upper) bounds of the numeric settings. Zero in-flight slots, a zero timeout or a
#: negative interval would not fail: the crawler would wait forever or spin, far from the cause.
_AT_LEAST_ONE = (
    "per_key_in_flight", "per_host_in_flight", "global_in_flight", "batch_size", "dead_after",
    "outage_keys", "max_body_bytes", "notify_batch", "websub_lease_seconds",
)
_POSITIVE = (
    "connect_timeout", "first_byte_timeout", "total_timeout", "min_interval", "max_interval",
    "default_interval", "dead_probe_interval", "notify_smtp_timeout", "notify_poll",
    "notify_policy_give_up_days", "log_retention_days",
)
_NOT_NEGATIVE = (
    "per_key_gap", "parse_processes", "parse_pool_threshold", "max_redirects", "notify_rate",
    "websub_ignore_older_than", "websub_give_up_after", "notify_behind_newest_days",
    "notify_max_age_days",
)


#: The largest whole number a setting may be: PostgreSQL's INTEGER (a batch size is a LIMIT, a
#: lease is stored and sent), far above any sensible value. Past SQLite's 64 bits a send-due
#: died with "Python int too large to convert to SQLite INTEGER".
_INT_MAX = 2**31 - 1
#: Durations in seconds, and in days, at most a century: a date moved by more than that would
#: pass year 9999, and timedelta() itself overflows long before 1e300 ("... to C int").
_SECONDS = (
    "connect_timeout", "first_byte_timeout", "total_timeout", "per_key_gap", "min_interval",
    "max_interval", "default_interval", "dead_probe_interval", "notify_smtp_timeout",
    "notify_poll", "websub_ignore_older_than", "websub_give_up_after",
)
_DAYS = (
    "notify_behind_newest_days", "notify_max_age_days", "notify_policy_give_up_days",
    "log_retention_days",
)
_CENTURY_DAYS = 36_525


def _check_range(name: str, value: float) -> None:
    if isinstance(value, int) and name != "port" and value > _INT_MAX:
        raise ValueError(f"must be at most {_INT_MAX}, not {value!r}")
    if name in _SECONDS and value > _CENTURY_DAYS * 86_400:
        raise ValueError(f"must be at most {_CENTURY_DAYS * 86_400} s (a century), not {value!r}")
    if name in _DAYS and value > _CENTURY_DAYS:
        raise ValueError(f"must be at most {_CENTURY_DAYS} days (a century), not {value!r}")
    if name in _AT_LEAST_ONE and value < 1:
        raise ValueError(f"must be at least 1, not {value!r}")
    if name in _POSITIVE and value <= 0:
        raise ValueError(f"must be more than 0, not {value!r}")
    if name in _NOT_NEGATIVE and value < 0:
        raise ValueError(f"must not be negative, not {value!r}")
    if name == "port" and not 0 <= value <= 65535:
        raise ValueError(f"must be 0 to 65535, not {value!r}")


def _check_public_url(url: str) -> None:
    """Links in mails and WebSub callbacks are built on it: a value without a scheme or host
    would send readers and hubs nowhere, silently, long after start-up."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL with a host: {url!r}")


def masked_url(url: str) -> str:
    """The URL with the password of its user part replaced by ``***``: an error message about
    the mail server's URL must not print the password to the terminal or a cron mail."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, _ = rest.partition("/")[0].rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{rest[len(userinfo) + 1:]}"


def _check_smtp_url(url: str) -> None:
    """Read when the settings are, not when the first mail is due: the notifier's own refusal
    came later (a cron `notify send-due`) and printed the URL whole, password and all."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
        usable = parts.scheme in ("smtp", "smtps") and bool(parts.hostname) and port != 0
    except ValueError:  # a port out of range or not a number, a broken [IPv6] host
        usable = False
    if not usable:
        raise ValueError(
            "not an smtp:// or smtps:// URL with a host (and a port from 1 to 65535): "
            f"{masked_url(url)!r}"
        )


def _check_mail_from(value: str) -> None:
    """The sender of every mail (From and the SMTP envelope): 'nobody' was kept as written and
    every mail then went out as MAIL FROM:<nobody>, refused by the server one at a time, long
    after start-up. A one-label host (the default's ``localhost``) is allowed: it is a host."""
    from email.utils import getaddresses

    from fairfetch.net.idn import idna2008, is_host_name

    found = getaddresses([value])
    addr = found[0][1] if len(found) == 1 else ""
    local, _, domain = addr.rpartition("@")
    try:
        host = idna2008(domain).lower() if local and domain else ""
    except UnicodeError:
        host = ""
    if (
        addr not in value  # the parser drops spaces: 'news@exa mple.org' read as example.org
        or not host
        or not is_host_name(host)
    ):
        raise ValueError(f"not one email address (name <local@host> or local@host): {value!r}")


def _check_network_list(name: str, items: tuple[str, ...]) -> None:
    """CIDRs and HOST:IP overrides are checked when read, with the perimeter's own parsers: a
    typo found only at the first request would fail inside the crawler, far from its cause."""
    if name not in ("allow_networks", "resolve"):
        return
    from fairfetch.net.perimeter import parse_allow_networks, parse_resolve_entries

    try:
        if name == "allow_networks":
            parse_allow_networks(items)
        else:
            parse_resolve_entries(items)
    except ConfigError as exc:
        raise ValueError(str(exc).split(": ", 1)[-1]) from None


def _check_key_overrides(raw: Mapping[str, Any]) -> None:
    """Per-key overrides are checked when read, with the dispatcher's own reader: checked only
    when a crawler started, a bad table passed `serve`, `notify` and a `crawl --once` with
    nothing due, and the crawl that refused it did not name the file."""
    from fairfetch.net.politeness_state import _parse_overrides

    try:
        _parse_overrides(raw)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


def _number(kind: type[Any], raw: Any, what: str) -> Any:
    """``kind(raw)``, refused in the operator's words: Python's own ("invalid literal for int()
    with base 10: 'abc'") named the interpreter's function, not what the setting wants."""
    try:
        return kind(raw)
    except (TypeError, ValueError):
        raise ValueError(f"not {what}: {raw!r}") from None


def _coerce(name: str, raw: Any, where: str | None = None) -> Any:
    """Turn a file or environment value into the field's type, naming the setting (and where
    the value came from) on failure: an operator must be able to find the line to fix."""
    default: Any = _DEFAULTS[name]
    if name in _OPTIONAL and (raw is None or (isinstance(raw, str) and not raw.strip())):
        return None
    try:
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError(f"not a boolean: {raw!r}")
        if isinstance(raw, bool) and isinstance(default, int | float):
            raise ValueError(f"not a number: {raw!r}")
        if isinstance(default, int):
            if isinstance(raw, float) and not raw.is_integer():
                # int() would cut it: port = 8080.5 would serve on 8080 without a word.
                raise ValueError(f"not a whole number: {raw!r}")
            number = _number(int, raw, "a whole number")
            _check_range(name, number)
            return number
        if isinstance(default, float):
            value = _number(float, raw, "a number")
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"not a finite number: {raw!r}")
            _check_range(name, value)
            return value
        if isinstance(default, tuple):
            if isinstance(raw, list | tuple):
                items = tuple(str(x).strip() for x in raw if str(x).strip())
            else:
                items = tuple(p.strip() for p in str(raw).split(",") if p.strip())
            _check_network_list(name, items)
            return items
        if isinstance(default, Mapping):
            if not isinstance(raw, Mapping):
                raise ValueError("expected a table")
            _check_key_overrides(raw)
            return dict(raw)
        if isinstance(raw, bool | int | float | list | tuple | Mapping | date | time):
            # str() would make db = 3 the database file "3", a list its repr, and an unquoted
            # TOML date (a datetime is a date) '1979-05-27 07:32:00+00:00'.
            raise ValueError(f"expected text, not {raw!r}")
        text = str(raw)
        bad = next((i for i, c in enumerate(text) if ord(c) < 0x20 or ord(c) == 0x7F), None)
        if bad is not None:
            # The User-Agent and the sender go into headers (a CR LF made every fetch an
            # 'internal' error), and an admin token with one can never be sent in a header.
            # The value is not shown: a token or a URL's password is a secret.
            raise ValueError(f"holds a control character (U+{ord(text[bad]):04X} at {bad})")
        # Spaces around a value (a .env line, a quoted value) are not part of it: a public_url
        # kept with them built every callback and mail link as 'http://host:8080 /…'.
        text = text.strip()
        if default and not text:
            # Never meant: FAIRFETCH_DB= failed later as "database URL ''" (which variable?),
            # and an empty host would have served on every interface.
            raise ValueError(f"empty (unset it for the default, {default!r})")
        if name == "public_url":
            _check_public_url(text)
        if name == "smtp_url":
            _check_smtp_url(text)
        if name == "mail_from":
            _check_mail_from(text)
        return text
    except (TypeError, ValueError) as exc:
        source = f" ({where})" if where else ""
        raise ConfigError(f"setting {name!r}{source}: {exc}") from None


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Settings from defaults < a TOML file < the environment < overrides (``None`` ignored)."""
    values: dict[str, Any] = {}
    env = os.environ if environ is None else environ
    # A value a later source replaces is not read: FAIRFETCH_DB= beside --db is no mistake (a
    # wrapper clearing the variable), and an empty value is refused only where it would count.
    chosen = {name for name, raw in overrides.items() if raw is not None}
    from_env = {
        name for name in _FIELDS if env_name(name) in env and name != "key_overrides"
    } - chosen
    if config_file is not None:
        if not str(config_file).strip():
            # Path("") is "." (the working directory): "cannot read ... Is a directory".
            raise ConfigError("config file '': empty path (name a TOML file, or leave it out)")
        path = Path(config_file)
        try:
            # utf-8-sig: a byte-order mark (Notepad, PowerShell) is not a TOML statement.
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise ConfigError(f"config file {str(path)!r} does not exist") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {str(path)!r}: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"config file {str(path)!r}: cannot read ({exc.strerror})") from None
        section = data.get("fairfetch", data)
        if not isinstance(section, dict):
            raise ConfigError(f"config file {str(path)!r}: [fairfetch] must be a table")
        if section is not data:
            # Beside a [fairfetch] table only the table is read: a key above it (or a table
            # such as [key_overrides."x"] after it) would be dropped without a word.
            outside = sorted(key for key in data if key != "fairfetch")
            if outside:
                raise ConfigError(
                    f"config file {str(path)!r}: {outside[0]!r} is outside [fairfetch]; put "
                    "every setting under [fairfetch], or use no [fairfetch] table at all"
                )
        for key, raw in section.items():
            if key not in _FIELDS:
                raise ConfigError(f"config file {str(path)!r}: unknown setting {key!r}")
            if key not in chosen and key not in from_env:
                values[key] = _coerce(key, raw, f"config file {str(path)!r}")
    for name in sorted(from_env):
        key = env_name(name)
        values[name] = _coerce(name, env[key], key)
    for name, raw in overrides.items():
        if raw is None:
            continue
        if name not in _FIELDS:
            raise ConfigError(f"unknown setting {name!r}")
        values[name] = _coerce(name, raw, "option")
    return Settings(**values)


#: Variables of the project's own tooling, not settings (the test suite's PostgreSQL, golden
#: regeneration): never warned about.
_TOOLING_PREFIXES = ("FAIRFETCH_TEST_", "FAIRFETCH_REGEN_")


def unknown_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    """One message per ``FAIRFETCH_`` variable that names no setting, with the likeliest one.

    The config file refuses an unknown key, but the environment is shared with everything
    else, so a misspelt variable (``FAIRFETCH_DATABASE``) is said, not refused: it used to be
    silently ignored, and the newcomer's feeds went to the default database."""
    env = os.environ if environ is None else environ
    known = [env_name(name) for name in _FIELDS if name != "key_overrides"]
    messages = []
    for var in sorted(env):
        if not var.startswith("FAIRFETCH_") or var in known or var.startswith(_TOOLING_PREFIXES):
            continue
        if var == env_name("key_overrides"):
            # A setting, but a table: read from the config file only. "Not a setting" sent
            # the operator looking for another name.
            messages.append(
                f"{var} is ignored: key_overrides is read from the config file only "
                '(--config FILE, e.g. key_overrides = {"example.com" = {gap = 2.0}})'
            )
            continue
        message = f"{var} is not a fairfetch setting, ignored"
        close = difflib.get_close_matches(var, known, n=1, cutoff=0.7)
        if close:
            message += f" (did you mean {close[0]}?)"
        messages.append(message)
    return messages
