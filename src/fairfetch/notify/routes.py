"""Notification pages (subscribe, manage, unsubscribe, outbox). Stub until that job lands."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
