from memories.views.dashboard import activity, index_status, overview
from memories.views.errors import csrf_failure
from memories.views.memories import (
    memory_detail,
    memory_forget,
    memory_importance,
    memory_list,
    memory_restore,
    memory_rollback,
)
from memories.views.search import search_page
from memories.views.sessions import session_detail, session_list

__all__ = [
    "activity",
    "csrf_failure",
    "index_status",
    "memory_detail",
    "memory_forget",
    "memory_importance",
    "memory_list",
    "memory_restore",
    "memory_rollback",
    "overview",
    "search_page",
    "session_detail",
    "session_list",
]
