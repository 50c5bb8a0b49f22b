"""Recall pages, included at the root: ``path("", include("recalls.urls"))``."""

from django.urls import path

from recalls.views import browse, grading

app_name = "recalls"

urlpatterns = [
    path("recalls/", browse.recall_list, name="list"),
    path("recalls/<str:recall_id>/", browse.recall_detail, name="detail"),
    path("recalls/<str:recall_id>/grade/", grading.recall_grade, name="grade"),
    path("recalls/<str:recall_id>/query-set/", grading.recall_to_query_set, name="query-set"),
]
