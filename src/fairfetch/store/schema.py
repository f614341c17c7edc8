"""All tables of every job on one MetaData, for migrations and the schema test.

Each job keeps its tables in ``store/tables_<job>.py`` on the same metadata; importing this module
imports them all, so nobody has to remember to register a new one.
"""

from __future__ import annotations

import importlib
import pkgutil

import fairfetch.store as _store_pkg
from fairfetch.store.tables import metadata

for _info in pkgutil.iter_modules(_store_pkg.__path__, "fairfetch.store."):
    if _info.name.rsplit(".", 1)[-1].startswith("tables_"):
        importlib.import_module(_info.name)

__all__ = ["metadata"]
