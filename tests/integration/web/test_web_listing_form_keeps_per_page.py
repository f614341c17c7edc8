"""The listing's filter form (status, sort, order) keeps the page size the reader chose: it
submits only its own fields, so applying a filter on ?per_page=200 fell back to 50 rows."""

from __future__ import annotations

import re
from typing import Any


def test_web_listing_filter_form_keeps_the_chosen_page_size(client: Any) -> None:
    page = client.get("/feeds", params={"per_page": 200, "page": 3}).text
    form = re.search(r'<form class="filters".*?</form>', page, re.S)
    assert form is not None
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form.group(0)))
    assert fields == {"per_page": "200"}  # the page number is not kept: a new filter starts at 1
    default = re.search(r'<form class="filters".*?</form>', client.get("/blogs").text, re.S)
    assert default is not None
    assert 'type="hidden"' not in default.group(0)
