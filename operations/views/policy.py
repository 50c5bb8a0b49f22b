"""The forgetting policy page: the cleanup plan, the consolidation groups (each with its
merged text and similarity, applied or skipped alone), and the latest runs with their undo.

Nothing is written by a GET. Applying the cleanup is a job; each consolidation group is
applied by its own POST (:mod:`operations.views.consolidation`); a policy run is undone here
in one audited action.
"""

import datetime as dt

from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from console.forms import add_service_error, default_hint
from console.pages import bad_request, forbidden, render_page, role_required
from memories import queue as job_queue
from memories import store
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.errors import ServiceError
from memories.models import AuditEvent, Memory
from operations import cleanup_undo, consolidate, jobs, plan_cache, policy
from operations.forms import ApplyAllForm, ApplyGroupForm, NamespaceForm, PolicyForm, UndoForm
from operations.views.index import form_errors
from operations.views.jobs import enqueue_or_503

PLAN_SHOWN = 200  # ids listed per plan section; the count above says how many in all
GROUPS_SHOWN = 50  # consolidation groups listed; the count above says how many in all
TEMPLATE = "operations/policy.html"


def _previews(ids: set[str]) -> dict[str, Memory]:
    return {
        m.memory_id: m
        for m in Memory.objects.filter(memory_id__in=ids).only(
            "memory_id", "content", "importance", "accessed_at", "created_at", "access_count"
        )
    }


def policy_url(user_id: str, threshold=None, max_members=None, skip=()) -> str:
    """The policy page of a namespace with the same dry-run settings (and skipped groups)."""
    from urllib.parse import urlencode

    query = [("user_id", user_id)]
    query += [("threshold", threshold)] if threshold is not None else []
    query += [("max_members", max_members)] if max_members is not None else []
    query += [("skip", g) for g in skip]
    return reverse("operations:policy") + "?" + urlencode(query)


def _recent_consolidations(user_id: str, limit: int = 10) -> list[dict]:
    events = list(AuditEvent.objects.filter(action="consolidate", data__user_id=user_id,
                                            target__startswith="mem_")
                  .order_by("-at", "-id")[:limit])
    live = set(Memory.objects.filter(memory_id__in=[e.target for e in events],
                                     deleted_at__isnull=True)
               .values_list("memory_id", flat=True))
    return [{"event": e, "memory_id": e.target, "live": e.target in live,
             "sources": len(e.data.get("consolidated_from", []))} for e in events]


def _dry_run(user_id: str, threshold, max_members) -> tuple:
    """``(plan, state)``: the consolidation dry run the page shows, at a bounded cost
    (``operations.plan_cache``): the cached one; or, when nothing fresh is cached, computed
    now for a namespace of at most ``MEMORY_POLICY_INLINE_MAX`` live long-term memories,
    else by a job (queued once; the stale plan, if any, is shown meanwhile). ``state``:
    ``{"computed_at", "seconds", "stale", "job_id"}``."""
    try:
        entry = plan_cache.plan_cached(user_id=user_id, threshold=threshold,
                                       max_members=max_members)
        job_id = None
        if entry is None or entry["stale"]:
            if plan_cache.live_long_term_count(user_id) <= plan_cache.inline_max():
                entry = {**plan_cache.plan_compute(user_id=user_id, threshold=threshold,
                                                   max_members=max_members), "stale": False}
            else:
                job_id = plan_cache.plan_job_id(user_id=user_id, threshold=threshold,
                                                max_members=max_members)
                if job_id is None:
                    job_id = plan_cache.plan_job_claim(
                        user_id=user_id, threshold=threshold, max_members=max_members,
                        job_id=job_queue.enqueue(jobs.policy_plan_job, user_id, threshold,
                                                 max_members, queue="default",
                                                 namespaces=[user_id]))
    except store.RedisError:
        # Without Redis there is no cache and no job: compute it here, as before.
        return consolidate.consolidation_plan(user_id=user_id, threshold=threshold,
                                              max_members=max_members), {}
    t, m = consolidate.bounds(threshold, max_members)
    cplan = consolidate.ConsolidationPlan(user_id=user_id, threshold=t, max_members=m)
    state = {"job_id": job_id}
    if entry is not None:
        cplan.groups = plan_cache.plan_groups(entry)
        state.update(computed_at=dt.datetime.fromisoformat(entry["computed_at"]),
                     seconds=entry["seconds"], stale=entry["stale"])
    return cplan, state


