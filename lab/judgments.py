"""Judgments: a reviewer's graded relevance (0-3) of a memory for a query; writer and readers,
the CSV export and import, the raters' agreement, and the agents' recall feedback read as
one more rater ("agent feedback")."""

import csv
import io
import math
from collections.abc import Iterable, Iterator

from django.db import transaction
from django.db.models import Avg

from accounts.roles import has_role, require_role
from lab.evaluation import clean_query
from lab.models import Judgment
from memories.errors import InvalidInput, NotFound
from memories.history import actor_name
from memories.models import Memory
from memories.services.audit import audit_record
from memories.validation import MEMORY_ID_RE, clean_identifier
from recalls.readers import feedback_for
from search import agreement

# The rater whose grades are the agents' recall feedback (recalls.models.RecallFeedback), as
# a run's ``reviewer``. A space: no username holds one, so no reviewer is ever taken for it.
AGENT_FEEDBACK = "agent feedback"


@transaction.atomic
def judgment_set(*, actor, user_id, query, memory_id, grade) -> tuple[Judgment, bool]:
    """Record ``actor``'s grade (0-3) of a memory for a query; a reviewer's later grade
    replaces their earlier one, other reviewers' grades are kept apart. Returns
    ``(judgment, created)``."""
    require_role(actor, "editor")
    user_id = clean_identifier(user_id, "user_id")
    query = clean_query(query)
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
        raise InvalidInput("grade must be an integer 0..3", field="grade")
    if (
        not isinstance(memory_id, str)
        or not MEMORY_ID_RE.match(memory_id)
        or not (Memory.objects.filter(memory_id=memory_id, user_id=user_id).exists())
    ):
        raise NotFound(f"memory {memory_id!r} not found in {user_id!r}", field="memory_id")
    judgment, created = Judgment.objects.update_or_create(
        user_id=user_id,
        query=query,
        memory_id=memory_id,
        reviewer=actor_name(actor),
        defaults={"grade": grade},
    )
    return judgment, created


def judgment_grades(
    *, user_id: str, query: str, reviewer: str = "", memory_ids: Iterable[str] | None = None
) -> dict[str, float]:
    """``{memory_id: grade}`` for a query: one reviewer's grades, or (blank ``reviewer``)
    the mean of every reviewer's grade of that memory."""
    rows = Judgment.objects.filter(user_id=user_id, query=" ".join(query.split()))
    if reviewer:
        rows = rows.filter(reviewer=reviewer)
    if memory_ids is not None:
        rows = rows.filter(memory_id__in=list(memory_ids))
    return {
        r["memory_id"]: float(r["grade"])
        for r in rows.values("memory_id").annotate(grade=Avg("grade")).order_by()
    }


def judgment_table(
    *, user_id: str, query: str, memory_ids: Iterable[str] | None = None
) -> dict[str, dict[str, int]]:
    """``{memory_id: {reviewer: grade}}``: every reviewer's grades, kept apart."""
    rows = Judgment.objects.filter(user_id=user_id, query=" ".join(query.split()))
    if memory_ids is not None:
        rows = rows.filter(memory_id__in=list(memory_ids))
    out: dict[str, dict[str, int]] = {}
    for memory_id, reviewer, grade in rows.values_list("memory_id", "reviewer", "grade"):
        out.setdefault(memory_id, {})[reviewer] = grade
    return out


def judgment_gains(*, user_id: str, query: str) -> dict[str, float]:
    """``{memory_id: mean grade}`` of a query's judged memories that are still live: the
    gains an evaluation run uses (forgotten or purged memories are left out, so they never
    count in the ideal ranking). One query (the live check is a subquery)."""
    live = Memory.objects.filter(user_id=user_id, deleted_at__isnull=True).values("memory_id")
    rows = Judgment.objects.filter(
        user_id=user_id, query=" ".join(query.split()), memory_id__in=live
    )
    return {
        r["memory_id"]: float(r["grade"])
        for r in rows.values("memory_id").annotate(grade=Avg("grade")).order_by()
    }


