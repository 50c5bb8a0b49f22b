"""Synonyms expand queries of profiles that use them, never the index."""

import pytest

from memories import services
from memories.errors import InvalidInput
from search import synonym_sets
from search.index import fields
from search.memory_search import memory_search
from search.models import RankingProfile
from tests.helpers import postings_of

pytestmark = pytest.mark.django_db


def test_it_parses_lines_and_rejects_single_terms():
    assert synonym_sets.parse_lines("car, automobile\n# comment\n\nnyc, new york") == [
        ["car", "automobile"], ["nyc", "new york"]]
    with pytest.raises(InvalidInput) as err:
        synonym_sets.parse_lines("car, auto\nlonely")
    assert "line 2" in err.value.message


def test_it_expands_queries_only_for_profiles_with_synonyms(builtins):
    m = services.memory_create(user_id="u-a", content="The automobile is parked outside")[0]
    synonym_sets.synonyms_replace(text="car, automobile, auto")
    RankingProfile.objects.create(name="syn", synonyms=True)
    assert memory_search(user_id="u-a", query="car", profile="bm25").results == []
    found = memory_search(user_id="u-a", query="car", profile="syn")
    assert [h.memory_id for h in found.results] == [m.memory_id]
    assert found.terms == ["car", "automobile", "auto"]
    assert postings_of("u-a", "car") == set()  # the index is never expanded


def test_it_expands_multi_word_members(builtins):
    analyzer = fields.ANALYZERS[fields.CONTENT]
    synonym_sets.synonyms_replace(text="nyc, new york")
    assert synonym_sets.expand(["nyc"], analyzer) == ["nyc", "new", "york"]
    assert synonym_sets.expand(["new", "york"], analyzer) == ["new", "york", "nyc"]
    assert synonym_sets.expand(["new"], analyzer) == ["new"]


def test_expansion_itself_needs_no_database():
    """search.analysis.synonyms is pure: the sets are passed in."""
    from search.analysis.synonyms import expand_with

    analyzer = fields.ANALYZERS[fields.CONTENT]
    sets = [("nyc", "new york"), ("car", "auto")]
    assert expand_with(["new", "york", "car"], analyzer, sets) == [
        "new", "york", "car", "nyc", "auto"]
    assert expand_with(["york"], analyzer, sets) == ["york"]
