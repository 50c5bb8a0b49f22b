"""API tokens (admin): list, create (for a new or existing user, optionally restricted to
namespaces), revoke.

A new token is shown once: the POST keeps it in the session (server-side, never in a URL or a
cookie) and redirects (POST-redirect-GET, so a refresh creates nothing); the page it
redirects to takes it out of the session as it shows it, with ``Cache-Control: no-store``
and a copy button. Only its SHA-256 is kept in the database. A token carries its user's role: a new user is created with the role
chosen, as ``create_api_token`` does; an existing user's role changes only when the form
confirms it. Every create and revoke is an audit event.
"""

from datetime import datetime

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.forms import TokenCreateForm
from accounts.models import ApiToken
from accounts.tokens import token_issue, token_revoke
from console.forms import add_service_error
from console.pages import paginate, render_page, role_required
from memories import services
from memories.errors import ServiceError

PER_PAGE = 25
USERNAME_HINTS = 200
# The session key that holds a new token until the page after the redirect shows it.
CREATED_KEY = "token_created"


def _page(request, *, form=None, status: int = 200):
    tokens = ApiToken.objects.select_related("user").order_by("-created_at", "-id")
    pager = paginate(
        request, tokens, per_page=PER_PAGE, params={}, base=reverse("accounts:tokens")
    )
    return render_page(
        request,
        "accounts/tokens.html",
        {
            "pager": pager,
            "form": form or TokenCreateForm(),
            # Lazy: only the full page (its <datalist>) evaluates it, never the fragment.
            "usernames": get_user_model()
            .objects.filter(is_active=True)
            .order_by("username")
            .values_list("username", flat=True)[:USERNAME_HINTS],
        },
        partial="rows",
        status=status,
    )


@require_GET
@vary_on_headers("HX-Request")
@role_required("admin")
def token_list(request):
    """Every token (user, name, prefix, created, last used, revoked), newest first.

    Queries: the session and roles, one COUNT, one page of tokens with their users.
    """
    return _page(request)


@require_POST
@role_required("admin")
def token_new(request):
    """Create a token (``accounts.tokens.token_issue``, as ``create_api_token`` does): the
    user is created when the name is new; an existing user's role changes only when the
    form confirms it (``change_role``), otherwise a form error says what would change; the
    namespaces must exist unless ``new_namespaces`` is ticked. Every refusal is a form error
    on the page, and nothing is written."""
    form = TokenCreateForm(request.POST)
    if not form.is_valid():
        return _page(request, form=form, status=400)
    data = form.cleaned_data
    try:
        issued = token_issue(
            actor=request.user,
            username=data["username"],
            role=data["role"] or None,
            name=data["name"],
            namespaces=data["namespaces"],
            agents=data["agents"],
            change_role=data["change_role"],
            expires_in_days=data["expires_in_days"],
        )
    except ServiceError as exc:
        add_service_error(form, exc)
        if exc.field == "role" and "current_role" in exc.extra:
            form.needs_role_confirmation = True
        return _page(request, form=form, status=exc.status)
    request.session[CREATED_KEY] = {
        "token": issued.token,
        "username": issued.user.username,
        "token_role": issued.role,
        "name": data["name"],
        "namespaces": issued.namespaces,
        "agents": issued.agents,
        "user_created": issued.created,
        "role_changed": issued.role_changed and not issued.created,
        # ISO text: the session is JSON.
        "expires_at": issued.expires_at.isoformat() if issued.expires_at else None,
    }
    return redirect("accounts:token-created")


@require_GET
@role_required("admin")
def token_created(request):
    """The token just created, shown once: it leaves the session as it is shown, so a
    refresh (or a second visit) finds nothing and lands on the list."""
    created = request.session.pop(CREATED_KEY, None)
    if created is None:
        messages.info(request, "A new token is shown once only; this one was shown already.")
        return redirect("accounts:tokens")
    if created.get("expires_at"):
        created["expires_at"] = datetime.fromisoformat(created["expires_at"])
    response = render_page(request, "accounts/token_created.html", created)
    add_never_cache_headers(response)  # the token must not sit in any cache
    return response


@require_POST
@role_required("admin")
def token_revoke_view(request, prefix: str):
    """Revoke the live token(s) with this prefix. Idempotent: a token revoked already
    stays revoked (a message says so); an unknown prefix is a 404; a superuser's token
    needs a superuser (403, the list with the reason; ``token_revoke``'s rule)."""
    rows = list(ApiToken.objects.select_related("user").filter(prefix=prefix))
    if not rows:
        raise Http404(f"no token starts with {prefix}")
    live = [row for row in rows if row.revoked_at is None]
    if live:
        try:
            with transaction.atomic():
                count = token_revoke(prefix=prefix, actor=request.user)
                for row in live:
                    services.audit_record(
                        actor=request.user,
                        action="token_revoked",
                        target=f"user:{row.user.username}",
                        data={"prefix": prefix, "name": row.name},
                    )
        except ServiceError as exc:  # nothing was revoked: the list as it is, and why
            messages.error(request, exc.message)
            return _page(request, status=exc.status)
        messages.success(
            request, f"Revoked {count} token{'s' if count != 1 else ''} starting with {prefix}."
        )
    else:
        messages.info(request, f"The token starting with {prefix} was already revoked.")
    if not request.htmx:
        return redirect("accounts:tokens")
    return _page(request)
