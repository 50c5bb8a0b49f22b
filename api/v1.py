"""``/api/v1``: the one NinjaAPI object (api/core.py) with one router per capability.

Imported by memory_console/urls.py; every router is added here, before ``api.urls`` is read.
"""

from api import audit, conflicts, memories, memory_batch, operations, search, sessions
from api.core import api
from integrations.webhooks.api import router as webhooks_router
from lab.api import router as lab_router
from recalls.api import router as recalls_router

# memory_batch first: Django takes a path's first pattern, and "/memories/{memory_id}" would
# take "/memories/batch".
for router in (memory_batch.router, memories.router, conflicts.router, search.router,
               operations.router, audit.router, sessions.router, lab_router, recalls_router,
               webhooks_router):
    api.add_router("/", router)

__all__ = ["api"]
