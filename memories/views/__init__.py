"""Memory list (with bulk actions), detail, diff of any two versions, and the changes a
reviewer makes (importance, forget/restore, rollback, promote, purge): forms -> services.

Every change goes through ``memories.services`` (the only writers). A POST answers htmx with
the updated fragment (``#memory-panel`` on the detail page, ``#memory-rows`` in the list),
and a plain browser with a redirect (POST/redirect/GET), so every page works without
JavaScript. Promote and purge move the browser to another page (the new memory, the list):
for htmx that is an ``HX-Redirect``.
"""
