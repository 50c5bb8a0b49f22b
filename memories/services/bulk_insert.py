"""New Memory rows and their first history versions in bulk, for the bulk writers.

The rows are those ``simple_history.utils.bulk_create_with_history`` writes (each value
prepared by its field's ``get_db_prep_save``, as ``bulk_create`` prepares it; the history row
of a memory as simple-history's ``bulk_history_create`` builds it), inserted with one
``executemany`` of a one-row INSERT per table and batch. What it saves is the SQL compiler's
work per value (placeholders, expressions, the multi-row statement) and the historical model
instances, which made ``bulk_create_with_history`` a large share of a bulk-imported memory's
CPU (docs/benchmarks.md, import_rate). ``tests/test_bulk_insert.py`` compares the
rows, column by column, with those ``bulk_create_with_history`` writes.

Like ``bulk_create``, it sends no signal: the callers mirror the rows to Redis themselves,
and ``memory_create`` (one row, ``memories.services.create``) does what the signals'
receivers did for a save (``tests/test_create_insert.py``).
"""

import functools

from django.db import connection
from django.db.models import AutoField
from django.utils import timezone
from simple_history.utils import get_change_reason_from_object, get_history_manager_for_model

from memories.models import Memory


@functools.cache
def _statements(vendor: str) -> tuple:
    """``(fields, INSERT of a memory, history model, its fields, INSERT of a history row,
    tracked attnames)`` of ``vendor``, built once per process (a single create runs them
    once a request: compiled per call, they were ~a tenth of its INSERTs' CPU)."""
    qn = connection.ops.quote_name

    def insert(model, fields):
        return (f"INSERT INTO {qn(model._meta.db_table)} "
                f"({', '.join(qn(f.column) for f in fields)})"
                f" VALUES ({', '.join(['%s'] * len(fields))})")

    fields = [f for f in Memory._meta.concrete_fields if not isinstance(f, AutoField)]
    history = get_history_manager_for_model(Memory).model
    hfields = [f for f in history._meta.concrete_fields if not isinstance(f, AutoField)]
    return (fields, insert(Memory, fields), history, hfields, insert(history, hfields),
            frozenset(f.attname for f in history.tracked_fields))


def _insert(sql: str, rows: list[tuple], batch_size: int) -> None:
    with connection.cursor() as cursor:
        if len(rows) == 1:
            cursor.execute(sql, rows[0])
            return
        for start in range(0, len(rows), batch_size):
            cursor.executemany(sql, rows[start:start + batch_size])


def memories_create_with_history(objs: list[Memory], *, batch_size: int = 500,
                                 default_user=None, default_change_reason: str = "",
                                 default_date=None, custom_historical_attrs=None) -> None:
    """Insert unsaved Memory instances and one ``+`` history row each; arguments as
    ``bulk_create_with_history`` takes them. The instances count as saved afterwards.

    The history user of an instance is its ``_history_user``, else ``default_user``, else
    simple-history's default (the request's authenticated user under its middleware, as
    ``post_save`` would record); the reason its ``_change_reason``, else
    ``default_change_reason``; the date its ``_history_date``, else ``default_date``."""
    if not objs:
        return
    fields, memory_sql, history, hfields, history_sql, tracked = _statements(connection.vendor)
    _insert(memory_sql, [
        tuple(f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields)
        for obj in objs], batch_size)
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias

    extra = custom_historical_attrs or {}
    default_date = default_date or timezone.now()

    def value(f, obj):
        if f.attname in tracked:
            return getattr(obj, f.attname)
        if f.name in extra:
            return extra[f.name]
        if f.name == "history_date":
            return getattr(obj, "_history_date", default_date)
        if f.name == "history_change_reason":
            return get_change_reason_from_object(obj) or default_change_reason
        if f.name == "history_type":
            return "+"
        if f.attname == "history_user_id":
            user = getattr(obj, "_history_user",
                           default_user or history.get_default_history_user(obj))
            return None if user is None else user.pk
        return f.get_default()

    _insert(history_sql, [
        tuple(f.get_db_prep_save(value(f, obj), connection) for f in hfields)
        for obj in objs], batch_size)
