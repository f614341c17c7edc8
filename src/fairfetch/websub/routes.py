"""WebSub callback routes (owned by the websub job). Stub until that lands."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
