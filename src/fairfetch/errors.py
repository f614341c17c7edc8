"""The one exception tree of fairfetch.

Every error the library raises on purpose derives from :class:`FairfetchError`, so a caller can
catch the whole family with one clause. Errors about a resource carry it (``err.url``), because an
error without the thing it is about is the hardest kind to act on (see lemon24/reader's
``FeedError(url)``).

Tree::

    FairfetchError
    ├── ConfigError            a setting or flag has a value we cannot use
    ├── InputError             user input (a URL, a file, an option) is invalid; names the input
    │   └── InvalidURLError
    ├── StoreError             the database refused or is unreachable
    │   └── NotFoundError      no such feed / subscription / …
    ├── FetchError             one request failed; ``kind`` is the failure kind recorded in crawls
    │   └── PerimeterError     the address is not allowed (private, loopback, …)
    ├── FeedError              something about one feed (e.g. already exists)
    ├── NotifyError            mail delivery / subscription problems
    ├── WebSubError            hub interaction problems
    └── AuditError             site-audit problems (bad crawl file, …)
"""

from __future__ import annotations


class FairfetchError(Exception):
    """Root of every error fairfetch raises on purpose."""


class ConfigError(FairfetchError):
    """A setting has a value we cannot use; the message names the setting."""


class InputError(FairfetchError):
    """User input is invalid. ``subject`` is the offending input, quoted in the message."""

    def __init__(self, subject: str, reason: str) -> None:
        super().__init__(f"{subject!r}: {reason}")
        self.subject = subject
        self.reason = reason


class InvalidURLError(InputError):
    """A URL that cannot be crawled (bad scheme, no host, unparsable)."""


class StoreError(FairfetchError):
    """The store could not do what was asked."""


class NotFoundError(StoreError):
    """No such object; ``subject`` says which one was asked for."""

    def __init__(self, subject: str) -> None:
        super().__init__(f"not found: {subject}")
        self.subject = subject


class FetchError(FairfetchError):
    """One request failed. ``kind`` is one of the failure kinds recorded in ``crawls``."""

    def __init__(self, url: str, kind: str, detail: str = "") -> None:
        super().__init__(f"{url}: {kind}" + (f" ({detail})" if detail else ""))
        self.url = url
        self.kind = kind
        self.detail = detail


class PerimeterError(FetchError):
    """The address a URL resolves to is not one we may reach."""

    def __init__(self, url: str, detail: str = "") -> None:
        super().__init__(url, "perimeter", detail)


class FeedError(FairfetchError):
    """A problem with one feed; ``url`` is the feed."""

    def __init__(self, url: str, message: str = "") -> None:
        super().__init__(f"{url}: {message}" if message else url)
        self.url = url


class NotifyError(FairfetchError):
    """Subscription or delivery problem."""


class WebSubError(FairfetchError):
    """Hub interaction problem."""


class AuditError(FairfetchError):
    """Site audit problem (bad crawl file, bad arguments)."""
