"""The lab home and the ranking profile pages."""

from django.contrib import messages
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, render_page, role_required
from lab.forms import ProfileForm
from lab.models import EvalRun, Judgment, QuerySet
from lab.views.common import lab_nav
from memories.errors import ServiceError
from search import profile_services
from search.models import RankingProfile


@require_GET
@role_required("viewer")
def lab_home(request):
    return render_page(
        request,
        "lab/home.html",
        {
            **lab_nav("home"),
            "profiles": RankingProfile.objects.all(),
            "querysets": QuerySet.objects.annotate(n_runs=Count("runs")),
            "runs": EvalRun.objects.defer("per_query", "unjudged").select_related("query_set")[:10],
            "n_judgments": Judgment.objects.count(),
            "n_reviewers": Judgment.objects.values("reviewer").distinct().count(),
        },
    )


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def profile_list(request):
    """GET: every profile. POST (editor): create one."""
    form = ProfileForm(
        request.POST if request.method == "POST" else None,
        initial={"ranker": "bm25", "match_mode": "any", "recency_from": "created_at"},
    )
    if not has_role(request.user, "admin"):
        form.fields["is_default"].disabled = True  # only admins choose the default
    status = 200
    if request.method == "POST":
        if not has_role(request.user, "editor"):
            return forbidden(request, "Creating a profile needs the editor role.")
        if form.is_valid():
            try:
                profile = profile_services.profile_create(
                    actor=request.user,
                    name=form.cleaned_data["name"],
                    is_default=form.cleaned_data["is_default"],
                    **form.settings(),
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                messages.success(request, f"Created profile {profile.name}.")
                return HttpResponseRedirect(reverse("lab:profile", args=[profile.name]))
        else:
            status = 400
    return render_page(
        request,
        "lab/profiles.html",
        {
            **lab_nav("profiles"),
            "form": form,
            "profiles": RankingProfile.objects.all(),
            "can_create": has_role(request.user, "editor"),
            "is_admin": has_role(request.user, "admin"),
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def profile_detail(request, name: str):
    """GET: settings and versions. POST: change it (its creator or an admin)."""
    profile = RankingProfile.objects.filter(name=name).first()
    if profile is None:
        return render(request, "404.html", {"message": f"No profile named {name!r}."}, status=404)
    can_edit = profile_services.can_edit_profile(request.user, profile)
    is_admin = has_role(request.user, "admin")
    initial = {
        "name": profile.name,
        "is_default": profile.is_default,
        **{f: getattr(profile, f) for f in profile_services.SETTINGS},
    }
    form = ProfileForm(request.POST if request.method == "POST" else None, initial=initial)
    status = 200
    if request.method == "POST":
        if not can_edit:
            return forbidden(request, "Only the profile's creator or an admin may change it.")
        if form.is_valid():
            changes = form.settings()
            if is_admin:
                changes["is_default"] = form.cleaned_data["is_default"]
            try:
                profile = profile_services.profile_update(
                    actor=request.user, name=name, new_name=form.cleaned_data["name"], **changes
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                messages.success(request, f"Saved profile {profile.name}.")
                return HttpResponseRedirect(reverse("lab:profile", args=[profile.name]))
        else:
            status = 400
    if profile.builtin:
        for f in ("name", *profile_services.SETTINGS):
            form.fields[f].disabled = True
    if not is_admin:
        form.fields["is_default"].disabled = True
    return render_page(
        request,
        "lab/profile_detail.html",
        {
            **lab_nav("profiles"),
            "profile": profile,
            "form": form,
            "can_edit": can_edit,
            "is_admin": is_admin,
            "can_copy": has_role(request.user, "editor"),
            "copy_settings": _copy_settings(profile),
            "versions": list(reversed(profile_services.profile_versions(profile))),
            "settings": profile_services.SETTINGS,
        },
        status=status,
    )


def _copy_settings(profile: RankingProfile) -> list[tuple[str, str]]:
    """``[(field, value)]``: every setting as ProfileForm reads it back (a float's shortest
    exact text; booleans as "true"/"false", which its checkboxes read as posted)."""
    out = []
    for name in profile_services.SETTINGS:
        value = getattr(profile, name)
        out.append((name, ("true" if value else "false") if isinstance(value, bool) else str(value)))
    return out


@require_POST
@role_required("admin")
def profile_delete(request, name: str):
    try:
        profile_services.profile_delete(actor=request.user, name=name, reason=request.POST.get("reason", ""))
    except ServiceError as exc:
        messages.error(request, f"Not deleted: {exc.message}")
        return HttpResponseRedirect(reverse("lab:profiles"))
    messages.success(request, f"Deleted profile {name}.")
    return HttpResponseRedirect(reverse("lab:profiles"))