def feedback_grades(*, user_id: str, queries: Iterable[str]) -> dict[str, dict[str, float]]:
    """The rater "agent feedback": ``{query: {memory_id: grade}}`` for ``queries`` of
    namespace ``user_id`` (white space collapsed, as judgments key a query), from the recall
    feedback on them; a query without feedback is left out.

    One grade per (query, memory): each actor's latest grade of that memory for that query
    (an agent that recalled the same query ten times counts once, with what it said last),
    then the mean over the actors, rounded half up to a whole grade. Rounded so the rater
    speaks the judgments' 0..3 scale: a memory counts as relevant (grade > 0, P@k, recall@k,
    MRR) when the actors lean that way on the whole, not because one of many gave it a 1,
    and its nDCG gain is a grade a reviewer could have given. One read of the namespace's
    feedback (its queries are compared after collapsing white space)."""
    wanted = {" ".join(q.split()) for q in queries}
    latest: dict[tuple[str, str, str], int] = {}
    rows = (feedback_for(user_id).order_by("updated_at", "id")
            .values_list("query", "memory_id", "actor", "grade"))
    for query, memory_id, actor, grade in rows.iterator(chunk_size=2000):
        query = " ".join(query.split())
        if query in wanted:
            latest[(query, memory_id, actor)] = grade  # oldest first: the latest stays
    by_pair: dict[tuple[str, str], list[int]] = {}
    for (query, memory_id, _actor), grade in latest.items():
        by_pair.setdefault((query, memory_id), []).append(grade)
    out: dict[str, dict[str, float]] = {}
    for (query, memory_id), grades in by_pair.items():
        out.setdefault(query, {})[memory_id] = float(
            math.floor(sum(grades) / len(grades) + 0.5))
    return out


# --- CSV export and import, rater agreement ----------------------------------------------------

# The CSV columns, in order: a Judgment's fields under the names a person reads (the
# namespace is ``user_id``, the rater ``reviewer``).
CSV_COLUMNS = ("namespace", "query", "memory_id", "grade", "rater", "updated_at")
CSV_REQUIRED = ("namespace", "query", "memory_id", "grade")
IMPORT_ROWS_MAX = 10_000


def judgment_csv_rows(rows) -> Iterator[list[str]]:
    """The CSV lines (header first) of ``rows`` (Judgment rows, read in chunks)."""
    yield list(CSV_COLUMNS)
    for j in rows.iterator(chunk_size=2000):
        yield [j.user_id, j.query, j.memory_id, str(j.grade), j.reviewer, j.updated_at.isoformat()]


def judgments_import_csv(*, actor, text: str) -> dict:
    """Record the grades of a CSV (``CSV_COLUMNS``; ``rater`` and ``updated_at`` optional,
    other columns ignored) and name each row refused.

    A row's ``rater`` blank means ``actor``; only an admin may import another rater's
    grades (an editor's file carries their own). ``updated_at`` is not imported: a row
    written now is stamped now. A grade replaces that rater's earlier grade of the same
    (namespace, query, memory). Bad rows never stop the good ones: every good row is
    written (in one transaction), every bad one is listed. Returns ``{"created",
    "updated", "errors": [{"line", "field", "message"}]}`` (``line`` as a text editor
    counts, the header being line 1). Raises InvalidInput (field ``file``) when the file
    is not a CSV with the required columns, or holds more than ``IMPORT_ROWS_MAX`` rows.
    """
    require_role(actor, "editor")
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CSV_REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise InvalidInput(f"the first line must name the columns {', '.join(CSV_COLUMNS)}; "
                           f"missing: {', '.join(missing)}", field="file")
    me, is_admin = actor_name(actor), has_role(actor, "admin")
    good, errors = [], []
    for number, row in enumerate(reader, start=2):
        if number - 1 > IMPORT_ROWS_MAX:
            raise InvalidInput(f"a file takes at most {IMPORT_ROWS_MAX} rows", field="file")
        line = reader.line_num  # a quoted value may span lines: report where the row ends
        try:
            good.append((line, *_import_row(row, me=me, is_admin=is_admin)))
        except InvalidInput as exc:
            errors.append({"line": line, "field": exc.field, "message": exc.message})
    live = _existing(good)
    created = updated = 0
    with transaction.atomic():
        for line, user_id, query, memory_id, grade, rater in good:
            if (user_id, memory_id) not in live:
                errors.append({"line": line, "field": "memory_id",
                               "message": f"memory {memory_id!r} not found in {user_id!r}"})
                continue
            _, made = Judgment.objects.update_or_create(
                user_id=user_id, query=query, memory_id=memory_id, reviewer=rater,
                defaults={"grade": grade},
            )
            created, updated = created + made, updated + (not made)
        audit_record(actor=actor, action="judgments_import", target="judgments",
                     data={"created": created, "updated": updated, "refused": len(errors)})
    errors.sort(key=lambda e: e["line"])
    return {"created": created, "updated": updated, "errors": errors}


