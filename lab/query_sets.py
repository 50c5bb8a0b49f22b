"""Query sets: named lists of queries of one namespace; writers and readers."""

from django.db import transaction

from accounts.roles import has_role, require_role
from lab.evaluation import QUERIES_MAX, clean_query
from lab.models import QuerySet
from memories.errors import InvalidInput, NotFound, PermissionDenied
from memories.history import actor_name
from memories.services.audit import audit_record
from memories.validation import clean_identifier


def _clean_queries(value) -> list[str]:
    if not isinstance(value, list | tuple) or not value:
        raise InvalidInput("queries must be a non-empty list of strings", field="queries")
    if len(value) > QUERIES_MAX:
        raise InvalidInput(f"queries takes at most {QUERIES_MAX} items", field="queries")
    return list(dict.fromkeys(clean_query(q, "queries") for q in value))


def _clean_set_name(value) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 100:
        raise InvalidInput("name must be 1-100 characters", field="name")
    return value.strip()


@transaction.atomic
def queryset_create(*, actor, name, user_id, queries) -> QuerySet:
    """A named list of queries of one namespace (editor). Duplicates are dropped."""
    require_role(actor, "editor")
    name = _clean_set_name(name)
    qs = QuerySet(
        name=name,
        user_id=clean_identifier(user_id, "user_id"),
        queries=_clean_queries(queries),
        created_by=actor_name(actor),
    )
    if QuerySet.objects.filter(name=name).exists():
        raise InvalidInput(f"a query set named {name!r} already exists", field="name")
    qs.save(force_insert=True)
    audit_record(actor=actor, action="queryset_create", target=f"queryset:{qs.pk}")
    return qs


@transaction.atomic
def queryset_update(*, actor, pk: int, name=None, user_id=None, queries=None) -> QuerySet:
    """Change a query set (its creator or an admin). Runs made from it keep their copy."""
    require_role(actor, "editor")
    qs = queryset_get(pk)
    if not (has_role(actor, "admin") or qs.created_by == actor_name(actor)):
        raise PermissionDenied(f"only its creator or an admin may change query set {qs.name!r}")
    if name is not None:
        name = _clean_set_name(name)
        if QuerySet.objects.filter(name=name).exclude(pk=qs.pk).exists():
            raise InvalidInput(f"a query set named {name!r} already exists", field="name")
        qs.name = name
    if user_id is not None:
        qs.user_id = clean_identifier(user_id, "user_id")
    if queries is not None:
        qs.queries = _clean_queries(queries)
    qs.save()
    audit_record(actor=actor, action="queryset_update", target=f"queryset:{qs.pk}")
    return qs


def queryset_get(pk) -> QuerySet:
    qs = QuerySet.objects.filter(pk=pk).first() if isinstance(pk, int) else None
    if qs is None:
        raise NotFound(f"query set {pk!r} not found", field="query_set")
    return qs

