"""The synonyms editor: viewers read, editors replace the table; a bad line is a form error
naming it, and nothing changes."""

import pytest

from memories.models import AuditEvent
from search.models import SynonymSet
from search.synonym_sets import synonyms_replace, synonyms_text
from tests.views.conftest import HX, ids, tags, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def table(builtins):
    synonyms_replace(text="car, automobile\nnyc, new york", actor="seed")


def textarea(body) -> dict[str, str]:
    return next(a for t, a in tags(body) if t == "textarea")


def test_a_viewer_reads_the_table(viewer_client, table):
    resp = viewer_client.get("/search/synonyms/")
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body and "synonyms" in ids(body)
    assert "car, automobile\nnyc, new york" in body
    assert "readonly" in textarea(body) and "synonyms-form" not in ids(body)
    assert "needs the editor role" in body


def test_an_editor_replaces_the_table(editor_client, table):
    body = text(editor_client.get("/search/synonyms/"))
    assert "readonly" not in textarea(body) and "synonyms-form" in ids(body)
    resp = editor_client.post(
        "/search/synonyms/", {"text": "# vehicles\ncar, automobile, motorcar\n\nsofa, couch"}
    )
    assert resp.status_code == 302 and resp["Location"] == "/search/synonyms/"
    assert [s.terms for s in SynonymSet.objects.all()] == [
        ["car", "automobile", "motorcar"],
        ["sofa", "couch"],
    ]
    assert "Saved 2 synonym sets and 1 comment line." in text(editor_client.get(resp["Location"]))
    event = AuditEvent.objects.get(action="synonyms_replaced")
    assert (event.actor, event.data) == ("eddie", {"sets": 2})


def test_htmx_saves_and_gets_the_fragment(editor_client, table):
    resp = editor_client.post("/search/synonyms/", {"text": "tv, television"}, headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<section class="card narrow-card wide" id="synonyms">')
    assert "Saved 1 synonym set." in body and 'hx-swap-oob="true"' in body
    assert synonyms_text() == "tv, television"


@pytest.mark.parametrize(("headers"), [{}, HX])
def test_a_bad_line_is_a_form_error_naming_it(editor_client, table, headers):
    resp = editor_client.post(
        "/search/synonyms/", {"text": "car, automobile\nlonely\nsofa, couch"}, headers=headers
    )
    assert resp.status_code == 400
    assert "line 2: a synonym set needs two or more terms" in text(resp)
    assert "synonyms-error" in ids(resp.content)
    assert synonyms_text() == "car, automobile\nnyc, new york"  # unchanged
    assert not AuditEvent.objects.exists()


def test_a_viewer_cannot_save(viewer_client, table):
    resp = viewer_client.post("/search/synonyms/", {"text": "a, b"}, headers=HX)
    assert resp.status_code == 403 and "needs the editor role" in text(resp)
    assert synonyms_text() == "car, automobile\nnyc, new york"


def test_an_empty_text_clears_the_table(editor_client, table):
    resp = editor_client.post("/search/synonyms/", {"text": ""})
    assert resp.status_code == 302 and not SynonymSet.objects.exists()


def test_other_methods_are_refused(editor_client, table):
    assert editor_client.put("/search/synonyms/").status_code == 405
    assert editor_client.delete("/search/synonyms/").status_code == 405


COMMENTED = (
    "# Vehicles (ask Priya before changing these)\n"
    "car, automobile, motorcar\n"
    "\n"
    "# Furniture\n"
    "sofa, couch  # not settee\n"
    "# end of the list\n"
)


@pytest.mark.parametrize("headers", [{}, HX])
def test_comments_survive_a_save_and_the_save_is_confirmed(editor_client, table, headers):
    resp = editor_client.post(
        "/search/synonyms/", {"text": COMMENTED.replace("\n", "\r\n")}, headers=headers
    )
    assert resp.status_code in (200, 302)
    page = text(editor_client.get("/search/synonyms/")) if resp.status_code == 302 else text(resp)
    assert "Saved 2 synonym sets and 3 comment lines." in page
    assert synonyms_text() == COMMENTED
    assert COMMENTED.replace("\n", "&#10;") in page or COMMENTED in page  # in the textarea
    assert [s.terms for s in SynonymSet.objects.all()] == [
        ["car", "automobile", "motorcar"],
        ["sofa", "couch"],
    ]
    # Saved again unchanged (what the page shows), nothing is lost.
    editor_client.post("/search/synonyms/", {"text": synonyms_text()})
    assert synonyms_text() == COMMENTED


def test_a_table_changed_elsewhere_is_shown_as_it_is(editor_client, table):
    """The saved text is shown only while it still parses to the stored sets."""
    editor_client.post("/search/synonyms/", {"text": COMMENTED})
    SynonymSet.objects.filter(terms=["sofa", "couch"]).delete()
    assert synonyms_text() == "car, automobile, motorcar"
