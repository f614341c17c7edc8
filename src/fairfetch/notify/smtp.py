"""The edge that talks SMTP (aiosmtplib): one connection per pass, replies sorted into
accepted / temporary / permanent.

``settings.smtp_url`` is ``smtp://[user:pass@]host:port`` (STARTTLS when the server offers it and
credentials are given) or ``smtps://…`` (implicit TLS). Mail goes only to that server.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message
from urllib.parse import unquote, urlsplit

import aiosmtplib

from fairfetch.config import masked_url
from fairfetch.errors import ConfigError
from fairfetch.notify.render import as_bytes, wire_address
from fairfetch.notify.replies import judge_reply, refuses_the_message_size

__all__ = ["Attempt", "SmtpConfig", "SmtpSession"]


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    implicit_tls: bool
    username: str | None
    password: str | None

    @classmethod
    def parse(cls, url: str) -> SmtpConfig:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ConfigError(
                f"smtp_url {masked_url(url)!r}: expected smtp://user:pass@host:port or smtps://"
            )
        tls = parts.scheme == "smtps"
        try:
            port = parts.port or (465 if tls else 25)
        except ValueError:
            raise ConfigError(f"smtp_url {masked_url(url)!r}: bad port") from None
        return cls(
            host=parts.hostname,
            port=port,
            implicit_tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )


#: Replies before the recipient is named: whatever their code, they say nothing about the reader.
_REFUSED_US = (
    aiosmtplib.SMTPConnectResponseError,
    aiosmtplib.SMTPHeloError,
    aiosmtplib.SMTPAuthenticationError,
    aiosmtplib.SMTPSenderRefused,
)


@dataclass(frozen=True)
class Attempt:
    """``outcome``: ``ok`` | ``temporary`` | ``permanent``; ``code`` None for connection trouble."""

    outcome: str
    code: int | None = None
    detail: str = ""
    #: the failure is the server's, not this message's (see :attr:`server_down`)
    server: bool = False
    #: a permanent failure that counts towards flagging the reader's address (see
    #: :func:`fairfetch.notify.replies.judge_reply`)
    against_reader: bool = True

    @property
    def server_down(self) -> bool:
        """A temporary failure of the server, not of this message: it could not be reached,
        refused our greeting, login or sender, or said 421 (service not available). The whole
        queue waits for it, in order, rather than this one message. (A connection dropped in the
        middle of a message may be about that message: it backs off alone.)"""
        return self.outcome == "temporary" and (self.server or self.code == 421)


def _refused_us(exc: aiosmtplib.SMTPResponseException) -> Attempt:
    """A reply to our greeting, login or envelope sender, 5xx included, is about our
    configuration, not the reader: every message would get it, so none may fail (nor flag an
    address) over it; the queue waits, with backoff, for the operator to fix it."""
    return Attempt(
        "temporary", exc.code,
        f"server refused us ({type(exc).__name__}): {exc.code} {exc.message}", server=True,
    )


#: How a refusal of us by policy is recorded (the row's last error, the pass's errors).
POLICY_REFUSAL = "refused by the mail system's policy — ours to fix, not the reader's address " \
    "(sending IP or domain reputation, SPF/DKIM/DMARC, relay permissions): "


def _judged(code: int | None, text: str) -> Attempt:
    """An answer to one message (at RCPT or after DATA), judged by its enhanced status code."""
    v = judge_reply(code, text)
    detail = f"{code} {text}".strip()
    if v.ours:
        detail = POLICY_REFUSAL + detail
    return Attempt(v.outcome, code, detail, against_reader=v.against_reader)


class SmtpSession:
    """A lazily opened connection reused across messages; reopened after a failure."""

    def __init__(self, config: SmtpConfig, *, timeout: float = 30.0) -> None:
        self.config = config
        self.timeout = timeout
        self._client: aiosmtplib.SMTP | None = None

    async def _connect(self) -> aiosmtplib.SMTP:
        if self._client is not None and self._client.is_connected:
            return self._client
        c = self.config
        client = aiosmtplib.SMTP(
            hostname=c.host,
            port=c.port,
            use_tls=c.implicit_tls,
            start_tls=None if (c.username and not c.implicit_tls) else False,
            timeout=self.timeout,
        )
        await client.connect()
        if c.username and c.password:
            await client.login(c.username, c.password)
        self._client = client
        return client

    async def send(self, msg: Message, *, sender: str, recipient: str) -> Attempt:
        # a non-ASCII address (``josé@…``) travels only with SMTPUTF8 (RFC 6531); encoding it
        # as ASCII raised out of the pass, and the oldest-first sender then died on it for ever
        sender, recipient = wire_address(sender), wire_address(recipient)
        utf8 = not (sender.isascii() and recipient.isascii())
        try:
            client = await self._connect()
        except _REFUSED_US as exc:
            await self._drop()
            return _refused_us(exc)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            await self._drop()
            return Attempt("temporary", None,
                           f"cannot reach the mail server: {type(exc).__name__}: {exc}",
                           server=True)
        try:
            await client.sendmail(sender, [recipient], as_bytes(msg),
                                  mail_options=["SMTPUTF8"] if utf8 else [])
        except aiosmtplib.SMTPNotSupported as exc:
            await self._drop()
            if utf8 and "SMTPUTF8" in str(exc):  # this message can never go through this server
                return Attempt(
                    "permanent", None,
                    f"the mail server does not offer SMTPUTF8, needed for {recipient!r}",
                )
            return Attempt("temporary", None, f"{type(exc).__name__}: {exc}")
        except aiosmtplib.SMTPRecipientsRefused as exc:
            await self._drop()
            if not exc.recipients:
                return Attempt("temporary", None, str(exc))
            worst = max(exc.recipients, key=lambda e: e.code)
            return _judged(worst.code, worst.message)
        except aiosmtplib.SMTPServerDisconnected as exc:
            await self._drop()
            return Attempt("temporary", None, f"disconnected: {exc}")
        except aiosmtplib.SMTPSenderRefused as exc:
            await self._drop()
            if refuses_the_message_size(exc.code, exc.message):
                # this message is too big for the server: it fails alone (read as a refusal
                # of our sender, it held the whole queue behind it for good)
                return Attempt("permanent", exc.code,
                               f"message too big for the mail server: {exc.code} {exc.message}",
                               against_reader=False)
            return _refused_us(exc)
        except _REFUSED_US as exc:
            await self._drop()
            return _refused_us(exc)
        except aiosmtplib.SMTPResponseException as exc:
            await self._drop()
            return _judged(exc.code, exc.message)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            await self._drop()
            return Attempt("temporary", None, f"{type(exc).__name__}: {exc}")
        return Attempt("ok", 250)

    async def _drop(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        try:
            if client.is_connected:
                await client.quit()
        except Exception:
            client.close()

    async def aclose(self) -> None:
        await self._drop()
