"""Commands of this job; see fairfetch.cli."""

from __future__ import annotations