def _import_row(row: dict, *, me: str, is_admin: bool) -> tuple[str, str, str, int, str]:
    """One CSV row checked: ``(user_id, query, memory_id, grade, rater)``; InvalidInput
    naming the column otherwise."""
    if None in row:  # more values than columns
        raise InvalidInput("the row has more values than the header has columns", field="row")
    user_id = clean_identifier((row.get("namespace") or "").strip(), "namespace")
    query = clean_query(row.get("query") or "", "query")
    memory_id = (row.get("memory_id") or "").strip()
    if not MEMORY_ID_RE.match(memory_id):
        raise InvalidInput(f"{memory_id!r} is not a memory id", field="memory_id")
    grade = (row.get("grade") or "").strip()
    if grade not in ("0", "1", "2", "3"):
        raise InvalidInput(f"grade must be 0, 1, 2 or 3, not {grade!r}", field="grade")
    rater = (row.get("rater") or "").strip() or me
    if len(rater) > 150:
        raise InvalidInput("rater must be at most 150 characters", field="rater")
    if rater == AGENT_FEEDBACK:
        raise InvalidInput(f"{AGENT_FEEDBACK!r} is the agents' recall feedback, not a rater "
                           "grades are imported for", field="rater")
    if rater != me and not is_admin:
        raise InvalidInput(f"only an admin may import another rater's grades ({rater!r})",
                           field="rater")
    return user_id, query, memory_id, int(grade), rater


def _existing(rows) -> set[tuple[str, str]]:
    """``{(user_id, memory_id)}`` of the rows' memories that exist (one query per 500)."""
    wanted = {(r[1], r[3]) for r in rows}
    ids = sorted({memory_id for _, memory_id in wanted})
    found = set()
    for start in range(0, len(ids), 500):
        found |= set(Memory.objects.filter(memory_id__in=ids[start:start + 500])
                     .values_list("user_id", "memory_id"))
    return wanted & found


def judgment_agreement(*, user_id: str = "", query: str = "") -> dict:
    """How far the raters agree on the (query, memory) pairs two or more of them graded,
    within a namespace and query when given.

    ``{"raters": [names], "pairs": N, "statistic": "kappa" | "alpha" | None, "value"}``:
    with two raters, Cohen's kappa with quadratic weights over the N pairs both graded;
    with more, Krippendorff's alpha (interval) over the N pairs at least two graded
    (``search.agreement``); ``value`` None when undefined (no such pair, or every grade the
    same); ``statistic`` None with fewer than two raters on shared pairs."""
    rows = Judgment.objects.all()
    if user_id:
        rows = rows.filter(user_id=user_id)
    if query:
        rows = rows.filter(query=" ".join(query.split()))
    items = agreement.items_by_rater(
        ((u, q, m), r, g)
        for u, q, m, r, g in rows.values_list("user_id", "query", "memory_id", "reviewer",
                                              "grade").order_by()
    )
    shared = [graded for graded in items.values() if len(graded) >= 2]
    raters = sorted({r for graded in shared for r in graded})
    out = {"raters": raters, "pairs": len(shared), "statistic": None, "value": None}
    if len(raters) == 2:
        first, second = raters
        out.update(statistic="kappa", value=agreement.cohen_kappa_quadratic(
            [(g[first], g[second]) for g in shared]))
    elif len(raters) > 2:
        out.update(statistic="alpha", value=agreement.krippendorff_alpha_interval(
            [list(g.values()) for g in shared]))
    return out


@transaction.atomic
def judgments_restore(*, user_ids: list[str], items: list[dict]) -> int:
    """Replace the judgments of ``user_ids`` by ``items`` (a backup's: ``{"user_id",
    "query", "memory_id", "grade", "reviewer", "created_at", "updated_at"}``, times aware
    datetimes or None). Returns how many. Raises InvalidInput naming ``lab.judgments[n]``
    (a bad query or grade, a reviewer that is not a name)."""
    Judgment.objects.filter(user_id__in=user_ids).delete()
    rows = []
    for n, item in enumerate(items):
        grade, reviewer = item.get("grade"), item.get("reviewer")
        try:
            query = clean_query(item.get("query"))
            if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
                raise InvalidInput("grade must be an integer 0..3", field="grade")
            if not isinstance(reviewer, str) or not 0 < len(reviewer) <= 150:
                raise InvalidInput("reviewer must be a user name", field="reviewer")
            if not isinstance(item.get("memory_id"), str) \
                    or not MEMORY_ID_RE.match(item["memory_id"]):
                raise InvalidInput("memory_id must be a memory id", field="memory_id")
        except InvalidInput as exc:
            raise InvalidInput(f"lab.judgments[{n}].{exc.message}", field="lab",
                               index=n) from None
        rows.append(Judgment(user_id=item["user_id"], query=query, memory_id=item["memory_id"],
                             grade=grade, reviewer=reviewer))
    Judgment.objects.bulk_create(rows, batch_size=500)
    for row, item in zip(rows, items, strict=True):
        times = {k: item[k] for k in ("created_at", "updated_at") if item.get(k)}
        if times:  # auto_now(_add) stamps the create; the backup's moments win
            Judgment.objects.filter(user_id=row.user_id, query=row.query,
                                    memory_id=row.memory_id, reviewer=row.reviewer
                                    ).update(**times)
    return len(rows)
