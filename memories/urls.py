"""Memory and conflict pages, included at the root: ``path("", include("memories.urls"))``."""

from django.urls import path

from memories.views import conflicts as conflict_views
from memories.views import consolidation_undo as memory_undo_views
from memories.views import create as memory_create_views
from memories.views import detail as memory_views
from memories.views import diff as memory_diff_views
from memories.views import edit as memory_edit_views
from memories.views import list as memory_list_views
from memories.views import purge as memory_purge_views
from memories.views import validity as memory_validity_views

app_name = "memories"

urlpatterns = [
    path("memories/", memory_list_views.memory_list, name="list"),
    path("memories/bulk/", memory_list_views.memory_bulk, name="bulk"),
    path("memories/new/", memory_create_views.memory_new, name="new"),
    path("memories/<str:memory_id>/", memory_views.memory_detail, name="detail"),
    path("memories/<str:memory_id>/diff/", memory_diff_views.memory_diff, name="diff"),
    path("memories/<str:memory_id>/importance/", memory_views.memory_importance, name="importance"),
    path("memories/<str:memory_id>/edit/", memory_edit_views.memory_edit, name="edit"),
    path("memories/<str:memory_id>/forget/", memory_views.memory_forget, name="forget"),
    path("memories/<str:memory_id>/restore/", memory_views.memory_restore, name="restore"),
    path("memories/<str:memory_id>/rollback/", memory_views.memory_rollback, name="rollback"),
    path("memories/<str:memory_id>/undo-consolidation/", memory_undo_views.memory_consolidation_undo,
         name="consolidation-undo"),
    path("memories/<str:memory_id>/promote/", memory_views.memory_promote, name="promote"),
    path("memories/<str:memory_id>/purge/", memory_purge_views.memory_purge, name="purge"),
    path("memories/<str:memory_id>/end/", memory_validity_views.memory_end, name="end"),
    path("memories/<str:memory_id>/revalidate/", memory_validity_views.memory_revalidate,
         name="revalidate"),
    path("conflicts/", conflict_views.conflict_list, name="conflicts"),
    path("conflicts/bulk/", conflict_views.conflict_bulk, name="conflicts-bulk"),
    path("conflicts/<int:conflict_id>/decide/", conflict_views.conflict_decide,
         name="conflict-decide"),
    path("conflicts/<int:conflict_id>/edit/", conflict_views.conflict_edit, name="conflict-edit"),
]
