"""/metrics stays up when the crawler cannot report its keys, but says so: a failure there
must not pass for "nothing in flight" in silence."""

from __future__ import annotations

import logging

import pytest

from fairfetch.web.metrics import key_snapshot


class _Broken:
    def snapshot(self) -> dict[str, object]:
        raise RuntimeError("dispatcher state is inconsistent")


class _Fine:
    def snapshot(self) -> dict[str, object]:
        return {"example.test": object()}


def test_web_metrics_snapshot_failure_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="fairfetch.web.metrics"):
        assert key_snapshot(_Broken()) == {}
    assert any(
        "dispatcher state is inconsistent" in (r.exc_text or "") + r.getMessage()
        for r in caplog.records
    ), caplog.records


def test_web_metrics_snapshot_without_failure_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="fairfetch.web.metrics"):
        assert list(key_snapshot(_Fine())) == ["example.test"]
        assert key_snapshot(None) == {}
    assert caplog.records == []
