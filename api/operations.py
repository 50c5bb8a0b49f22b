"""/reindex, /index, /jobs, /export, /import, /cleanup, /consolidate."""


from ninja import Field, Router, Status

from accounts.roles import require_role
from api.core import Strict, require_every_agent, require_namespace
from api.operation_schemas import (
    CleanupPlanOut,
    CleanupUndoOut,
    ConsolidationPlanOut,
    ExportOut,
    HealthOut,
    ImportOut,
    IndexTermsOut,
    JobStatusOut,
)
from api.schemas import ONE, READ, WRITE, JobOut, errors
from memories import queue as job_queue
from memories import services, store
from memories.errors import InvalidInput, NotFound
from memories.json_input import load_json
from memories.validation import (
    clean_identifier,
)
from operations import backup, health, jobs, policy
from operations import cleanup_undo as undo
from operations import consolidate as consolidation
from search import live_terms, profiles
from search.index import fields as index_fields

router = Router()


class ReindexIn(Strict):
    user_id: str | None = None


@router.post("/reindex", response={202: JobOut, **errors(*WRITE)}, tags=["index"])
def start_reindex(request, payload: ReindexIn | None = None):
    """Rebuild the index (one namespace or all) in the background: 202 ``{"job_id"}``."""
    require_role(request.user, "admin")
    user_id = clean_identifier(payload.user_id if payload else None, "user_id", required=False)
    require_every_agent(request, "a reindex")
    require_namespace(request, user_id)
    job_id = job_queue.enqueue(jobs.reindex_job, user_id,
                               namespaces=[user_id] if user_id else None)
    services.audit_record(actor=request.user, action="reindex", target=user_id or "*",
                          data={"job_id": job_id})
    return Status(202, {"job_id": job_id})


@router.post("/index/reconcile", response={202: JobOut, **errors(*READ)}, tags=["index"])
def start_reconcile(request):
    """Repair drifted memories in the background: 202 ``{"job_id"}``."""
    require_role(request.user, "admin")
    require_namespace(request, None)
    require_every_agent(request, "a reconcile")
    job_id = job_queue.enqueue(jobs.reconcile_job)
    services.audit_record(actor=request.user, action="reconcile", target="*",
                          data={"job_id": job_id})
    return Status(202, {"job_id": job_id})


@router.get("/jobs/{job_id}", response={200: JobStatusOut, **errors(*ONE)}, tags=["index"])
def get_job(request, job_id: str):
    require_role(request.user, "viewer")
    # Every job (reindex, reconcile, cleanup, consolidation, export, import) reaches every
    # agent's memories: a token restricted to agents starts none, nor reads their results.
    require_every_agent(request, "a job")
    status = jobs.job_status(job_id)
    # A job of namespaces the token does not reach all of (None: every namespace, as the
    # periodic reconcile's fixed id) is unknown to it, as a memory of another namespace is.
    restricted = getattr(request, "token_namespaces", None)
    if status is not None and restricted and not (
            status["namespaces"] is not None and set(status["namespaces"]) <= set(restricted)):
        status = None
    if status is None:
        raise NotFound(f"job {job_id!r} not found", field="job_id")
    return status


@router.get("/index/health", response={200: HealthOut, **errors(*READ, 503)}, tags=["index"])
def index_health(request, refresh: bool = False):
    """Database vs Redis: counts, drift (cached: ``drift_at`` says when it was computed;
    ``?refresh=1``, admin, computes it now), statistics, Redis memory, queues, failures."""
    require_role(request.user, "viewer")
    require_namespace(request, None)
    require_every_agent(request, "the index health")
    if refresh:
        require_role(request.user, "admin")
    return health.index_health(refresh=refresh)


@router.get("/index/terms", response={200: IndexTermsOut, **errors(*ONE, 429, 503)},
            tags=["index"])
def index_terms(request, user_id: str, terms: str, field: str | None = None):
    """Some terms of one field of the namespace's live index: 200 ``{"N", "total_len",
    "avgdl", "generation", "df": {term: n}, "postings": {term: [memory_id, ...]}}``
    (postings in ascending memory_id order, every one of them).

    ``terms``: comma-separated index terms, at most 50, each looked up exactly as given
    (white space around it dropped): the endpoint applies no analysis and no stemming, so
    ask the stemmed fields for stemmed terms (``run`` for "running"). ``field``: an index
    field a ranking profile can use (``c`` plain content, ``s`` stemmed content, ``xs``
    stemmed content with its context); absent, the default profile's. 400 naming
    ``terms`` or ``field``; 403 for a namespace the token does not reach or a token
    restricted to agents; 404 (``user_id``) when Redis holds no index of the namespace;
    429 while this process loads a large namespace's index (try again); 503 when Redis is
    unreachable, lost the namespace's index (being rebuilt) or holds it in a format this
    process does not read."""
    require_role(request.user, "admin")
    require_every_agent(request, "the index's postings")
    user_id = clean_identifier(user_id, "user_id")
    require_namespace(request, user_id)
    wanted = [t.strip() for t in terms.split(",") if t.strip()]
    if not wanted:
        raise InvalidInput("terms: name at least one term", field="terms")
    if len(wanted) > live_terms.MAX_TERMS:
        raise InvalidInput(f"terms: at most {live_terms.MAX_TERMS}", field="terms")
    if field is None:
        default = profiles.profile_default()
        field = index_fields.content_field(stemming=default.stemming, context=default.context)
    elif field not in index_fields.ANALYZERS:
        raise InvalidInput(f"field: one of {', '.join(index_fields.ANALYZERS)}", field="field")
    found = live_terms.live_terms(store.get_client(), user_id=user_id, field=field,
                                  terms=wanted)
    if found is None:
        raise NotFound(f"namespace {user_id!r} has no index", field="user_id")
    return found.as_dict()


