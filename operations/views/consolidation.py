"""Applying consolidation groups from the policy page: one group at a time (each with its
own form, exactly the memories and merged text the page showed), or every group shown as
one job. Admin only; a reason is required and kept in each version and audit event."""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from console.forms import add_service_error
from console.pages import bad_request, forbidden, refuse, render_page, role_required
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.errors import ServiceError
from operations import consolidate, jobs, plan_cache
from operations.forms import ApplyAllForm, ApplyGroupForm, PolicyForm
from operations.views.index import form_errors
from operations.views.jobs import enqueue_or_503
from operations.views.policy import policy_context, policy_url, render_policy

GROUP_RESULT = "operations/_consolidation_group_result.html"


@require_POST
@role_required("admin")
def policy_group_apply(request):
    """Merge one group now (``operations.consolidate.consolidate_group``). htmx: the group's
    card is replaced by the result, or by itself with the error inline (4xx); without
    JavaScript: back to the policy page with a message."""
    user_id = request.POST.get("user_id", "")
    group_id = request.POST.get("group_id", "")
    form = ApplyGroupForm(request.POST, auto_id=f"{group_id}_%s")
    status = 400
    if form.is_valid():
        try:
            merged = consolidate.consolidate_group(memory_ids=form.cleaned_data["memory_ids"],
                                                   actor=request.user,
                                                   reason=form.cleaned_data["reason"])
        except ServicePermissionDenied as exc:
            return forbidden(request, exc.message)
        except ServiceError as exc:
            add_service_error(form, exc)
            status = exc.status
        else:
            text = (f"Merged {len(form.cleaned_data['memory_ids'])} memories into "
                    f"{merged.memory_id}.")
            if request.htmx:
                response = render_page(request, GROUP_RESULT, {
                    "merged": merged, "group_id": group_id,
                    "count": len(form.cleaned_data["memory_ids"])})
                # The section's head (group count, Apply all) reloads on this event.
                return trigger_client_event(response, "consolidation-applied")
            messages.success(request, text)
            return redirect(reverse("memories:detail", args=[merged.memory_id]))
    if not user_id or not group_id:
        return bad_request(request, form_errors(form))
    # The page again, this group's form bound with its error (htmx: the group's card only).
    context = policy_context(user_id, group_forms={group_id: form})
    card = next((g for g in context["groups"] if g["g"].group_id == group_id), None)
    error = " ".join(e for errs in form.errors.values() for e in errs)
    if request.htmx:
        if card is None:  # no longer in the plan: say so where the card was
            return render_page(request, GROUP_RESULT, {"group_id": group_id, "error": error},
                               status=status)
        return render_page(request, "operations/_consolidation_group.html",
                           {"group": card, "user_id": user_id}, status=status)
    if card is None:
        context["group_error"] = error
    return render_policy(request, PolicyForm(initial={"user_id": user_id}), context,
                         status=status)


@require_POST
@role_required("admin")
def policy_consolidate(request):
    """Merge every group the page shows (``group_id`` repeated; none: every group of the
    plan) as one job (``jobs.consolidate_job``, queue default); a reason is required."""
    form = ApplyAllForm(request.POST, auto_id="all_%s")
    if not form.is_valid():
        return bad_request(request, form_errors(form))
    data = form.cleaned_data
    group_ids = request.POST.getlist("group_id") or None
    try:
        groups = plan_cache.cached_groups(
            user_id=data["user_id"], group_ids=group_ids, threshold=data["threshold"],
            max_members=data["max_members"]) or consolidate.resolve_groups(
            user_id=data["user_id"], group_ids=group_ids, threshold=data["threshold"],
            max_members=data["max_members"])
    except ServiceError as exc:
        if request.htmx:  # a fragment for the messages area, the page stays as it was
            return refuse(request, exc.message, status=exc.status)
        messages.error(request, exc.message)
        return redirect(policy_url(data["user_id"], data["threshold"], data["max_members"]))
    return enqueue_or_503(request, jobs.consolidate_job, data["user_id"], groups,
                           request.user.get_username(), data["reason"], queue="default",
                           action="consolidate", target=data["user_id"])
