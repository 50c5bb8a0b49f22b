"""Writers of ranking profiles (create, update, delete, default mark) and their versions."""

import math
import re
from collections.abc import Mapping, Sequence

from django.db import IntegrityError, transaction

from accounts.roles import has_role, require_role
from memories.errors import InvalidInput, NotFound, PermissionDenied
from memories.history import actor_name
from memories.services.audit import audit_record
from search.models import MatchMode, Ranker, RankingProfile

BUILTIN_NAMES = ("bm25", "keyword")

# Every setting a profile carries (besides ``name`` and ``is_default``), in display order.
SETTINGS = (
    "ranker",
    "k1",
    "b",
    "w_relevance",
    "w_recency",
    "w_importance",
    "half_life_hours",
    "recency_from",
    "stemming",
    "synonyms",
    "context",
    "match_mode",
    "temporal",
    "w_time",
    "w_semantic",
)

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


# --- small helpers ----------------------------------------------------------------------


def _number(value, field: str, *, low: float, high: float, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{field} must be a number", field=field)
    value = float(value)
    too_low = value <= low if low_open else value < low
    if not math.isfinite(value) or too_low or value > high:
        bound = f"over {low:g}" if low_open else f"at least {low:g}"
        raise InvalidInput(f"{field} must be {bound} and at most {high:g}", field=field)
    return value


def _flag(value, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false", field=field)
    return value


def _choice(value, field: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise InvalidInput(f"{field} must be one of {', '.join(choices)}", field=field)
    return value


# --- ranking profiles ---------------------------------------------------------------------


def clean_settings(data: Mapping) -> dict:
    """Validate profile settings (any subset of :data:`SETTINGS`); raises InvalidInput
    naming the first bad field."""
    rules = {
        "ranker": lambda v, f: _choice(v, f, Ranker.values),
        "k1": lambda v, f: _number(v, f, low=0.0, high=5.0),
        "b": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "w_relevance": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "w_recency": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "w_importance": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "half_life_hours": lambda v, f: _number(v, f, low=0.0, high=87600.0, low_open=True),
        "recency_from": lambda v, f: _choice(v, f, ("created_at", "accessed_at")),
        "stemming": _flag,
        "synonyms": _flag,
        "context": _flag,
        "match_mode": lambda v, f: _choice(v, f, MatchMode.values),
        "temporal": lambda v, f: _choice(v, f, ("off", "filter", "boost")),
        "w_time": lambda v, f: _number(v, f, low=0.0, high=10.0),
        "w_semantic": lambda v, f: _number(v, f, low=0.0, high=1.0),
    }
    out = {}
    for field, value in data.items():
        if field not in rules:
            raise InvalidInput(f"unknown field {field!r}", field=field)
        out[field] = rules[field](value, field)
    return out


def profile_settings(profile: RankingProfile) -> dict:
    """``name`` and every setting of ``profile`` as plain JSON values."""
    return {"name": profile.name, **{f: getattr(profile, f) for f in SETTINGS}}


def profile_build(base: RankingProfile, *, name: str | None = None, **overrides) -> RankingProfile:
    """An unsaved profile: ``base``'s settings with ``overrides`` (validated) applied.

    memory_search takes it as it is, so slider settings are searched without being saved.
    """
    data = {f: getattr(base, f) for f in SETTINGS}
    data.update(clean_settings(overrides))
    return RankingProfile(name=name or base.name, is_default=False, builtin=False, **data)


def _check_weights(profile: RankingProfile) -> None:
    if profile.w_relevance + profile.w_recency + profile.w_importance <= 0:
        raise InvalidInput("at least one weight must be above 0", field="w_relevance")


def _clean_name(value) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise InvalidInput(
            "name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
            field="name",
        )
    return value


def profile_get(name: str, *, for_update: bool = False) -> RankingProfile:
    rows = RankingProfile.objects.select_for_update() if for_update else RankingProfile.objects
    profile = rows.filter(name=name).first() if isinstance(name, str) else None
    if profile is None:
        raise NotFound(f"profile {name!r} not found", field="name")
    return profile


def can_edit_profile(actor, profile: RankingProfile) -> bool:
    """Admins edit any profile; editors the ones they created."""
    if has_role(actor, "admin"):
        return True
    return (
        has_role(actor, "editor")
        and not profile.builtin
        and profile.created_by == actor_name(actor) != ""
    )


def _stamp(profile: RankingProfile, actor, reason: str) -> None:
    """Who and why, for the simple_history version row this save writes."""
    # simple_history's reason column holds 100 characters; the audit record keeps it whole.
    profile._change_reason = (reason or "")[:100]
    if actor is not None and not isinstance(actor, str):
        profile._history_user = actor


def _make_default(profile: RankingProfile, actor, reason: str) -> None:
    """Unset every other default, one save each so each change is a recorded version."""
    for other in (
        RankingProfile.objects.select_for_update().filter(is_default=True).exclude(pk=profile.pk)
    ):
        other.is_default = False
        _stamp(other, actor, reason or f"default moved to {profile.name}")
        other.save()


@transaction.atomic
def profile_create(
    *, actor, name, is_default: bool = False, reason: str = "", **settings
) -> RankingProfile:
    """Create a profile owned by ``actor`` (editor; ``is_default`` needs admin).

    Unset settings take the model defaults (plain BM25). Raises InvalidInput (bad value or
    a name in use, naming the field) and PermissionDenied.
    """
    require_role(actor, "editor")
    name = _clean_name(name)
    if _flag(is_default, "is_default"):
        require_role(actor, "admin")
    profile = RankingProfile(
        name=name,
        is_default=is_default,
        builtin=False,
        created_by=actor_name(actor),
        **clean_settings(settings),
    )
    _check_weights(profile)
    if RankingProfile.objects.filter(name=name).exists():
        raise InvalidInput(f"a profile named {name!r} already exists", field="name")
    _stamp(profile, actor, reason or "created")
    try:
        with transaction.atomic():
            profile.save(force_insert=True)
    except IntegrityError:  # a concurrent create of the same name won the race
        raise InvalidInput(f"a profile named {name!r} already exists", field="name") from None
    if is_default:
        _make_default(profile, actor, reason)
    audit_record(
        actor=actor,
        action="profile_create",
        target=f"profile:{name}",
        reason=reason,
        data=profile_settings(profile),
    )
    return profile


@transaction.atomic
def profile_update(
    *,
    actor,
    name: str,
    new_name: str | None = None,
    is_default: bool | None = None,
    reason: str = "",
    **changes,
) -> RankingProfile:
    """Change settings, rename (``new_name``) or mark default; each saved change is a new
    version (a change to nothing writes none). Built-ins keep their name and settings.
    Raises NotFound, PermissionDenied, InvalidInput."""
    require_role(actor, "editor")
    profile = profile_get(name, for_update=True)
    if not can_edit_profile(actor, profile):
        raise PermissionDenied(f"only its creator or an admin may change profile {name!r}")
    new_name = profile.name if new_name is None else new_name
    settings = clean_settings(changes)
    if new_name != profile.name:
        if profile.builtin:
            raise InvalidInput(
                f"the built-in profile {profile.name!r} cannot be renamed", field="name"
            )
        new_name = _clean_name(new_name)
        if RankingProfile.objects.filter(name=new_name).exists():
            raise InvalidInput(f"a profile named {new_name!r} already exists", field="name")
    if profile.builtin:
        changed = [f for f, v in settings.items() if getattr(profile, f) != v]
        if changed:
            raise InvalidInput(
                f"the built-in profile {profile.name!r} keeps its settings; "
                "save a copy under a new name instead",
                field=changed[0],
            )
    if is_default is not None and _flag(is_default, "is_default") != profile.is_default:
        require_role(actor, "admin")
        if not is_default:
            raise InvalidInput("mark another profile as default instead", field="is_default")
    before = profile_settings(profile) | {"is_default": profile.is_default}
    profile.name = new_name
    for field, value in settings.items():
        setattr(profile, field, value)
    if is_default is not None:
        profile.is_default = is_default
    _check_weights(profile)
    after = profile_settings(profile) | {"is_default": profile.is_default}
    diff = {f: [before[f], after[f]] for f in after if before[f] != after[f]}
    if not diff:
        return profile  # nothing changed: no new version
    _stamp(profile, actor, reason or "changed " + ", ".join(diff))
    profile.save()
    if profile.is_default:
        _make_default(profile, actor, reason)
    audit_record(
        actor=actor, action="profile_update", target=f"profile:{name}", reason=reason, data=diff
    )
    return profile


@transaction.atomic
def profile_delete(*, actor, name: str, reason: str = "") -> None:
    """Delete a profile (admin). Built-ins and the default are refused (400 naming ``name``).
    Its history stays, and so do runs that used it (they hold a copy of its settings)."""
    require_role(actor, "admin")
    profile = profile_get(name, for_update=True)
    if profile.builtin:
        raise InvalidInput(f"the built-in profile {name!r} cannot be deleted", field="name")
    if profile.is_default:
        raise InvalidInput(
            f"{name!r} is the default profile; mark another one as default first", field="name"
        )
    _stamp(profile, actor, reason or "deleted")
    profile.delete()
    audit_record(actor=actor, action="profile_delete", target=f"profile:{name}", reason=reason)


def profile_versions(profile: RankingProfile) -> list[dict]:
    """Every version of ``profile``, oldest first: number, when, who, why, full settings."""
    rows = profile.history.order_by("history_date", "history_id").select_related("history_user")
    out = []
    for number, h in enumerate(rows, start=1):
        out.append(
            {
                "version": number,
                "history_id": h.history_id,
                "at": h.history_date,
                "change": {"+": "create", "~": "update", "-": "delete"}[h.history_type],
                "changed_by": h.history_user.get_username() if h.history_user else "",
                "reason": h.history_change_reason or "",
                "is_default": h.is_default,
                **{f: getattr(h, f) for f in ("name", *SETTINGS)},
            }
        )
    return out


def profile_version(profile: RankingProfile) -> dict:
    """``{"history_id", "version"}`` of a saved profile's current version (None: unsaved)."""
    if profile.pk is None:
        return {"history_id": None, "version": None}
    history = profile.history.order_by("-history_date", "-history_id")
    latest = history.first()
    return {"history_id": latest.history_id if latest else None, "version": history.count()}



@transaction.atomic
def profiles_restore(*, items: list[dict]) -> int:
    """Write a backup's ranking profiles with their versions: ``{"name", "created_by",
    "versions": [{"at", "actor", "reason", setting: value…}]}`` oldest version first (times
    aware datetimes; the newest version's settings are the profile's). A profile of the
    same name is replaced, history included; one marked default stays default. Returns
    how many. Raises InvalidInput naming ``lab.profiles[n]`` (a built-in's name, a bad
    setting, no version)."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    history = RankingProfile.history.model.objects
    for n, item in enumerate(items):
        try:
            name = _clean_name(item.get("name"))
            if name in BUILTIN_NAMES:
                raise InvalidInput(f"the built-in profile {name!r} cannot be restored",
                                   field="name")
            versions = item.get("versions")
            if not isinstance(versions, list) or not versions:
                raise InvalidInput("versions must list at least one version", field="versions")
            settings = [clean_settings({f: v[f] for f in SETTINGS if f in v}) for v in versions]
        except InvalidInput as exc:
            raise InvalidInput(f"lab.profiles[{n}].{exc.message}", field="lab",
                               index=n) from None
        old = RankingProfile.objects.select_for_update().filter(name=name).first()
        is_default = bool(old and old.is_default)
        if old is not None:  # its versions go too, the one its deletion writes included
            pk = old.pk
            old.delete()
            history.filter(id=pk).delete()
        profile = RankingProfile(name=name, builtin=False, is_default=is_default,
                                 created_by=item.get("created_by") or "", **settings[-1])
        _check_weights(profile)
        profile.skip_history_when_saving = True
        profile.save(force_insert=True)
        del profile.skip_history_when_saving
        rows = []
        for k, (version, values) in enumerate(zip(versions, settings, strict=True)):
            snapshot = RankingProfile(pk=profile.pk, name=name, builtin=False,
                                      is_default=is_default, created_by=profile.created_by,
                                      updated_at=version["at"], **values)
            actor = users.filter(username=version.get("actor") or "").first()
            rows.append(history.model(
                history_date=version["at"], history_user=actor, history_type="+" if k == 0
                else "~", history_change_reason=(version.get("reason") or "")[:100],
                **{f.attname: getattr(snapshot, f.attname)
                   for f in RankingProfile.history.model.tracked_fields}))
        history.bulk_create(rows)
    return len(items)
