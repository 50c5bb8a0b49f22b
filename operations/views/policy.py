"""The forgetting policy page: plans (cleanup, consolidation) and their buttons."""


from django.conf import settings
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from console.pages import bad_request, render_page, role_required
from memories.models import Memory
from operations import jobs, policy
from operations.forms import NamespaceForm
from operations.views.index import NAMESPACE_HINTS, _errors
from operations.views.jobs import _enqueue_or_503

PLAN_SHOWN = 200  # ids listed per plan section; the count above says how many in all



# --- the policy page --------------------------------------------------------------------------


def _previews(ids: set[str]) -> dict[str, Memory]:
    return {
        m.memory_id: m
        for m in Memory.objects.filter(memory_id__in=ids).only(
            "memory_id", "content", "importance", "accessed_at", "created_at", "access_count"
        )
    }



@require_GET
@vary_on_headers("HX-Request")
@role_required("admin")
def policy_page(request):
    """``/index/policy/?user_id=``: what the forgetting policy and consolidation would do
    to one namespace now (dry runs: nothing is written), with buttons that apply them as
    jobs. htmx gets ``#policy``."""
    submitted = "user_id" in request.GET
    form = NamespaceForm(request.GET if submitted else None)
    context = {"form": form}
    status = 200
    if submitted and form.is_valid():
        user_id = form.cleaned_data["user_id"]
        plan = policy.cleanup_plan(user_id=user_id)
        groups = policy.consolidation_plan(user_id=user_id)
        shown = {
            "forget": plan.forget[:PLAN_SHOWN],
            "consolidate": plan.consolidate[:PLAN_SHOWN],
            "archive": plan.archive[:PLAN_SHOWN],
        }
        grouped = groups[:PLAN_SHOWN]
        memories = _previews(
            {i for ids in shown.values() for i in ids} | {i for g in grouped for i in g}
        )
        context.update(
            user_id=user_id,
            plan=plan,
            sections=[
                (
                    "forget",
                    "Forget (idle, below the importance bound)",
                    len(plan.forget),
                    [memories[i] for i in shown["forget"] if i in memories],
                ),
                (
                    "archive",
                    "Archive (over the per-namespace cap)",
                    len(plan.archive),
                    [memories[i] for i in shown["archive"] if i in memories],
                ),
                (
                    "consolidate",
                    "Offered for consolidation (idle, important enough to keep)",
                    len(plan.consolidate),
                    [memories[i] for i in shown["consolidate"] if i in memories],
                ),
            ],
            groups=[[memories[i] for i in g if i in memories] for g in grouped],
            n_groups=len(groups),
            plan_shown=PLAN_SHOWN,
            rule={
                "idle_days": settings.MEMORY_POLICY_IDLE_DAYS,
                "importance_below": settings.MEMORY_POLICY_IMPORTANCE_BELOW,
                "max_long_term": settings.MEMORY_POLICY_MAX_LONG_TERM,
            },
        )
    elif submitted:
        status = 400
    context["namespaces"] = (
        Memory.objects.values_list("user_id", flat=True)
        .distinct()
        .order_by("user_id")[:NAMESPACE_HINTS]
    )
    return render_page(request, "memories/policy.html", context, partial="policy", status=status)



def _policy_apply(request, func, action: str):
    form = NamespaceForm(request.POST)
    if not form.is_valid():
        return bad_request(request, _errors(form))
    user_id = form.cleaned_data["user_id"]
    return _enqueue_or_503(request, func, user_id, queue="default", action=action, target=user_id)



@require_POST
@role_required("admin")
def policy_cleanup(request):
    """Apply the forgetting policy to one namespace (``jobs.cleanup_job``, queue default)."""
    return _policy_apply(request, jobs.cleanup_job, "cleanup")



@require_POST
@role_required("admin")
def policy_consolidate(request):
    """Merge the related groups of one namespace (``jobs.consolidate_job``, queue default)."""
    return _policy_apply(request, jobs.consolidate_job, "consolidate")

