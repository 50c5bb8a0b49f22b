"""API tokens: random, shown once, stored as SHA-256, revocable, optionally expiring."""

import datetime as dt
import hashlib
import logging
import secrets
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import DatabaseError, models, transaction
from django.utils import timezone

from accounts.models import ApiToken
from accounts.roles import ROLES, role_of
from memories import generation_cache
from memories.errors import Conflict, InvalidInput, PermissionDenied
from memories.services.audit import audit_record
from memories.validation import clean_identifier

log = logging.getLogger(__name__)

NAMESPACES_MAX = 50
EXPIRES_IN_DAYS_MAX = 3650
# "Last used" is stamped at most once per this many seconds per token and process.
LAST_USED_EVERY_SECONDS = 60


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(
    *, user, name: str = "", namespaces: list[str] | None = None, expires_at=None,
    agents: list[str] | None = None,
) -> str:
    """Create a token for ``user``, optionally restricted to ``namespaces`` and to
    ``agents`` (memories' ``agent_id``: it writes only as one of them and reads only theirs)
    and expiring at ``expires_at`` (an aware datetime; None: never); returns the token
    itself (only its hash is kept)."""
    token = "mc_" + secrets.token_urlsafe(32)
    ApiToken.objects.create(
        user=user,
        name=name,
        prefix=token[:10],
        key_hash=_digest(token),
        namespaces=sorted(set(namespaces or [])),
        agents=sorted(set(agents or [])),
        expires_at=expires_at,
    )
    return token


def expiry_in(days) -> dt.datetime | None:
    """The expiry ``days`` whole days from now (None or "" for none). Raises InvalidInput
    (field ``expires_in_days``) outside 1..EXPIRES_IN_DAYS_MAX."""
    if days in (None, ""):
        return None
    if isinstance(days, bool) or not isinstance(days, int) or not (
        1 <= days <= EXPIRES_IN_DAYS_MAX
    ):
        raise InvalidInput(
            f"expires_in_days takes a whole number of days from 1 to {EXPIRES_IN_DAYS_MAX}",
            field="expires_in_days",
        )
    return timezone.now() + dt.timedelta(days=days)


def token_user(token: str):
    """The active user of a live token, or None (unknown, revoked, expired or inactive user)."""
    row = token_lookup(token)
    return row.user if row else None


def token_lookup(token: str) -> ApiToken | None:
    """The live token row (with its user, whose role is resolved) for ``token``, or None
    (unknown, revoked, expired, or its user deactivated).

    Rows come from the process's row cache (``memories.generation_cache``): revoking a
    token, or changing its user or the user's groups, reaches every process with its next
    request; expiry is checked at every lookup, as a cached row may expire while cached.
    The row is shared by the process's threads: copy its user before changing it.
    """
    row = _cached_row(token)
    if row is None or row.expired:
        return None
    _stamp_last_used(row)
    return row


def token_expired_at(token: str) -> dt.datetime | None:
    """When ``token`` expired, if it is a token that would work but for its expiry; else
    None. For the 401's message: read from the row cache, so no query after the lookup."""
    row = _cached_row(token)
    return row.expires_at if row is not None and row.expired else None


def _cached_row(token: str) -> ApiToken | None:
    if not token or len(token) > 200:
        return None
    digest = _digest(token)
    return generation_cache.cached(f"token:{digest}", lambda: _load(digest))


def _stamp_last_used(row: ApiToken) -> None:
    """Set ``last_used_at``, at most once a minute per token: the process's cached row
    remembers the last stamp, so requests in between write nothing; the UPDATE only moves
    a stamp older than a minute, so processes stamping the same minute change the row once.
    Never fails the request: the cached stamp moves before the write, so a database that
    refuses it (locked, read-only) is asked again a minute later, and the error is logged."""
    now = timezone.now()
    if row.last_used_at is not None and (
        (now - row.last_used_at).total_seconds() < LAST_USED_EVERY_SECONDS
    ):
        return
    row.last_used_at = now
    stale = dt.timedelta(seconds=LAST_USED_EVERY_SECONDS)
    try:
        ApiToken.objects.filter(pk=row.pk).filter(
            models.Q(last_used_at__isnull=True) | models.Q(last_used_at__lt=now - stale)
        ).update(last_used_at=now)
    except DatabaseError as exc:
        log.warning("token %s: last used not stamped: %s", row.prefix, exc)


def _load(digest: str) -> ApiToken | None:
    row = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=digest, revoked_at__isnull=True)
        .first()
    )
    if row is None or not row.user.is_active:
        return None
    role_of(row.user)  # resolved once per cached row, not once per request
    return row


@transaction.atomic
def token_revoke(*, prefix: str, actor=None) -> int:
    """Revoke every live token starting with ``prefix``; returns how many.

    ``actor`` (the console's admin; None for the command line, whose operator holds the
    server) may revoke a superuser's token only if they are one, as only a superuser may
    create one (``token_issue``): else PermissionDenied (403) naming ``prefix``, and
    nothing is revoked."""
    live = ApiToken.objects.select_for_update().filter(prefix=prefix, revoked_at__isnull=True)
    if (actor is not None and not getattr(actor, "is_superuser", False)
            and live.filter(user__is_superuser=True).exists()):
        raise PermissionDenied("only a superuser may revoke a superuser's token", field="prefix")
    revoked = live.update(revoked_at=timezone.now())
    generation_cache.bump()  # an update() sends no signal
    return revoked


