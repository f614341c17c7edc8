"""A development mail catcher: an aiosmtpd server on 127.0.0.1 that keeps what it receives.

``make demo`` runs one so a newcomer sees notifications flow from the simulated web; the /outbox
page lists the captured mails (from the ``notify_sink`` table, so the web process sees mails the
sink caught in another thread or process). It accepts everything and delivers nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from email import message_from_bytes, policy
from typing import Any

from aiosmtpd.controller import Controller

from fairfetch.store import notify_repo as repo
from fairfetch.store.sql import SqlStore

__all__ = ["CapturedMail", "LoopbackController", "MailSink"]


@dataclass(frozen=True)
class CapturedMail:
    mail_from: str
    rcpt_to: tuple[str, ...]
    data: bytes

    @property
    def message(self) -> Any:
        return message_from_bytes(self.data, policy=policy.default)


class LoopbackController(Controller):
    """aiosmtpd's Controller on an ephemeral port (port 0): it learns the port the OS picked
    before its start-up self-check connects to it."""

    def _trigger_server(self) -> None:
        if self.port == 0 and self.server is not None:
            self.port = int(getattr(self.server, "sockets")[0].getsockname()[1])  # noqa: B009
        super()._trigger_server()


class _Handler:
    def __init__(self, sink: MailSink) -> None:
        self.sink = sink

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        data = envelope.original_content or envelope.content
        raw = data if isinstance(data, bytes) else str(data).encode("utf-8")
        mail = CapturedMail(envelope.mail_from or "", tuple(envelope.rcpt_tos), raw)
        self.sink._keep(mail)
        return "250 Message accepted for delivery"


#: smtp:// URLs of the sinks running in this process: /outbox shows while one of them is the
#: server mail goes to (the demo's), before it has captured anything.
RUNNING: set[str] = set()


class MailSink:
    """``with MailSink(store) as sink: sink.port``; ``store=None`` keeps mails in memory only."""

    def __init__(self, store: SqlStore | None = None, *, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        if not host.startswith("127.") and host != "localhost":
            raise ValueError("the mail sink listens on loopback only")
        self.store = store
        self.mails: list[CapturedMail] = []
        self._lock = threading.Lock()
        self.controller = LoopbackController(_Handler(self), hostname=host, port=port)

    @property
    def port(self) -> int:
        return int(self.controller.port)

    @property
    def smtp_url(self) -> str:
        return f"smtp://{self.controller.hostname}:{self.port}"

    def _keep(self, mail: CapturedMail) -> None:
        with self._lock:
            self.mails.append(mail)
        if self.store is not None:
            msg = mail.message
            repo.record_sink(
                self.store,
                received_at=datetime.now(UTC),
                mail_from=mail.mail_from,
                rcpt_to=", ".join(mail.rcpt_to),
                subject=str(msg.get("Subject", "")),
                message_id=str(msg.get("Message-ID", "")),
                raw=mail.data.decode("utf-8", "replace"),
            )

    def start(self) -> MailSink:
        self.controller.start()
        RUNNING.add(self.smtp_url)
        return self

    def stop(self) -> None:
        RUNNING.discard(self.smtp_url)
        self.controller.stop()

    def __enter__(self) -> MailSink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
