"""No raw ids alone where a person wants text (issue 14): Overview's recent changes and the
Judgments page show a snippet of the memory's text beside its id."""

import pytest

from lab import judgments as lab_judgments
from tests.views.conftest import text

pytestmark = pytest.mark.django_db


def test_overview_recent_changes_show_a_snippet(viewer_client, make_memory):
    m = make_memory("The staging database moved to db-stage-3 on Monday")
    body = text(viewer_client.get("/"))
    row = body[body.index(f'href="/memories/{m.memory_id}/"'):]
    assert row.index("db-stage-3") < row.index("</tr>")


def test_judgments_show_a_snippet_beside_the_memory_id(viewer_client, editor, make_memory):
    m = make_memory("Kestrel Health renews its contract in March")
    lab_judgments.judgment_set(actor=editor, user_id="u-a", query="kestrel renewal",
                               memory_id=m.memory_id, grade=3)
    body = text(viewer_client.get("/lab/judgments/"))
    row = body[body.index(f'href="/memories/{m.memory_id}/"'):]
    assert row.index("Kestrel Health renews its contract in March") < row.index("</tr>")