@router.get("/export", response={200: ExportOut, **errors(*READ)}, tags=["backup"])
def export(request, user_id: str):
    """One namespace as a versioned JSON document (everything: the export job/command)."""
    require_role(request.user, "admin")
    require_every_agent(request, "an export")
    user_id = clean_identifier(user_id, "user_id")
    require_namespace(request, user_id)
    return backup.export_memories(user_id=user_id)


@router.post("/import", response={200: ImportOut, **errors(*WRITE, 404, 409)}, tags=["backup"],
             exclude_unset=True)
def import_(request, mode: str = "merge"):
    """An export document in the body; ``?mode=replace`` swaps the namespace for it."""
    require_role(request.user, "admin")
    require_every_agent(request, "an import")
    doc = load_json(request.body or b"null", what="the body (an export document)")
    if isinstance(doc, dict) and isinstance(doc.get("user_id"), str):
        require_namespace(request, doc["user_id"])  # a replace empties it
    if isinstance(doc, dict) and isinstance(doc.get("memories"), list):
        for item in doc["memories"]:
            if isinstance(item, dict) and isinstance(item.get("user_id"), str):
                require_namespace(request, item["user_id"])
    return backup.import_memories(doc=doc, mode=mode, actor=request.user)


class PolicyIn(Strict):
    user_id: str
    dry_run: bool = False


@router.post("/cleanup", response={200: CleanupPlanOut, 202: JobOut, **errors(*WRITE)},
             tags=["jobs"])
def cleanup(request, payload: PolicyIn):
    """Forgetting policy: the plan (dry run, 200) or a job applying it (202)."""
    require_role(request.user, "admin")
    require_every_agent(request, "a cleanup")
    user_id = clean_identifier(payload.user_id, "user_id")
    require_namespace(request, user_id)
    if payload.dry_run:
        return Status(200, policy.cleanup_plan(user_id=user_id).as_dict())
    job_id = job_queue.enqueue(jobs.cleanup_job, user_id, request.user.get_username(),
                               queue="default", namespaces=[user_id])
    services.audit_record(actor=request.user, action="cleanup", target=user_id,
                          data={"job_id": job_id})
    return Status(202, {"job_id": job_id})


class CleanupUndoIn(Strict):
    run_id: str = Field(max_length=128)
    reason: str = Field(default="", max_length=1000)


@router.post("/cleanup/undo", response={200: CleanupUndoOut, **errors(*WRITE, 404, 409)},
             tags=["jobs"])
def cleanup_undo(request, payload: CleanupUndoIn):
    """Undo a forgetting-policy run (``run_id``: the job id of ``POST /cleanup``): every
    memory it forgot or archived comes back, in one audited action (reason required).
    200 ``{"run_id", "user_id", "restored", "skipped"}``; 404 unknown run; 409 undone already."""
    require_role(request.user, "admin")
    require_every_agent(request, "a cleanup's undo")
    # A run of a namespace the token does not reach is unknown to it (404), as its memories are.
    undo.cleanup_run(payload.run_id, namespaces=getattr(request, "token_namespaces", None) or None)
    return undo.cleanup_undo(run_id=payload.run_id, actor=request.user, reason=payload.reason)


class ConsolidateIn(Strict):
    user_id: str
    dry_run: bool = False
    threshold: float | None = None
    max_members: int | None = None
    group_ids: list[str] | None = None
    groups: list[list[str]] | None = None
    reason: str = Field(default="", max_length=1000)


@router.post("/consolidate",
             response={200: ConsolidationPlanOut, 202: JobOut, **errors(*WRITE, 409)},
             tags=["jobs"])
def consolidate(request, payload: ConsolidateIn):
    """Consolidation of near-duplicates. Dry run: 200 ``{"user_id", "threshold",
    "max_members", "groups": [{"group_id", "memory_ids", "merged_text", "similarity"}]}``.
    Else 202 ``{"job_id"}``: a job merging the groups named by ``group_ids`` (from a dry run
    with the same ``threshold``; 409 when one is no longer in the plan), or the explicit
    ``groups`` (lists of memory ids; 400 naming ``groups`` when one may not merge), or every
    group of the plan; its result is ``{"groups", "merged": [memory_id], "skipped"}``."""
    require_role(request.user, "admin")
    require_every_agent(request, "a consolidation")
    user_id = clean_identifier(payload.user_id, "user_id")
    require_namespace(request, user_id)
    threshold, max_members = consolidation.bounds(payload.threshold, payload.max_members)
    if payload.dry_run:
        plan = consolidation.consolidation_plan(user_id=user_id, threshold=threshold,
                                                max_members=max_members)
        return Status(200, plan.as_dict())
    groups = consolidation.resolve_groups(user_id=user_id, group_ids=payload.group_ids,
                                          groups=payload.groups, threshold=threshold,
                                          max_members=max_members)
    reason = payload.reason.strip() or "consolidation"
    job_id = job_queue.enqueue(jobs.consolidate_job, user_id, groups, request.user.get_username(),
                               reason, queue="default", namespaces=[user_id])
    services.audit_record(actor=request.user, action="consolidate", target=user_id,
                          reason=reason, data={"job_id": job_id, "groups": len(groups)})
    return Status(202, {"job_id": job_id})

