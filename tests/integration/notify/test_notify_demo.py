"""The demo's mail: a sink on loopback, demo readers, mails visible where /outbox reads them."""

from __future__ import annotations

from datetime import timedelta

from fairfetch.notify.demo import DEMO_READERS, demo_mail
from fairfetch.notify.service import send_due
from fairfetch.store import notify_repo as repo

from .conftest import FAST, T0


async def test_notify_demo_mail_flows_to_the_sink(world):
    fids = [world.add_feed(f"https://f{i}.example.test/feed") for i in range(2)]
    sink, settings = demo_mail(world.store, world.settings, fids, now=T0)
    try:
        assert settings.smtp_url.startswith("smtp://127.0.0.1:")
        world.write(fids[0], [world.entry("demo item")], at=T0 + timedelta(minutes=5))
        report = await send_due(world.store, settings, T0 + timedelta(days=1), options=FAST)
        assert report.sent == 2  # the real-time mail and the digest
        captured = repo.list_sink(world.store)
        assert {c["rcpt_to"] for c in captured} == set(DEMO_READERS)
        assert any("demo item" in c["subject"] for c in captured)
    finally:
        sink.stop()
