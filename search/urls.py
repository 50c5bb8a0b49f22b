"""Search and synonyms pages, included at the root: ``path("", include("search.urls"))``."""

from django.urls import path

from search.views import search as search_views
from search.views import synonyms as synonym_views

app_name = "search"

urlpatterns = [
    path("search/", search_views.search_page, name="search"),
    path("search/synonyms/", synonym_views.synonyms_edit, name="synonyms"),
]
