from django.urls import path

from memories import views
from memories.views import backup

app_name = "memories"

urlpatterns = [
    path("", views.overview, name="memories-overview"),
    path("memories/", views.memory_list, name="memories-list"),
    path("memories/bulk/", views.memory_bulk, name="memories-bulk"),
    path("memories/<str:memory_id>/", views.memory_detail, name="memories-detail"),
    path("memories/<str:memory_id>/diff/", views.memory_diff, name="memories-diff"),
    path(
        "memories/<str:memory_id>/importance/", views.memory_importance, name="memories-importance"
    ),
    path("memories/<str:memory_id>/forget/", views.memory_forget, name="memories-forget"),
    path("memories/<str:memory_id>/restore/", views.memory_restore, name="memories-restore"),
    path("memories/<str:memory_id>/rollback/", views.memory_rollback, name="memories-rollback"),
    path("memories/<str:memory_id>/promote/", views.memory_promote, name="memories-promote"),
    path("memories/<str:memory_id>/purge/", views.memory_purge, name="memories-purge"),
    path("sessions/", views.session_list, name="memories-sessions"),
    # Session ids may contain "/" (any 1-128 characters), so the actions come before the
    # catch-all detail route; an id ending in "/warm" or "/messages/<n>/promote" would have
    # its page shadowed by them (documented; the API has the same shape).
    path("sessions/<path:session_id>/warm/", views.session_warm, name="memories-session-warm"),
    path(
        "sessions/<path:session_id>/messages/<int:seq>/promote/",
        views.message_promote,
        name="memories-message-promote",
    ),
    path("sessions/<path:session_id>/", views.session_detail, name="memories-session"),
    path("search/", views.search_page, name="memories-search"),
    path("search/synonyms/", views.synonyms_edit, name="memories-synonyms"),
    path("index/", views.index_status, name="memories-index"),
    path("index/reindex/", views.index_reindex, name="memories-reindex"),
    path("index/reconcile/", views.index_reconcile, name="memories-reconcile"),
    path("index/jobs/<str:job_id>/", views.job_detail, name="memories-job"),
    path("index/jobs/<str:job_id>/retry/", views.job_retry, name="memories-job-retry"),
    path("index/policy/", views.policy_page, name="memories-policy"),
    path("index/policy/cleanup/", views.policy_cleanup, name="memories-policy-cleanup"),
    path("index/policy/consolidate/", views.policy_consolidate, name="memories-policy-consolidate"),
    path("index/backup/", backup.backup_page, name="memories-backup"),
    path("index/backup/export/", backup.backup_export, name="memories-backup-export"),
    path("index/backup/export-all/", backup.backup_export_all,
         name="memories-backup-export-all"),
    path("index/backup/files/<str:name>", backup.backup_download, name="memories-backup-download"),
    path("index/backup/import/", backup.backup_import, name="memories-backup-import"),
    path("activity/", views.activity, name="memories-activity"),
    path("tokens/", views.token_list, name="memories-tokens"),
    path("tokens/new/", views.token_new, name="memories-token-new"),
    path("tokens/<str:prefix>/revoke/", views.token_revoke_view, name="memories-token-revoke"),
]
