from django.urls import path

from memories import views

app_name = "memories"

urlpatterns = [
    path("", views.overview, name="memories-overview"),
    path("memories/", views.memory_list, name="memories-list"),
    path("memories/<str:memory_id>/", views.memory_detail, name="memories-detail"),
    path(
        "memories/<str:memory_id>/importance/", views.memory_importance, name="memories-importance"
    ),
    path("memories/<str:memory_id>/forget/", views.memory_forget, name="memories-forget"),
    path("memories/<str:memory_id>/restore/", views.memory_restore, name="memories-restore"),
    path("memories/<str:memory_id>/rollback/", views.memory_rollback, name="memories-rollback"),
    path("sessions/", views.session_list, name="memories-sessions"),
    path("sessions/<path:session_id>/", views.session_detail, name="memories-session"),
    path("search/", views.search_page, name="memories-search"),
    path("index/", views.index_status, name="memories-index"),
    path("activity/", views.activity, name="memories-activity"),
]
