"""Ranking lab pages, included at the root: ``path("", include("lab.urls"))``."""

from django.urls import path

from lab.views import compare, judgments, profiles, query_sets, runs

app_name = "lab"

urlpatterns = [
    path("search/compare/", compare.compare, name="compare"),
    path("search/compare/explain/", compare.compare_explain, name="compare-explain"),
    path("search/compare/save/", compare.compare_save, name="compare-save"),
    path("lab/", profiles.lab_home, name="home"),
    path("lab/profiles/", profiles.profile_list, name="profiles"),
    path("lab/profiles/<str:name>/", profiles.profile_detail, name="profile"),
    path("lab/profiles/<str:name>/delete/", profiles.profile_delete, name="profile-delete"),
    path("lab/judgments/", judgments.judgments, name="judgments"),
    path("lab/judgments/export.csv", judgments.judgments_export, name="judgments-export"),
    path("lab/judgments/import/", judgments.judgments_import, name="judgments-import"),
    path("lab/query-sets/", query_sets.queryset_list, name="querysets"),
    path("lab/query-sets/<int:pk>/", query_sets.queryset_detail, name="queryset"),
    path("lab/query-sets/<int:pk>/notes/", query_sets.queryset_note, name="queryset-note"),
    path("lab/runs/", runs.run_list, name="runs"),
    path("lab/runs/compare/", runs.run_compare, name="run-compare"),
    path("lab/runs/<int:pk>/", runs.run_detail, name="run"),
]
