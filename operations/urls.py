"""Index, jobs, forgetting policy and backup pages, included at the root:
``path("", include("operations.urls"))``."""

from django.urls import path

from operations.views import backup
from operations.views import consolidation as consolidation_views
from operations.views import index as index_views
from operations.views import jobs as job_views
from operations.views import policy as policy_views

app_name = "operations"

urlpatterns = [
    path("index/", index_views.index_status, name="index"),
    path("index/reindex/", index_views.index_reindex, name="reindex"),
    path("index/reconcile/", index_views.index_reconcile, name="reconcile"),
    path("index/jobs/<str:job_id>/", job_views.job_detail, name="job"),
    path("index/jobs/<str:job_id>/retry/", job_views.job_retry, name="job-retry"),
    path("index/policy/", policy_views.policy_page, name="policy"),
    path("index/policy/cleanup/", policy_views.policy_cleanup, name="policy-cleanup"),
    path("index/policy/plan/", policy_views.policy_plan_recompute, name="policy-plan"),
    path("index/policy/consolidate/", consolidation_views.policy_consolidate, name="policy-consolidate"),
    path("index/policy/consolidate/group/", consolidation_views.policy_group_apply, name="policy-group"),
    path("index/policy/runs/<str:run_id>/undo/", policy_views.policy_run_undo, name="policy-run-undo"),
    path("index/backup/", backup.backup_page, name="backup"),
    path("index/backup/export/", backup.backup_export, name="backup-export"),
    path("index/backup/export-all/", backup.backup_export_all, name="backup-export-all"),
    path("index/backup/files/<str:name>", backup.backup_download, name="backup-download"),
    path("index/backup/import/", backup.backup_import, name="backup-import"),
]
