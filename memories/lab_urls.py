"""Ranking lab pages, included at the root: ``path("", include("memories.lab_urls"))``."""

from django.urls import path

from memories.views import lab

app_name = "lab"

urlpatterns = [
    path("search/compare/", lab.compare, name="compare"),
    path("search/compare/explain/", lab.compare_explain, name="compare-explain"),
    path("search/compare/save/", lab.compare_save, name="compare-save"),
    path("lab/", lab.lab_home, name="home"),
    path("lab/profiles/", lab.profile_list, name="profiles"),
    path("lab/profiles/<str:name>/", lab.profile_detail, name="profile"),
    path("lab/profiles/<str:name>/delete/", lab.profile_delete, name="profile-delete"),
    path("lab/judgments/", lab.judgments, name="judgments"),
    path("lab/query-sets/", lab.queryset_list, name="querysets"),
    path("lab/query-sets/<int:pk>/", lab.queryset_detail, name="queryset"),
    path("lab/runs/", lab.run_list, name="runs"),
    path("lab/runs/compare/", lab.run_compare, name="run-compare"),
    path("lab/runs/<int:pk>/", lab.run_detail, name="run"),
]
