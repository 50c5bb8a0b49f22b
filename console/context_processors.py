"""Template context every console page gets."""

from accounts.roles import role_of
from console.namespaces import namespace_hints
from memories.models import Conflict, ConflictStatus


def namespaces(request):
    """``namespace_hints``: the existing namespaces for ``_namespaces_datalist.html``; lazy,
    so a page without a namespace field (and every htmx fragment) runs no query for it."""
    return {"namespace_hints": namespace_hints()}


def role(request):
    """``role``: the user's role (viewer, editor, admin or None) for the navigation's admin
    links and the role badge. A context processor rather than each view's context, so the
    pages no view of ours renders (the 404 handler, the CSRF failure, Django's own error
    views) keep them too. A callable: the template calls it only where it uses ``role``."""
    return {"role": lambda: role_of(request.user)}


def open_conflicts(request):
    """``open_conflicts``: how many supersession proposals wait for review, shown beside
    Conflicts in the navigation. One COUNT (on the ``user_id, status, created_at`` index's
    table), run only when base.html renders the navigation: a callable, so an htmx fragment
    and a logged-out page run none."""
    return {"open_conflicts": lambda: Conflict.objects.filter(status=ConflictStatus.OPEN).count()}
