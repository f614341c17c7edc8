"""Generated requests against the OpenAPI document: no request may produce a 500.

Every operation of the document (the JSON API and the pages) gets a few generated requests, kept
small so the whole run takes seconds. No admin token is sent, so no generated request can make the
app fetch anything: the token check refuses writes before any work.
(Schemathesis' own pytest plugin does not run on this pytest version, so the operations are
driven through Hypothesis directly.)
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error

from fairfetch.config import Settings
from fairfetch.feeds.model import Entry, Person
from fairfetch.store import open_store
from fairfetch.web.app import create_app

from .conftest import TOKEN, add_crawled

#: Per operation and mode (valid, invalid requests): small, so the run stays in seconds.
MAX_EXAMPLES = 6


@pytest.fixture
def api_schema(tmp_path: Any) -> Iterator[Any]:
    store = open_store(f"sqlite:///{tmp_path}/fuzz.db")
    now = datetime.now(UTC)
    add_crawled(
        store,
        "http://a.test/feed",
        title="<script>x</script>",
        kind="podcast",
        at=now,
        entries=[Entry(id="1", title="one", link="javascript:alert(1)")],
        authors=[(Person(name="Ann"), "author")],
    )
    add_crawled(store, "http://b.test/feed", title=None, status="dead", at=now)
    app = create_app(Settings(db=store.url, admin_token=TOKEN), store)
    yield schemathesis.openapi.from_asgi("/api/v1/openapi.json", app)
    store.close()


def test_web_generated_requests_never_get_a_500(api_schema: Any) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 15  # the API and the pages are all in the document
    failures: list[str] = []
    modes = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
    for operation, mode in [(op, mode) for op in operations for mode in modes]:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case: Any) -> None:
            response = case.call()
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.formatted_path} query={case.query!r} "
                    f"body={case.body!r}: {response.status_code} {response.text[:200]}"
                )
            case.validate_response(response, checks=[not_a_server_error])

        try:
            run()
        except Unsatisfiable:
            assert mode is schemathesis.GenerationMode.NEGATIVE  # nothing invalid to send
        except Exception as exc:  # collect every operation's failure, then report them all
            failures.append(f"{operation.method.upper()} {operation.path} ({mode}): {exc}")
    assert not failures, "\n".join(failures)
