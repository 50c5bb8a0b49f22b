"""The Index page (health of the Redis index, jobs) and the forgetting-policy page.

Reads come from ``operations.health`` / ``operations.jobs`` / ``operations.policy``; the
buttons enqueue jobs (``memories.queue.enqueue``: after commit, on the ``index`` or
``default`` queue) and record an audit event, as the API does. A started job answers htmx
with its progress fragment, which polls itself every second until the job is finished or
failed; a plain browser is sent to the job's own page (POST/redirect/GET), which reloads
itself while the job runs (``<noscript>`` refresh), so everything works without JavaScript.

Redis down never means a 500: the page says so (the health of an index that cannot be
reached is exactly that), and an action that needs Redis answers 503 with a clear message.
"""
