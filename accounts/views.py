"""API tokens (admin): list, create for an existing user with a role, revoke.

A new token is shown once, on the page that answers the POST (never stored in a session or
a message, never shown again: only its SHA-256 is kept), with ``Cache-Control: no-store``.
A token carries its user's role, so the role chosen here becomes the user's role, as
``create_api_token`` does; "keep" leaves it. Every create and revoke is an audit event.
"""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.forms import TokenCreateForm
from accounts.models import ApiToken
from accounts.roles import ROLES, role_of
from accounts.tokens import token_create, token_revoke
from console.pages import paginate, render_page, role_required
from memories import services

PER_PAGE = 25
USERNAME_HINTS = 200


def _page(request, *, form=None, status: int = 200):
    tokens = ApiToken.objects.select_related("user").order_by("-created_at", "-id")
    pager = paginate(
        request, tokens, per_page=PER_PAGE, params={}, base=reverse("memories:memories-tokens")
    )
    return render_page(
        request,
        "memories/tokens.html",
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
    form = TokenCreateForm(request.POST)
    if not form.is_valid():
        return _page(request, form=form, status=400)
    user, role = form.user, form.cleaned_data["role"]
    current = role_of(user)
    if not role and current is None:
        form.add_error("role", f"{user.username} has no role yet: choose one.")
        return _page(request, form=form, status=400)
    if user.is_superuser and not request.user.is_superuser:
        # A token carries its user's powers: minting one for a superuser would lift an admin
        # to a superuser.
        form.add_error("username", "Only a superuser may create a token for a superuser.")
        return _page(request, form=form, status=403)
    if role and user == request.user and ROLES.index(role) < ROLES.index(current):
        form.add_error("role", "You cannot lower your own role here.")
        return _page(request, form=form, status=400)
    with transaction.atomic():
        if role and role != current and not user.is_superuser:
            user.groups.remove(*Group.objects.filter(name__in=ROLES))
            user.groups.add(Group.objects.get(name=role))
        token = token_create(user=user, name=form.cleaned_data["name"])
        services.audit_record(
            actor=request.user,
            action="token_created",
            target=f"user:{user.username}",
            data={"role": role or current, "prefix": token[:10], "name": form.cleaned_data["name"]},
        )
    response = render_page(
        request,
        "memories/token_created.html",
        {
            "token": token,
            "token_user": user,
            "token_role": "admin" if user.is_superuser else (role or current),
            "name": form.cleaned_data["name"],
            "role_changed": bool(role) and role != current and not user.is_superuser,
        },
        status=201,
    )
    add_never_cache_headers(response)  # the token must not sit in any cache
    return response


@require_POST
@role_required("admin")
def token_revoke_view(request, prefix: str):
    """Revoke the live token(s) with this prefix. Idempotent: a token revoked already
    stays revoked (a message says so); an unknown prefix is a 404."""
    rows = list(ApiToken.objects.select_related("user").filter(prefix=prefix))
    if not rows:
        raise Http404(f"no token starts with {prefix}")
    live = [row for row in rows if row.revoked_at is None]
    if live:
        with transaction.atomic():
            count = token_revoke(prefix=prefix)
            for row in live:
                services.audit_record(
                    actor=request.user,
                    action="token_revoked",
                    target=f"user:{row.user.username}",
                    data={"prefix": prefix, "name": row.name},
                )
        messages.success(
            request, f"Revoked {count} token{'s' if count != 1 else ''} starting with {prefix}."
        )
    else:
        messages.info(request, f"The token starting with {prefix} was already revoked.")
    if not request.htmx:
        return redirect("memories:memories-tokens")
    return _page(request)
