"""Query sets: named lists of queries of one namespace; writers and readers."""

from django.db import transaction

from accounts.roles import has_role, require_role
from lab.evaluation import QUERIES_MAX, clean_query
from lab.models import QuerySet
from memories.errors import InvalidInput, NotFound, PermissionDenied
from memories.history import actor_name
from memories.services.audit import audit_record
from memories.validation import clean_identifier, clean_text
from recalls.readers import feedback_queries

# A query's note (its information need: what a good answer is), in characters.
NOTE_MAX_CHARS = 2000


def _clean_queries(value) -> list[str]:
    if not isinstance(value, list | tuple) or not value:
        raise InvalidInput("queries must be a non-empty list of strings", field="queries")
    if len(value) > QUERIES_MAX:
        raise InvalidInput(f"queries takes at most {QUERIES_MAX} items", field="queries")
    return list(dict.fromkeys(clean_query(q, "queries") for q in value))


def _clean_note(value, field: str) -> str:
    """A note's text, trimmed: free text (line breaks kept), at most ``NOTE_MAX_CHARS``;
    blank means no note."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string", field=field)
    value = clean_text(value.strip(), field)
    if len(value) > NOTE_MAX_CHARS:
        raise InvalidInput(
            f"{field} must be at most {NOTE_MAX_CHARS} characters (it has {len(value)})",
            field=field,
        )
    return value


def _clean_notes(value, queries: list[str]) -> dict[str, str]:
    """``{query: note}`` for queries of ``queries`` (a query is matched as the set keeps it:
    white space collapsed); blank notes are dropped."""
    if not isinstance(value, dict):
        raise InvalidInput("notes must be an object mapping a query to its note", field="notes")
    out = {}
    for raw, note in value.items():
        query = clean_query(raw, "notes")
        if query not in queries:
            raise InvalidInput(
                f"notes names {query!r}, which is not one of the set's queries", field="notes"
            )
        note = _clean_note(note, f"notes.{query}")
        if note:
            out[query] = note
    return out


def _kept_notes(notes, queries: list[str]) -> dict[str, str]:
    """The notes of the queries still in the set (a removed query's note is dropped)."""
    return {q: n for q, n in (notes or {}).items() if q in queries}


def _clean_set_name(value) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 100:
        raise InvalidInput("name must be 1-100 characters", field="name")
    return value.strip()


@transaction.atomic
def queryset_create(*, actor, name, user_id, queries, notes=None) -> QuerySet:
    """A named list of queries of one namespace (editor). Duplicates are dropped. ``notes``
    (optional): ``{query: note}`` for some of the queries."""
    require_role(actor, "editor")
    name = _clean_set_name(name)
    queries = _clean_queries(queries)
    qs = QuerySet(
        name=name,
        user_id=clean_identifier(user_id, "user_id"),
        queries=queries,
        notes=_clean_notes(notes, queries) if notes is not None else {},
        created_by=actor_name(actor),
    )
    if QuerySet.objects.filter(name=name).exists():
        raise InvalidInput(f"a query set named {name!r} already exists", field="name")
    qs.save(force_insert=True)
    audit_record(actor=actor, action="queryset_create", target=f"queryset:{qs.pk}")
    return qs


def feedback_query_list(user_id: str, *, limit: int = QUERIES_MAX) -> list[str]:
    """The logged queries of ``user_id`` that received recall feedback, most graded results
    first, as a set keeps them (white space collapsed, duplicates once), at most ``limit``
    (1..``QUERIES_MAX``). A query a set cannot hold (longer than the lab's bound) is left
    out."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= QUERIES_MAX:
        raise InvalidInput(f"limit must be an integer 1..{QUERIES_MAX}", field="limit")
    out: dict[str, None] = {}
    for query, _graded in feedback_queries(clean_identifier(user_id, "user_id")):
        try:
            out.setdefault(clean_query(query), None)
        except InvalidInput:
            continue
        if len(out) == limit:
            break
    return list(out)


def queryset_from_feedback(*, actor, name, user_id, limit: int = QUERIES_MAX,
                           notes=None) -> QuerySet:
    """A query set of the namespace's logged queries that received recall feedback
    (:func:`feedback_query_list`), for a run whose rater is "agent feedback". Raises
    InvalidInput (``user_id``) when no query of the namespace received any, and as
    :func:`queryset_create` does."""
    require_role(actor, "editor")
    queries = feedback_query_list(user_id, limit=limit)
    if not queries:
        raise InvalidInput(f"no recall of {user_id!r} has received feedback yet",
                           field="user_id")
    return queryset_create(actor=actor, name=name, user_id=user_id, queries=queries,
                           notes=notes)


@transaction.atomic
def queryset_update(*, actor, pk: int, name=None, user_id=None, queries=None,
                    notes=None) -> QuerySet:
    """Change a query set (its creator or an admin). Runs made from it keep their copy.

    ``queries`` replaces the list (the notes of queries no longer in it are dropped);
    ``notes`` replaces every note (``{query: note}``, each query one of the set's)."""
    qs = _editable(actor, pk)
    if name is not None:
        name = _clean_set_name(name)
        if QuerySet.objects.filter(name=name).exclude(pk=qs.pk).exists():
            raise InvalidInput(f"a query set named {name!r} already exists", field="name")
        qs.name = name
    if user_id is not None:
        qs.user_id = clean_identifier(user_id, "user_id")
    if queries is not None:
        qs.queries = _clean_queries(queries)
        qs.notes = _kept_notes(qs.notes, qs.queries)
    if notes is not None:
        qs.notes = _clean_notes(notes, qs.queries)
    qs.save()
    audit_record(actor=actor, action="queryset_update", target=f"queryset:{qs.pk}")
    return qs


@transaction.atomic
def queryset_note_set(*, actor, pk: int, query, note) -> QuerySet:
    """Set one query's note (its creator or an admin, as any change of the set); a blank
    ``note`` clears it. ``query`` must be one of the set's queries."""
    qs = _editable(actor, pk)
    query = clean_query(query, "query")
    if query not in qs.queries:
        raise InvalidInput(f"query {query!r} is not in query set {qs.name!r}", field="query")
    note = _clean_note(note, "note")
    notes = _kept_notes(qs.notes, qs.queries)
    if note:
        notes[query] = note
    else:
        notes.pop(query, None)
    qs.notes = notes
    qs.save(update_fields=["notes", "updated_at"])
    audit_record(actor=actor, action="queryset_update", target=f"queryset:{qs.pk}",
                 reason="a query's note set" if note else "a query's note cleared")
    return qs


def _editable(actor, pk) -> QuerySet:
    """The query set ``pk``, locked for the change, if ``actor`` may change it."""
    require_role(actor, "editor")
    qs = queryset_get(pk, lock=True)
    if not (has_role(actor, "admin") or qs.created_by == actor_name(actor)):
        raise PermissionDenied(f"only its creator or an admin may change query set {qs.name!r}")
    return qs


def queryset_get(pk, *, lock: bool = False) -> QuerySet:
    rows = QuerySet.objects.select_for_update() if lock else QuerySet.objects
    qs = rows.filter(pk=pk).first() if isinstance(pk, int) else None
    if qs is None:
        raise NotFound(f"query set {pk!r} not found", field="query_set")
    return qs



@transaction.atomic
def querysets_restore(*, user_ids: list[str], items: list[dict]) -> dict[str, QuerySet]:
    """Replace the query sets of ``user_ids`` by ``items`` (a backup's: ``{"name",
    "user_id", "queries", "notes", "created_by", "created_at", "updated_at"}``, times aware
    datetimes or None); their runs go with them (``lab.runs.runs_restore`` writes the
    backup's). Returns the new sets by name. Raises InvalidInput naming
    ``lab.query_sets[n]`` (a bad name, query or note; a name another namespace holds)."""
    from lab.models import EvalRun

    EvalRun.objects.filter(query_set__user_id__in=user_ids).delete()
    QuerySet.objects.filter(user_id__in=user_ids).delete()
    out = {}
    for n, item in enumerate(items):
        try:
            name = _clean_set_name(item.get("name"))
            queries = _clean_queries(item.get("queries"))
            notes = _clean_notes(item.get("notes") or {}, queries)
            if name in out or QuerySet.objects.filter(name=name).exists():
                raise InvalidInput(f"a query set named {name!r} already exists", field="name")
        except InvalidInput as exc:
            raise InvalidInput(f"lab.query_sets[{n}].{exc.message}", field="lab",
                               index=n) from None
        qs = QuerySet.objects.create(name=name, user_id=item["user_id"], queries=queries,
                                     notes=notes, created_by=item.get("created_by") or "")
        times = {k: item[k] for k in ("created_at", "updated_at") if item.get(k)}
        if times:  # auto_now(_add) stamps the create; the backup's moments win
            QuerySet.objects.filter(pk=qs.pk).update(**times)
        out[name] = qs
    return out
