"""Background jobs (django-rq). Thin: each calls one function and reports progress.

Queues: ``index`` (reindex, reconcile) and ``default``, logical names mapped to RQ's by
``memories.queue``. Enqueue with :func:`memories.queue.enqueue`, which defers it until the
current transaction commits.
"""

import re

from rq import get_current_job

from memories import queue as job_queue
from operations import consolidate, drift, drift_cache, plan_cache, policy, reindex
from search.serving import snapshot_refresh

_JOB_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _progress(done: int, total: int) -> None:
    job = get_current_job()
    if job is not None:
        job.meta["progress"] = done / total if total else 1.0
        job.meta["done"], job.meta["total"] = done, total
        job.save_meta()


def reindex_job(user_id: str | None = None) -> dict:
    """Rebuild one namespace, or all, from the database; the cached drift is recomputed."""
    if user_id is not None:
        out = reindex.reindex_namespace(user_id, progress=_progress)
    else:
        results = reindex.reindex_all(progress=lambda _ns, d, t: _progress(d, t))
        out = {"namespaces": len(results), "indexed": sum(r["indexed"] for r in results),
               "skipped": sum(r.get("skipped", 0) for r in results)}
    drift_cache.drift_refresh()
    # A new generation: no serving index snapshot of it until one is saved.
    snapshot_refresh.refresh_all(None if user_id is None else [user_id])
    return out


def reconcile_job() -> dict:
    """Repair exactly the memories whose Redis state differs from the database; the cached
    drift is recomputed."""
    out = drift.drift_repair()
    drift_cache.drift_refresh()
    return out


