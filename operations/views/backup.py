"""Backup page (admin): export one namespace (a download), export everything (a job writing
a file under var/exports/), and import a document (merge, or replace its namespaces)."""

import json

from django.conf import settings
from django.contrib import messages
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from console.namespaces import namespaces_missing, no_such_namespace
from console.pages import redis_unavailable, render_page, role_required
from memories import queue as job_queue
from memories import services, store
from memories.errors import InvalidInput, ServiceError, TooLarge
from memories.json_input import load_json
from memories.validation import clean_identifier
from operations import backup, jobs

EXPORTS = settings.BASE_DIR / "var" / "exports"


def _files() -> list[str]:
    return sorted((p.name for p in EXPORTS.glob("export-*.json")), reverse=True)[:20]


@require_GET
@role_required("admin")
def backup_page(request):
    return render_page(request, "operations/backup.html", {"files": _files()})


@require_GET
@role_required("admin")
def backup_export(request):
    """One namespace as a JSON download."""
    try:
        user_id = clean_identifier(request.GET.get("user_id"), "user_id")
    except ServiceError as exc:
        return render_page(request, "operations/backup.html",
                           {"files": _files(), "error": exc.message}, status=400)
    if namespaces_missing([user_id]):
        return render_page(request, "operations/backup.html",
                           {"files": _files(), "error": no_such_namespace([user_id])}, status=404)
    doc = backup.export_memories(user_id=user_id)
    response = HttpResponse(json.dumps(doc, ensure_ascii=False, indent=1),
                            content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="export-{store.encode_id(user_id)}.json"'
    return response


@require_POST
@role_required("admin")
def backup_export_all(request):
    """Everything, as a job; the file appears in the list when it is done."""
    try:
        job_id = job_queue.enqueue(jobs.export_job, queue="default")
    except store.RedisError:
        return redis_unavailable(request)
    services.audit_record(actor=request.user, action="export", target="*",
                          data={"job_id": job_id})
    return redirect("operations:job", job_id=job_id)


@require_GET
@role_required("admin")
def backup_download(request, name: str):
    if name not in _files():
        raise Http404("no such export")
    return FileResponse(open(EXPORTS / name, "rb"), as_attachment=True, filename=name)


@require_POST
@role_required("admin")
def backup_import(request):
    """Import an uploaded export document; ``mode`` merge or replace. Success redirects to
    the page with what was imported (POST-redirect-GET: a refresh imports nothing again);
    a refusal is the page with the reason, and nothing is imported."""
    upload = request.FILES.get("document")
    mode = request.POST.get("mode", "merge")
    limit = settings.MEMORY_IMPORT_MAX_BYTES
    try:
        if upload is None:
            raise InvalidInput("choose an export file", field="document")
        if upload.size > limit:
            raise TooLarge(f"the file is {upload.size:,} bytes; the limit is {limit:,} bytes "
                           "(MEMORY_IMPORT_MAX_BYTES); import it with manage.py import",
                           field="document", limit=limit)
        doc = load_json(upload.read(), what="the file")
        result = backup.import_memories(doc=doc, mode=mode, actor=request.user)
    except ServiceError as exc:
        return render_page(request, "operations/backup.html",
                           {"files": _files(), "error": exc.message}, status=exc.status)
    counts = ", ".join(f"{k} {v}" for k, v in result.items())
    messages.success(request, f"Imported: {counts}.")
    return redirect("operations:backup")