@dataclass
class Issued:
    """What :func:`token_issue` did: the token (shown once), its user, whether the user was
    created, the user's role now and whether it changed."""

    token: str
    user: object
    created: bool
    role: str
    role_changed: bool
    namespaces: list[str]
    expires_at: dt.datetime | None = None
    agents: list[str] = field(default_factory=list)


def clean_namespaces(values) -> list[str]:
    """Namespaces a token is restricted to: distinct ids (DESIGN "Identifiers"), sorted."""
    if not isinstance(values, list | tuple) or len(values) > NAMESPACES_MAX:
        raise InvalidInput(f"namespaces takes at most {NAMESPACES_MAX} ids", field="namespaces")
    return sorted({clean_identifier(v, "namespaces") for v in values})


def clean_agents(values) -> list[str]:
    """Agents a token is restricted to: distinct ids, sorted (as :func:`clean_namespaces`)."""
    if not isinstance(values, list | tuple) or len(values) > NAMESPACES_MAX:
        raise InvalidInput(f"agents takes at most {NAMESPACES_MAX} ids", field="agents")
    return sorted({clean_identifier(v, "agents") for v in values})


@transaction.atomic
def token_issue(
    *,
    actor,
    username: str,
    role: str | None,
    name: str = "",
    namespaces=(),
    change_role: bool = False,
    expires_in_days: int | None = None,
    audit_actor=None,
    agents=(),
) -> Issued:
    """Create a token for ``username``, creating the user when there is none (no usable
    password: an API user), as ``create_api_token`` does; one audited transaction.

    ``role`` (viewer, editor, admin; None = keep) becomes the user's role, console and API
    alike, but an existing user's role changes only with ``change_role`` (else Conflict 409
    naming ``role``, and nothing is written): never silently. A new user needs a role; a
    superuser is always admin (another role is refused); ``actor`` (the console's admin, None
    for the command line) may not lower their own role nor mint a superuser's token unless
    they are one. ``expires_in_days`` (1..EXPIRES_IN_DAYS_MAX; None: never) sets when the
    token stops working; ``agents`` restricts it to those agents (``clean_agents``). Raises
    InvalidInput (400), PermissionDenied (403), Conflict (409).
    """
    if role not in (None, "", *ROLES):
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}", field="role")
    role = role or None
    namespaces = clean_namespaces(list(namespaces))
    agents = clean_agents(list(agents))
    expires_at = expiry_in(expires_in_days)
    users = get_user_model()
    if not isinstance(username, str) or not username:
        raise InvalidInput("username is required", field="username")
    user = users.objects.filter(username=username).first()
    created = user is None
    if created:
        try:
            users.username_validator(username)
            users._meta.get_field("username").run_validators(username)
        except ValidationError as exc:
            raise InvalidInput(" ".join(exc.messages), field="username") from None
        if role is None:
            raise InvalidInput(
                f"{username} does not exist yet: choose a role, and the user is created with it",
                field="role",
            )
        user = users(username=username)
        user.set_unusable_password()
        user.save()
        current = None
    else:
        if not user.is_active:
            raise InvalidInput(f"{username} is deactivated: no token for them", field="username")
        current = role_of(user)
        if user.is_superuser:
            if actor is not None and not getattr(actor, "is_superuser", False):
                raise PermissionDenied(
                    "only a superuser may create a token for a superuser", field="username"
                )
            if role not in (None, "admin"):
                raise InvalidInput(
                    f"{username} is a superuser, always admin: keep the role", field="role"
                )
            role = None
        if role is None and current is None:
            raise InvalidInput(f"{username} has no role yet: choose one", field="role")
        if role is not None and role != current and not change_role:
            raise Conflict(
                f"{username} is {current or 'without a role'}; a token with the role {role} "
                f"would make them {role} everywhere (console and API). Confirm the change of "
                "role, or keep their role.",
                field="role",
                current_role=current,
            )
        if (
            role is not None
            and actor is not None
            and user == actor
            and ROLES.index(role) < ROLES.index(current)
        ):
            raise InvalidInput("you cannot lower your own role here", field="role")
    role_changed = role is not None and role != current
    if role_changed:
        user.groups.remove(*Group.objects.filter(name__in=ROLES))
        user.groups.add(Group.objects.get(name=role))
    token = token_create(user=user, name=name, namespaces=namespaces, expires_at=expires_at,
                         agents=agents)
    now_role = "admin" if user.is_superuser else (role or current)
    audit_record(
        actor=actor if audit_actor is None else audit_actor,
        action="token_created",
        target=f"user:{username}",
        data={
            "role": now_role,
            "prefix": token[:10],
            "name": name,
            "namespaces": namespaces,
            **({"agents": agents} if agents else {}),
            **({"expires_at": expires_at.isoformat()} if expires_at else {}),
            **({"user_created": True} if created else {}),
            **({"role_was": current} if role_changed and not created else {}),
        },
    )
    return Issued(token, user, created, now_role, role_changed, namespaces, expires_at, agents)
