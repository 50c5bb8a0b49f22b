from memories.views.activity import activity
from memories.views.dashboard import overview
from memories.views.errors import csrf_failure
from memories.views.index import (
    index_reconcile,
    index_reindex,
    index_status,
    job_detail,
    job_retry,
    policy_cleanup,
    policy_consolidate,
    policy_page,
)
from memories.views.memories import (
    memory_bulk,
    memory_detail,
    memory_diff,
    memory_forget,
    memory_importance,
    memory_list,
    memory_promote,
    memory_purge,
    memory_restore,
    memory_rollback,
)
from memories.views.search import search_page
from memories.views.sessions import message_promote, session_detail, session_list, session_warm
from memories.views.synonyms import synonyms_edit
from memories.views.tokens import token_list, token_new, token_revoke_view

__all__ = [
    "activity",
    "csrf_failure",
    "index_reconcile",
    "index_reindex",
    "index_status",
    "job_detail",
    "job_retry",
    "memory_bulk",
    "memory_detail",
    "memory_diff",
    "memory_forget",
    "memory_importance",
    "memory_list",
    "memory_promote",
    "memory_purge",
    "memory_restore",
    "memory_rollback",
    "message_promote",
    "overview",
    "policy_cleanup",
    "policy_consolidate",
    "policy_page",
    "search_page",
    "session_detail",
    "session_list",
    "session_warm",
    "synonyms_edit",
    "token_list",
    "token_new",
    "token_revoke_view",
]
