"""Users (admin): every login with its role, last login and active state; create a human
login; change a role after an explicit confirmation; deactivate and reactivate.

Writes go through ``accounts.users`` (its rules: not oneself, a superuser only by a
superuser). Every POST that succeeds redirects (POST-redirect-GET). A one-time
set-password link is kept in the session and shown once by the list it redirects to.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Prefetch
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods, require_POST

from accounts import users as user_writer
from accounts.forms import RoleForm, UserCreateForm
from accounts.roles import ROLES
from console.forms import add_service_error
from console.pages import paginate, render_page, role_required
from memories.errors import NotFound, ServiceError

PER_PAGE = 50
# The session key that holds a set-password link until the list shows it once.
LINK_KEY = "user_password_link"


def _user_or_404(username: str):
    try:
        return user_writer.user_get(username)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _page(request, *, form=None, status: int = 200):
    users = get_user_model().objects.order_by("username", "id").prefetch_related(
        Prefetch("groups", queryset=Group.objects.filter(name__in=ROLES), to_attr="roles")
    )
    pager = paginate(request, users, per_page=PER_PAGE, params={}, base=reverse("accounts:users"))
    for user in pager.page:
        names = {g.name for g in user.roles}
        user.role = "admin" if user.is_superuser else next(
            (r for r in reversed(ROLES) if r in names), None)
    link = request.session.pop(LINK_KEY, None)
    response = render_page(request, "accounts/users.html", {
        "pager": pager,
        "form": form or UserCreateForm(),
        "role_form": RoleForm(),
        "link": link and {**link, "url": request.build_absolute_uri(link["path"])},
        "reset_days": settings.PASSWORD_RESET_TIMEOUT // 86400,
    }, status=status)
    if link:
        add_never_cache_headers(response)  # the link must not sit in any cache
    return response


@require_http_methods(["GET", "POST"])
@role_required("admin")
def user_list(request):
    """GET: every user (role, superuser, last login, active) and the create form.
    POST: create a login (``accounts.users.user_create``); a refusal is a form error."""
    if request.method == "GET":
        return _page(request)
    form = UserCreateForm(request.POST)
    if not form.is_valid():
        return _page(request, form=form, status=400)
    data = form.cleaned_data
    try:
        user = user_writer.user_create(actor=request.user, username=data["username"],
                                       role=data["role"], password=data["password"])
    except ServiceError as exc:
        add_service_error(form, exc)
        return _page(request, form=form, status=exc.status)
    if data["password"]:
        messages.success(request, f"Created {user.username} ({data['role']}); they can log in.")
    else:
        request.session[LINK_KEY] = {"username": user.username,
                                     "path": user_writer.set_password_link(user)}
        messages.success(request, f"Created {user.username} ({data['role']}).")
    return redirect("accounts:users")


@require_http_methods(["GET", "POST"])
@role_required("admin")
def user_role(request, username: str):
    """GET ``?role=``: the confirmation ("Change ada from editor to admin?"), or why it may
    not be done. POST: the change (``accounts.users.user_set_role``), then the list."""
    user = _user_or_404(username)
    form = RoleForm(request.POST if request.method == "POST" else request.GET)
    error, status, current = None, 200, None
    if not form.is_valid():
        error, status = " ".join(form.errors.get("role", ["Choose a role."])), 400
    else:
        role = form.cleaned_data["role"]
        try:
            if request.method == "POST":
                was = user_writer.user_set_role(actor=request.user, username=username,
                                                role=role)
                messages.success(request, f"{username} is now {role} (was {was or 'no role'}).")
                return redirect("accounts:users")
            current = user_writer.role_change_check(actor=request.user, user=user, role=role)
        except ServiceError as exc:
            error, status = exc.message, exc.status
    return render_page(request, "accounts/user_role.html", {
        "subject": user, "form": form, "current": current, "error": error,
    }, status=status)


@require_POST
@role_required("admin")
def user_active(request, username: str):
    """Deactivate (``active=0``: no login, every token refused at once) or reactivate
    (``active=1``) a user, then the list; a refusal is the list with the reason (403)."""
    _user_or_404(username)
    active = request.POST.get("active") == "1"
    try:
        user_writer.user_set_active(actor=request.user, username=username, active=active)
    except ServiceError as exc:
        messages.error(request, exc.message)
        return _page(request, status=exc.status)
    messages.success(request, f"{username} is {'active again' if active else 'deactivated'}"
                     f"{'' if active else ': no login, and their tokens are refused'}.")
    return redirect("accounts:users")