def policy_context(user_id: str, *, threshold=None, max_members=None, skip=(),
                   group_forms=None) -> dict:
    """Everything the ``#policy`` partial shows for one namespace. ``group_forms``: bound
    forms with errors, by group id, shown in place of that group's fresh form."""
    plan = policy.cleanup_plan(user_id=user_id)
    cplan, dry_run = _dry_run(user_id, threshold, max_members)
    skip = [g for g in dict.fromkeys(skip) if g]
    shown_groups = [g for g in cplan.groups if g.group_id not in skip][:GROUPS_SHOWN]
    shown = {
        "forget": plan.forget[:PLAN_SHOWN],
        "consolidate": plan.consolidate[:PLAN_SHOWN],
        "archive": plan.archive[:PLAN_SHOWN],
    }
    previews = _previews({i for ids in shown.values() for i in ids}
                         | {i for g in shown_groups for i in g.memory_ids})
    group_forms = group_forms or {}
    groups = [{
        "g": g,
        "members": [previews[i] for i in g.memory_ids if i in previews],
        "form": group_forms.get(g.group_id) or ApplyGroupForm(
            initial={"user_id": user_id, "group_id": g.group_id,
                     "memory_ids": ",".join(g.memory_ids)},
            auto_id=f"{g.group_id}_%s"),
        "skip_url": policy_url(user_id, threshold, max_members, [*skip, g.group_id]),
    } for g in shown_groups]
    sections = [
        ("forget", "Forget (idle, below the importance bound)", plan.forget),
        ("archive", "Archive (over the per-namespace cap)", plan.archive),
        ("consolidate", "Kept (idle, important enough to keep: left as they are)",
         plan.consolidate),
    ]
    return {
        "user_id": user_id,
        "dry_run": dry_run,
        "threshold_param": threshold,
        "max_members_param": max_members,
        "reload_url": policy_url(user_id, threshold, max_members, skip),
        "plan": plan,
        "sections": [(key, title, len(ids), [previews[i] for i in shown[key] if i in previews])
                     for key, title, ids in sections],
        "cplan": cplan,
        "groups": groups,
        "n_groups": len(cplan.groups),
        "skipped": (skipped := [g for g in skip if g in {x.group_id for x in cplan.groups}]),
        "more_groups": len(cplan.groups) - len(skipped) - len(shown_groups),
        "unskip_url": policy_url(user_id, threshold, max_members),
        "apply_all_form": ApplyAllForm(initial={"user_id": user_id, "threshold": threshold,
                                                "max_members": max_members},
                                       auto_id="all_%s"),
        "runs": cleanup_undo.cleanup_runs(user_id=user_id),
        "consolidations": _recent_consolidations(user_id),
        "undo_form": UndoForm(auto_id=False),
        "plan_shown": PLAN_SHOWN,
        "rule": {
            "idle_days": settings.MEMORY_POLICY_IDLE_DAYS,
            "importance_below": settings.MEMORY_POLICY_IMPORTANCE_BELOW,
            "max_long_term": settings.MEMORY_POLICY_MAX_LONG_TERM,
        },
    }


def render_policy(request, form, context: dict, *, status: int = 200):
    threshold, max_members = consolidate.bounds()
    # Blank fields mean the settings: say which values those are.
    form.fields["threshold"].widget.attrs["placeholder"] = default_hint(f"{threshold:g}")
    form.fields["max_members"].widget.attrs["placeholder"] = default_hint(max_members)
    context = {"form": form, **context}
    return render_page(request, TEMPLATE, context, partial="policy", status=status)


@require_GET
@vary_on_headers("HX-Request")
@role_required("admin")
def policy_page(request):
    """``/index/policy/?user_id=&threshold=&max_members=&skip=``: what the forgetting policy
    and consolidation would do to one namespace now (dry runs: nothing is written), with
    the buttons that apply them and undo earlier runs. htmx gets ``#policy``."""
    submitted = "user_id" in request.GET
    form = PolicyForm(request.GET if submitted else None)
    if submitted and form.is_valid():
        data = form.cleaned_data
        context = policy_context(data["user_id"], threshold=data["threshold"],
                                 max_members=data["max_members"],
                                 skip=request.GET.getlist("skip"))
        return render_policy(request, form, context)
    return render_policy(request, form, {}, status=400 if submitted else 200)


@require_POST
@role_required("admin")
def policy_plan_recompute(request):
    """Compute the consolidation dry run again, as a job (``jobs.policy_plan_job``); back to
    the policy page, which shows the job until its plan is cached."""
    form = PolicyForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form_errors(form))
    data = form.cleaned_data
    params = {"user_id": data["user_id"], "threshold": data["threshold"],
              "max_members": data["max_members"]}
    try:
        plan_cache.plan_forget(**params)  # first: the job's fresh plan must not be dropped
        if plan_cache.plan_job_id(**params) is None:
            plan_cache.plan_job_claim(**params, job_id=job_queue.enqueue(
                jobs.policy_plan_job, data["user_id"], data["threshold"], data["max_members"],
                queue="default", namespaces=[data["user_id"]]))
    except store.RedisError:
        return bad_request(request, "Redis is unreachable: no job can run now.")
    return redirect(policy_url(data["user_id"], data["threshold"], data["max_members"]))


def _policy_apply(request, func, action: str):
    form = NamespaceForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form_errors(form))
    user_id = form.cleaned_data["user_id"]
    return enqueue_or_503(request, func, user_id, request.user.get_username(),
                          queue="default", action=action, target=user_id,
                          namespaces=[user_id])


@require_POST
@role_required("admin")
def policy_cleanup(request):
    """Apply the forgetting policy to one namespace (``jobs.cleanup_job``, queue default)."""
    return _policy_apply(request, jobs.cleanup_job, "cleanup")


@require_POST
@role_required("admin")
def policy_run_undo(request, run_id: str):
    """Undo one forgetting-policy run: everything it forgot or archived comes back, in one
    audited action (reason required). Answers the policy page of its namespace."""
    try:
        run = cleanup_undo.cleanup_run(run_id)
    except ServiceError as exc:
        return bad_request(request, exc.message)
    user_id = run.target
    form = UndoForm(request.POST, auto_id=False)
    error = None
    if form.is_valid():
        try:
            result = cleanup_undo.cleanup_undo(run_id=run_id, actor=request.user,
                                               reason=form.cleaned_data["reason"])
        except ServicePermissionDenied as exc:
            return forbidden(request, exc.message)
        except ServiceError as exc:
            add_service_error(form, exc)
            error = exc.status
        else:
            skipped = f"; {len(result['skipped'])} left as they are" if result["skipped"] else ""
            messages.success(request, f"Policy run {run_id} undone: "
                                      f"{len(result['restored'])} memories restored{skipped}.")
            if not request.htmx:
                return redirect(policy_url(user_id) + "#runs")
    context = policy_context(user_id)
    context["run_error"] = " ".join(e for errs in form.errors.values() for e in errs)
    status = error or (400 if form.errors else 200)
    return render_policy(request, PolicyForm(initial={"user_id": user_id}), context,
                         status=status)