def job_status(job_id: str) -> dict | None:
    """``{"status", "progress", "result", "error"}`` of a job, or None when unknown (any
    id that is not a job id, e.g. with characters rq refuses, is unknown)."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    if not _JOB_ID.match(job_id):
        return None
    try:
        job = Job.fetch(job_id, connection=job_queue.get_connection())
    except NoSuchJobError:
        return None
    status = job.get_status(refresh=True)
    status = getattr(status, "value", status)
    status = {"deferred": "queued", "scheduled": "queued", "stopped": "failed",
              "canceled": "failed"}.get(status, status)
    error = None
    if status == "failed":
        result = job.latest_result()
        error = (result.exc_string if result else None) or "failed"
        error = error.strip().splitlines()[-1]
    progress = job.meta.get("progress", 1.0 if status == "finished" else 0.0)
    return {"job_id": job_id, "status": status, "progress": progress,
            "done": job.meta.get("done"), "total": job.meta.get("total"),
            "result": job.return_value() if status == "finished" else None, "error": error,
            "func": job.func_name.rsplit(".", 1)[-1],
            "namespaces": job.meta.get("namespaces")}


# Fixed ids, after the queues' prefix (none in production).
PERIODIC_RECONCILE_ID = job_queue.job_id("periodic-reconcile")

PERIODIC_ACCESS_FOLD_ID = job_queue.job_id("periodic-access-fold")

PERIODIC_EMBED_ID = job_queue.job_id("periodic-embed")

PERIODIC_RECALL_LOG_ID = job_queue.job_id("periodic-recall-log")

PERIODIC_SNAPSHOT_ID = job_queue.job_id("periodic-snapshot-refresh")


def periodic_reconcile_job() -> dict:
    """Reconcile, enqueue again webhook deliveries a dead worker or a lost enqueue left
    pending, then schedule the next run (the worker's ``--with-scheduler`` runs it)."""
    from integrations.webhooks.outbox import outbox_sweep

    try:
        return {**reconcile_job(), "webhooks_requeued": outbox_sweep()}
    finally:
        _schedule_next(periodic_reconcile_job)


def periodic_access_fold_job() -> dict:
    """Fold recall hits pending in Redis into the database (``memories.access``), forget
    fold records older than a day, then schedule the next run."""
    from memories import access, services

    try:
        return {**access.access_fold(), "pruned": services.access_folds_prune()}
    finally:
        _schedule_next(periodic_access_fold_job)


def periodic_recall_log_job() -> dict:
    """Write the buffered recall traces to the database, delete those past the log's
    retention (``recalls.log``), then schedule the next run. ``{"written", "expired"}``."""
    from recalls import log as recall_log

    try:
        return {"written": recall_log.recall_log_flush(),
                "expired": recall_log.recall_log_expire()}
    finally:
        _schedule_next(periodic_recall_log_job)


def snapshot_refresh_job() -> dict:
    """Save again the serving index snapshots of large namespaces that are missing or
    behind the write stream (``search.serving.snapshot_refresh``): ``{"namespaces",
    "saved", "failed"}``."""
    return snapshot_refresh.refresh_all()


def periodic_snapshot_refresh_job() -> dict:
    """:func:`snapshot_refresh_job`, then schedule the next run."""
    if periodic_snapshot_refresh_job not in _periodic():
        return {"saved": 0, "off": True}  # scheduled before it was turned off
    try:
        return snapshot_refresh_job()
    finally:
        _schedule_next(periodic_snapshot_refresh_job)


def periodic_embed_job() -> dict:
    """Compute the embeddings of memories written since the last run (semantic rescoring,
    ``search.embeddings``), then schedule the next run. ``{"embedded": n, "cold": bool}``
    (``cold``: the model was not loaded in this process when the run began)."""
    from search import embeddings

    if periodic_embed_job not in _periodic():
        # Scheduled before embedding was turned off (or the weights removed): nothing to do,
        # and no next run.
        return {"embedded": 0, "off": True}
    from search.semantic import encoder

    # cold: this run had to load the model itself (the worker did not preload it).
    cold = not encoder.loaded()
    try:
        return {"embedded": embeddings.embed_pending(), "cold": cold}
    finally:
        _schedule_next(periodic_embed_job)


def _periodic() -> dict:
    """Each periodic job: (fixed job id, seconds between runs). Embeddings only when the
    weights package is installed and ``MEMORY_EMBED_EVERY_SECONDS`` is above 0; the
    snapshot refresh when ``MEMORY_SERVING_SNAPSHOT_EVERY_SECONDS`` is above 0."""
    from django.conf import settings

    from search import embeddings

    jobs = {
        periodic_reconcile_job: (PERIODIC_RECONCILE_ID, settings.MEMORY_RECONCILE_EVERY_SECONDS),
        periodic_access_fold_job: (PERIODIC_ACCESS_FOLD_ID,
                                   settings.MEMORY_ACCESS_FOLD_SECONDS),
        periodic_recall_log_job: (PERIODIC_RECALL_LOG_ID,
                                  settings.MEMORY_RECALL_LOG_FLUSH_SECONDS),
    }
    every = embeddings.every_seconds()
    if every:
        jobs[periodic_embed_job] = (PERIODIC_EMBED_ID, every)
    if settings.MEMORY_SERVING_SNAPSHOT_EVERY_SECONDS > 0:
        jobs[periodic_snapshot_refresh_job] = (PERIODIC_SNAPSHOT_ID,
                                               settings.MEMORY_SERVING_SNAPSHOT_EVERY_SECONDS)
    return jobs


def _schedule_next(func) -> None:
    import datetime as dt

    job_id, seconds = _periodic()[func]
    job_queue.get_queue(job_queue.INDEX).enqueue_in(dt.timedelta(seconds=seconds), func,
                                                    job_id=job_id)


def schedule_periodic() -> None:
    """Schedule the next run of every periodic job (reconcile every
    ``MEMORY_RECONCILE_EVERY_SECONDS``, access-count fold every
    ``MEMORY_ACCESS_FOLD_SECONDS``, the recall log every ``MEMORY_RECALL_LOG_FLUSH_SECONDS``). A fixed job id per job keeps at most one pending run,
    however often this is called."""
    for func in _periodic():
        _schedule_next(func)



def periodic_ensure() -> list[str]:
    """Run now every periodic job that has no pending run (scheduled, queued or running):
    after Redis lost its data nothing else would, and reconcile is what restores the lost
    index (each run then schedules its next). Returns the ids queued (run by the worker,
    ``operations.worker``)."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job
    from rq.registry import ScheduledJobRegistry

    queue = job_queue.get_queue(job_queue.INDEX)
    scheduled = set(ScheduledJobRegistry(queue=queue).get_job_ids())
    seeded = []
    for func, (job_id, _seconds) in _periodic().items():
        try:
            status = Job.fetch(job_id, connection=queue.connection).get_status(refresh=True)
        except NoSuchJobError:
            status = None
        status = getattr(status, "value", status)
        pending = status in ("queued", "started", "deferred") or (
            status == "scheduled" and job_id in scheduled)
        if not pending:
            queue.enqueue(func, job_id=job_id)
            seeded.append(job_id)
    return seeded



def cleanup_job(user_id: str, actor: str | None = None) -> dict:
    """Apply the forgetting policy to one namespace; the job id names the run (its undo:
    ``operations.cleanup_undo``)."""
    job = get_current_job()
    plan = policy.cleanup_plan(user_id=user_id)
    result = policy.cleanup_apply(plan, actor=actor, run_id=job.id if job else "")
    return {**result, "plan": plan.as_dict()}


def consolidate_job(user_id: str, groups: list[list[str]] | None = None,
                    actor: str | None = None, reason: str = "consolidation",
                    threshold: float | None = None, max_members: int | None = None) -> dict:
    """Merge ``groups`` (lists of memory ids; default: every group of the current plan at
    ``threshold``), each alone: ``{"groups", "merged": [memory_id], "skipped"}``."""
    if groups is None:
        groups = consolidate.resolve_groups(user_id=user_id, threshold=threshold,
                                            max_members=max_members)
    return consolidate.consolidate_groups(groups=groups, actor=actor, reason=reason)


def policy_plan_job(user_id: str, threshold: float | None = None,
                    max_members: int | None = None) -> dict:
    """Compute the Policy page's consolidation dry run and cache it (``plan_cache``):
    ``{"user_id", "groups", "seconds"}``."""
    try:
        entry = plan_cache.plan_compute(user_id=user_id, threshold=threshold,
                                        max_members=max_members)
    finally:
        plan_cache.plan_release(user_id=user_id, threshold=threshold, max_members=max_members)
    return {"user_id": user_id, "groups": len(entry["groups"]), "seconds": entry["seconds"]}


def export_job() -> dict:
    """Export every namespace to ``var/exports/export-<UTC time>.json`` (schema-versioned)."""
    import json

    from django.conf import settings
    from django.utils import timezone

    from operations import backup

    folder = settings.BASE_DIR / "var" / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    doc = backup.export_memories(user_id=None)
    path = folder / f"export-{timezone.now():%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return {"file": path.name, "memories": len(doc["memories"])}

