"""Human logins: create one with a role, change a role, deactivate and reactivate. The only
writer of users from the console (tokens create API users through ``accounts.tokens``).

Every change is one audited transaction. Saving a user or changing their groups bumps the
process row cache (``accounts.apps`` connects the signals), so a deactivated user's tokens
are refused by every process at its next request (``accounts.tokens._load``).

Rules (each a PermissionDenied, 403): nobody changes their own role or active state here;
only a superuser changes a superuser; a superuser is always admin (their role is not a
group).
"""

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.roles import ROLES, role_of
from memories.errors import InvalidInput, NotFound, PermissionDenied
from memories.services.audit import audit_record


def user_get(username: str):
    """The user named ``username``; NotFound (404) when there is none."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"no user is called {username}", field="username")
    return user


def _clean_role(role) -> str:
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}", field="role")
    return role


def _may_change(actor, user, what: str) -> None:
    """Raise PermissionDenied unless ``actor`` may change ``user``'s ``what``."""
    if user.pk == actor.pk:
        raise PermissionDenied(f"you cannot change your own {what}", field="username")
    if user.is_superuser and not actor.is_superuser:
        raise PermissionDenied(f"only a superuser may change a superuser's {what}",
                               field="username")


@transaction.atomic
def user_create(*, actor, username: str, role: str, password: str = ""):
    """Create a login ``username`` with ``role``. With ``password`` (checked by Django's
    password validators) they log in with it; without, the password is unusable until they
    set one through the link of :func:`set_password_link`. Returns the user.
    Raises InvalidInput (400) naming ``username``, ``role`` or ``password``."""
    users = get_user_model()
    role = _clean_role(role)
    try:
        users.username_validator(username)
        users._meta.get_field("username").run_validators(username)
    except ValidationError as exc:
        raise InvalidInput(" ".join(exc.messages), field="username") from None
    if users.objects.filter(username=username).exists():
        raise InvalidInput(f"{username} exists already", field="username")
    user = users(username=username)
    if password:
        try:
            password_validation.validate_password(password, user)
        except ValidationError as exc:
            raise InvalidInput(" ".join(exc.messages), field="password") from None
        user.set_password(password)
    else:
        user.set_unusable_password()
    user.save()
    user.groups.add(Group.objects.get(name=role))
    audit_record(actor=actor, action="user_created", target=f"user:{username}",
                 data={"role": role, "password": "set" if password else "link"})
    return user


def set_password_link(user) -> str:
    """The path of a one-time link where ``user`` sets their password (Django's password
    reset confirmation): it stops working once a password is set or after
    ``PASSWORD_RESET_TIMEOUT`` seconds."""
    return reverse("password_reset_confirm", kwargs={
        "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
        "token": default_token_generator.make_token(user),
    })


def role_change_check(*, actor, user, role: str) -> str:
    """The user's current role, when ``actor`` may make it ``role``; else raises
    InvalidInput (400: unknown role, or the same role) or PermissionDenied (403)."""
    role = _clean_role(role)
    _may_change(actor, user, "role")
    if user.is_superuser:
        raise InvalidInput(f"{user.username} is a superuser, always admin", field="role")
    current = role_of(user)
    if current == role:
        raise InvalidInput(f"{user.username} is {role} already", field="role")
    return current


@transaction.atomic
def user_set_role(*, actor, username: str, role: str) -> str | None:
    """Make ``username``'s role ``role`` (console and API alike); returns the role they had.
    Raises as :func:`role_change_check` and :func:`user_get`."""
    user = user_get(username)
    was = role_change_check(actor=actor, user=user, role=role)
    user.groups.remove(*Group.objects.filter(name__in=ROLES))
    user.groups.add(Group.objects.get(name=role))
    audit_record(actor=actor, action="user_role_changed", target=f"user:{username}",
                 data={"role": role, "role_was": was})
    return was


@transaction.atomic
def user_set_active(*, actor, username: str, active: bool):
    """Deactivate (``active`` False: no login, every token refused at once) or reactivate
    ``username``; returns the user. Raises PermissionDenied (403), NotFound (404)."""
    user = user_get(username)
    _may_change(actor, user, "active state")
    if user.is_active != active:
        user.is_active = active
        user.save(update_fields=["is_active"])  # post_save bumps the row cache
        audit_record(actor=actor, action="user_activated" if active else "user_deactivated",
                     target=f"user:{username}", data={})
    return user
